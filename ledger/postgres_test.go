package ledger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/pgtest"
)

// pgURL returns the URL of the ledger name in the database at db.
func pgURL(db, name string) string { return db + "?ledger=" + url.QueryEscape(name) }

// pgConnect connects to the database at url as the ledger does, asking
// for TLS on the connection it then uses (preferOnOneConnection): pgx
// alone dials a second time when the server has no TLS, as the tests'
// throwaway server has not, and each connection costs the server a
// process.
func pgConnect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	preferOnOneConnection(cfg)
	return pgx.ConnectConfig(ctx, cfg)
}

// sqlExec runs statements on the database at db as its superuser (the
// test's), as an administrator with psql would, in a session of their
// own.
func sqlExec(t *testing.T, db string, sql string, args ...any) error {
	t.Helper()
	s := sessionOn(t, db)
	defer s.close()
	return s.exec(sql, args...)
}

// session is a connection to a test's database as its superuser, for
// statements run as an administrator would with psql.
type session struct {
	conn *pgx.Conn
}

// sessionOn connects to the database at db for t; the session ends when
// t does, or at close. A test that runs several statements of an
// administrator runs them in one session: each connection costs the
// server a process, about 50 ms of its CPU.
func sessionOn(t *testing.T, db string) *session {
	t.Helper()
	conn, err := pgConnect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{conn: conn}
	t.Cleanup(s.close)
	return s
}

// exec runs statements in the session.
func (s *session) exec(sql string, args ...any) error {
	_, err := s.conn.Exec(ctx, sql, args...)
	return err
}

// close ends the session.
func (s *session) close() { s.conn.Close(ctx) }

// password returns the password in the URL db.
func password(t *testing.T, db string) string {
	t.Helper()
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := u.User.Password()
	if !ok || p == "" {
		t.Fatalf("the test's URL has no password")
	}
	return p
}

// newPG makes a ledger named name in the database at db, with
// budget and the tests' binding of an ensemble of its own, and returns
// its URL.
func newPG(t *testing.T, db, name string, budget accountant.Budget) string {
	t.Helper()
	u := pgURL(db, name)
	if _, err := book.create(ctx, u, NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); err != nil {
		t.Fatal(err)
	}
	return u
}

// spendOn runs one run on the ledger at location with bk: it reserves
// reserve labels of step and settles settle of them.
func spendOn(t *testing.T, bk Options, location string, reserve, settle int) {
	t.Helper()
	l, err := bk.forRun(ctx, location)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.begin(ctx, "darrm", binding(t, l), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	if err := l.Reserve(ctx, reserve); err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(ctx, settle); err != nil {
		t.Fatal(err)
	}
}

// readAll reads the ledger at location whole with a book of its own (no
// record: every line checked), and returns its spends' sequence, runs
// and lines.
func readAll(t *testing.T, location string) (accountant.Sequence, int, int) {
	t.Helper()
	l, err := Options{StateDir: t.TempDir()}.readOnly(ctx, location)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Spent(), l.RunCount(), l.Lines()
}

// testPGLedger: a PostgreSQL ledger behaves as a file ledger: the same
// runs give the same lines (bytes and hashes but for their times and run
// ids), totals, record and checks; init makes the schema once and never
// writes over a ledger; a release resumes from the line its record
// vouches for, a reader with no record checks every line.
func testPGLedger(t *testing.T, db string) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}}
	u := newPG(t, db, "teachers", budget)
	file := newLedger(t, budget)

	if _, err := book.create(ctx, u, NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); !errors.As(err, new(*takenError)) || !isBad(err) {
		t.Errorf("init over a ledger: %v, want a *takenError", err)
	}
	other := newPG(t, db, "other teachers/ä", budget) // a second ledger in the schema made
	spendOn(t, book, other, 1, 1)

	for _, run := range [][2]int{{3, 2}, {4, 4}, {1, 0}} {
		spendOn(t, book, u, run[0], run[1])
		spendOn(t, book, file, run[0], run[1])
	}
	pgSpent, pgRuns, pgLines := readAll(t, u)
	fileSpent, fileRuns, fileLines := readAll(t, file)
	if pgSpent != fileSpent || pgRuns != fileRuns || pgLines != fileLines || pgSpent.Steps != 6 {
		t.Errorf("PostgreSQL: %+v, %d runs, %d lines; file: %+v, %d runs, %d lines", pgSpent, pgRuns, pgLines, fileSpent, fileRuns, fileLines)
	}
	l, err := book.forRun(ctx, u) // resumed from its record
	if err != nil {
		t.Fatal(err)
	}
	if l.Spent() != pgSpent || l.Lines() != pgLines {
		t.Errorf("resumed: %+v, %d lines; read whole: %+v, %d lines", l.Spent(), l.Lines(), pgSpent, pgLines)
	}
	l.Close()

	// The record names the ledger by its URL without the password.
	st, err := openState(book, l.Header().Ensemble)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.read()
	st.close()
	if err != nil || rec == nil || rec.Path != Redact(u) || rec.Lines != pgLines || rec.Device != 0 {
		t.Errorf("record %+v (%v): want %s, %d lines", rec, err, Redact(u), pgLines)
	}
	b, err := os.ReadFile(st.path)
	if err != nil || strings.Contains(string(b), password(t, db)) || !strings.Contains(string(b), ":***@") {
		t.Errorf("record file %s (%v): %s", st.path, err, b)
	}

	// Its lines are a ledger file's, byte for byte: an export is one,
	// with an end line after them that no release charges.
	exported := filepath.Join(t.TempDir(), "export.ledger")
	if err := book.Export(ctx, u, exported); err != nil {
		t.Fatal(err)
	}
	eSpent, eRuns, eLines := readAll(t, exported)
	if eSpent != pgSpent || eRuns != pgRuns || eLines != pgLines+1 {
		t.Errorf("export: %+v, %d runs, %d lines; want %+v, %d, %d", eSpent, eRuns, eLines, pgSpent, pgRuns, pgLines+1)
	}
	var ended *endedError
	if err := openErr(exported, Options{StateDir: t.TempDir()}); !errors.As(err, &ended) || ended.end.Reason != reasonExported || ended.end.From != Redact(u) {
		t.Errorf("a release on an export: %v", err)
	}
}

// TestPG runs the tests of PostgreSQL ledgers that can share one
// database, each with ledgers of its own names (one database costs the
// server 0.1-0.25 s to make); those that drop the append-only trigger
// run last.
func TestPG(t *testing.T) {
	db := pgtest.DB(t)
	for _, c := range []struct {
		name string
		test func(*testing.T, string)
	}{
		{"Ledger", testPGLedger},
		{"Refusals", testPGRefusals},
		{"ExportImport", testPGExportImport},
		{"ImportWitnessed", testPGImportWitnessed},
		{"WriteRetried", testPGWriteRetried},
		{"ConcurrentProcesses", testPGConcurrentProcesses},
		{"LockWait", testPGLockWait},
		{"LockTimeout", testPGLockTimeout},
		{"QueryAsLibpq", testPGQueryAsLibpq},
		{"AppendOnly", testPGAppendOnly},
		{"Analysts", testPGAnalysts},
		{"Restored", testPGRestored},
		{"Witness", testPGWitness},
		{"OneBitCharges", testPGOneBitCharges},
		{"Continued", testPGContinued},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, db) })
	}
}

// testPGLockWait: a run waits for the lock of a PostgreSQL ledger that
// another run holds, says so once, naming the ledger without its
// password, and ends its wait when its context ends; a reader does not
// wait, nor the check before a run (Options.CheckRun); once the other run has ended, a run gets the ledger (perhaps
// after a wait: the server ends the other session after its close).
func testPGLockWait(t *testing.T, db string) {
	u := newPG(t, db, "held", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	held, err := book.forRun(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	// The wait ends when it is said, not at a deadline, which a slow
	// machine (the race detector under load) reached before the wait.
	// A statement on the ledger's tables that takes more than a second,
	// as on a loaded machine, is said too, as a wait for its tables: that
	// notice neither ends the wait nor counts as the wait for the lock.
	lockWait, tablesWait := "ledger "+Redact(u), "the tables of ledger "+Redact(u)
	var said, lockWaits []string
	c, cancel := context.WithCancel(ctx)
	waiting := Options{Waiting: func(what string) {
		said = append(said, what)
		if what != tablesWait {
			lockWaits = append(lockWaits, what)
			cancel()
		}
	}}
	_, err = waiting.forRun(c, u)
	cancel()
	if !errors.Is(err, context.Canceled) || len(lockWaits) != 1 || lockWaits[0] != lockWait || strings.Contains(strings.Join(said, "\n"), password(t, db)) {
		t.Errorf("a run while another holds the ledger: %v, said %q", err, said)
	}
	if l, err := book.readOnly(ctx, u); err != nil {
		t.Errorf("a reader while a run holds the ledger: %v", err)
	} else {
		l.Close()
	}
	if err := waiting.CheckRun(ctx, u, binding(t, held)); err != nil || len(lockWaits) != 1 {
		t.Errorf("the check before a run while another holds the ledger: %v, said %q", err, said)
	}
	held.Close()
	spendOn(t, waiting, u, 1, 1)
}

// isBad reports whether err says it is the caller's input.
func isBad(err error) bool {
	var bi interface{ BadInput() bool }
	return errors.As(err, &bi) && bi.BadInput()
}

// testPGRefusals: a URL that names no ledger, a database, user, password
// or ledger that does not exist, a server that does not answer and a
// schema of a later darrm are each one line that names what to fix,
// without the password; all but the server down are the caller's input.
func testPGRefusals(t *testing.T, db string) {
	pw := password(t, db)
	u := newPG(t, db, "known", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}})
	with := func(edit func(*url.URL)) string {
		p, _ := url.Parse(u)
		edit(p)
		return p.String()
	}
	for _, c := range []struct {
		name, location, want string
		bad                  bool
	}{
		{"no ledger", db, "add ?ledger=NAME to the URL", true},
		{"two ledgers", u + "&ledger=b", "names 2 ledgers", true},
		{"empty name", db + "?ledger=", "ledger= is empty", true},
		{"control character", db + "?ledger=a%07b", "control characters", true},
		{"bad URL", strings.Replace(u, "postgres://", "postgres://a:b:c@[::1", 1), "the form is postgres://", true},
		{"unknown ledger", pgURL(db, "unknown"), "has no ledger named unknown (create it with darrm ledger init)", true},
		{"unknown database", with(func(p *url.URL) { p.Path = "/no_such_database" }), "database no_such_database does not exist", true},
		{"wrong password", with(func(p *url.URL) { p.User = url.UserPassword(p.User.Username(), "not-"+pw) }), "refused the password of user", true},
		{"unknown user", with(func(p *url.URL) { p.User = url.UserPassword("nobody_here", pw) }), "check the URL's user", true},
		{"server down", with(func(p *url.URL) { p.Host = "127.0.0.1:1" }), "no server accepts connections at 127.0.0.1:1", false},
	} {
		for name, call := range map[string]func() error{
			"open": func() error { l, err := book.forRun(ctx, c.location); closeIf(l); return err },
			"read": func() error { l, err := book.readOnly(ctx, c.location); closeIf(l); return err },
		} {
			err := call()
			switch {
			case err == nil:
				t.Errorf("%s, %s: no error", c.name, name)
			case !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n"):
				t.Errorf("%s, %s: %v; want one line saying %q", c.name, name, err, c.want)
			case strings.Contains(err.Error(), pw):
				t.Errorf("%s, %s: the message shows the password: %v", c.name, name, err)
			case isBad(err) != c.bad:
				t.Errorf("%s, %s: bad input %v, want %v: %v", c.name, name, isBad(err), c.bad, err)
			}
		}
		if c.name == "unknown ledger" {
			_, err := book.forRun(ctx, c.location)
			var ne *NotLedgerError
			if !errors.As(err, &ne) || !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("unknown ledger: %v, want a *NotLedgerError of fs.ErrNotExist", err)
			}
		}
	}
	// An administrator's edit: the guards refuse it even to the tables'
	// owner.
	admin := sessionOn(t, db)
	setVersion := func(v int) error {
		return admin.exec(fmt.Sprintf(`ALTER TABLE darrm.schema_version DISABLE TRIGGER guard_version;
			UPDATE darrm.schema_version SET version = %d;
			ALTER TABLE darrm.schema_version ENABLE TRIGGER guard_version`, v))
	}
	if err := admin.exec("UPDATE darrm.schema_version SET version = $1", schemaVersion+1); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("the schema's version changed: %v", err)
	}
	if err := setVersion(schemaVersion + 1); err != nil {
		t.Fatal(err)
	}
	defer setVersion(schemaVersion)
	_, err := book.forRun(ctx, u)
	if want := fmt.Sprintf("schema of version %d; this darrm knows version %d: use a newer darrm", schemaVersion+1, schemaVersion); err == nil || !strings.Contains(err.Error(), want) || !isBad(err) {
		t.Errorf("a later schema: %v", err)
	}
	if _, err := book.create(ctx, pgURL(db, "new"), NewHeader(unique(bound), accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}}, 1e-5, simpleFilter(accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}})), false); err == nil || !strings.Contains(err.Error(), "use a newer darrm") {
		t.Errorf("init in a later schema: %v", err)
	}
}

func closeIf(l *Ledger) {
	if l != nil {
		l.Close()
	}
}

// testPGAppendOnly: the database refuses to change, delete or truncate a
// line row; a superuser who drops the trigger and deletes a row leaves a
// ledger that verify finds broken at that line, and that a release
// refuses when its record does not vouch for the lines past it (another
// analyst's, or a new one), as it refuses a file with a line removed. A
// row deleted at or after the line the record vouches for is refused by
// every release; an edit before it, in a file or a database, is found by
// verify (docs/aggregate.md, "Threat model and guarantees"). A row
// appended without darrm, the head left as it was, is refused too.
func testPGAppendOnly(t *testing.T, db string) {
	u := newPG(t, db, "kept", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	last := newPG(t, db, "last", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	for range 4 {
		spendOn(t, book, u, 2, 1)
		spendOn(t, book, last, 2, 1)
	}
	admin := sessionOn(t, db)
	for _, sql := range []string{
		"UPDATE darrm.lines SET line = line WHERE n = 3",
		"DELETE FROM darrm.lines WHERE n = 3",
		"TRUNCATE darrm.lines CASCADE",
	} {
		if err := admin.exec(sql); err == nil || !strings.Contains(err.Error(), "only appended") {
			t.Errorf("%s: %v, want it refused", sql, err)
		}
	}
	_, _, lines := readAll(t, u)

	// The record of this book vouches for the last line; a new one's for
	// none.
	if err := admin.exec("DROP TRIGGER append_only ON darrm.lines"); err != nil {
		t.Fatal(err)
	}
	if err := admin.exec("DELETE FROM darrm.lines WHERE n = 4 AND ledger = (SELECT key FROM darrm.ledgers WHERE name = 'kept')"); err != nil {
		t.Fatal(err)
	}
	_, err := Options{StateDir: t.TempDir()}.readOnly(ctx, u)
	corruptAt(t, "verify, a row deleted", err, 4, "a row of the ledger was deleted")
	_, err = Options{StateDir: t.TempDir()}.forRun(ctx, u)
	corruptAt(t, "another analyst's release, a row deleted", err, 4, "a row of the ledger was deleted")
	_, err = book.forRun(ctx, u) // whose record vouches for the last line
	corruptAt(t, "a release whose record vouches for a later line, a row deleted", err, lines, "holds "+strconv.Itoa(lines-1)+" rows up to line")
	if err := admin.exec("DELETE FROM darrm.lines WHERE n = $1 AND ledger = (SELECT key FROM darrm.ledgers WHERE name = 'last')", lines); err != nil {
		t.Fatal(err)
	}
	_, err = book.forRun(ctx, last)
	corruptAt(t, "a release, its last row deleted", err, lines, "rows were written or deleted without darrm")

	// A row appended by hand after the head, a copy of the last: the
	// database refuses it (its prev is not the head), and with the guard
	// dropped the chain does.
	u2 := newPG(t, db, "appended", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spendOn(t, book, u2, 2, 1)
	const copyLast = "INSERT INTO darrm.lines SELECT ledger, n + 1, line, stop + length(line) + 1 FROM darrm.lines WHERE n = 3 AND ledger = (SELECT key FROM darrm.ledgers WHERE name = 'appended')"
	if err := admin.exec(copyLast); err == nil || !strings.Contains(err.Error(), "does not follow its head") {
		t.Errorf("a row appended by hand: %v", err)
	}
	if err := admin.exec("ALTER TABLE darrm.lines DISABLE TRIGGER append_line; " + copyLast + "; ALTER TABLE darrm.lines ENABLE TRIGGER append_line"); err != nil {
		t.Fatal(err)
	}
	_, err = book.forRun(ctx, u2)
	corruptAt(t, "a row appended by hand, the guard dropped", err, 4, "the chain is broken")
}

// testPGRestored: a database restored from an older backup (its rows and
// head as they were a run ago) is refused by the record of a user who
// released since, as behind, like a file copied back. It drops the
// trigger that would refuse the rows' deletion, as a restore would not
// meet it: it runs at the end.
func testPGRestored(t *testing.T, db string) {
	u := newPG(t, db, "restored", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spendOn(t, book, u, 2, 1)
	spendOn(t, book, u, 2, 2)
	const q = "(SELECT key FROM darrm.ledgers WHERE name = 'restored')"
	err := sqlExec(t, db, `DROP TRIGGER IF EXISTS append_only ON darrm.lines;
		DROP TRIGGER IF EXISTS guard_ledger ON darrm.ledgers;
		DELETE FROM darrm.lines WHERE n > 3 AND ledger = `+q+`;
		UPDATE darrm.ledgers SET lines = 3, size = (SELECT stop FROM darrm.lines WHERE n = 3 AND ledger = `+q+`),
			head = (SELECT convert_from(line, 'UTF8')::json->>'sha256' FROM darrm.lines WHERE n = 3 AND ledger = `+q+`)
		WHERE name = 'restored'`)
	if err != nil {
		t.Fatal(err)
	}
	if spent, _, lines := readAll(t, u); spent.Steps != 1 || lines != 3 {
		t.Fatalf("the ledger restored: %d labels, %d lines", spent.Steps, lines)
	}
	err = openErr(u, book)
	recordError(t, "a release on a database restored from an older backup", err, behind)
	if !strings.Contains(fmt.Sprint(err), "an older copy was restored") {
		t.Errorf("restored: %v", err)
	}
}

// testPGExportImport: a file ledger imported into PostgreSQL keeps its
// lines, chain and totals, its owner's record then names the URL, and
// the file ends with a line that names it, so that every release on the
// file is refused, another analyst's too (one
// who had released on the file released its budget there again, beside
// the database's); the ledger, moved
// on in PostgreSQL and exported, is a file that verifies with the same
// totals. An import refuses a name taken and a ledger of an earlier
// version; an export never writes over a file.
func testPGExportImport(t *testing.T, db string) {
	file := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spendOn(t, book, file, 3, 2)
	bob := Options{StateDir: t.TempDir()}
	spendOn(t, bob, file, 2, 2)
	before, runs, lines := readAll(t, file)
	u := pgURL(db, "moved")
	if err := book.Import(ctx, file, u); err != nil {
		t.Fatal(err)
	}
	got, gotRuns, gotLines := readAll(t, u)
	if got != before || gotRuns != runs || gotLines != lines {
		t.Errorf("imported: %+v, %d runs, %d lines; the file %+v, %d, %d", got, gotRuns, gotLines, before, runs, lines)
	}
	for name, opts := range map[string]Options{"the importer": book, "another analyst": bob, "a fresh analyst": {StateDir: t.TempDir()}} {
		var ee *endedError
		if err := openErr(file, opts); !errors.As(err, &ee) || !strings.Contains(err.Error(), "was imported into "+Redact(u)) {
			t.Errorf("%s's release on the file imported: %v, want it refused as imported", name, err)
		}
	}
	if _, _, fileLines := readAll(t, file); fileLines != lines+1 {
		t.Errorf("the file imported has %d lines; want its %d and an end line", fileLines, lines)
	}
	if err := readErr(file); err != nil {
		t.Errorf("the file imported, read: %v", err)
	}
	// An archive of a file that is still live is no way around the end:
	// refused, naming the file to import; once the file is gone, the
	// archive is the way back.
	live := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spendOn(t, book, live, 1, 1)
	archive := filepath.Join(t.TempDir(), "archive.ledger")
	if err := book.Export(ctx, live, archive); err != nil {
		t.Fatal(err)
	}
	var lse *liveSourceError
	if err := (Options{StateDir: t.TempDir()}).Import(ctx, archive, pgURL(db, "from archive")); !errors.As(err, &lse) || !strings.Contains(err.Error(), "import that file itself") {
		t.Errorf("an archive of a live file imported: %v", err)
	}
	// Nor once the file is imported: the ledger is live in the database.
	if err := book.Import(ctx, live, pgURL(db, "live")); err != nil {
		t.Fatal(err)
	}
	if err := (Options{StateDir: t.TempDir()}).Import(ctx, archive, pgURL(pgtest.DB(t), "from archive")); !errors.As(err, &lse) || !strings.Contains(err.Error(), "which was imported into") {
		t.Errorf("an archive of a file imported, into another database: %v", err)
	}
	gone := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spendOn(t, book, gone, 1, 1)
	archive = filepath.Join(t.TempDir(), "archive.ledger")
	if err := book.Export(ctx, gone, archive); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := (Options{StateDir: t.TempDir()}).Import(ctx, archive, pgURL(db, "from archive")); err != nil {
		t.Errorf("an archive of a file gone: %v", err)
	}
	// An import that stopped after its copy committed, before the file
	// was ended (made here by importing a copy of the file): run again,
	// it goes on and ends the file; once the database has moved on, it
	// is refused.
	again := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spendOn(t, book, again, 1, 1)
	b, err := os.ReadFile(again)
	if err != nil {
		t.Fatal(err)
	}
	twin := filepath.Join(t.TempDir(), "twin.ledger")
	if err := os.WriteFile(twin, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ua := pgURL(db, "again")
	if err := (Options{StateDir: t.TempDir()}).Import(ctx, twin, ua); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(t.TempDir(), "stale.ledger")
	if err := os.WriteFile(stale, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := book.Import(ctx, again, ua); err != nil {
		t.Errorf("an import run again after its copy: %v", err)
	}
	var ee *endedError
	if err := openErr(again, Options{StateDir: t.TempDir()}); !errors.As(err, &ee) {
		t.Errorf("a release on the file, once its import went on: %v, want it refused as imported", err)
	}
	spendOn(t, book, ua, 1, 1)
	if err := (Options{StateDir: t.TempDir()}).Import(ctx, stale, ua); !errors.As(err, new(*takenError)) {
		t.Errorf("an import of the file behind the database: %v, want it refused", err)
	}
	spendOn(t, book, u, 4, 4)
	if err := book.Import(ctx, newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}}), u); !errors.As(err, new(*takenError)) {
		t.Errorf("an import over a ledger: %v", err)
	}

	out := filepath.Join(t.TempDir(), "exported.ledger")
	if err := book.Export(ctx, u, out); err != nil {
		t.Fatal(err)
	}
	want, wantRuns, wantLines := readAll(t, u)
	got, gotRuns, gotLines = readAll(t, out)
	if got != want || gotRuns != wantRuns || gotLines != wantLines+1 || got.Steps != 8 {
		t.Errorf("exported: %+v, %d runs, %d lines; the ledger %+v, %d, %d and an end line", got, gotRuns, gotLines, want, wantRuns, wantLines)
	}
	// The export imported again where the ledger is live would count its
	// spends twice: refused, whoever asks, under any name.
	fresh := Options{StateDir: t.TempDir()}
	var taken *takenError
	if err := fresh.Import(ctx, out, pgURL(db, "moved again")); !errors.As(err, &taken) || !taken.SameID || taken.Other != "moved" {
		t.Errorf("the export imported into the database it came from: %v", err)
	}
	// Into another database it is the ledger as it was, without its end,
	// live there (a move after a disaster): the chain and totals are the
	// ledger's.
	elsewhere := pgURL(pgtest.DB(t), "moved")
	if err := fresh.Import(ctx, out, elsewhere); err != nil {
		t.Fatal(err)
	}
	if got, _, gotLines := readAll(t, elsewhere); got != want || gotLines != wantLines {
		t.Errorf("the export imported elsewhere: %+v, %d lines; want %+v, %d", got, gotLines, want, wantLines)
	}
	spendOn(t, fresh, elsewhere, 1, 1)
	if err := readErr(out); err != nil {
		t.Errorf("the export, read where the record names the ledger: %v", err)
	}
	if err := book.Export(ctx, u, out); !errors.As(err, new(*takenError)) {
		t.Errorf("an export over a file: %v", err)
	}
	if err := openErr(out, book); !errors.As(err, new(*endedError)) {
		t.Errorf("a release on the export: %v", err)
	}
}

// TestPGRoles: the roles docs/aggregate.md gives ("A team"): an
// administrator (a superuser) makes the schema, with its guard, with the
// first ledger, and grants makers and analysts what they need; a maker
// makes ledgers and retires its own, not another's; an analyst charges,
// but may neither make a ledger nor change or delete its rows, nor retire
// one.
func TestPGRoles(t *testing.T) {
	if testing.Short() {
		t.Skip("the roles need a database of their own: without -short")
	}
	db := pgtest.DB(t)
	suffix := strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_")
	makers, maker, analysts, alice := "makers_"+suffix, "maker_"+suffix, "analysts_"+suffix, "alice_"+suffix
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	admin := newPG(t, db, "first", budget)
	for _, sql := range []string{
		"CREATE ROLE " + makers + " NOLOGIN",
		"CREATE ROLE " + maker + " LOGIN PASSWORD 'maker-pw' IN ROLE " + makers,
		"CREATE ROLE " + analysts + " NOLOGIN",
		"CREATE ROLE " + alice + " LOGIN PASSWORD 'alice-pw' IN ROLE " + analysts,
		"GRANT USAGE ON SCHEMA darrm TO " + makers + ", " + analysts,
		"GRANT SELECT ON ALL TABLES IN SCHEMA darrm TO " + makers + ", " + analysts,
		"GRANT INSERT ON darrm.ledgers, darrm.lines TO " + makers,
		"GRANT INSERT ON darrm.lines TO " + analysts,
	} {
		if err := sqlExec(t, db, sql); err != nil {
			var pe interface{ SQLState() string }
			if errors.As(err, &pe) && pe.SQLState() == "42501" {
				t.Skipf("the test server's user may not create roles: %v", err)
			}
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		sqlExec(t, db, "DROP OWNED BY "+maker+", "+makers+", "+analysts+", "+alice+" CASCADE")
		for _, r := range []string{alice, analysts, maker, makers} {
			sqlExec(t, db, "DROP ROLE IF EXISTS "+r)
		}
	})
	as := func(user, pw, name string) string {
		p := mustParse(t, db)
		p.User = url.UserPassword(user, pw)
		if name == "" {
			return p.String()
		}
		return pgURL(p.String(), name)
	}
	team := as(maker, "maker-pw", "team")
	b := unique(bound)
	makerBook := Options{StateDir: t.TempDir()}
	if _, err := makerBook.create(ctx, team, NewHeader(b, budget, 1e-5, simpleFilter(budget)), false); err != nil {
		t.Fatal(err)
	}
	aliceBook := Options{StateDir: t.TempDir()}
	spendOn(t, aliceBook, as(alice, "alice-pw", "team"), 3, 2)
	if spent, _, _ := readAll(t, team); spent.Steps != 2 {
		t.Errorf("alice's run: %d labels counted, want 2", spent.Steps)
	}
	_, err := aliceBook.create(ctx, as(alice, "alice-pw", "alice's own"), NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false)
	if err == nil || !strings.Contains(err.Error(), "may not make ledger") || !strings.Contains(err.Error(), "GRANTs") || !isBad(err) {
		t.Errorf("an analyst's init: %v", err)
	}
	for _, sql := range []string{
		"DELETE FROM darrm.lines",
		"UPDATE darrm.ledgers SET name = 'renamed'",
		"UPDATE darrm.ledgers SET lines = lines + 1",
		"INSERT INTO darrm.ledgers (name, lines, size, head, id, ensemble) VALUES ('x', 0, 0, '', 'x', 'x')",
	} {
		if err := sqlExec(t, as(alice, "alice-pw", ""), sql); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("alice: %s: %v, want it refused", sql, err)
		}
	}
	// The maker retires its own ledger, not the administrator's.
	firstBinding, err := mustRead(t, admin).Header().binding()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Options{StateDir: t.TempDir()}).create(ctx, as(maker, "maker-pw", "second"), NewHeader(firstBinding, budget, 1e-5, simpleFilter(budget)), true); err == nil || !strings.Contains(err.Error(), "may not retire ledger first: only the role that made it") || !isBad(err) {
		t.Errorf("a maker's init --replace of the administrator's ledger: %v", err)
	}
	if _, err := makerBook.create(ctx, as(maker, "maker-pw", "team 2"), NewHeader(b, budget, 1e-5, simpleFilter(budget)), true); err != nil {
		t.Errorf("the maker's init --replace of its own ledger: %v", err)
	}
	if e := mustRead(t, team).chain.closedBy; e == nil || e.By != maker {
		t.Errorf("the maker's ledger after its replacement: end %+v, want one by %s", e, maker)
	}
}

// analystGrants are the GRANTs of docs/aggregate.md ("A team") that let
// the role analysts charge the ledgers of a database: no UPDATE, since
// the database moves a ledger's head itself.
func analystGrants(analysts string) []string {
	return []string{
		"GRANT USAGE ON SCHEMA darrm TO " + analysts,
		"GRANT SELECT ON ALL TABLES IN SCHEMA darrm TO " + analysts,
		"GRANT INSERT ON darrm.lines TO " + analysts,
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestRedact: a URL's password, in its user information or its
// parameters, is ***; a path is as it is.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"k11.ledger":                                "k11.ledger",
		"postgres://u:secret@h:5432/db?ledger=x":    "postgres://u:***@h:5432/db?ledger=x",
		"postgresql://u:s%40c:r@h/db?ledger=x":      "postgresql://u:***@h/db?ledger=x",
		"postgres://u@h/db?ledger=x&password=p&a=b": "postgres://u@h/db?ledger=x&password=***&a=b",
		"postgres://h/db?sslpassword=p&ledger=x":    "postgres://h/db?sslpassword=***&ledger=x",
		"postgres://u:p@h1:1,h2:2/db?ledger=x":      "postgres://u:***@h1:1,h2:2/db?ledger=x",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPGConnectionLostError: a connection that the server ends or the
// network drops while a run uses it (waiting for the lock, reading) is
// said in one line naming the server and what to do, not as the driver's
// bare "unexpected EOF", and never with the password.
func TestPGConnectionLostError(t *testing.T) {
	p, err := parsePG("postgres://alice:s3cret-pw@127.0.0.1:5999/budgets?ledger=team")
	if err != nil {
		t.Fatal(err)
	}
	for _, cause := range []error{io.ErrUnexpectedEOF, io.EOF, syscall.ECONNRESET, fmt.Errorf("write: %w", syscall.EPIPE)} {
		msg := p.fail("lock the ledger", cause).Error()
		if !strings.Contains(msg, "the connection to the server at 127.0.0.1:5999 was lost while darrm tried to lock the ledger") ||
			!strings.Contains(msg, "run again once the server runs") || strings.Contains(msg, "s3cret-pw") || strings.Contains(msg, "\n") {
			t.Errorf("%v: %q", cause, msg)
		}
	}
}

// testPGImportWitnessed: an archive of a file ledger that was then
// imported into a database, the file moved away, is refused by an analyst
// of the team whose witness folder holds the checkpoint the import left,
// though the analyst has no record of the ensemble: imported into a
// second database, it was a second live copy of the same spends. On
// purpose (that database lost), it is imported outside the witness
// folder, and the new ledger adopted as the team's.
func testPGImportWitnessed(t *testing.T, db string) {
	team := t.TempDir()
	importer := Options{StateDir: t.TempDir(), WitnessDir: team}
	file := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spendOn(t, importer, file, 2, 2)
	archive := filepath.Join(t.TempDir(), "archive.ledger")
	if err := importer.Export(ctx, file, archive); err != nil {
		t.Fatal(err)
	}
	live := pgURL(db, "import witnessed")
	if err := importer.Import(ctx, file, live); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file, filepath.Join(t.TempDir(), "moved away.ledger")); err != nil {
		t.Fatal(err)
	}
	other := Options{StateDir: t.TempDir(), WitnessDir: team}
	second := pgURL(pgtest.DB(t), "import witnessed")
	var re *RecordError
	// The importer's record refuses it too, and neither says to adopt
	// the archive, which no adopt takes, but the way back on purpose.
	for _, opts := range []Options{importer, other} {
		err := opts.Import(ctx, archive, second)
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "darrm ledger adopt URL") || strings.Contains(err.Error(), "adopt "+archive) {
			t.Errorf("the archive imported into a second database (witness %v): %v, want the way back on purpose", re != nil && re.Witness, err)
		}
	}
	err := other.Import(ctx, archive, second)
	if !errors.As(err, &re) || re.kind != moved || !strings.Contains(err.Error(), "file copy of a ledger kept in PostgreSQL") || !strings.Contains(err.Error(), Redact(live)) {
		t.Fatalf("the archive imported into a second database by another analyst of the team: %v, want it refused as a copy of %s", err, Redact(live))
	}
	// The way the refusals say, by the importer, whose record names the
	// first database.
	alone := Options{StateDir: t.TempDir()}
	if err := alone.Import(ctx, archive, second); err != nil {
		t.Fatalf("the archive imported with no record, outside the witness folder: %v", err)
	}
	if _, l, err := importer.Adopt(ctx, second); err != nil {
		t.Errorf("the new ledger adopted as the importer's and the team's: %v", err)
	} else {
		l.Close()
	}
	spendOn(t, other, second, 1, 1) // another analyst of the team releases there
}
