package ledger

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/pgtest"
	"github.com/darrm/darrm/provenance"
)

// This file runs the attacks of the second audit of issue 87 on darrm's
// schema and its guard against DDL: the tables' owner changing what the
// guard's fingerprint missed (a trigger's condition, arguments or
// columns, a column's collation or default), and planting, before a
// superuser upgrades the schema or makes the guard, code of its own that
// the superuser's writes would run (a trigger, a CHECK constraint, a
// column default, an overload of darrm.bad_key); an analyst writing a
// line with a line break, or a number that Go reads as 0 and the
// database does not.

// escalateSQL makes, in schema own of the user's, functions that make
// the role owner a superuser when a superuser runs them: a trigger's
// function, a CHECK's and a column default's.
func escalateSQL(owner string) string {
	up := "IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN EXECUTE 'ALTER ROLE " + pgx.Identifier{owner}.Sanitize() + " SUPERUSER'; END IF;"
	return `CREATE SCHEMA own;
CREATE FUNCTION own.t() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` + up + ` RETURN NEW; END $$;
CREATE FUNCTION own.trap() RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN ` + up + ` RETURN true; END $$;
CREATE FUNCTION own.who() RETURNS text LANGUAGE plpgsql AS $$ BEGIN ` + up + ` RETURN session_user; END $$;
`
}

// isSuper says whether the role name is a superuser, read by the test's
// superuser in the database db.
func isSuper(t *testing.T, db, name string) bool {
	t.Helper()
	conn, err := pgConnect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var super bool
	if err := conn.QueryRow(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = $1", name).Scan(&super); err != nil {
		t.Fatal(err)
	}
	return super
}

// TestPGOwnerConditions: in a database with darrm's guard, the tables'
// owner replaces darrm's triggers by ones that its own session switches
// off (a WHEN condition on a setting of its own, which let it settle an
// analyst's killed run at 0), or whose condition runs a function of its
// own as whoever writes (a superuser among them), gives a trigger an
// argument or a column list, changes a column's collation or default,
// adds an index or a CHECK that calls its own function: the guard
// refuses each, and the ledger charges the killed run's 88 labels.
func TestPGOwnerConditions(t *testing.T) {
	db, u, _ := teamLedger(t)
	owner := ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	ownerName := mustParse(t, owner).User.Username()
	giveSchema(t, db, ownerName)
	alice := analystURL(t, u, "alice")
	reserveKilled(t, Options{StateDir: t.TempDir()}, alice, 88)
	conn := connectAs(t, owner)
	if _, err := conn.Exec(ctx, escalateSQL(ownerName)+`CREATE FUNCTION own.imm(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT $1'`); err != nil {
		t.Fatal(err)
	}
	const off = `WHEN (current_setting('audit.off', true) IS DISTINCT FROM 'on')`
	for _, sql := range []string{
		"CREATE OR REPLACE TRIGGER append_line BEFORE INSERT ON darrm.lines FOR EACH ROW " + off + " EXECUTE FUNCTION darrm.append_line()",
		"CREATE OR REPLACE TRIGGER guard_ledger BEFORE INSERT OR UPDATE OR DELETE ON darrm.ledgers FOR EACH ROW " + off + " EXECUTE FUNCTION darrm.guard_ledger()",
		"CREATE OR REPLACE TRIGGER guard_ledger BEFORE INSERT OR UPDATE OR DELETE ON darrm.ledgers FOR EACH ROW WHEN (own.trap()) EXECUTE FUNCTION darrm.guard_ledger()",
		"CREATE OR REPLACE TRIGGER append_only BEFORE UPDATE OF n OR DELETE ON darrm.lines FOR EACH ROW WHEN (OLD.n < 0) EXECUTE FUNCTION darrm.refuse_edit()",
		"CREATE OR REPLACE TRIGGER append_line BEFORE INSERT ON darrm.lines FOR EACH ROW EXECUTE FUNCTION darrm.append_line('ignored')",
		`ALTER TABLE darrm.lines ALTER COLUMN run SET DATA TYPE text COLLATE "C"`,
		"ALTER TABLE darrm.ledgers ALTER COLUMN maker SET DEFAULT own.who()",
		"ALTER TABLE darrm.ledgers ALTER COLUMN retired DROP DEFAULT",
		"CREATE INDEX mine_idx ON darrm.lines (own.imm(n))",
		"ALTER TABLE darrm.lines ADD CONSTRAINT mine CHECK (own.trap())",
		"CREATE FUNCTION darrm.bad_key(j json, plain boolean, shape jsonb, x integer DEFAULT 0) RETURNS text LANGUAGE sql AS 'SELECT NULL::text'",
		"CREATE DOMAIN darrm.mine AS text",
	} {
		if _, err := conn.Exec(ctx, sql); err == nil || !strings.Contains(err.Error(), "refused by darrm's guard") {
			t.Errorf("the owner: %s: %v, want it refused by the guard", sql, err)
		}
	}
	if isSuper(t, db, ownerName) {
		t.Errorf("the owner became a superuser")
	}
	// The settlement at 0 of alice's killed run, which the triggers
	// switched off would have let through, is refused.
	_, _, _, _, s := headLine(t, conn, "team")
	s.Queries, s.Final = 0, true
	if _, err := conn.Exec(ctx, "SET audit.off = 'on'"); err != nil {
		t.Fatal(err)
	}
	if err := appendForged(t, conn, "team", s); err == nil {
		t.Errorf("the owner settled alice's killed run at 0")
	}
	if spent, _, _ := readAll(t, u); spent.Steps != 88 {
		t.Errorf("the ledger counts %d labels; alice's killed run reserved 88", spent.Steps)
	}
}

// plantedObjects lists what of the owner's own is left on darrm's
// tables and in schema darrm: a trigger, a constraint, an index, a
// default or a function that darrm does not make.
func plantedObjects(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	var left []string
	err := conn.QueryRow(ctx, `SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM (
		SELECT 'trigger ' || tgname x FROM pg_trigger WHERE tgrelid IN ('darrm.lines'::regclass, 'darrm.ledgers'::regclass, 'darrm.schema_version'::regclass)
			AND NOT tgisinternal AND tgname NOT IN ('append_line', 'append_only', 'append_only_truncate', 'guard_ledger', 'guard_ledger_truncate', 'check_head', 'guard_version', 'guard_version_truncate')
		UNION ALL SELECT 'constraint ' || conname FROM pg_constraint WHERE connamespace = 'darrm'::regnamespace AND contype = 'c'
		UNION ALL SELECT 'index ' || indexrelid::regclass FROM pg_index WHERE indrelid = 'darrm.lines'::regclass AND indexrelid::regclass::text NOT IN ('darrm.lines_pkey', 'darrm.lines_run')
		UNION ALL SELECT 'default ' || pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE pg_get_expr(adbin, adrelid) LIKE '%own.%'
		UNION ALL SELECT 'function ' || oid::regprocedure FROM pg_proc WHERE pronamespace = 'darrm'::regnamespace
			AND proname NOT IN ('append_line', 'guard_ledger', 'check_head', 'refuse_edit', 'bad_key')
		UNION ALL SELECT 'function ' || oid::regprocedure FROM pg_proc WHERE pronamespace = 'darrm'::regnamespace AND proname = 'bad_key' AND pronargs <> 3
	) f`).Scan(&left)
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// plantSQL is what the tables' owner plants on darrm's tables before a
// superuser makes the guard: triggers, a CHECK, a column default and an
// index that run its own functions, an overload of darrm.bad_key that
// makes every call of it ambiguous, and a function of its own.
const plantSQL = `
CREATE FUNCTION own.imm(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT $1';
CREATE TRIGGER a_owner BEFORE INSERT ON darrm.lines FOR EACH ROW EXECUTE FUNCTION own.t();
CREATE TRIGGER zz_owner BEFORE UPDATE ON darrm.schema_version FOR EACH ROW EXECUTE FUNCTION own.t();
ALTER TABLE darrm.lines ADD CONSTRAINT mine CHECK (own.trap());
ALTER TABLE darrm.ledgers ALTER COLUMN maker SET DEFAULT own.who();
CREATE INDEX mine_idx ON darrm.lines (own.imm(n));
CREATE FUNCTION darrm.bad_key(j json, plain boolean, shape jsonb, x integer DEFAULT 0) RETURNS text LANGUAGE sql AS 'SELECT NULL::text';
CREATE FUNCTION darrm.mine() RETURNS int LANGUAGE sql AS 'SELECT 1';
`

// TestPGSuperuserRunsNoOwnerCode: in a database whose schema its tables'
// owner made (no guard), the owner plants code of its own on darrm's
// tables (plantSQL), which makes it a superuser when a superuser runs it;
// a superuser's darrm ledger upgrade makes the guard: it removes every
// planted object first, so that neither it nor the superuser's releases
// after it run them, and the owner stays what it was. An analyst's
// release then works (no ambiguous darrm.bad_key), and the owner can
// plant nothing again.
func TestPGSuperuserRunsNoOwnerCode(t *testing.T) {
	if testing.Short() {
		t.Skip("roles of their own: without -short")
	}
	db := pgtest.DB(t)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	owner := ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	ownerName := mustParse(t, owner).User.Username()
	u := pgURL(owner, "team")
	if _, err := book.create(ctx, u, NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); err != nil {
		t.Fatal(err)
	}
	conn := connectAs(t, owner)
	if _, err := conn.Exec(ctx, escalateSQL(ownerName)+plantSQL); err != nil {
		t.Fatal(err)
	}
	res, err := (Options{StateDir: t.TempDir()}).Upgrade(ctx, pgURL(db, "team"), provenance.Binding{}, false)
	if err != nil || !res.Guarded || !res.GuardMade {
		t.Fatalf("the superuser's darrm ledger upgrade: %+v, %v", res, err)
	}
	if left := plantedObjects(t, conn); len(left) > 0 {
		t.Errorf("left on darrm's tables after the superuser made the guard: %v", left)
	}
	// The owner's functions, outside schema darrm, are its own to change,
	// and no longer reach darrm's.
	if _, err := conn.Exec(ctx, "CREATE OR REPLACE FUNCTION own.imm(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT $1 + 1'"); err != nil {
		t.Fatal(err)
	}
	newPG(t, db, "second", budget)
	spendOn(t, Options{StateDir: t.TempDir()}, pgURL(db, "team"), 2, 2)
	if isSuper(t, db, ownerName) {
		t.Errorf("the owner became a superuser through the superuser's upgrade or releases")
	}
	spendOn(t, Options{StateDir: t.TempDir()}, analystURL(t, pgURL(db, "team"), "alice"), 3, 3)
	if spent, _, _ := readAll(t, u); spent.Steps != 5 {
		t.Errorf("the ledger counts %d labels; 5 were released", spent.Steps)
	}
	if _, err := conn.Exec(ctx, "CREATE TRIGGER a_owner BEFORE INSERT ON darrm.lines FOR EACH ROW EXECUTE FUNCTION own.t()"); err == nil || !strings.Contains(err.Error(), "refused by darrm's guard") {
		t.Errorf("the owner plants its trigger again under the guard: %v", err)
	}

	// A superuser's release alone, without darrm ledger upgrade, makes the
	// guard as well, the planted objects removed first.
	db = pgtest.DB(t)
	owner = ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	ownerName = mustParse(t, owner).User.Username()
	u = pgURL(owner, "team")
	if _, err := book.create(ctx, u, NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); err != nil {
		t.Fatal(err)
	}
	conn = connectAs(t, owner)
	if _, err := conn.Exec(ctx, escalateSQL(ownerName)+plantSQL); err != nil {
		t.Fatal(err)
	}
	spendOn(t, Options{StateDir: t.TempDir()}, pgURL(db, "team"), 2, 2)
	if isSuper(t, db, ownerName) {
		t.Errorf("the owner became a superuser through the superuser's release")
	}
	if left := plantedObjects(t, conn); len(left) > 0 {
		t.Errorf("left on darrm's tables after the superuser's release: %v", left)
	}
}

// TestPGSchemaRefusesForeign: objects in schema darrm that darrm does not
// make and cannot remove without losing what it holds (a table, a
// column, a column of a type or collation of the owner's own, a child
// table, a view in place of a table) stop the superuser's making of the
// guard, named, and nothing of the owner's runs: a view's query, which
// would run as whoever reads it, and a child table stop a superuser's
// read too, before darrm reads a table.
func TestPGSchemaRefusesForeign(t *testing.T) {
	if testing.Short() {
		t.Skip("roles of their own: without -short")
	}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	for _, c := range []struct {
		plant, says string
		read        bool // a superuser's read is refused too
	}{
		{"CREATE TABLE darrm.more (x int)", "table darrm.more", false},
		{"ALTER TABLE darrm.lines ADD COLUMN note text DEFAULT own.who()", "column darrm.lines.note", false},
		{"CREATE DOMAIN own.txt AS text CHECK (own.trap()); ALTER TABLE darrm.lines ALTER COLUMN writer TYPE own.txt", "column darrm.lines.writer of type own.txt", false},
		{"ALTER TABLE darrm.lines ALTER COLUMN run TYPE text COLLATE \"C\"", `column darrm.lines.run of type text collation "C"`, false},
		{"CREATE TABLE own.more () INHERITS (darrm.lines)", "darrm.lines (a table with a parent or a child)", true},
		{"ALTER TABLE darrm.schema_version RENAME TO sv; CREATE VIEW darrm.schema_version AS SELECT version FROM darrm.sv WHERE own.trap()",
			"darrm.schema_version (a relation of kind v)", true},
	} {
		db := pgtest.DB(t)
		owner := ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
		ownerName := mustParse(t, owner).User.Username()
		if _, err := book.create(ctx, pgURL(owner, "team"), NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); err != nil {
			t.Fatal(err)
		}
		conn := connectAs(t, owner)
		if _, err := conn.Exec(ctx, escalateSQL(ownerName)+"CREATE TRIGGER a_owner BEFORE INSERT ON darrm.lines FOR EACH ROW EXECUTE FUNCTION own.t();"+c.plant); err != nil {
			t.Fatal(err)
		}
		_, err := (Options{StateDir: t.TempDir()}).Upgrade(ctx, pgURL(db, "team"), provenance.Binding{}, false)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: the superuser's darrm ledger upgrade: %v, want it refused, naming %s", c.plant, err, c.says)
		}
		if err := openErr(pgURL(db, "team"), Options{StateDir: t.TempDir()}); err == nil {
			t.Errorf("%s: the superuser's release: accepted", c.plant)
		}
		if _, err := (Options{StateDir: t.TempDir()}).readOnly(ctx, pgURL(db, "team")); c.read && (err == nil || !strings.Contains(err.Error(), c.says)) {
			t.Errorf("%s: the superuser's read: %v, want it refused, naming %s", c.plant, err, c.says)
		}
		if isSuper(t, db, ownerName) {
			t.Errorf("%s: the owner became a superuser", c.plant)
		}
	}
}

// TestPGUpgradeSchema3Planted: the owner of a schema of version 3 that
// it made plants, before a superuser upgrades it, a trigger on
// darrm.schema_version that the upgrade's own UPDATE would run as the
// superuser, and an overload of darrm.bad_key that version 4's DROP
// FUNCTION IF EXISTS missed, which made every append fail: the
// superuser's upgrade removes both before it writes a row, the owner
// stays what it was, and an analyst's release works.
func TestPGUpgradeSchema3Planted(t *testing.T) {
	if testing.Short() {
		t.Skip("databases and roles of their own: without -short")
	}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	file := newLedger(t, budget)
	spendOn(t, book, file, 3, 2)
	want, _, lines := readAll(t, file)
	v3, err := os.ReadFile(filepath.Join("testdata", "schema-v3.sql"))
	if err != nil {
		t.Fatal(err)
	}
	db := pgtest.DB(t)
	owner := ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	ownerName := mustParse(t, owner).User.Username()
	if err := sqlExec(t, owner, string(v3)); err != nil {
		t.Fatal(err)
	}
	putV3(t, owner, file, "old")
	if err := sqlExec(t, owner, escalateSQL(ownerName)+`
		CREATE TRIGGER zz_owner BEFORE UPDATE ON darrm.schema_version FOR EACH ROW EXECUTE FUNCTION own.t();
		CREATE FUNCTION darrm.bad_key(j json, plain boolean, shape jsonb, x integer DEFAULT 0) RETURNS text LANGUAGE sql AS 'SELECT NULL::text';`); err != nil {
		t.Fatal(err)
	}
	if res, err := (Options{StateDir: t.TempDir()}).Upgrade(ctx, pgURL(db, "old"), provenance.Binding{}, false); err != nil || res.SchemaFrom != 3 || !res.Guarded {
		t.Fatalf("the superuser's darrm ledger upgrade: %+v, %v", res, err)
	}
	if isSuper(t, db, ownerName) {
		t.Errorf("the owner's trigger on darrm.schema_version ran as the superuser during the upgrade")
	}
	if left := plantedObjects(t, connectAs(t, owner)); len(left) > 0 {
		t.Errorf("left after the upgrade: %v", left)
	}
	spendOn(t, Options{StateDir: t.TempDir()}, analystURL(t, pgURL(db, "old"), "alice"), 1, 1)
	if got, _, n := readAll(t, pgURL(db, "old")); got.Steps != want.Steps+1 || n != lines+2 {
		t.Errorf("after the upgrade and alice's release: %d labels in %d lines; want %d in %d", got.Steps, n, want.Steps+1, lines+2)
	}
}

// TestPGAnalystLineBreaks: an analyst writes, by hand, a line of its own
// run with a line feed or a carriage return between two keys (valid
// JSON, which the file form of the ledger, ledger export, would split),
// or a number so small that Go reads it as 0 while the database reads
// it as it is: the database refuses each; the plain line is taken.
func TestPGAnalystLineBreaks(t *testing.T) {
	_, u, _ := teamLedger(t)
	alice := analystURL(t, u, "alice")
	spendOn(t, Options{StateDir: t.TempDir()}, alice, 5, 5)
	conn := connectAs(t, alice)
	key, n, stop, head, s := headLine(t, conn, "team")
	prior, _, _ := readAll(t, u)
	mine := s
	mine.Run, mine.Queries, mine.Final, mine.Prior = "a11ce0000000000f", 1, true, &prior
	b, err := json.Marshal(mine)
	if err != nil {
		t.Fatal(err)
	}
	plain := string(b)
	line := func(raw string) []byte {
		return []byte(`{"prev":"` + head + `","spend":` + raw + `,"sha256":"` + chainHash(Version, head, "spend", []byte(raw)) + `"}`)
	}
	e, err := json.Marshal(mine.Eps)
	if err != nil {
		t.Fatal(err)
	}
	eps := `"eps":` + string(e) + `,`
	for _, c := range []struct{ name, old, new, says string }{
		{"a line feed", `"final":true`, "\n" + `"final":true`, "on one line"},
		{"a carriage return", `"final":true`, "\r" + `"final":true`, "on one line"},
		{"eps of 1e-400", eps, `"eps":1e-400,`, "eps is 1e-400, not a number of a float64"},
		{"eps of -2e-324", eps, `"eps":-2e-324,`, "eps is -2e-324, not a number of a float64"},
	} {
		raw := strings.Replace(plain, c.old, c.new, 1)
		if raw == plain {
			t.Fatalf("%s: no %s in %s", c.name, c.old, plain)
		}
		if err := appendRaw(conn, key, n, stop, line(raw)); err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "is not a ledger line") {
			t.Errorf("alice's line with %s: %v, want it refused (%q)", c.name, err, c.says)
		}
	}
	if err := appendRaw(conn, key, n, stop, line(plain)); err != nil {
		t.Errorf("alice's plain line: %v", err)
	}
	if spent, _, _ := readAll(t, u); spent.Steps != 6 {
		t.Errorf("the ledger counts %d labels; alice released 6", spent.Steps)
	}
}

// TestPGOldGuard: a database of schema version 4 with the guard against
// DDL of the darrm that made it (testdata/guard-v4.sql), whose
// fingerprint missed a trigger's condition: the tables' owner switches
// append_line off in its own session, and plants a condition on
// guard_ledger that would make it a superuser when a superuser writes.
// No one's run goes on there but a superuser's, which upgrades the
// schema: an analyst's and the owner's are refused, naming the command
// a superuser runs, and a reader is told; the superuser's darrm ledger
// upgrade removes both conditions and makes this darrm's guard, which
// refuses them from then on, and the owner stays what it was.
func TestPGOldGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("databases and roles of their own: without -short")
	}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	file := newLedger(t, budget)
	spendOn(t, book, file, 3, 2)
	want, _, lines := readAll(t, file)
	var sql []byte
	for _, f := range []string{"schema-v4.sql", "guard-v4.sql"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		sql = append(sql, b...)
	}
	db := pgtest.DB(t)
	if err := sqlExec(t, db, string(sql)); err != nil {
		t.Fatal(err)
	}
	putV3(t, db, file, "old")
	owner := ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	ownerName := mustParse(t, owner).User.Username()
	giveSchema(t, db, ownerName)
	u := pgURL(db, "old")
	alice := analystURL(t, u, "alice")
	conn := connectAs(t, owner)
	const off = `WHEN (current_setting('audit.off', true) IS DISTINCT FROM 'on')`
	if _, err := conn.Exec(ctx, escalateSQL(ownerName)+
		"CREATE OR REPLACE TRIGGER append_line BEFORE INSERT ON darrm.lines FOR EACH ROW "+off+" EXECUTE FUNCTION darrm.append_line();"+
		"CREATE OR REPLACE TRIGGER guard_ledger BEFORE INSERT OR UPDATE OR DELETE ON darrm.ledgers FOR EACH ROW WHEN (own.trap()) EXECUTE FUNCTION darrm.guard_ledger()"); err != nil {
		t.Fatalf("the owner, under the earlier darrm's guard: %v", err)
	}
	for who, at := range map[string]string{"the owner": pgURL(owner, "old"), "alice": alice} {
		if err := openErr(at, Options{StateDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "darrm ledger upgrade "+shellQuote(Redact(at))+" logged in as a superuser (the URL's user, if it names one, replaced by a superuser's)") || !isBad(err) {
			t.Errorf("%s's run under the earlier darrm's guard: %v", who, err)
		}
	}
	if l, err := (Options{StateDir: t.TempDir()}).readOnly(ctx, alice); err != nil {
		t.Errorf("alice's read under the earlier darrm's guard: %v", err)
	} else {
		if notes := strings.Join(l.Notes(), "; "); !strings.Contains(notes, "has the guard against DDL of an earlier darrm") {
			t.Errorf("alice's read under the earlier darrm's guard: notes %q", notes)
		}
		l.Close()
	}
	if res, err := (Options{StateDir: t.TempDir()}).Upgrade(ctx, u, provenance.Binding{}, false); err != nil || res.SchemaFrom != 4 || res.SchemaTo != schemaVersion || !res.Guarded {
		t.Fatalf("the superuser's darrm ledger upgrade: %+v, %v", res, err)
	}
	var conditions int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_trigger WHERE tgrelid IN ('darrm.lines'::regclass, 'darrm.ledgers'::regclass) AND tgqual IS NOT NULL").Scan(&conditions); err != nil || conditions != 0 {
		t.Errorf("after the upgrade, %d triggers with a condition (%v)", conditions, err)
	}
	spendOn(t, Options{StateDir: t.TempDir()}, u, 1, 1)
	spendOn(t, Options{StateDir: t.TempDir()}, alice, 1, 1)
	if isSuper(t, db, ownerName) {
		t.Errorf("the owner's condition on guard_ledger ran as the superuser")
	}
	if got, _, n := readAll(t, u); got.Steps != want.Steps+2 || n != lines+4 {
		t.Errorf("after the upgrade and two releases: %d labels in %d lines; want %d in %d", got.Steps, n, want.Steps+2, lines+4)
	}
	if _, err := conn.Exec(ctx, "CREATE OR REPLACE TRIGGER append_line BEFORE INSERT ON darrm.lines FOR EACH ROW "+off+" EXECUTE FUNCTION darrm.append_line()"); err == nil || !strings.Contains(err.Error(), "refused by darrm's guard") {
		t.Errorf("the owner's condition on append_line under this darrm's guard: %v", err)
	}
}
