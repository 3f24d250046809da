package pgtest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// closeTimeout bounds the supervisor's shut-down of the server (at most
// stopTimeout + quitTimeout and a SIGKILL) and removal of its folder.
const closeTimeout = stopTimeout + quitTimeout + 10*time.Second

// server is the test binary's handle on a throwaway server: the supervisor
// process that runs it (supervisor.go) and what a client needs to reach it.
type server struct {
	dir      string // the server's folder, under the temporary folder
	password string // the superuser's
	durable  bool   // fsync and full page writes on
	cmd      *exec.Cmd
	in       io.WriteCloser
	out      *bufio.Scanner

	mu    sync.Mutex
	port  int
	pid   int    // the postmaster's while it runs, as the supervisor saw it
	as    string // how it runs: as which user
	major int    // its major version
}

// The temporary folder as the test binary started, before a TestMain
// points TMPDIR into memory for its package's tests (MemoryFolder): a
// durable server keeps its folder there, and the shared server makes its
// own in memory only where the user's TMPDIR named no folder.
var (
	startTMPDIR = os.Getenv("TMPDIR")
	startTemp   = os.TempDir()
)

// launch starts a supervisor, which makes a new server in a new temporary
// folder and starts it, and returns when the server accepts connections.
// A durable server has fsync and full page writes on, and its folder in
// the temporary folder the test binary started with; a server that is not
// makes its folder in memory where it can (MemoryFolder).
func launch(durable bool) (*server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("pgtest: the test binary, to run as the server's supervisor: %w", err)
	}
	var dir string
	if m := MemoryFolder(); !durable && m != "" {
		dir, err = os.MkdirTemp(m, "darrm-pgtest-")
	}
	if dir == "" {
		temp := "" // TMPDIR, as the package's tests have it
		if durable {
			temp = startTemp
		}
		dir, err = os.MkdirTemp(temp, "darrm-pgtest-")
	}
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &server{dir: dir, password: hex.EncodeToString(b[:]), durable: durable}
	// -test.run=^$: were the supervisor's init not to take over, the
	// binary would run no test.
	s.cmd = exec.Command(exe, "-test.run=^$")
	s.cmd.Env = append(os.Environ(), supervisorEnv+"=1")
	s.cmd.Stderr = os.Stderr
	if s.in, err = s.cmd.StdinPipe(); err == nil {
		var out io.Reader
		if out, err = s.cmd.StdoutPipe(); err == nil {
			s.out = bufio.NewScanner(out)
			err = s.cmd.Start()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: start the server's supervisor: %w", err)
	}
	cfg, _ := json.Marshal(config{Dir: dir, Bin: bin, Password: s.password, Durable: durable})
	if _, err = fmt.Fprintf(s.in, "%s\n", cfg); err == nil {
		err = s.do("start")
	}
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// do sends the supervisor a command and waits for its reply.
func (s *server) do(command string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := fmt.Fprintln(s.in, command); err != nil {
		return fmt.Errorf("pgtest: %s the server: the supervisor is gone: %w", command, err)
	}
	if !s.out.Scan() {
		return fmt.Errorf("pgtest: %s the server: the supervisor exited without a reply", command)
	}
	var r reply
	if err := json.Unmarshal(s.out.Bytes(), &r); err != nil {
		return fmt.Errorf("pgtest: %s the server: the supervisor's reply %q: %w", command, s.out.Text(), err)
	}
	switch {
	case r.Unavailable:
		return &unavailableError{r.Error}
	case r.Error != "":
		return fmt.Errorf("pgtest: %s the server in %s: %s", command, s.dir, r.Error)
	}
	s.port, s.pid, s.as, s.major = r.Port, r.PID, r.As, r.Major
	return nil
}

// close stops the server and removes its folder: the supervisor does when
// its standard input ends, as it does when the test binary dies.
func (s *server) close() error {
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(closeTimeout):
		// The server then ends on its parent-death signal.
		s.cmd.Process.Kill()
		err = fmt.Errorf("did not stop within %v: killed", closeTimeout)
		<-done
	}
	if rmErr := os.RemoveAll(s.dir); err == nil {
		err = rmErr
	}
	if err != nil {
		return fmt.Errorf("pgtest: stop the server in %s: %w", s.dir, err)
	}
	return nil
}

// adminURL reaches the server's maintenance database as its superuser.
func (s *server) adminURL() *url.URL {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &url.URL{
		Scheme: "postgres",
		User:   url.UserPassword(superuser, s.password),
		Host:   net.JoinHostPort(loopback, strconv.Itoa(s.port)),
		Path:   "/postgres",
	}
}

// plainURL is adminURL asking for no TLS, which the server has not: pgx's
// default, sslmode prefer, asks for it and then dials again without, and
// each connection costs the server a process.
func (s *server) plainURL() string {
	u := s.adminURL()
	u.RawQuery = "sslmode=disable"
	return u.String()
}

// createOptions are the options of CREATE DATABASE on s. On a server that
// does not sync, copying the template's files (FILE_COPY, PostgreSQL 15 and
// later) costs less CPU than writing them through the WAL, the default:
// 0.10 s against 0.17 s a database, measured; with fsync on, the copy's two
// checkpoints make it the slower.
func (s *server) createOptions() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.durable && s.major >= 15 {
		return " STRATEGY = FILE_COPY"
	}
	return ""
}

// binDirs are where Debian's postgresql package installs the server
// binaries, one folder per major version.
const binDirs = "/usr/lib/postgresql/*/bin"

// findBin returns the folder of initdb and postgres: initdb's on PATH
// (symbolic links followed), else the newest version's in binDirs.
func findBin() (string, error) {
	var candidates []string
	if p, err := exec.LookPath("initdb"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil {
			candidates = append(candidates, filepath.Dir(p))
		}
	}
	dirs, _ := filepath.Glob(binDirs)
	sort.Slice(dirs, func(i, j int) bool { return newer(dirs[i], dirs[j]) })
	candidates = append(candidates, dirs...)
	for _, d := range candidates {
		if executable(filepath.Join(d, "initdb")) && executable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", &unavailableError{"no PostgreSQL server binaries (initdb and postgres on PATH or in " +
		binDirs + "; Debian: apt-get install postgresql)"}
}

// newer orders Debian's version folders, /usr/lib/postgresql/15/bin before
// /usr/lib/postgresql/9.6/bin.
func newer(a, b string) bool {
	va, errA := strconv.ParseFloat(filepath.Base(filepath.Dir(a)), 64)
	vb, errB := strconv.ParseFloat(filepath.Base(filepath.Dir(b)), 64)
	if errA != nil || errB != nil {
		return a > b
	}
	return va > vb
}

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// tail returns the last lines of a log file, for an error.
func tail(path string, from int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const max = 4 << 10
	if fi, err := f.Stat(); err == nil && fi.Size()-from > max {
		from = fi.Size() - max
	}
	f.Seek(from, io.SeekStart)
	b, _ := io.ReadAll(io.LimitReader(f, max))
	return strings.TrimSpace(string(b))
}
