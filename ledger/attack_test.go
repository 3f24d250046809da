package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/pgtest"
	"github.com/darrm/darrm/provenance"
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
	conn, err := pgConnect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn
}

// teamLedger returns the test's database, a ledger "team" on it of
// budget (50, 1e-2), and that budget, for a test of roles of its own,
// which runs without -short.
func teamLedger(t *testing.T) (db, u string, budget accountant.Budget) {
	t.Helper()
	if testing.Short() {
		t.Skip("roles of their own: without -short")
	}
	db = pgtest.DB(t)
	budget = accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	return db, newPG(t, db, "team", budget), budget
}

// TestPGAnalystAttacks: an analyst with only SELECT and INSERT on the
// lines writes, by hand, the lines issue 87 found accepted: a settlement
// of 0 labels for another analyst's run, killed after its labels left or
// still running; a line that names another analyst; an end line with a
// forged "by" and successor; a run's totals lowered; a garbage line. The
// database refuses each before it becomes the head, the ledger goes on
// working, and it charges every label reserved: the victim's 88. A run of
// the analyst's own past the budget, which the database takes, is damage
// for every reader.
func TestPGAnalystAttacks(t *testing.T) {
	db, u, _ := teamLedger(t)
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
	// Bob's label file, which holds the 88.
	labels := Witness{File: "bob's labels", Labels: 88, Record: Record{Ensemble: run.Header().Ensemble, LedgerID: run.ID(), Lines: run.Lines(), Size: run.Size(), Head: run.Head()}}
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
		refused("a reservation of bob's run, naming alice, "+when,
			appendForged(t, conn, "team", forge(func(s *Spend) { s.Queries, s.Analyst = 100, "alice" })), "is of run "+run.run+", which user bob charged")
	}
	refused("a run of alice's naming bob", appendForged(t, conn, "team", forge(func(s *Spend) {
		s.Run, s.Queries, s.Final, s.Prior.Steps = "a1ice0000000000f", 1, true, s.Prior.Steps+s.Queries
	})), "names analyst bob, but user alice writes it")
	refused("a run of alice's whose totals forget bob's", appendForged(t, conn, "team", forge(func(s *Spend) {
		s.Run, s.Analyst, s.Queries, s.Final = "a1ice0000000000f", "alice", 1, true
	})), "counts 5 labels before it; the lines before it count 93")
	refused("a run of alice's charging back what the runs before it spent", appendForged(t, conn, "team", forge(func(s *Spend) {
		s.Run, s.Analyst, s.Queries, s.Final, s.Prior.Steps = "a1ice0000000000f", "alice", 1, true, s.Prior.Steps+s.Queries
		s.Charge.Point.Eps = -s.Prior.PointEps
	})), "charge.point.eps is -")
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
	// Bob's label file witnesses his run's 88, in the database's rows.
	if err := openErr(u, Options{StateDir: t.TempDir(), Witnesses: []Witness{labels}}); err != nil {
		t.Errorf("bob's label file of 88 labels: %v", err)
	}
	labels.Labels = 89
	var re *RecordError
	if err := openErr(u, Options{StateDir: t.TempDir(), Witnesses: []Witness{labels}}); !errors.As(err, &re) || re.kind != lowered {
		t.Errorf("a label file of 89 labels of bob's run of 88: %v", err)
	}
	// Alice naming bob in darrm is refused before anything.
	aliceAsBob := aliceBook
	aliceAsBob.Analyst = "bob"
	if _, err := aliceAsBob.forRun(ctx, alice); err == nil || !strings.Contains(err.Error(), `the database user that charges it, here "alice"`) || !errors.As(err, new(*param.Error)) {
		t.Errorf("alice with Options.Analyst bob: %v", err)
	}
	// A run of alice's own past the budget, its totals and charge as a
	// release writes them, which the database takes: every reader refuses
	// it, where they published the budget below what the runs spent.
	past := forge(func(s *Spend) {
		s.Run, s.Analyst, s.Queries, s.Final, s.Prior = "a1ice0000000000f", "alice", 100000, true, &spent
	})
	if err := appendForged(t, conn, "team", past); err != nil {
		t.Fatalf("alice's run past the budget: %v", err)
	}
	_, n, _, _, _ = headLine(t, conn, "team")
	_, err = Options{StateDir: t.TempDir()}.readOnly(ctx, u)
	corruptAt(t, "alice's run past the budget", err, n, "past its budget")
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

// ownerRole makes a role name that logs in, owns darrm's schema in the
// database of the ledger URL location (made by the test's superuser, with
// darrm's guard, or, with own, made by that role, without it), and
// returns its URL of location; analysts are then granted what they need.
func ownerRole(t *testing.T, db, name string) string {
	t.Helper()
	role := pgx.Identifier{name}.Sanitize()
	dbName := strings.TrimPrefix(mustParse(t, db).Path, "/")
	for _, sql := range []string{
		"CREATE ROLE " + role + " LOGIN PASSWORD 'owner-pw'",
		"GRANT CREATE ON DATABASE " + pgx.Identifier{dbName}.Sanitize() + " TO " + role,
	} {
		if err := sqlExec(t, db, sql); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		sqlExec(t, db, "DROP OWNED BY "+role+" CASCADE")
		sqlExec(t, db, "DROP ROLE IF EXISTS "+role)
	})
	u := mustParse(t, db)
	u.User = url.UserPassword(name, "owner-pw")
	return u.String()
}

// giveSchema makes the role name the owner of darrm's schema, its tables
// and functions in the database db, as an administrator would.
func giveSchema(t *testing.T, db, name string) {
	t.Helper()
	role := pgx.Identifier{name}.Sanitize()
	sql := "ALTER SCHEMA darrm OWNER TO " + role + "; ALTER TABLE darrm.ledgers OWNER TO " + role + "; ALTER TABLE darrm.lines OWNER TO " + role +
		"; ALTER TABLE darrm.schema_version OWNER TO " + role
	for _, f := range []string{"append_line()", "guard_ledger()", "check_head()", "refuse_edit()", "bad_key(json, boolean, jsonb)"} {
		sql += "; ALTER FUNCTION darrm." + f + " OWNER TO " + role
	}
	if err := sqlExec(t, db, sql); err != nil {
		t.Fatal(err)
	}
}

// TestPGOwnerGuarded: in a database whose schema a superuser made (with
// darrm's guard against DDL), the tables' owner, who logs in, can no
// longer change the tables as issue 87 did (ALTER COLUMN ... TYPE ...
// USING, which fires no row trigger, to move a ledger's tail away and its
// head back), nor in any other way that would make the triggers moot:
// each is refused by the database, and the ledger charges every label.
func TestPGOwnerGuarded(t *testing.T) {
	db, u, budget := teamLedger(t)
	other := newPG(t, db, "other", budget)
	owner := ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	giveSchema(t, db, mustParse(t, owner).User.Username())
	alice := analystURL(t, u, "alice")
	aliceBook := Options{StateDir: t.TempDir()}
	for range 5 {
		spendOn(t, aliceBook, alice, 30, 30)
	}
	spendOn(t, book, other, 1, 1)
	conn := connectAs(t, owner)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA mine"); err != nil {
		t.Fatal(err)
	}
	var key, otherKey int32
	if err := conn.QueryRow(ctx, "SELECT (SELECT key FROM darrm.ledgers WHERE name = 'team'), (SELECT key FROM darrm.ledgers WHERE name = 'other')").Scan(&key, &otherKey); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		// Issue 87's: the tail moved to another ledger's row, the head back.
		fmt.Sprintf("ALTER TABLE darrm.lines ALTER COLUMN ledger TYPE integer USING (CASE WHEN ledger = %d AND n > 6 THEN %d ELSE ledger END)", key, otherKey),
		fmt.Sprintf("ALTER TABLE darrm.ledgers ALTER COLUMN lines TYPE bigint USING (CASE WHEN key = %d THEN 6 ELSE lines END)", key),
		"ALTER TABLE darrm.lines ALTER COLUMN line TYPE bytea USING (substring(line FROM 1))",
		"ALTER TABLE darrm.lines DISABLE TRIGGER append_only",
		"DROP TRIGGER append_line ON darrm.lines",
		"CREATE OR REPLACE FUNCTION darrm.refuse_edit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END $$",
		"ALTER FUNCTION darrm.append_line() SECURITY INVOKER",
		"ALTER FUNCTION darrm.append_line() RESET search_path",
		"CREATE RULE skip AS ON INSERT TO darrm.lines DO INSTEAD NOTHING",
		"ALTER TABLE darrm.lines ENABLE ROW LEVEL SECURITY",
		"CREATE POLICY hide ON darrm.lines USING (n < 6)",
		"CREATE TABLE mine.more () INHERITS (darrm.lines)",
		"ALTER TABLE darrm.lines SET UNLOGGED",
		"ALTER TABLE darrm.lines DROP CONSTRAINT lines_pkey",
		"ALTER TABLE darrm.lines RENAME TO lines_old",
		"ALTER SCHEMA darrm RENAME TO darrm_old",
		"DROP SCHEMA darrm CASCADE",
		"CREATE TRIGGER quiet BEFORE INSERT ON darrm.lines FOR EACH ROW EXECUTE FUNCTION darrm.refuse_edit()",
	} {
		_, err := conn.Exec(ctx, sql)
		if err == nil || !strings.Contains(err.Error(), "refused by darrm's guard") {
			t.Errorf("the owner: %s: %v, want it refused by the guard", sql, err)
		}
	}
	for _, sql := range []string{
		"TRUNCATE darrm.lines CASCADE",
		"ALTER TABLE darrm.lines DISABLE TRIGGER ALL",
		"CREATE RULE hide AS ON SELECT TO darrm.lines DO INSTEAD SELECT * FROM darrm.lines WHERE n < 6",
		"DELETE FROM darrm.lines WHERE n > 6",
		"UPDATE darrm.ledgers SET lines = 6 WHERE name = 'team'",
		"UPDATE darrm.schema_version SET version = 1",
		"SET session_replication_role = replica",
		"DROP EVENT TRIGGER darrm_guard",
		"ALTER EVENT TRIGGER darrm_guard DISABLE",
		"UPDATE darrm_guard.sealed SET fingerprint = ''",
		"DROP SCHEMA darrm_guard CASCADE",
	} {
		if _, err := conn.Exec(ctx, sql); err == nil {
			t.Errorf("the owner: %s: accepted", sql)
		}
	}
	spendOn(t, aliceBook, alice, 1, 1)
	if spent, _, lines := readAll(t, u); spent.Steps != 151 || lines != 13 {
		t.Errorf("after the owner's attempts: %d labels, %d lines; want 151 labels in 13 lines", spent.Steps, lines)
	}
}

// TestPGOwnerUnguarded: in a database whose schema its tables' owner made
// (no guard: the owner is no superuser), the owner can do what issue 87
// did, rewriting the tables without firing a row trigger so that a ledger
// of 150 labels counts 90; that rollback is refused by the team's witness
// folder, which the releases after the rollback's state left, for a
// fresh analyst who has neither a record nor a witness of their own, and
// ledger show says that the database has no guard. The owner's forged
// continuation of the ledger, imported elsewhere, is refused too, and the
// team's checkpoint is not overwritten with it.
func TestPGOwnerUnguarded(t *testing.T) {
	if testing.Short() {
		t.Skip("roles of their own: without -short")
	}
	db := pgtest.DB(t)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	owner := ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	team := t.TempDir()
	ownerBook := Options{StateDir: t.TempDir(), WitnessDir: team}
	u, other := pgURL(owner, "team"), pgURL(owner, "other")
	for _, name := range []string{u, other} {
		if _, err := ownerBook.create(ctx, name, NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); err != nil {
			t.Fatal(err)
		}
	}
	oconn := connectAs(t, owner)
	alice := analystURL(t, pgURL(db, "team"), "alice")
	aliceBook := Options{StateDir: t.TempDir(), WitnessDir: team}
	for range 5 {
		spendOn(t, aliceBook, alice, 30, 30)
	}
	fresh := func() Options { return Options{StateDir: t.TempDir(), WitnessDir: team} }
	if l, err := fresh().readOnly(ctx, u); err != nil {
		t.Fatal(err)
	} else if notes := strings.Join(l.Notes(), "; "); !strings.Contains(notes, "has no guard against DDL") {
		t.Errorf("ledger show of an unguarded database: notes %q", notes)
	} else {
		l.Close()
	}
	var key, otherKey int32
	if err := oconn.QueryRow(ctx, "SELECT (SELECT key FROM darrm.ledgers WHERE name = 'team'), (SELECT key FROM darrm.ledgers WHERE name = 'other')").Scan(&key, &otherKey); err != nil {
		t.Fatal(err)
	}
	var size int64
	var head string
	if err := oconn.QueryRow(ctx, "SELECT stop, convert_from(line, 'UTF8')::jsonb->>'sha256' FROM darrm.lines WHERE ledger = $1 AND n = 7", key).Scan(&size, &head); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		fmt.Sprintf("ALTER TABLE darrm.lines ALTER COLUMN ledger TYPE integer USING (CASE WHEN ledger = %d AND n > 7 THEN %d ELSE ledger END)", key, otherKey),
		fmt.Sprintf("ALTER TABLE darrm.ledgers ALTER COLUMN lines TYPE bigint USING (CASE WHEN key = %d THEN 7 ELSE lines END), ALTER COLUMN size TYPE bigint USING (CASE WHEN key = %d THEN %d ELSE size END), ALTER COLUMN head TYPE text USING (CASE WHEN key = %d THEN '%s' ELSE head END)", key, key, size, key, head),
	} {
		if _, err := oconn.Exec(ctx, sql); err != nil {
			t.Fatalf("the owner, without the guard: %s: %v", sql, err)
		}
	}
	if spent, _, _ := readAll(t, u); spent.Steps != 90 {
		t.Fatalf("the rewritten ledger counts %d labels, want the 90 of issue 87's rollback", spent.Steps)
	}
	if err := openErr(u, Options{StateDir: t.TempDir()}); err != nil {
		t.Errorf("a fresh analyst without the team's folder: %v (nothing of theirs catches it)", err)
	}
	cp, _ := fresh().teamCheckpoint(mustRead(t, u).Header().Ensemble)
	wantWitnessError(t, "a fresh analyst with the team's folder", openErr(u, fresh()), behind, cp, "is behind witness")
	recordError(t, "alice, whose record saw the 150", openErr(alice, Options{StateDir: aliceBook.StateDir}), behind)

	// The forged continuation: a ledger that claims to continue the team's
	// ledger, carrying none of its lines, imported into another database.
	forged := filepath.Join(t.TempDir(), "forged.ledger")
	x := mustRead(t, alice)
	claim := upgraded{Version: Version, Lines: 1_000_000, SHA256: strings.Repeat("0", 64), ID: x.ID(), Head: head}
	h := x.Header()
	h.ID, h.Upgraded = strings.Repeat("f", 32), &claim
	b, _, err := encodeLine(Version, "", h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(forged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	elsewhere := pgURL(pgtest.DB(t), "team")
	if err := (Options{StateDir: t.TempDir()}).Import(ctx, forged, elsewhere); err != nil {
		t.Fatal(err)
	}
	var re *RecordError
	if err := openErr(elsewhere, fresh()); !errors.As(err, &re) || re.kind != unchecked {
		t.Errorf("a fresh analyst with the team's folder, on the forged continuation: %v", err)
	}
	if _, err := fresh().Checkpoint(ctx, elsewhere, cp); !errors.As(err, &re) {
		t.Errorf("a checkpoint of the forged continuation over the team's: %v", err)
	}
	if w, err := ReadWitness(cp); err != nil || w.Record.LedgerID != x.ID() || w.Record.Lines != 11 {
		t.Errorf("the team's checkpoint after: %+v, %v; want the team's ledger at 11 lines", w.Record, err)
	}
}

// removeHeadSQL returns docs/aggregate.md's recipe ("After an error"),
// which psql runs with -v name=NAME -v n=N, by which a superuser removes
// the head line N of ledger NAME that the database took and darrm refuses
// (an analyst's denial of service): nothing can have followed it, since
// every release refuses the ledger at that line.
func removeHeadSQL(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "aggregate.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "```sql\n")[1:] {
		if sql, _, ok := strings.Cut(block, "\n```"); ok && strings.Contains(sql, "DELETE FROM darrm.lines") {
			return sql
		}
	}
	t.Fatal("docs/aggregate.md has no sql block that removes a line")
	return ""
}

// TestPGSuperuserRemovesRefusedLine: an analyst's line that the database
// takes but darrm refuses (a charge below its step's least) stops every
// release at that line; a superuser's removeHeadSQL takes it off, the
// ledger reads as before it, and releases go on.
func TestPGSuperuserRemovesRefusedLine(t *testing.T) {
	db, u, _ := teamLedger(t)
	alice := analystURL(t, u, "alice")
	aliceBook := Options{StateDir: t.TempDir()}
	spendOn(t, aliceBook, alice, 5, 5)
	before, _, lines := readAll(t, u)
	conn := connectAs(t, alice)
	_, _, _, _, s := headLine(t, conn, "team")
	s.Run, s.Queries, s.Final, s.Prior.Steps = "a1ice0000000000f", 1, true, s.Prior.Steps+s.Queries
	s.Charge.Point.Eps /= 2
	if err := appendForged(t, conn, "team", s); err != nil {
		t.Fatalf("alice's line with half its charge: %v, want the database to take it (it cannot recompute a charge)", err)
	}
	if err := openErr(alice, aliceBook); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("line %d", lines+1)) {
		t.Fatalf("a release after alice's line: %v, want it refused at line %d", err, lines+1)
	}
	sql := strings.NewReplacer(":'name'", "'team'", ":n", strconv.Itoa(lines+1)).Replace(removeHeadSQL(t))
	if err := sqlExec(t, db, sql); err != nil {
		t.Fatal(err)
	}
	if after, _, n := readAll(t, u); after != before || n != lines {
		t.Errorf("after the superuser removed line %d: %d lines, %+v; want %d, %+v", lines+1, n, after, lines, before)
	}
	spendOn(t, aliceBook, alice, 2, 2)
	if after, _, n := readAll(t, u); after.Steps != before.Steps+2 || n != lines+2 {
		t.Errorf("alice's release after: %d labels in %d lines", after.Steps, n)
	}
}

// TestPGLongLineBounded: an analyst (SELECT, INSERT on darrm.lines)
// appends a new run's line whose mechanism is a string of 16 MiB, which
// the database takes; every darrm that reads the ledger refuses it as
// longer than maxLineBytes, the documented denial of service, but reads no
// more than that of it: darrm read the row whole first, three times its
// size allocated (600 MB for a line of 200 MB).
func TestPGLongLineBounded(t *testing.T) {
	_, u, _ := teamLedger(t)
	alice, bob := analystURL(t, u, "alice"), analystURL(t, u, "bob")
	spendOn(t, Options{StateDir: t.TempDir()}, bob, 2, 2)
	conn := connectAs(t, alice)
	_, _, _, _, s := headLine(t, conn, "team")
	s.Run, s.Analyst, s.Queries, s.Final = "a1ice0000000000f", "alice", 1, true
	s.Prior.Steps += 2
	const long = 16 << 20
	s.Mechanism = provenance.MechanismName(strings.Repeat("x", long))
	if err := appendForged(t, conn, "team", s); err != nil {
		t.Skipf("the database refused the line of %d bytes: %v", long, err)
	}
	s = Spend{}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Options{StateDir: t.TempDir()}.forRun(ctx, bob)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errLongLine) && !strings.Contains(fmt.Sprint(err), fmt.Sprintf("longer than %d bytes", maxLineBytes)) {
		t.Errorf("a release after the long line: %v, want it refused as too long", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > long {
		t.Errorf("a release allocated %d bytes to refuse a line of %d, where no line it reads is over %d", alloc, long, maxLineBytes)
	}
}
