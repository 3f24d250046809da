package pgtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

// connect opens a connection to url, closed when t ends.
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// query returns the one value of a one-row query.
func query[T any](t *testing.T, conn *pgx.Conn, sql string) T {
	t.Helper()
	var v T
	if err := conn.QueryRow(context.Background(), sql).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// TestDB: two tests, run in parallel, each get a database that is
// reachable, new and empty, and not the other's: neither sees the other's
// table; both are dropped when the tests end. On the throwaway server a
// commit returns once it is written to the operating system.
func TestDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the package's server (initdb and a start: about 2 s of CPU), which the ledger's TestPG runs on under -short too; runs without -short")
	}
	names := make([]string, 2)
	t.Run("group", func(t *testing.T) {
		for i := range names {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				conn := connect(t, DB(t))
				names[i] = query[string](t, conn, "SELECT current_database()")
				if !strings.HasPrefix(names[i], "darrm_test_") {
					t.Errorf("database %q, want darrm_test_…", names[i])
				}
				if n := query[int64](t, conn, "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace"); n != 0 {
					t.Errorf("a new database holds %d relations in public", n)
				}
				if os.Getenv(EnvURL) == "" {
					checkSettings(t, conn, map[string]string{"synchronous_commit": "on", "fsync": "off", "full_page_writes": "off"})
				}
				ctx := context.Background()
				if _, err := conn.Exec(ctx, "CREATE TABLE t (test int)"); err != nil {
					t.Fatal(err)
				}
				if _, err := conn.Exec(ctx, "INSERT INTO t VALUES ($1)", i); err != nil {
					t.Fatal(err)
				}
				if got := query[[]int32](t, conn, "SELECT array_agg(test) FROM t"); len(got) != 1 || got[0] != int32(i) {
					t.Errorf("test %d's table holds %v", i, got)
				}
			})
		}
	})
	if t.Failed() || names[0] == "" || names[1] == "" {
		return // the tests said why
	}
	if names[0] == names[1] {
		t.Fatalf("both tests got database %s", names[0])
	}
	admin := os.Getenv(EnvURL)
	if admin == "" {
		t.Logf("the server runs %s in %s", shared.srv.as, shared.srv.dir)
		if m := MemoryFolder(); m != "" && filepath.Dir(shared.srv.dir) != m {
			t.Errorf("the shared server's folder is %s, not in %s, the memory file system", shared.srv.dir, m)
		}
		admin = shared.srv.adminURL().String()
	}
	conn := connect(t, admin)
	if n := query[int64](t, conn, fmt.Sprintf("SELECT count(*) FROM pg_database WHERE datname IN ('%s', '%s')", names[0], names[1])); n != 0 {
		t.Errorf("%d of the tests' databases %v are left after the tests", n, names)
	}
}

// checkSettings compares the server's settings with want.
func checkSettings(t *testing.T, conn *pgx.Conn, want map[string]string) {
	t.Helper()
	for name, v := range want {
		if got := query[string](t, conn, "SHOW "+name); got != v {
			t.Errorf("%s = %s, want %s", name, got, v)
		}
	}
}

// TestServerStopStart: Stop ends the open sessions and refuses new
// connections; Start brings the server back with what was committed.
func TestServerStopStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server of its own (initdb: about 1 s of CPU); runs without -short")
	}
	s := NewServer(t)
	if m := MemoryFolder(); m != "" && filepath.Dir(s.srv.dir) == m {
		t.Errorf("the durable server's folder %s is in memory", s.srv.dir)
	}
	url := s.DB(t)
	conn := connect(t, url)
	checkSettings(t, conn, map[string]string{"synchronous_commit": "on", "fsync": "on", "full_page_writes": "on"})
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	pid := s.srv.pid
	if !alive(pid) {
		t.Fatalf("the postmaster's pid %d is no running process", pid)
	}
	s.Stop(t)
	if s.srv.pid != 0 || alive(pid) {
		t.Errorf("after Stop the postmaster %d is alive (pid reported %d)", pid, s.srv.pid)
	}
	if _, err := conn.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("a session open before Stop still answers")
	} else {
		t.Logf("a session open before Stop: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if c, err := pgx.Connect(cctx, url); err == nil {
		c.Close(ctx)
		t.Error("a connection after Stop succeeds")
	} else if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("a connection after Stop: %v, want connection refused", err)
	} else {
		t.Logf("a connection after Stop: %v", err)
	}
	s.Start(t)
	if x := query[int32](t, connect(t, url), "SELECT x FROM kept"); x != 7 {
		t.Errorf("after Start the committed row reads %d, want 7", x)
	}
}

// alive says whether process pid runs (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(b)
	return !strings.HasPrefix(s[strings.LastIndexByte(s, ')')+1:], " Z")
}

// startTime is process pid's start time (field 22 of /proc/pid/stat), to
// tell it from a later process with its pid.
func startTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

const helperEnv = "DARRM_PGTEST_HELPER"

// TestNoServerOutlivesItsTestBinary kills, with SIGKILL, a test binary
// that runs a server: the server stops and its folder goes all the same.
func TestNoServerOutlivesItsTestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server of its own in a child test binary (initdb: about 1 s of CPU); runs without -short")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("finds processes in /proc")
	}
	if _, err := findBin(); err != nil {
		fail(t, err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServer$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var dir string
	var supervisor, postmaster int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if n, _ := fmt.Sscanf(sc.Text(), "server %s %d %d", &dir, &supervisor, &postmaster); n == 3 {
			break
		}
	}
	if postmaster == 0 {
		cmd.Wait()
		t.Fatal("the child test binary reported no server")
	}
	procs := map[int]string{supervisor: startTime(supervisor), postmaster: startTime(postmaster)}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(closeTimeout)
	for {
		var left []string
		for pid, start := range procs {
			if alive(pid) && startTime(pid) == start {
				left = append(left, fmt.Sprintf("process %d", pid))
			}
		}
		if _, err := os.Stat(dir); err == nil {
			left = append(left, "the folder "+dir)
		}
		if left == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v after the test binary was killed: %s are left", closeTimeout, strings.Join(left, ", "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHelperServer is the child of TestNoServerOutlivesItsTestBinary: it
// starts a server, says where it is, and waits to be killed.
func TestHelperServer(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("the child of TestNoServerOutlivesItsTestBinary")
	}
	s := NewServer(t)
	fmt.Printf("server %s %d %d\n", s.srv.dir, s.srv.cmd.Process.Pid, s.srv.pid)
	time.Sleep(closeTimeout)
	t.Error("not killed")
}

// TestChoose: how the supervisor runs the server, for each kind of caller.
func TestChoose(t *testing.T) {
	pg := &user.User{Username: "postgres", Uid: "101", Gid: "104"}
	noNS := errors.New("operation not permitted")
	for _, c := range []struct {
		name string
		c    candidate
		want runAs
		why  string // in the error, when no way
	}{
		{"not root", candidate{euid: 1000, postgres: pg}, runAs{how: asSelf}, ""},
		{"root", candidate{postgres: pg, mapped: true, namespace: noNS}, runAs{how: asUser, uid: 101, gid: 104}, ""},
		{"root, folder out of reach", candidate{postgres: pg, mapped: true, reach: errors.New("cannot enter /x"), nsID: 101},
			runAs{how: inNamespace, uid: 101, gid: 101}, ""},
		{"root of unshare -r", candidate{postgres: pg, nsID: 101}, runAs{how: inNamespace, uid: 101, gid: 101}, ""},
		{"root, no postgres user", candidate{nsID: 65534}, runAs{how: inNamespace, uid: 65534, gid: 65534}, ""},
		{"root, nothing", candidate{postgres: pg, namespace: noNS}, runAs{},
			"not mapped in this user namespace; a nested user namespace: operation not permitted"},
		{"root, no user, no namespace", candidate{namespace: noNS}, runAs{}, "there is no postgres user"},
	} {
		got, err := c.c.choose()
		if c.why != "" {
			var u *unavailableError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), c.why) {
				t.Errorf("%s: %v, want unavailable: …%s…", c.name, err, c.why)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

// TestEnterable: the postgres user may enter a folder by its owner's,
// group's or others' search bit.
func TestEnterable(t *testing.T) {
	dir := t.TempDir()
	uid, gid := os.Getuid(), os.Getgid()
	for _, c := range []struct {
		mode     os.FileMode
		uid, gid int
		ok       bool
	}{
		{0o700, uid, gid + 1, true},
		{0o700, uid + 1, gid + 1, false},
		{0o710, uid + 1, gid, true},
		{0o770, uid + 1, gid + 1, false},
		{0o701, uid + 1, gid + 1, true},
	} {
		if err := os.Chmod(dir, c.mode); err != nil {
			t.Fatal(err)
		}
		// The folders above dir may themselves be out of reach of
		// another user: only dir's own verdict is compared.
		err := enterable(dir, c.uid, c.gid)
		if got := err == nil || !strings.Contains(err.Error(), dir+" "); got != c.ok {
			t.Errorf("mode %o, uid %d, gid %d: %v", c.mode, c.uid, c.gid, err)
		}
	}
	os.Chmod(dir, 0o700)
}

// TestIDMapped reads a user namespace's map.
func TestIDMapped(t *testing.T) {
	file := filepath.Join(t.TempDir(), "uid_map")
	if err := os.WriteFile(file, []byte("         0       1000          1\n      1000     100000      65536\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int]bool{0: true, 1: false, 999: false, 1000: true, 66535: true, 66536: false} {
		if got := idMapped(file, id); got != want {
			t.Errorf("id %d mapped: %v, want %v", id, got, want)
		}
	}
}

// fakeTB records how fail ends a test.
type fakeTB struct {
	testing.TB
	fatal, skip string
}

func (f *fakeTB) Helper()                   {}
func (f *fakeTB) Fatal(args ...any)         { f.fatal = fmt.Sprint(args...) }
func (f *fakeTB) Fatalf(s string, a ...any) { f.fatal = fmt.Sprintf(s, a...) }
func (f *fakeTB) Skip(args ...any)          { f.skip = fmt.Sprint(args...) }

// TestFail: no server here is a skip, but under CI a failure; a server
// that fails is a failure.
func TestFail(t *testing.T) {
	no := &unavailableError{"no PostgreSQL server binaries"}
	for _, c := range []struct {
		ci          string
		err         error
		fatal, skip bool
	}{
		{"", no, false, true},
		{"false", no, false, true},
		{"true", no, true, false},
		{"1", no, true, false},
		{"", errors.New("initdb: exit status 1"), true, false},
	} {
		t.Setenv("CI", c.ci)
		var f fakeTB
		fail(&f, c.err)
		if (f.fatal != "") != c.fatal || (f.skip != "") != c.skip {
			t.Errorf("CI=%q, %v: fatal %q, skip %q", c.ci, c.err, f.fatal, f.skip)
		}
	}
}
