package ledger

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/pgtest"
)

// This file runs the attacks of issue 87 on a ledger in PostgreSQL, each
// as an analyst (a role with the GRANTs of docs/aggregate.md, "A team")
// would write it by hand, without darrm.

// headLine returns the last line of the ledger name in the database of
// conn, its number, the byte after it and its spend (the zero Spend for
// a line of another kind).
func headLine(t *testing.T, conn *pgx.Conn, name string) (key int32, n int, stop int64, hash string, s Spend) {
	t.Helper()
	var line []byte
	err := conn.QueryRow(ctx, `SELECT l.key, l.lines, l.size, l.head, r.line FROM darrm.ledgers l JOIN darrm.lines r ON r.ledger = l.key AND r.n = l.lines
		WHERE l.name = $1`, name).Scan(&key, &n, &stop, &hash, &line)
	if err != nil {
		t.Fatal(err)
	}
	var ln struct {
		Spend *Spend `json:"spend"`
	}
	if err := json.Unmarshal(line, &ln); err != nil {
		t.Fatal(err)
	}
	if ln.Spend != nil {
		s = *ln.Spend
	}
	return key, n, stop, hash, s
}

// appendForged appends, as the user of conn, the line of v (a Spend, a
// Header or an ending) after the head of ledger name, hashed as darrm
// hashes a line, and returns the database's error.
func appendForged(t *testing.T, conn *pgx.Conn, name string, v any) error {
	t.Helper()
	key, n, stop, head, _ := headLine(t, conn, name)
	b, _, err := encodeLine(Version, head, v)
	if err != nil {
		t.Fatal(err)
	}
	return appendRaw(conn, key, n, stop, b[:len(b)-1])
}

// appendRaw appends line after line n (ending at byte stop) of the
// ledger of row key, as the user of conn.
func appendRaw(conn *pgx.Conn, key int32, n int, stop int64, line []byte) error {
	_, err := conn.Exec(ctx, "INSERT INTO darrm.lines (ledger, n, line, stop) VALUES ($1, $2, $3, $4)", key, n+1, line, stop+int64(len(line))+1)
	return err
}

// connectAs connects to the database of the ledger URL location.
func connectAs(t *testing.T, location string) *pgx.Conn {
	t.Helper()
	u := mustParse(t, location)
	u.RawQuery = ""
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn
}

// TestPGAnalystAttacks: an analyst with only SELECT and INSERT on the
// lines writes, by hand, the lines issue 87 found accepted: a settlement
// of 0 labels for another analyst's run, killed after its labels left or
// still running; a line that names another analyst; an end line with a
// forged "by" and successor; a run's totals lowered; a garbage line. The
// database refuses each before it becomes the head, the ledger goes on
// working, and it charges every label reserved: the victim's 88.
func TestPGAnalystAttacks(t *testing.T) {
	if testing.Short() {
		t.Skip("roles of their own: without -short")
	}
	db := pgtest.DB(t)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	u := newPG(t, db, "team", budget)
	bob, alice := analystURL(t, u, "bob"), analystURL(t, u, "alice")
	bobBook, aliceBook := Options{StateDir: t.TempDir()}, Options{StateDir: t.TempDir()}
	spendOn(t, aliceBook, alice, 5, 5)

	// Bob's run reserves 88 labels, which leave; it is killed before it
	// settles (the run is never settled, its connection closed).
	run, err := bobBook.forRun(ctx, bob)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.begin(ctx, "darrm", binding(t, run), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	if err := run.Reserve(ctx, 88); err != nil {
		t.Fatal(err)
	}
	conn := connectAs(t, alice)
	refused := func(name string, err error, says string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want it refused (%q)", name, err, says)
		}
	}
	forge := func(edit func(*Spend)) Spend {
		_, _, _, _, s := headLine(t, conn, "team")
		edit(&s)
		return s
	}
	// While bob's run still holds the ledger, and after it is gone.
	for _, when := range []string{"while it runs", "after it was killed"} {
		if when == "after it was killed" {
			run.store.close()
		}
		refused("a settlement of 0 of bob's run, naming bob, "+when,
			appendForged(t, conn, "team", forge(func(s *Spend) { s.Queries, s.Final = 0, true })), "names analyst bob, but user alice writes it")
		refused("a settlement of 0 of bob's run, naming alice, "+when,
			appendForged(t, conn, "team", forge(func(s *Spend) { s.Queries, s.Final, s.Analyst = 0, true, "alice" })), "is of run "+run.run+", which user bob charged")
	}
	refused("a run of alice's naming bob", appendForged(t, conn, "team", forge(func(s *Spend) {
		s.Run, s.Queries, s.Final, s.Prior.Steps = "a1ice0000000000f", 1, true, s.Prior.Steps+s.Queries
	})), "names analyst bob, but user alice writes it")
	refused("a run of alice's whose totals forget bob's", appendForged(t, conn, "team", forge(func(s *Spend) {
		s.Run, s.Analyst, s.Queries, s.Final = "a1ice0000000000f", "alice", 1, true
	})), "counts 5 labels before it; the lines before it count 93")
	refused("a line of alice's ended run", appendForged(t, conn, "team", forge(func(s *Spend) {
		s.Analyst, s.Queries, s.Final = "alice", 1, true
		s.Run = runs(t, mustRead(t, u))[0].Run
	})), "which ended before it")
	refused("an end line naming another who retired it, and a successor of alice's",
		appendForged(t, conn, "team", ending{Reason: reasonRetired, By: pgUser(t, db), Successor: strings.Repeat("e", 32), Where: "postgres://alice@elsewhere/budgets?ledger=fresh"}),
		"says that "+pgUser(t, db)+" retired it, but user alice writes it")
	refused("an end line of alice's", appendForged(t, conn, "team", ending{Reason: reasonRetired, By: "alice", Successor: strings.Repeat("e", 32)}),
		"user alice may not retire ledger team")
	refused("an end line of an export", appendForged(t, conn, "team", ending{Reason: reasonExported, From: "x"}), "ends only so")
	key, n, stop, head, _ := headLine(t, conn, "team")
	badHash, _, err := encodeLine(Version, head, forge(func(s *Spend) { s.Queries, s.Final, s.Analyst = 88, true, "alice" }))
	if err != nil {
		t.Fatal(err)
	}
	for name, line := range map[string]string{
		"garbage":              "garbage",
		"JSON of no layout":    `{"prev":"` + head + `","spend":{}}`,
		"a line of a bad hash": strings.Replace(strings.TrimSuffix(string(badHash), "\n"), `"queries":88`, `"queries":0`, 1),
	} {
		refused(name, appendRaw(conn, key, n, stop, []byte(line)), "is not a ledger line")
	}
	// Bob, its analyst, may settle his own run; then alice releases as
	// before. Nothing lowered a count: the ledger charges bob's 88.
	bobConn := connectAs(t, bob)
	if err := appendForged(t, bobConn, "team", forge(func(s *Spend) { s.Final = true })); err != nil {
		t.Errorf("bob settles his own run: %v", err)
	}
	spendOn(t, aliceBook, alice, 2, 2)
	refused("a settlement of bob's run after alice's", appendForged(t, bobConn, "team", forge(func(s *Spend) {
		s.Run, s.Analyst, s.Queries, s.Final = run.run, "bob", 0, true
	})), "which ended before it")
	spent, _, _ := readAll(t, u)
	if spent.Steps != 5+88+2 {
		t.Errorf("the ledger counts %d labels; alice released 7 and bob's run reserved 88", spent.Steps)
	}
	// Alice naming bob in darrm is refused before anything.
	aliceAsBob := aliceBook
	aliceAsBob.Analyst = "bob"
	if _, err := aliceAsBob.forRun(ctx, alice); err == nil || !strings.Contains(err.Error(), `the database user that charges it, here "alice"`) || !errors.As(err, new(*accountant.ParamError)) {
		t.Errorf("alice with Options.Analyst bob: %v", err)
	}
}

// mustLine returns line n of the ledger of row key.
func mustLine(t *testing.T, conn *pgx.Conn, key int32, n int) []byte {
	t.Helper()
	var b []byte
	if err := conn.QueryRow(ctx, "SELECT line FROM darrm.lines WHERE ledger = $1 AND n = $2", key, n).Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

// mustRead reads the ledger at location whole, with no record.
func mustRead(t *testing.T, location string) *Ledger {
	t.Helper()
	l, err := Options{StateDir: t.TempDir()}.readOnly(ctx, location)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}
