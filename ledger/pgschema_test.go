package ledger

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/provenance"

	"github.com/jackc/pgx/v5"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/pgtest"
)

// This file runs the attacks of the audit of issue 87 on darrm's schema
// of version 3: the tables' owner, with darrm's guard, shadowing the
// operators of guard_ledger through its search_path; an analyst writing
// a line that the database reads otherwise than darrm (a key twice, or
// in another case, which Go's encoding/json matches to a field) or that
// darrm cannot read (a count of 0.0).

// shadowSQL makes, in a schema evil of the user's own, a
// pg_trigger_depth() of 2 and operators <> and + that say what the
// owner wants: what the owner of darrm's tables puts first in its
// search_path so that a function of darrm's that names them unqualified,
// and is not pinned to the catalog's, takes them.
const shadowSQL = `
CREATE SCHEMA evil;
CREATE FUNCTION evil.pg_trigger_depth() RETURNS int LANGUAGE sql AS 'SELECT 2';
CREATE FUNCTION evil.ne(xid8, xid8) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE FUNCTION evil.ne_text(text, text) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE FUNCTION evil.plus(bigint, integer) RETURNS bigint LANGUAGE sql AS 'SELECT $1';
CREATE OPERATOR evil.<> (LEFTARG = xid8, RIGHTARG = xid8, FUNCTION = evil.ne);
CREATE OPERATOR evil.<> (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.ne_text);
CREATE OPERATOR evil.+ (LEFTARG = bigint, RIGHTARG = integer, FUNCTION = evil.plus);
`

// TestPGOwnerSearchPath: the tables' owner, in a database with darrm's
// guard, shadows guard_ledger's pg_trigger_depth() and operators in a
// schema of its own, and, with no DDL on darrm's objects, sets its
// ledger's made_in to its own transaction (so that append_line takes its
// lines as the maker's own, unchecked) to settle alice's killed run of
// 88 labels at 0, and renames the ledger; and moves the ledger's head
// past its last line from a trigger of its own, where guard_ledger's
// pg_trigger_depth() is 2 as in append_line, which would stop every
// release: the database refuses each, and the ledger charges the 88.
func TestPGOwnerSearchPath(t *testing.T) {
	db, u, _ := teamLedger(t)
	owner := ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	giveSchema(t, db, mustParse(t, owner).User.Username())
	alice := analystURL(t, u, "alice")
	aliceBook := Options{StateDir: t.TempDir()}
	spendOn(t, aliceBook, alice, 5, 5)
	reserveKilled(t, aliceBook, alice, 88)
	conn := connectAs(t, owner)
	if _, err := conn.Exec(ctx, shadowSQL); err != nil {
		t.Fatal(err)
	}
	_, _, _, _, s := headLine(t, conn, "team")
	s.Queries, s.Final = 0, true
	tx := func(sql string, then func()) error {
		t.Helper()
		if _, err := conn.Exec(ctx, "BEGIN; SET LOCAL search_path = evil, pg_catalog"); err != nil {
			t.Fatal(err)
		}
		_, err := conn.Exec(ctx, sql)
		if err == nil && then != nil {
			then()
		}
		end := "ROLLBACK"
		if err == nil {
			end = "COMMIT"
		}
		if _, err := conn.Exec(ctx, end); err != nil {
			t.Fatal(err)
		}
		return err
	}
	const refused = "darrm ledgers are never renamed"
	err := tx("UPDATE darrm.ledgers SET made_in = pg_catalog.pg_current_xact_id() WHERE name = 'team'", func() {
		if err := appendForged(t, conn, "team", s); err == nil {
			t.Errorf("the owner settled alice's killed run at 0 as the ledger's maker")
		}
	})
	if err == nil || !strings.Contains(err.Error(), refused) {
		t.Errorf("the owner, its search_path first, gives its ledger its own transaction: %v, want it refused (%q)", err, refused)
	}
	if err := tx("UPDATE darrm.ledgers SET name = 'renamed' WHERE name = 'team'", nil); err == nil || !strings.Contains(err.Error(), refused) {
		t.Errorf("the owner, its search_path first, renames the ledger: %v, want it refused (%q)", err, refused)
	}
	// pg_trigger_depth() is 2 in a trigger of the owner's own, which
	// moves the head past the last line and retires the ledger.
	_, err = conn.Exec(ctx, `CREATE TABLE evil.t (x int);
		CREATE FUNCTION evil.move() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			UPDATE darrm.ledgers SET lines = lines + 1, head = repeat('0', 64), retired = true WHERE name = 'team';
			RETURN NEW;
		END $$;
		CREATE TRIGGER move BEFORE INSERT ON evil.t FOR EACH ROW EXECUTE FUNCTION evil.move();
		INSERT INTO evil.t VALUES (1)`)
	if err == nil || !strings.Contains(err.Error(), "only an appended line moves a head") {
		t.Errorf("the owner moves the head from a trigger of its own: %v, want it refused", err)
	}
	if spent, _, lines := readAll(t, u); spent.Steps != 93 || lines != 4 {
		t.Errorf("after the owner's attempts: %d labels, %d lines; want alice's 5 and the 88 of her killed run, in 4 lines", spent.Steps, lines)
	}
}

// TestPGAnalystKeys: an analyst writes lines whose JSON the database
// and darrm would read apart, each hashed as darrm hashes a line: a key
// in another case than darrm's (Go's encoding/json takes "Run" for run,
// "ſteps" for steps, the last of them winning, where the database reads
// only run), a key twice; and lines that darrm could not decode, which
// would stop every release: a count that is no Go int (0.0, 1e0), a key
// that darrm does not write, a value of another type, a number out of a
// float64's range, a time that is none. The database refuses each,
// naming the key; the plain line is then taken, and the ledger charges
// every label.
func TestPGAnalystKeys(t *testing.T) {
	db, u, _ := teamLedger(t)
	bob, alice := analystURL(t, u, "bob"), analystURL(t, u, "alice")
	spendOn(t, Options{StateDir: t.TempDir()}, alice, 5, 5)
	reserveKilled(t, Options{StateDir: t.TempDir()}, bob, 88)
	conn := connectAs(t, alice)
	key, n, stop, head, s := headLine(t, conn, "team")
	prior, _, _ := readAll(t, u) // the totals before alice's next run: bob's 88 among them
	mine := s
	mine.Run, mine.Analyst, mine.Queries, mine.Final, mine.Prior = "a11ce0000000000f", "alice", 1, true, &prior
	b, err := json.Marshal(mine)
	if err != nil {
		t.Fatal(err)
	}
	plain := string(b)
	run, steps := `"run":"a11ce0000000000f"`, fmt.Sprintf(`"prior":{"steps":%d`, prior.Steps)
	e, err := json.Marshal(mine.Eps)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(mine.Time)
	if err != nil {
		t.Fatal(err)
	}
	eps, when := `"eps":`+string(e)+`,`, `"time":`+string(w)
	for _, c := range []struct{ name, old, new, says string }{
		{"bob's run as Run", run, run + `,"Run":"` + s.Run + `"`, "key Run is not written in lowercase"},
		{"bob as Analyst", `"analyst":"alice"`, `"analyst":"alice","Analyst":"bob"`, "key Analyst is not written in lowercase"},
		{"Queries", `"queries":1,`, `"queries":1,"Queries":0,`, "key Queries is not written in lowercase"},
		{"Prior", `"prior":{`, `"Prior":{"steps":0},"prior":{`, "key Prior is not written in lowercase"},
		{"prior's Steps", steps, steps + `,"Steps":0`, "key prior.Steps is not written in lowercase"},
		{"prior's ſteps", steps, steps + `,"ſteps":0`, "key prior.ſteps is not written in lowercase"},
		{"run twice, once escaped", run, run + `,"r\u0075n":"` + s.Run + `"`, "key run appears twice"},
		{"prior's steps twice", steps, steps + `,"steps":0`, "key prior.steps appears twice"},
		{"queries 0.0", `"queries":1,`, `"queries":0.0,`, "queries is 0.0, not a count"},
		{"queries 1e0", `"queries":1,`, `"queries":1e0,`, "queries is 1e0, not a count"},
		{"prior's steps as a decimal", steps, steps + ".0", fmt.Sprintf("prior.steps is %d.0, not a count", prior.Steps)},
		{"a key darrm does not write", `"final":true`, `"final":true,"note":"bob"`, "key note is not one darrm writes"},
		{"a key darrm does not write in prior", steps, steps + `,"zz":1`, "key prior.zz is not one darrm writes"},
		{"final as a number", `"final":true`, `"final":1`, "final is 1, not a JSON boolean"},
		{"eps out of a float64's range", eps, `"eps":1e400,`, "eps is 1e400, not a number of a float64"},
		{"eps as a string", eps, `"eps":"0.3",`, `eps is "0.3", not a number of a float64`},
		{"a time that is none", when, `"time":"2026-02-30T00:00:00Z"`, `time is "2026-02-30T00:00:00Z", not a time as darrm writes it`},
	} {
		raw := strings.Replace(plain, c.old, c.new, 1)
		if raw == plain {
			t.Fatalf("%s: no %s in %s", c.name, c.old, plain)
		}
		line := `{"prev":"` + head + `","spend":` + raw + `,"sha256":"` + chainHash(Version, head, "spend", []byte(raw)) + `"}`
		if err := appendRaw(conn, key, n, stop, []byte(line)); err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "is not a ledger line") {
			t.Errorf("alice's line with %s: %v, want it refused (%q)", c.name, err, c.says)
		}
	}
	line := `{"prev":"` + head + `","spend":` + plain + `,"sha256":"` + chainHash(Version, head, "spend", b) + `"}`
	if err := appendRaw(conn, key, n, stop, []byte(line)); err != nil {
		t.Errorf("alice's plain line: %v", err)
	}
	if spent, _, _ := readAll(t, u); spent.Steps != 5+88+1 {
		t.Errorf("the ledger counts %d labels; alice released 6 and bob's run reserved 88", spent.Steps)
	}
	// The maker's end line is checked alike.
	mconn := connectAs(t, u)
	key, n, stop, head, _ = headLine(t, mconn, "team")
	b, err = json.Marshal(ending{Reason: reasonRetired, At: time.Now().UTC(), By: pgUser(t, db), Successor: strings.Repeat("e", 32)})
	if err != nil {
		t.Fatal(err)
	}
	raw := strings.Replace(string(b), `"reason"`, `"note":"x","reason"`, 1)
	line = `{"prev":"` + head + `","end":` + raw + `,"sha256":"` + chainHash(Version, head, "end", []byte(raw)) + `"}`
	if err := appendRaw(mconn, key, n, stop, []byte(line)); err == nil || !strings.Contains(err.Error(), "in its end, key note is not one darrm writes") {
		t.Errorf("the maker's end line with a key darrm does not write: %v", err)
	}
}

// jsonShape is the shape of the JSON that encoding/json writes of a
// value of type ty, as spendShape states it: each key's path (its
// parents' keys, * for an element of an array) and its JSON type.
func jsonShape(t *testing.T, ty reflect.Type) map[string]string {
	shape := map[string]string{}
	var walk func(path string, ty reflect.Type)
	walk = func(path string, ty reflect.Type) {
		for ty.Kind() == reflect.Pointer {
			ty = ty.Elem()
		}
		switch {
		case ty == reflect.TypeFor[time.Time]():
			shape[path] = "time"
			return
		case ty.Implements(reflect.TypeFor[json.Marshaler]()) || reflect.PointerTo(ty).Implements(reflect.TypeFor[json.Marshaler]()):
			t.Fatalf("%s: %s writes its own JSON", path, ty)
		case ty.Implements(reflect.TypeFor[encoding.TextMarshaler]()):
			shape[path] = "string"
			return
		}
		switch ty.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			shape[path] = "count"
		case reflect.Float32, reflect.Float64:
			shape[path] = "number"
			if strings.HasPrefix(path, "charge.") {
				shape[path] = "cost" // a charge's quantities: none below 0
			}
		case reflect.Bool:
			shape[path] = "boolean"
		case reflect.String:
			shape[path] = "string"
		case reflect.Slice:
			shape[path] = "array"
			walk(path+".*", ty.Elem())
		case reflect.Struct:
			if path != "" {
				shape[path] = "object"
			}
			for i := range ty.NumField() {
				f := ty.Field(i)
				name := strings.Split(f.Tag.Get("json"), ",")[0]
				switch {
				case !f.IsExported() || name == "-":
				case f.Anonymous && name == "":
					delete(shape, path)
					walk(path, f.Type)
					if path != "" {
						shape[path] = "object"
					}
				case path == "":
					walk(name, f.Type)
				default:
					walk(path+"."+name, f.Type)
				}
			}
		default:
			t.Fatalf("%s: %s, a type of no shape", path, ty)
		}
	}
	walk("", ty)
	return shape
}

// TestSchemaShapeIsSpends: the shape of a spend line and of an end line
// that the database lets through is the JSON that encoding/json writes
// of a Spend and of an ending: a field added to either needs a new schema
// version, whose shape says it.
func TestSchemaShapeIsSpends(t *testing.T) {
	for _, c := range []struct {
		name string
		got  map[string]string
		ty   reflect.Type
	}{
		{"spend", spendShape, reflect.TypeFor[Spend]()},
		{"end", endShape, reflect.TypeFor[ending]()},
	} {
		if want := jsonShape(t, c.ty); !maps.Equal(c.got, want) {
			t.Errorf("the schema's shape of a line's %s: %v; the Go type's: %v", c.name, c.got, want)
		}
	}
}

// putV3 copies the ledger file at file into a database of schema
// version 3 or earlier as ledger name, its row and lines made in one
// transaction through that schema's triggers, as darrm's import did.
func putV3(t *testing.T, db, file, name string) {
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
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var key int32
		if err := tx.QueryRow(ctx, "INSERT INTO darrm.ledgers (name, lines, size, head, id, ensemble) VALUES ($1, 0, 0, '', $2, $3) RETURNING key", name, id, ensemble).Scan(&key); err != nil {
			return err
		}
		stop := 0
		for i, ln := range lines {
			stop += len(ln) + 1
			if _, err := tx.Exec(ctx, "INSERT INTO darrm.lines (ledger, n, line, stop) VALUES ($1, $2, $3, $4)", key, i+1, []byte(ln), stop); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPGUpgradeSchema3: a database of schema version 3, its ledgers kept,
// is upgraded to the current version: without darrm's guard, by the
// first run of its tables' owner; with it, by a superuser's, the owner's
// and an analyst's refused, naming who upgrades it. Its functions are
// then pinned to the catalog's names, and the guard still refuses the
// owner's changes.
func TestPGUpgradeSchema3(t *testing.T) {
	if testing.Short() {
		t.Skip("databases and roles of their own: without -short")
	}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	file := newLedger(t, budget)
	spendOn(t, book, file, 3, 2)
	reserveKilled(t, book, file, 4)
	want, _, lines := readAll(t, file)
	v3, err := os.ReadFile(filepath.Join("testdata", "schema-v3.sql"))
	if err != nil {
		t.Fatal(err)
	}
	upgraded := func(name, u string) {
		t.Helper()
		var v int
		var pinned bool
		conn := connectAs(t, u)
		err := conn.QueryRow(ctx, `SELECT (SELECT version FROM darrm.schema_version),
			(SELECT bool_and(coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig), false)) FROM pg_proc p WHERE p.pronamespace = 'darrm'::regnamespace)`).Scan(&v, &pinned)
		if err != nil || v != schemaVersion || !pinned {
			t.Errorf("%s: version %d, every function pinned to the catalog's names %v: %v", name, v, pinned, err)
		}
		if got, _, n := readAll(t, u); got.Steps != want.Steps+1 || n != lines+2 {
			t.Errorf("%s: after the upgrade and a release, %d labels in %d lines; want %d in %d", name, got.Steps, n, want.Steps+1, lines+2)
		}
	}

	// Without the guard: the owner made the schema, and upgrades it.
	db := pgtest.DB(t)
	owner := ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	if err := sqlExec(t, owner, string(v3)); err != nil {
		t.Fatal(err)
	}
	putV3(t, owner, file, "old")
	u := pgURL(owner, "old")
	if got, _, n := readAll(t, u); got != want || n != lines {
		t.Fatalf("read in schema 3: %+v, %d lines", got, n)
	}
	alice := analystURL(t, pgURL(db, "old"), "alice")
	ownerName := mustParse(t, owner).User.Username()
	if err := openErr(alice, Options{StateDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "logged in as the owner of darrm's tables, "+ownerName) || !isBad(err) {
		t.Errorf("alice's run on schema 3 without the guard: %v", err)
	}
	// A read says what the schema lets through and who upgrades it; the
	// owner's first run upgrades it and says so.
	if l, err := (Options{StateDir: t.TempDir()}).readOnly(ctx, alice); err != nil {
		t.Errorf("alice's read on schema 3: %v", err)
	} else {
		if notes := strings.Join(l.Notes(), "; "); !strings.Contains(notes, "keeps its ledgers in darrm's schema of version 3, which lets") || !strings.Contains(notes, fmt.Sprintf("upgrades it to %d", schemaVersion)) {
			t.Errorf("alice's read on schema 3: notes %q", notes)
		}
		l.Close()
	}
	run, err := Options{StateDir: t.TempDir()}.forRun(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(run.Notes(), "; "); !strings.Contains(notes, "schema was upgraded from version 3 (which lets") || !strings.Contains(notes, fmt.Sprintf(") to %d: a darrm of before now refuses", schemaVersion)) {
		t.Errorf("the owner's run that upgraded schema 3: notes %q", notes)
	}
	run.Close()
	spendOn(t, Options{StateDir: t.TempDir()}, u, 1, 1)
	upgraded("the owner's upgrade", u)

	// With the guard: only a superuser upgrades it.
	db = pgtest.DB(t)
	if err := sqlExec(t, db, string(v3)+guardDDLSQL); err != nil {
		t.Fatal(err)
	}
	putV3(t, db, file, "old")
	owner = ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	ownerName = mustParse(t, owner).User.Username()
	sql := "ALTER SCHEMA darrm OWNER TO " + ownerName + "; ALTER TABLE darrm.ledgers OWNER TO " + ownerName + "; ALTER TABLE darrm.lines OWNER TO " + ownerName +
		"; ALTER TABLE darrm.schema_version OWNER TO " + ownerName + "; ALTER FUNCTION darrm.append_line() OWNER TO " + ownerName +
		"; ALTER FUNCTION darrm.guard_ledger() OWNER TO " + ownerName + "; ALTER FUNCTION darrm.refuse_edit() OWNER TO " + ownerName
	if err := sqlExec(t, db, sql); err != nil {
		t.Fatal(err)
	}
	u = pgURL(db, "old")
	alice = analystURL(t, u, "alice")
	for who, at := range map[string]string{"the owner": pgURL(owner, "old"), "alice": alice} {
		if err := openErr(at, Options{StateDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "darrm ledger upgrade "+shellQuote(Redact(at))+" logged in as a superuser (the URL's user, if it names one, replaced by a superuser's)") || !isBad(err) {
			t.Errorf("%s's run on schema 3 with the guard: %v", who, err)
		}
	}
	// The superuser's darrm ledger upgrade upgrades it, and says so.
	if res, err := (Options{StateDir: t.TempDir()}).Upgrade(ctx, u, provenance.Binding{}, false); err != nil || !res.Current || res.SchemaFrom != 3 || !res.Guarded {
		t.Fatalf("the superuser's darrm ledger upgrade: %+v, %v", res, err)
	}
	if res, err := (Options{StateDir: t.TempDir()}).Upgrade(ctx, u, provenance.Binding{}, false); err != nil || res.SchemaFrom != 0 {
		t.Errorf("darrm ledger upgrade again: %+v, %v (the schema is current)", res, err)
	}
	spendOn(t, Options{StateDir: t.TempDir()}, u, 1, 1)
	upgraded("the superuser's upgrade", u)
	if _, err := connectAs(t, owner).Exec(ctx, "ALTER FUNCTION darrm.guard_ledger() RESET search_path"); err == nil || !strings.Contains(err.Error(), "refused by darrm's guard") {
		t.Errorf("the owner unpins guard_ledger after the upgrade: %v", err)
	}
}

// TestPGInitRefusedMakesNoSchema: an init refused in a database that has
// no darrm schema (your record names a ledger file of the ensemble)
// leaves the database as it was: no schema, no guard; the init that is
// not refused makes them with its ledger.
func TestPGInitRefusedMakesNoSchema(t *testing.T) {
	db := pgtest.DB(t)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}}
	b := unique(bound)
	if _, err := book.create(ctx, filepath.Join(t.TempDir(), "file.ledger"), NewHeader(b, budget, 1e-5, simpleFilter(budget)), false); err != nil {
		t.Fatal(err)
	}
	darrm := func() (objects int) {
		conn, err := pgConnect(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'darrm%')
			+ (SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'darrm%')`).Scan(&objects)
		if err != nil {
			t.Fatal(err)
		}
		return objects
	}
	var re *RecordError
	if _, err := book.create(ctx, pgURL(db, "second"), NewHeader(b, budget, 1e-5, simpleFilter(budget)), false); !errors.As(err, &re) {
		t.Fatalf("a second ledger of the ensemble: %v, want a *RecordError", err)
	}
	if n := darrm(); n != 0 {
		t.Errorf("a refused init left %d of darrm's schemas and event triggers in the database", n)
	}
	newPG(t, db, "first", budget)
	if darrm() == 0 {
		t.Error("an init made no schema")
	}
}
