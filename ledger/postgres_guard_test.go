package ledger

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/pgtest"
)

// TestPGDurableAfterCrash: a server that acknowledges commits before they
// are on disk (synchronous_commit off, for the whole server, and in the
// analyst's URL) crashes right after a release's charge returned: the
// charge is still there after the restart, because darrm commits every
// charge synchronously. The control, a row committed asynchronously on
// the same server just before the crash, is lost: the crash is one that
// loses what an asynchronous commit acknowledged, so the test can fail.
func TestPGDurableAfterCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("a server of its own to crash: without -short")
	}
	srv := pgtest.NewServer(t)
	db := srv.DB(t)
	// The WAL writer then writes asynchronous commits at most every 10 s,
	// and does not sleep until long after the test.
	for _, sql := range []string{
		"ALTER SYSTEM SET synchronous_commit = off",
		"ALTER SYSTEM SET wal_writer_delay = '10s'",
		"ALTER SYSTEM SET wal_writer_flush_after = 0",
	} {
		if err := sqlExec(t, db, sql); err != nil {
			t.Fatal(err)
		}
	}
	srv.Stop(t)
	srv.Start(t)
	u := newPG(t, db, "durable", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}) + "&options=-csynchronous_commit%3Doff"
	if err := sqlExec(t, db, "CREATE TABLE control (n int)"); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 2; round++ {
		spendOn(t, book, u, 3, 3)
		if err := sqlExec(t, db, "INSERT INTO control VALUES ($1)", round); err != nil {
			t.Fatal(err)
		}
		srv.Crash(t)
		srv.Start(t)
		spent, _, _ := readAll(t, u)
		if spent.Steps != 3*round {
			t.Errorf("round %d: after a crash, %d labels charged; the releases handed out %d", round, spent.Steps, 3*round)
		}
		conn, err := pgConnect(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		var kept int
		err = conn.QueryRow(ctx, "SELECT count(*) FROM control WHERE n = $1", round).Scan(&kept)
		conn.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if kept != 0 {
			t.Fatalf("round %d: the crash kept a row committed asynchronously: it does not test durability", round)
		}
	}
}

// TestPGOneLiveLedger: a database holds at most one live ledger of an
// ensemble, whoever asks: a second ledger of the ensemble is refused at
// init (naming the live one), even for an analyst without a record;
// --replace retires the old ledger with an end line that every analyst's
// release then meets; a retired ledger is never reopened; and the tables'
// owner can neither rename a ledger onto another's lines nor insert a
// copy of a ledger's first lines, short of dropping the guards, which
// the row's check of its header then catches.
func TestPGOneLiveLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("a database of its own: without -short")
	}
	db := pgtest.DB(t)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	b := unique(bound)
	h := NewHeader(b, budget, 1e-5, simpleFilter(budget))
	first := pgURL(db, "first")
	if _, err := book.create(ctx, first, h, false); err != nil {
		t.Fatal(err)
	}
	spendOn(t, book, first, 2, 2)

	// A second ledger of the ensemble, by a fresh analyst.
	fresh := Options{StateDir: t.TempDir()}
	var taken *takenError
	_, err := fresh.create(ctx, pgURL(db, "second"), h, false)
	if !errors.As(err, &taken) || taken.Other != "first" || taken.SameID || !strings.Contains(err.Error(), "has a live ledger of ensemble "+b.Ensemble) {
		t.Fatalf("a second live ledger of an ensemble: %v", err)
	}
	// The unique key holds without darrm's check: the owner's INSERT.
	err = sqlExec(t, db, "INSERT INTO darrm.ledgers (name, lines, size, head, id, ensemble) VALUES ('third', 0, 0, '', 'x', $1)", b.Ensemble)
	if err == nil || !strings.Contains(err.Error(), "ledgers_live") {
		t.Errorf("a second live row of an ensemble inserted by hand: %v", err)
	}
	// A copy of a ledger's first line under another ensemble's row.
	err = sqlExec(t, db, `INSERT INTO darrm.ledgers (name, lines, size, head, id, ensemble) VALUES ('copy', 0, 0, '', 'y', 'another');
		INSERT INTO darrm.lines SELECT (SELECT key FROM darrm.ledgers WHERE name = 'copy'), 1, line, stop FROM darrm.lines
		WHERE n = 1 AND ledger = (SELECT key FROM darrm.ledgers WHERE name = 'first')`)
	if err == nil || !strings.Contains(err.Error(), "not of the identity and ensemble of its row") {
		t.Errorf("a copy of a ledger's header under another row: %v", err)
	}
	// No rename, no reopening, no moving back, no deletion.
	for _, sql := range []string{
		"UPDATE darrm.ledgers SET name = 'renamed' WHERE name = 'first'",
		"UPDATE darrm.ledgers SET lines = lines - 1 WHERE name = 'first'",
		"UPDATE darrm.ledgers SET id = 'z' WHERE name = 'first'",
		"DELETE FROM darrm.ledgers WHERE name = 'first'",
		"TRUNCATE darrm.ledgers CASCADE",
	} {
		if err := sqlExec(t, db, sql); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s: %v", sql, err)
		}
	}

	// --replace retires the live ledger, whoever made it.
	second := pgURL(db, "second")
	h2 := NewHeader(b, budget, 1e-5, simpleFilter(budget))
	if _, err := fresh.create(ctx, second, h2, true); err != nil {
		t.Fatal(err)
	}
	var ended *endedError
	for name, bk := range map[string]Options{"the analyst who made it": book, "another analyst": {StateDir: t.TempDir()}} {
		if err := openErr(first, bk); name != "the analyst who made it" && !errors.As(err, &ended) {
			t.Errorf("%s, a release on the retired ledger: %v", name, err)
		} else if err == nil {
			t.Errorf("%s, a release on the retired ledger: accepted", name)
		}
	}
	l, err := Options{StateDir: t.TempDir()}.readOnly(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if e := l.chain.closedBy; e == nil || e.Reason != reasonRetired || e.Successor == "" || e.Successor == l.Header().ID || l.Spent().Steps != 2 {
		t.Errorf("the retired ledger: end %+v, %d labels", e, l.Spent().Steps)
	}
	l.Close()
	if err := sqlExec(t, db, "UPDATE darrm.ledgers SET retired = false WHERE name = 'first'"); err == nil {
		t.Error("a retired ledger reopened by hand")
	}
	spendOn(t, fresh, second, 1, 1)

	// The guards dropped, the owner swaps the names of the live ledger
	// and the retired one.
	err = sqlExec(t, db, `ALTER TABLE darrm.ledgers DISABLE TRIGGER guard_ledger, DISABLE TRIGGER check_head;
		UPDATE darrm.ledgers SET name = 'swap' WHERE name = 'first';
		UPDATE darrm.ledgers SET name = 'first' WHERE name = 'second';
		UPDATE darrm.ledgers SET name = 'second' WHERE name = 'swap';
		ALTER TABLE darrm.ledgers ENABLE TRIGGER guard_ledger, ENABLE TRIGGER check_head`)
	if err != nil {
		t.Fatal(err)
	}
	// The rows still state their own headers' identities, so the ledger
	// now named second is the retired one, and its end line says so to
	// everyone; a row given another identity is refused.
	if err := openErr(second, Options{StateDir: t.TempDir()}); !errors.As(err, &ended) {
		t.Errorf("a swapped name: %v", err)
	}
	err = sqlExec(t, db, `ALTER TABLE darrm.ledgers DISABLE TRIGGER guard_ledger, DISABLE TRIGGER check_head;
		UPDATE darrm.ledgers SET id = 'forged' WHERE name = 'first';
		ALTER TABLE darrm.ledgers ENABLE TRIGGER guard_ledger, ENABLE TRIGGER check_head`)
	if err != nil {
		t.Fatal(err)
	}
	corruptAt(t, "a row's identity changed", openErr(first, Options{StateDir: t.TempDir()}), 1, "the row was changed without darrm")
}

// schemaV1SQL is darrm's schema of version 1, as a database made by an
// earlier darrm holds it.
const schemaV1SQL = `
CREATE SCHEMA darrm;
CREATE TABLE darrm.schema_version (version integer NOT NULL);
INSERT INTO darrm.schema_version VALUES (1);
CREATE TABLE darrm.ledgers (
	key integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name text NOT NULL UNIQUE,
	lines bigint NOT NULL,
	size bigint NOT NULL,
	head text NOT NULL,
	created timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE darrm.lines (
	ledger integer NOT NULL REFERENCES darrm.ledgers (key),
	n bigint NOT NULL,
	line bytea NOT NULL,
	stop bigint NOT NULL,
	PRIMARY KEY (ledger, n)
);
CREATE FUNCTION darrm.refuse_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'darrm ledger lines are only appended: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON darrm.lines
	FOR EACH ROW EXECUTE FUNCTION darrm.refuse_edit();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON darrm.lines
	FOR EACH STATEMENT EXECUTE FUNCTION darrm.refuse_edit();
`

// putV1 copies the ledger file at file into a database of schema version
// 1 as ledger name, as an earlier darrm's import did.
func putV1(t *testing.T, db, file, name string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	conn, err := pgConnect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var key int32
	last := strings.TrimSuffix(lines[len(lines)-1], "\n")
	head := last[len(last)-66 : len(last)-2]
	if err := conn.QueryRow(ctx, "INSERT INTO darrm.ledgers (name, lines, size, head) VALUES ($1, $2, $3, $4) RETURNING key", name, len(lines), len(b), head).Scan(&key); err != nil {
		t.Fatal(err)
	}
	stop := 0
	for i, ln := range lines {
		stop += len(strings.TrimSuffix(ln, "\n")) + 1
		if _, err := conn.Exec(ctx, "INSERT INTO darrm.lines VALUES ($1, $2, $3, $4)", key, i+1, []byte(strings.TrimSuffix(ln, "\n")), stop); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPGUpgradeSchema: a database of schema version 1 is upgraded by the
// first run of its owner: its ledgers keep their lines and totals and
// take the guards of version 2. One that holds two ledgers of one
// ensemble (an export imported twice) is refused, naming them, and left
// as it was.
func TestPGUpgradeSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("databases of their own: without -short")
	}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	file := newLedger(t, budget)
	spendOn(t, book, file, 3, 2)
	want, _, lines := readAll(t, file)

	db := pgtest.DB(t)
	if err := sqlExec(t, db, schemaV1SQL); err != nil {
		t.Fatal(err)
	}
	putV1(t, db, file, "old")
	u := pgURL(db, "old")
	if got, _, n := readAll(t, u); got != want || n != lines {
		t.Fatalf("read in schema 1: %+v, %d lines", got, n)
	}
	fresh := Options{StateDir: t.TempDir()}
	spendOn(t, fresh, u, 1, 1)
	if got, _, n := readAll(t, u); got.Steps != want.Steps+1 || n != lines+2 {
		t.Errorf("after the upgrade and a release: %d labels, %d lines", got.Steps, n)
	}
	conn, err := pgConnect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var id string
	err = conn.QueryRow(ctx, "SELECT (SELECT version FROM darrm.schema_version), id FROM darrm.ledgers WHERE name = 'old'").Scan(&v, &id)
	conn.Close(ctx)
	if err != nil || v != schemaVersion || len(id) != 32 {
		t.Errorf("the upgraded schema: version %d, id %q: %v", v, id, err)
	}

	dup := pgtest.DB(t)
	if err := sqlExec(t, dup, schemaV1SQL); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"copy 1", "copy 2"} {
		putV1(t, dup, file, name)
	}
	err = openErr(pgURL(dup, "copy 1"), Options{StateDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "ledgers copy 1, copy 2 are all of ensemble") || !isBad(err) {
		t.Errorf("a database of two ledgers of an ensemble: %v", err)
	}
	if err := sqlExec(t, dup, "SELECT 1 FROM darrm.schema_version WHERE version = 1"); err != nil {
		t.Error(err)
	}
	// Reading needs no upgrade.
	if got, _, _ := readAll(t, pgURL(dup, "copy 2")); got != want {
		t.Errorf("read in a database refused its upgrade: %+v", got)
	}
}

// TestPGImportTwice: one export imported again and again into the
// database it came from, under other names and by analysts without a
// record, is refused each time: the spends are counted once.
func TestPGImportTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("a database of its own: without -short")
	}
	db := pgtest.DB(t)
	u := newPG(t, db, "original", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spendOn(t, book, u, 4, 4)
	out := filepath.Join(t.TempDir(), "export.ledger")
	if err := book.Export(ctx, u, out); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		err := Options{StateDir: t.TempDir()}.Import(ctx, out, pgURL(db, fmt.Sprintf("import %d", i)))
		var taken *takenError
		if !errors.As(err, &taken) || !taken.SameID {
			t.Errorf("import %d of one export: %v", i, err)
		}
	}
	if spent, _, _ := readAll(t, u); spent.Steps != 4 {
		t.Errorf("the original: %d labels", spent.Steps)
	}
}

// TestPGDumpRestored: a database dumped with pg_dump at 4 labels, charged
// 6 more, then restored from the dump (its schema dropped and the dump
// loaded with pg_restore, as a team's administrator recovers from a
// disaster): the restored ledger works as before, guards included, and is
// refused by a checkpoint taken after the later releases, whoever runs
// the release, and by the record of the analyst who made them; an analyst
// whose witness is older than the dump, or who has none, is not warned,
// which is why a team keeps its newest witness.
func TestPGDumpRestored(t *testing.T) {
	if testing.Short() {
		t.Skip("pg_dump and pg_restore of a database of its own: without -short")
	}
	db := pgtest.DB(t)
	u := newPG(t, db, "team", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spendOn(t, book, u, 4, 4)
	early := filepath.Join(t.TempDir(), "early.checkpoint")
	if _, err := book.Checkpoint(ctx, u, early); err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(t.TempDir(), "team.dump")
	run := func(name string, args ...string) {
		t.Helper()
		out, err := exec.Command(pgtest.Tool(t, name), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", name, err, out)
		}
	}
	run("pg_dump", "--format=custom", "--schema=darrm", "--file="+dump, "--dbname="+db)
	spendOn(t, book, u, 6, 6)
	late := filepath.Join(t.TempDir(), "late.checkpoint")
	if _, err := book.Checkpoint(ctx, u, late); err != nil {
		t.Fatal(err)
	}
	if err := sqlExec(t, db, "DROP SCHEMA darrm CASCADE"); err != nil {
		t.Fatal(err)
	}
	run("pg_restore", "--dbname="+db, dump)

	if spent, _, _ := readAll(t, u); spent.Steps != 4 {
		t.Fatalf("the database restored: %d labels, want the dump's 4", spent.Steps)
	}
	wantWitnessError(t, "a fresh analyst, against the later checkpoint", openErr(u, witnessed(t, late)), behind, late, "is behind witness")
	recordError(t, "the analyst who released after the dump", openErr(u, book), behind)
	// Not warned: a fresh analyst without a witness, or with one older
	// than the dump. Its release works on the restored ledger, guards and
	// all: a copy of the header under another row is still refused.
	fresh := witnessed(t, early)
	spendOn(t, fresh, u, 1, 1)
	err := sqlExec(t, db, `INSERT INTO darrm.ledgers (name, lines, size, head, id, ensemble) VALUES ('copy', 0, 0, '', 'y', 'another');
		INSERT INTO darrm.lines SELECT (SELECT key FROM darrm.ledgers WHERE name = 'copy'), 1, line, stop FROM darrm.lines
		WHERE n = 1 AND ledger = (SELECT key FROM darrm.ledgers WHERE name = 'team')`)
	if err == nil {
		t.Error("the restored database took a copy of a header under another row")
	}
}

// TestPGImportElsewhere: a ledger exported from database 1 and imported
// into database 2 (the way back after database 1 was lost) is the same
// ledger: an analyst whose record names it in database 1 releases on the
// import with a note that says so, and database 1's copy, if it comes
// back, is then refused as behind the same ledger elsewhere, not said to
// be an older copy restored.
func TestPGImportElsewhere(t *testing.T) {
	if testing.Short() {
		t.Skip("two databases: without -short")
	}
	first := newPG(t, pgtest.DB(t), "team", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	alice := Options{StateDir: t.TempDir()}
	spendOn(t, alice, first, 2, 2)
	out := filepath.Join(t.TempDir(), "team.ledger")
	if err := book.Export(ctx, first, out); err != nil {
		t.Fatal(err)
	}
	second := pgURL(pgtest.DB(t), "team")
	if err := (Options{StateDir: t.TempDir()}).Import(ctx, out, second); err != nil {
		t.Fatal(err)
	}
	l, err := alice.forRun(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(l.Notes(), "; "); !strings.Contains(notes, "the ledger here is a copy of it (an import)") || !strings.Contains(notes, Redact(first)) {
		t.Errorf("alice's first release on the import: notes %q", notes)
	}
	l.Close()
	spendOn(t, alice, second, 1, 1)
	err = openErr(first, alice)
	if re := (*RecordError)(nil); !errors.As(err, &re) || re.kind != copied || !strings.Contains(err.Error(), "a copy of it imported there and charged there since") {
		t.Errorf("database 1's copy after releases on database 2: %v", err)
	}
}

// TestPGRetireRecordedPassword: init --replace retires the ledger that
// your record names, whose URL held a password when it was recorded (the
// record keeps ***): with the password of the new ledger's URL, on the
// same server as the same user, or else with the one that PGPASSWORD
// gives, never with "***".
func TestPGRetireRecordedPassword(t *testing.T) {
	if testing.Short() {
		t.Skip("two databases: without -short")
	}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	db, db2 := pgtest.DB(t), pgtest.DB(t)
	retired := func(name, location string) {
		t.Helper()
		l := mustRead(t, location)
		if e := l.chain.closedBy; e == nil || e.Reason != reasonRetired {
			t.Errorf("%s: the ledger the record named is not retired: %+v", name, e)
		}
	}
	for _, c := range []struct {
		name, next string
		env        bool
	}{
		{"replaced in another database of the server", pgURL(db2, "new"), false},
		{"replaced by a file", filepath.Join(t.TempDir(), "new.ledger"), true},
	} {
		bk := Options{StateDir: t.TempDir()}
		old := pgURL(db, "old "+c.name)
		b := unique(bound)
		if _, err := bk.create(ctx, old, NewHeader(b, budget, 1e-5, simpleFilter(budget)), false); err != nil {
			t.Fatal(err)
		}
		if _, err := bk.create(ctx, c.next, NewHeader(b, budget, 1e-5, simpleFilter(budget)), true); c.env && err == nil {
			t.Errorf("%s, without PGPASSWORD: retired with no password", c.name)
		} else if !c.env && err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.env {
			t.Setenv("PGPASSWORD", password(t, db))
			if _, err := bk.create(ctx, c.next+".2", NewHeader(b, budget, 1e-5, simpleFilter(budget)), true); err != nil {
				t.Fatalf("%s, with PGPASSWORD: %v", c.name, err)
			}
		}
		retired(c.name, old)
	}
}

// putV2 copies the ledger file at file into a database of schema version
// 2 as ledger name, its lines appended one by one through that schema's
// triggers, as darrm of that version wrote them.
func putV2(t *testing.T, db, file, name string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	ok, ensemble, id := headerIdentity([]byte(lines[0]))
	if !ok {
		t.Fatal("no header")
	}
	conn, err := pgConnect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var key int32
	if err := conn.QueryRow(ctx, "INSERT INTO darrm.ledgers (name, lines, size, head, id, ensemble) VALUES ($1, 0, 0, '', $2, $3) RETURNING key", name, id, ensemble).Scan(&key); err != nil {
		t.Fatal(err)
	}
	stop := 0
	for i, ln := range lines {
		stop += len(ln) + 1
		if _, err := conn.Exec(ctx, "INSERT INTO darrm.lines VALUES ($1, $2, $3, $4)", key, i+1, []byte(ln), stop); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPGUpgradeSchema2: a database of schema version 2 (no writer of a
// line known) is upgraded by the first run of its owner, here a
// superuser, with the guard against DDL: its ledgers keep their lines and
// totals, a release charges them, a run killed before version 3 stays
// charged (no one may settle it, the database not knowing who wrote
// it), and no line of an ended run is appended again.
func TestPGUpgradeSchema2(t *testing.T) {
	if testing.Short() {
		t.Skip("a database of its own: without -short")
	}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	file := newLedger(t, budget)
	spendOn(t, book, file, 3, 2)
	reserveKilled(t, book, file, 4)
	want, _, lines := readAll(t, file)
	db := pgtest.DB(t)
	sql, err := os.ReadFile(filepath.Join("testdata", "schema-v2.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlExec(t, db, string(sql)); err != nil {
		t.Fatal(err)
	}
	putV2(t, db, file, "old")
	u := pgURL(db, "old")
	if got, _, n := readAll(t, u); got != want || n != lines {
		t.Fatalf("read in schema 2: %+v, %d lines", got, n)
	}
	fresh := Options{StateDir: t.TempDir()}
	conn := connectAs(t, u)
	last := mustRead(t, u).chain.last
	last.Queries, last.Final, last.Analyst = 0, true, pgUser(t, db)
	l, err := fresh.forRun(ctx, u) // the owner's first run upgrades the schema
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := appendForged(t, conn, "old", last); err == nil || !strings.Contains(err.Error(), "was charged before the database knew who writes a line") {
		t.Errorf("a settlement of 0 of the run killed before the upgrade: %v", err)
	}
	spendOn(t, fresh, u, 1, 1)
	var v int
	var guarded bool
	if err := conn.QueryRow(ctx, "SELECT (SELECT version FROM darrm.schema_version), EXISTS (SELECT FROM pg_event_trigger WHERE evtname = 'darrm_guard')").Scan(&v, &guarded); err != nil || v != schemaVersion || !guarded {
		t.Errorf("the upgraded schema: version %d, guarded %v: %v", v, guarded, err)
	}
	if got, _, n := readAll(t, u); got.Steps != want.Steps+1 || n != lines+2 {
		t.Errorf("after the upgrade and a release: %d labels, %d lines", got.Steps, n)
	}
	if err := appendForged(t, conn, "old", last); err == nil || !strings.Contains(err.Error(), "which ended before it") {
		t.Errorf("a settlement of 0 of the run killed before the upgrade, after another run: %v", err)
	}
}
