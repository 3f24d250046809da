package pgtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// The supervisor is the test binary run again with supervisorEnv set: its
// init takes over before any test. It makes the server (initdb), runs it
// (postgres) as its child, starts and stops it on the commands it reads,
// and when its standard input ends (the test binary closed it or died)
// stops the server and removes its folder. The server thus never outlives
// the test binary by more than its shut-down, and the supervisor never
// outlives the server: were the supervisor killed, the server gets a
// parent-death signal (Linux) and shuts down at once.
const supervisorEnv = "DARRM_PGTEST_SUPERVISOR"

// superuser is the throwaway server's superuser, loopback its only address.
const (
	superuser = "postgres"
	loopback  = "127.0.0.1"
)

const (
	readyTimeout = 60 * time.Second // from postgres's start to a connection
	stopTimeout  = 30 * time.Second // a fast shut-down, before an immediate one
	quitTimeout  = 5 * time.Second  // an immediate shut-down, before SIGKILL
	bindAttempts = 5                // free ports tried: another process may take one first
)

// settings are appended to the server's postgresql.conf: loopback only, no
// Unix socket (its folder would be outside the test's), dynamic shared
// memory in files of the data folder rather than /dev/shm, no background
// vacuum or JIT. A commit returns once its WAL is written to the operating
// system (synchronous_commit), so a server stopped or killed loses nothing
// committed; whether the WAL and data also reach the disk (fsync, full page
// writes) matters only when the machine itself fails, and is on, as in
// production, where durable says so (docs/design.md, "Tests against
// PostgreSQL").
func settings(durable bool) string {
	onOff := map[bool]string{true: "on", false: "off"}[durable]
	return `
# internal/pgtest: a throwaway server for darrm's tests.
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
dynamic_shared_memory_type = mmap
synchronous_commit = on
fsync = ` + onOff + `
full_page_writes = ` + onOff + `
autovacuum = off
jit = off
`
}

// config is the supervisor's first line of input.
type config struct {
	Dir      string // the server's folder: data/ and server.log
	Bin      string // the folder of initdb and postgres
	Password string // the superuser's
	Durable  bool   // fsync and full page writes on, as in production
}

// reply answers each command: the server's port and postmaster, or why not.
type reply struct {
	Port        int    `json:"port,omitempty"`
	As          string `json:"as,omitempty"`    // how the server runs (runAs)
	Major       int    `json:"major,omitempty"` // the server's major version
	PID         int    `json:"pid,omitempty"`
	Error       string `json:"error,omitempty"`
	Unavailable bool   `json:"unavailable,omitempty"`
}

func init() {
	if os.Getenv(supervisorEnv) != "" {
		os.Exit(supervise(os.Stdin, os.Stdout))
	}
}

// supervise runs the supervisor: a config line, then "start" and "stop"
// commands, each answered by a reply line.
func supervise(in io.Reader, out io.Writer) int {
	// ^C reaches the whole process group: the test binary's end, as the
	// end of standard input, is what stops the server.
	signal.Ignore(os.Interrupt)
	sc := bufio.NewScanner(in)
	var s supervisor
	if !sc.Scan() {
		return 0
	}
	if err := json.Unmarshal(sc.Bytes(), &s.cfg); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest supervisor: config:", err)
		return 2
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		s.shutdown()
		os.Exit(1)
	}()
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var err error
		switch sc.Text() {
		case "start":
			err = s.start()
		case "stop":
			err = s.stop()
		case "crash":
			err = s.crash()
		default:
			err = fmt.Errorf("unknown command %q", sc.Text())
		}
		r := s.reply()
		var u *unavailableError
		switch {
		case errors.As(err, &u):
			r = reply{Error: u.why, Unavailable: true}
		case err != nil:
			r = reply{Error: err.Error()}
		}
		enc.Encode(r)
	}
	if err := s.shutdown(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest supervisor:", err)
		return 1
	}
	return 0
}

// supervisor runs one server.
type supervisor struct {
	cfg config

	mu    sync.Mutex
	as    *runAs // how postgres runs, chosen at the first start
	port  int    // chosen at the first start, kept across restarts
	pg    *child // the postmaster while it runs
	major int    // the server's major version, once it ran
}

func (s *supervisor) reply() reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := reply{Port: s.port, Major: s.major}
	if s.as != nil {
		r.As = s.as.String()
	}
	if s.pg != nil {
		r.PID = s.pg.cmd.Process.Pid
	}
	return r
}

func (s *supervisor) data() string    { return filepath.Join(s.cfg.Dir, "data") }
func (s *supervisor) logFile() string { return filepath.Join(s.cfg.Dir, "server.log") }

// start makes the server on the first call and starts it.
func (s *supervisor) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pg != nil {
		return errors.New("the server is running already")
	}
	if s.as == nil {
		as, err := chooseRunAs(s.cfg)
		if err != nil {
			return err
		}
		s.as = &as
	}
	if _, err := os.Stat(filepath.Join(s.data(), "PG_VERSION")); errors.Is(err, fs.ErrNotExist) {
		if err := s.initdb(); err != nil {
			return err
		}
	}
	first := s.port == 0
	for attempt := 1; ; attempt++ {
		if first {
			port, err := freePort()
			if err != nil {
				return err
			}
			s.port = port
		}
		err := s.run()
		if err == nil || !first || attempt == bindAttempts || !errors.Is(err, errBind) {
			return err
		}
	}
}

// initdb makes the server's data folder, with a superuser who logs in with
// the password.
func (s *supervisor) initdb() error {
	if err := s.as.own(s.cfg.Dir); err != nil {
		return err
	}
	pwfile := filepath.Join(s.cfg.Dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(s.cfg.Password+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pwfile)
	if err := s.as.own(pwfile); err != nil {
		return err
	}
	// --no-sync: the folder is thrown away with the test run, so a crash of
	// the machine while it is made loses nothing worth keeping.
	cmd := exec.Command(filepath.Join(s.cfg.Bin, "initdb"), "-D", s.data(), "-U", superuser,
		"--pwfile", pwfile, "--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C", "--no-sync")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir, cmd.Env = s.cfg.Dir, childEnv()
	cmd.SysProcAttr = s.as.attr(syscall.SIGKILL)
	c, err := started(cmd)
	if err == nil {
		<-c.done
		err = c.err
	}
	if err != nil {
		return fmt.Errorf("initdb %s: %v\n%s", s.as, err, strings.TrimSpace(out.String()))
	}
	f, err := os.OpenFile(filepath.Join(s.data(), "postgresql.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = f.WriteString(settings(s.cfg.Durable))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// errBind is a server that could not listen on its port.
var errBind = errors.New("could not listen on its port")

// run starts postgres and waits until it accepts connections.
func (s *supervisor) run() error {
	log, err := os.OpenFile(s.logFile(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	from, _ := log.Seek(0, io.SeekEnd)
	cmd := exec.Command(filepath.Join(s.cfg.Bin, "postgres"), "-D", s.data(), "-p", strconv.Itoa(s.port))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir, cmd.Env = s.cfg.Dir, childEnv()
	// SIGQUIT: an immediate shut-down, which ends the server's own
	// processes too.
	cmd.SysProcAttr = s.as.attr(syscall.SIGQUIT)
	pg, err := started(cmd)
	if err != nil {
		return fmt.Errorf("postgres %s: %w", s.as, err)
	}
	url := fmt.Sprintf("postgres://%s:%s@%s/postgres?sslmode=disable&connect_timeout=5",
		superuser, s.cfg.Password, net.JoinHostPort(loopback, strconv.Itoa(s.port)))
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			v := conn.PgConn().ParameterStatus("server_version")
			s.major, _ = strconv.Atoi(strings.Split(v, ".")[0])
			conn.Close(ctx)
			cancel()
			s.pg = pg
			return nil
		}
		cancel()
		select {
		case <-pg.done:
			log := tail(s.logFile(), from)
			if strings.Contains(log, "could not create any TCP/IP sockets") {
				return fmt.Errorf("postgres on port %d: %w\n%s", s.port, errBind, log)
			}
			return fmt.Errorf("postgres %s exited: %v\n%s", s.as, pg.err, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			pg.stop()
			return fmt.Errorf("postgres accepted no connection within %v: %v\n%s", readyTimeout, err, tail(s.logFile(), from))
		}
	}
}

// stop shuts the server down, fast.
func (s *supervisor) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pg == nil {
		return errors.New("the server is not running")
	}
	err := s.pg.stop()
	s.pg = nil
	return err
}

// crash ends the server as a power cut would end its processes: an
// immediate shutdown (SIGQUIT), which writes nothing more, so that WAL not
// yet written when it comes is lost, as an asynchronous commit's may be.
func (s *supervisor) crash() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pg == nil {
		return errors.New("the server is not running")
	}
	err := s.pg.quit()
	s.pg = nil
	return err
}

// shutdown stops the server if it runs and removes its folder.
func (s *supervisor) shutdown() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.pg != nil {
		err = s.pg.stop()
		s.pg = nil
	}
	if rmErr := os.RemoveAll(s.cfg.Dir); err == nil {
		err = rmErr
	}
	return err
}

// child is a process the supervisor started.
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	err  error         // cmd.Wait's, once done is closed
}

// started starts cmd from a goroutine that keeps its thread until cmd has
// exited: Linux sends the parent-death signal when the thread that started
// a process ends, not the process.
func started(cmd *exec.Cmd) (*child, error) {
	c := &child{cmd: cmd, done: make(chan struct{})}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := cmd.Start(); err != nil {
			errc <- err
			return
		}
		errc <- nil
		c.err = cmd.Wait()
		close(c.done)
	}()
	if err := <-errc; err != nil {
		return nil, err
	}
	return c, nil
}

// stop shuts the postmaster down as pg_ctl stop's modes do: fast (SIGINT);
// immediate (SIGQUIT) when that takes longer than stopTimeout; SIGKILL when
// that takes longer than quitTimeout.
func (c *child) stop() error {
	c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
		return nil
	case <-time.After(stopTimeout):
	}
	c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.done:
		return fmt.Errorf("postgres took more than %v to shut down: shut down at once", stopTimeout)
	case <-time.After(quitTimeout):
	}
	c.cmd.Process.Kill()
	<-c.done
	return fmt.Errorf("postgres took more than %v to shut down, and %v more to shut down at once: killed", stopTimeout, quitTimeout)
}

// quit shuts the postmaster down as pg_ctl stop -m immediate does
// (SIGQUIT), SIGKILL when that takes longer than quitTimeout.
func (c *child) quit() error {
	c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.done:
		return nil
	case <-time.After(quitTimeout):
	}
	c.cmd.Process.Kill()
	<-c.done
	return fmt.Errorf("postgres took more than %v to shut down at once: killed", quitTimeout)
}

// freePort returns a loopback port that no one listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// childEnv is the environment of initdb and postgres, which run in the
// server's folder (the caller's may be closed to the postgres user): the
// supervisor's,
// without its mark and without the PG* variables that would point them at
// another server's data or port.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, supervisorEnv+"=") && !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}
