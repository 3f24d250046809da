// Package pgtest gives tests a real PostgreSQL server to test against: a
// fresh database for each test, on a throwaway server that the test binary
// starts from the installed PostgreSQL binaries, or on the server that
// DARRM_TEST_POSTGRES names; and a server of a test's own that it may stop
// and start.
//
// A package whose tests use DB runs them through Run, which stops the
// shared server when they end:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
//
// Where no server can be had (no binaries installed, root without a way to
// run the server as another user) a test skips with one line saying why,
// and fails instead when the environment variable CI is true.
//
// A test binary that imports pgtest is also its servers' supervisor: run
// again with DARRM_PGTEST_SUPERVISOR set, its init runs a server instead of
// the tests (supervisor.go). docs/design.md ("Tests against PostgreSQL")
// says how the server is run and why.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the environment variable that points the tests at a server
// of the user's: a libpq URL, postgres://user:password@host:port/database,
// whose user may create databases. DB creates its databases there.
const EnvURL = "DARRM_TEST_POSTGRES"

// adminTimeout bounds creating or dropping one database.
const adminTimeout = 30 * time.Second

// shared is the test binary's server, started by the first DB call and
// stopped by Run.
var shared struct {
	mu      sync.Mutex
	running bool // Run is running the tests
	srv     *server
	err     error // why the server could not start: every later DB call fails alike
}

// TempInMemory points TMPDIR, for the tests of the package and the
// processes they start, which inherit it, at a new folder in memory
// (MemoryFolder) where there is one, and returns what removes it: for
// tests that make many files that are synced (ledgers, records) and rest
// on none reaching the disk. A server of a test's own (NewServer) keeps
// its folder on the disk whatever TMPDIR says.
func TempInMemory() (remove func()) {
	mem := MemoryFolder()
	if mem == "" {
		return func() {}
	}
	dir, err := os.MkdirTemp(mem, "darrm-tests-")
	if err != nil {
		return func() {} // the disk's temporary folder serves as well
	}
	os.Setenv("TMPDIR", dir)
	return func() { os.RemoveAll(dir) }
}

// Run runs the tests of m and then stops the server that DB started for
// them, if any; it returns m.Run's exit code, or 1 when the server did not
// stop cleanly.
func Run(m *testing.M) int {
	shared.mu.Lock()
	shared.running = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.running = false
	if shared.srv != nil {
		if err := shared.srv.close(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
		shared.srv = nil
	}
	return code
}

// DB returns the URL of a new, empty database for t, dropped when t ends:
// on the server DARRM_TEST_POSTGRES names, or else on the test binary's
// throwaway server, which the first call starts (its superuser, with a
// password, in the URL). The URL has a query string only when
// DARRM_TEST_POSTGRES has one. Tests using DB must be run by Run.
func DB(t testing.TB) string {
	t.Helper()
	shared.mu.Lock()
	running := shared.running
	shared.mu.Unlock()
	if !running {
		t.Fatal("pgtest: DB needs the package's TestMain to run the tests through pgtest.Run, which stops the server at the end")
	}
	if env := os.Getenv(EnvURL); env != "" {
		admin, err := parseAdminURL(env)
		if err != nil {
			t.Fatal(err)
		}
		return newDB(t, admin, admin.String(), "", true)
	}
	srv, err := sharedServer()
	if err != nil {
		fail(t, unavailableBecause(err, " and "+EnvURL+" names no server"))
	}
	return newDB(t, srv.adminURL(), srv.plainURL(), srv.createOptions(), true)
}

// sharedServer returns the test binary's server, starting it on the first
// call.
func sharedServer() (*server, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = launch(false)
	}
	return shared.srv, shared.err
}

// Server is a throwaway PostgreSQL server of one test's own, for a test
// that stops and starts it (a fault test: the server stopped mid-run) or
// whose claim rests on what reaches the disk: unlike the shared server, it
// syncs its writes to the disk (fsync, full page writes) as in production.
type Server struct {
	srv *server
}

// NewServer starts a server of t's own from the installed binaries, even
// when DARRM_TEST_POSTGRES names one; it is stopped and its folder removed
// when t ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	srv, err := launch(true)
	if err != nil {
		fail(t, unavailableBecause(err, ", which this test needs of its own to stop and start"))
	}
	t.Cleanup(func() {
		if err := srv.close(); err != nil {
			t.Error(err)
		}
	})
	return &Server{srv: srv}
}

// DB returns the URL of a new, empty database on s; it goes with the
// server when t ends.
func (s *Server) DB(t testing.TB) string {
	t.Helper()
	return newDB(t, s.srv.adminURL(), s.srv.plainURL(), s.srv.createOptions(), false)
}

// Stop shuts the server down as pg_ctl stop does by default (fast: open
// sessions are ended, committed work is kept) and returns when it has
// exited: connections are then refused.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if err := s.srv.do("stop"); err != nil {
		t.Fatal(err)
	}
}

// Tool returns the path of the installed PostgreSQL client program name
// (pg_dump, pg_restore, ...) beside the server's binaries; the test fails
// (or skips, outside CI) where there is none.
func Tool(t testing.TB, name string) string {
	t.Helper()
	dir, err := findBin()
	if err == nil && !executable(filepath.Join(dir, name)) {
		err = &unavailableError{fmt.Sprintf("no %s beside the server's binaries in %s", name, dir)}
	}
	if err != nil {
		fail(t, err)
	}
	return filepath.Join(dir, name)
}

// Crash ends the server at once, as pg_ctl stop -m immediate does: what
// it has not yet written is lost (an asynchronous commit's WAL, say), and
// the next Start recovers from the WAL on disk.
func (s *Server) Crash(t testing.TB) {
	t.Helper()
	if err := s.srv.do("crash"); err != nil {
		t.Fatal(err)
	}
}

// Start starts the stopped server again, on the same folder and port, and
// returns when it accepts connections.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if err := s.srv.do("start"); err != nil {
		t.Fatal(err)
	}
}

// unavailableError says that no server can be had on this machine, as
// opposed to a server that failed.
type unavailableError struct{ why string }

func (e *unavailableError) Error() string { return "pgtest: " + e.why }

// unavailableBecause adds to err, if it says that no server can be had
// here, why the caller cannot do without one.
func unavailableBecause(err error, why string) error {
	var u *unavailableError
	if errors.As(err, &u) {
		return &unavailableError{u.why + why}
	}
	return err
}

// fail ends t on err: a skip when no server can be had here, unless the
// environment variable CI is true, where every PostgreSQL test must run;
// a failure otherwise.
func fail(t testing.TB, err error) {
	t.Helper()
	var u *unavailableError
	switch ci, _ := strconv.ParseBool(os.Getenv("CI")); {
	case !errors.As(err, &u):
		t.Fatal(err)
	case ci:
		t.Fatalf("%v (CI=%s: a PostgreSQL test may not skip)", err, os.Getenv("CI"))
	default:
		t.Skip(err)
	}
}

// parseAdminURL checks DARRM_TEST_POSTGRES's value: a postgres:// or
// postgresql:// URL that pgx accepts.
func parseAdminURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("pgtest: %s is not a postgres:// URL (postgres://user:password@host:port/database)", EnvURL)
	}
	if _, err := pgx.ParseConfig(s); err != nil {
		return nil, fmt.Errorf("pgtest: %s: %v", EnvURL, err)
	}
	return u, nil
}

// newDB creates a database with a new name on the server admin reaches,
// connecting to conn (admin's URL, or one that says how to reach the
// server better), with CREATE DATABASE's options, dropped when t ends if
// drop is set, and returns admin's URL with that database.
func newDB(t testing.TB, admin *url.URL, conn, options string, drop bool) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "darrm_test_" + hex.EncodeToString(b[:])
	if err := execSQL(conn, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+options); err != nil {
		t.Fatalf("pgtest: create database %s on %s: %v", name, admin.Host, err)
	}
	if drop {
		t.Cleanup(func() {
			// FORCE ends the sessions a test left open.
			if err := execSQL(conn, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
				t.Errorf("pgtest: drop database %s on %s: %v", name, admin.Host, err)
			}
		})
	}
	u := *admin
	u.Path, u.RawPath = "/"+name, ""
	return u.String()
}

// execSQL runs one statement on a connection of its own to admin.
func execSQL(admin string, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
