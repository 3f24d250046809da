package ledger

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/pgtest"
	"github.com/darrm/darrm/provenance"
)

// This file runs the attacks of the third audit of issue 87: the tables'
// owner putting code of its own where darrm's sessions would run it as
// their user, a superuser or an analyst, with darrm's guard in place (a
// function of the user's name's schema that the server's default
// search_path finds first) or before it (a column of a type whose cast
// to json a read of the rows runs), or racing the superuser's rebuild of
// the schema with a trigger that commits while the rebuild waits.

// TestPGSearchPathPinned: with darrm's guard in place, the tables' owner
// makes a schema named for the superuser, and for an analyst, each with
// a to_jsonb of darrm's ledger rows, which a session of the server's
// default search_path ("$user", public) would call for the catalog's:
// neither the superuser's read and release nor the analyst's runs it
// (the owner stays no superuser; the analyst's run is not settled by it).
func TestPGSearchPathPinned(t *testing.T) {
	if testing.Short() {
		t.Skip("roles of their own: without -short")
	}
	db := pgtest.DB(t)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	owner := ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	ownerName := mustParse(t, owner).User.Username()
	if _, err := book.create(ctx, pgURL(owner, "team"), NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); err != nil {
		t.Fatal(err)
	}
	if _, err := (Options{StateDir: t.TempDir()}).Upgrade(ctx, pgURL(db, "team"), provenance.Binding{}, false); err != nil {
		t.Fatal(err)
	}
	alice := analystURL(t, pgURL(db, "team"), "alice")
	conn := connectAs(t, owner)
	up := "IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN EXECUTE 'ALTER ROLE " + pgx.Identifier{ownerName}.Sanitize() + " SUPERUSER'; END IF;"
	for _, user := range []string{mustParse(t, db).User.Username(), "alice"} {
		s := pgx.Identifier{user}.Sanitize()
		sql := "CREATE SCHEMA " + s + "; GRANT USAGE ON SCHEMA " + s + " TO PUBLIC; CREATE FUNCTION " + s + ".to_jsonb(l darrm.ledgers) RETURNS jsonb LANGUAGE plpgsql AS $$ BEGIN " +
			up + " INSERT INTO darrm.ledgers (name, lines, size, head, id, ensemble) VALUES ('trap-' || session_user, 0, 0, '', 'trap-' || session_user, 'trap-' || session_user); RETURN pg_catalog.to_jsonb(l); END $$; GRANT EXECUTE ON FUNCTION " + s + ".to_jsonb(darrm.ledgers) TO PUBLIC"
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("the owner's schema %s: %v", user, err)
		}
	}
	if _, _, n := readAll(t, pgURL(db, "team")); n != 1 {
		t.Fatalf("the superuser's read: %d lines", n)
	}
	spendOn(t, Options{StateDir: t.TempDir()}, pgURL(db, "team"), 2, 2)
	spendOn(t, Options{StateDir: t.TempDir()}, alice, 3, 3)
	if isSuper(t, db, ownerName) {
		t.Errorf("the owner became a superuser through a superuser's read or release")
	}
	var traps int
	if err := connectAs(t, db).QueryRow(ctx, "SELECT count(*) FROM darrm.ledgers WHERE name LIKE 'trap-%'").Scan(&traps); err != nil || traps != 0 {
		t.Errorf("the owner's to_jsonb ran in %d sessions (%v)", traps, err)
	}
	if spent, _, _ := readAll(t, pgURL(db, "team")); spent.Steps != 5 {
		t.Errorf("the ledger counts %d labels; 5 were released", spent.Steps)
	}
}

// TestPGColumnTypeRefused: in a schema its owner made (no guard yet), the
// owner adds to darrm's ledgers a column of an enum of its own whose cast
// to json makes it a superuser: a superuser's read, release and upgrade
// are refused before they read a row, naming the table, and the owner
// stays no superuser.
func TestPGColumnTypeRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("roles of their own: without -short")
	}
	db := pgtest.DB(t)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	owner := ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	ownerName := mustParse(t, owner).User.Username()
	if _, err := book.create(ctx, pgURL(owner, "team"), NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); err != nil {
		t.Fatal(err)
	}
	up := "IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN EXECUTE 'ALTER ROLE " + pgx.Identifier{ownerName}.Sanitize() + " SUPERUSER'; END IF;"
	if _, err := connectAs(t, owner).Exec(ctx, `CREATE TYPE darrm.e AS ENUM ('a');
CREATE FUNCTION darrm.e_json(x darrm.e) RETURNS json LANGUAGE plpgsql AS $$ BEGIN `+up+` RETURN '"a"'::json; END $$;
CREATE CAST (darrm.e AS json) WITH FUNCTION darrm.e_json(darrm.e);
ALTER TABLE darrm.ledgers ADD COLUMN z darrm.e DEFAULT 'a'`); err != nil {
		t.Fatal(err)
	}
	u := pgURL(db, "team")
	for what, err := range map[string]error{
		"read":    func() error { _, err := (Options{StateDir: t.TempDir()}).readOnly(ctx, u); return err }(),
		"release": openErr(u, Options{StateDir: t.TempDir()}),
		"upgrade": func() error {
			_, err := (Options{StateDir: t.TempDir()}).Upgrade(ctx, u, provenance.Binding{}, false)
			return err
		}(),
	} {
		if err == nil || !strings.Contains(err.Error(), "column darrm.ledgers.z of type darrm.e: darrm does not read, as a superuser") || !isBad(err) {
			t.Errorf("the superuser's %s: %v", what, err)
		}
	}
	if isSuper(t, db, ownerName) {
		t.Errorf("the owner became a superuser through a superuser's read of its column")
	}
}

// TestPGRebuildRace: in a schema its owner made (no guard yet), the owner
// makes a trigger of its own on darrm's lines in a transaction that it
// commits only once the superuser's upgrade waits for the tables: the
// upgrade, which reads the catalogs after it holds them, removes it too,
// and seals none of it.
func TestPGRebuildRace(t *testing.T) {
	if testing.Short() {
		t.Skip("roles of their own: without -short")
	}
	db := pgtest.DB(t)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	owner := ownerRole(t, db, "owner_"+strings.TrimPrefix(strings.TrimPrefix(mustParse(t, db).Path, "/"), "darrm_test_"))
	ownerName := mustParse(t, owner).User.Username()
	if _, err := book.create(ctx, pgURL(owner, "team"), NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); err != nil {
		t.Fatal(err)
	}
	conn := connectAs(t, owner)
	if _, err := conn.Exec(ctx, escalateSQL(ownerName)); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "CREATE TRIGGER aaa_own BEFORE INSERT ON darrm.lines FOR EACH ROW EXECUTE FUNCTION own.t()"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := (Options{StateDir: t.TempDir()}).Upgrade(ctx, pgURL(db, "team"), provenance.Binding{}, false)
		done <- err
	}()
	// Commit once the upgrade waits for a lock on the tables.
	watch := connectAs(t, db)
	for waited := 0; ; waited++ {
		var n int
		if err := watch.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if waited > 200 {
			t.Fatal("the upgrade never waited for the owner's transaction")
		}
		time.Sleep(25 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the superuser's upgrade: %v", err)
	}
	var n int
	if err := watch.QueryRow(ctx, "SELECT count(*) FROM pg_trigger WHERE tgname = 'aaa_own'").Scan(&n); err != nil || n != 0 {
		t.Errorf("the owner's trigger, committed while the upgrade waited, is there after it (%d, %v)", n, err)
	}
	spendOn(t, Options{StateDir: t.TempDir()}, pgURL(db, "team"), 1, 1)
	if isSuper(t, db, ownerName) {
		t.Errorf("the owner became a superuser through its trigger")
	}
}
