package ledger

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The triggers of darrm's tables hold against every role that writes
// rows, the tables' owner included; but the owner of a table may change
// the table itself (ALTER TABLE ... DISABLE TRIGGER, ALTER COLUMN ...
// TYPE ... USING, which rewrites its rows without firing a row trigger,
// CREATE OR REPLACE FUNCTION of a trigger's function, a rule, a policy,
// a table that inherits it), which no row trigger sees. PostgreSQL lets
// only a superuser make an event trigger, which fires on such commands
// whoever runs them: darrm's guard (guardDDLSQL), made when a superuser
// makes or upgrades the schema (the first ledger init, or darrm ledger
// upgrade URL), refuses every command of a role that is not a superuser
// that changes darrm's tables, their columns, triggers, constraints,
// rules, policies or inheritance, its functions or its schema (a
// fingerprint of them in the catalogs, by name, so that a dump restored
// keeps it, sealed by the last superuser who changed them) or that
// rewrites one of its tables. It lives in a schema
// of its own, darrm_guard, which the superuser owns, so that the owner of
// darrm's schema cannot drop it. A superuser can still do anything (drop
// the guard, set session_replication_role): only witnesses outside the
// database catch that (docs/aggregate.md, "Threat model and guarantees").

// guardDDLSQL makes darrm's guard against DDL in a database that has
// darrm's schema, as a superuser.
const guardDDLSQL = `
CREATE SCHEMA darrm_guard;
GRANT USAGE ON SCHEMA darrm_guard TO PUBLIC;
CREATE TABLE darrm_guard.sealed (fingerprint text NOT NULL);
GRANT SELECT ON darrm_guard.sealed TO PUBLIC;
CREATE FUNCTION darrm_guard.fingerprint() RETURNS text LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp AS $$
SELECT md5(coalesce(string_agg(x, E'\n' ORDER BY x), '')) FROM (
	SELECT format('schema %s %s', n.nspname, pg_get_userbyid(n.nspowner)) x FROM pg_namespace n WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('relation %s %s %s %s %s %s %s', c.oid::regclass, c.relkind, pg_get_userbyid(c.relowner), c.relpersistence,
		c.relrowsecurity, c.relforcerowsecurity, c.relhasrules)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('column %s %s %s %s %s', a.attrelid::regclass, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull)
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'darrm' AND a.attnum > 0 AND NOT a.attisdropped
	UNION ALL SELECT format('trigger %s %s %s %s %s', t.tgrelid::regclass, t.tgname, t.tgfoid::regprocedure, t.tgenabled, t.tgtype)
		FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('function %s %s %s %s %s', p.oid::regprocedure, pg_get_userbyid(p.proowner), p.prosecdef, p.proconfig, md5(p.prosrc))
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('constraint %s %s %s %s', co.conrelid::regclass, co.conname, co.contype, pg_get_constraintdef(co.oid))
		FROM pg_constraint co JOIN pg_class c ON c.oid = co.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('inherits %s %s', i.inhrelid::regclass, i.inhparent::regclass)
		FROM pg_inherits i JOIN pg_class c ON c.oid IN (i.inhrelid, i.inhparent) JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('policy %s %s', p.polrelid::regclass, p.polname)
		FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('rule %s %s %s', r.ev_class::regclass, r.rulename, r.ev_enabled)
		FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'darrm'
) f
$$;
CREATE FUNCTION darrm_guard.check() RETURNS event_trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	t regclass;
BEGIN
	IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
		UPDATE darrm_guard.sealed SET fingerprint = darrm_guard.fingerprint();
		RETURN;
	END IF;
	IF TG_EVENT = 'table_rewrite' THEN
		t := pg_event_trigger_table_rewrite_oid()::regclass;
		IF (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = t) IN ('darrm', 'darrm_guard') THEN
			RAISE EXCEPTION 'darrm: % would rewrite table % of darrm''s ledgers, whose rows only their triggers may change: refused by darrm''s guard (only a superuser changes darrm''s tables)', TG_TAG, t
				USING ERRCODE = 'insufficient_privilege';
		END IF;
	ELSIF darrm_guard.fingerprint() IS DISTINCT FROM (SELECT fingerprint FROM darrm_guard.sealed) THEN
		RAISE EXCEPTION 'darrm: % changes darrm''s tables, their triggers or functions: refused by darrm''s guard (only a superuser changes darrm''s tables)', TG_TAG
			USING ERRCODE = 'insufficient_privilege';
	END IF;
END
$$;
INSERT INTO darrm_guard.sealed VALUES (darrm_guard.fingerprint());
CREATE EVENT TRIGGER darrm_guard ON ddl_command_end EXECUTE FUNCTION darrm_guard.check();
CREATE EVENT TRIGGER darrm_guard_rewrite ON table_rewrite EXECUTE FUNCTION darrm_guard.check();
`

// makeGuard makes darrm's guard against DDL in the database of conn, within
// tx, when the session's user is a superuser and the database has none:
// it reports whether the database has the guard now.
func makeGuard(ctx context.Context, tx pgx.Tx) (bool, error) {
	var super, has bool
	err := tx.QueryRow(ctx, `SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = session_user),
		EXISTS (SELECT FROM pg_namespace WHERE nspname = 'darrm_guard')`).Scan(&super, &has)
	if err != nil || has || !super {
		return has, err
	}
	if _, err := tx.Exec(ctx, guardDDLSQL); err != nil {
		return false, fmt.Errorf("make darrm's guard against DDL: %w", err)
	}
	return true, nil
}

// guardState says whether the database of a PostgreSQL ledger has darrm's
// guard against DDL, which refuses a change of darrm's tables that no
// trigger sees (ALTER TABLE ... DISABLE TRIGGER, ALTER COLUMN ... USING)
// to every role but a superuser.
type guardState struct {
	// Guarded says that it has.
	Guarded bool
	// Made says that Upgrade made it now.
	Made bool
	// Owner is the role that owns darrm's tables, and OwnerLogsIn whether
	// it can log in: without the guard, that role can rewrite them.
	Owner       string
	OwnerLogsIn bool
}

// readGuard reads whether the store's database has darrm's guard
// against DDL and who owns darrm's tables: what a reader tells, which a
// run does not ask.
func (s *pgStore) readGuard(ctx context.Context) (guardState, error) {
	var st guardState
	err := s.use(func() error {
		return s.conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_event_trigger WHERE evtname = 'darrm_guard' AND evtenabled <> 'D'),
			coalesce(o.rolname, ''), coalesce(o.rolcanlogin, false)
			FROM pg_class c LEFT JOIN pg_roles o ON o.oid = c.relowner WHERE c.oid = to_regclass('darrm.lines')`).Scan(&st.Guarded, &st.Owner, &st.OwnerLogsIn)
	})
	if err != nil {
		return st, s.fail("read the guard of darrm's tables in database "+s.cfg.Database, err)
	}
	return st, nil
}

// guard makes darrm's guard against DDL in the store's database, when
// its user is a superuser and it has none (a schema that the ledgers'
// owner made), and returns whether the database has it.
func (s *pgStore) guard(ctx context.Context) (guardState, error) {
	st, err := s.readGuard(ctx)
	if err != nil || st.Guarded {
		return st, err
	}
	err = s.use(func() error {
		return pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error {
			var err error
			st.Guarded, err = makeGuard(ctx, tx)
			return err
		})
	})
	if err != nil {
		return st, s.fail("make darrm's guard against DDL in database "+s.cfg.Database, err)
	}
	st.Made = st.Guarded
	return st, nil
}

// guardNote says, of a ledger whose database has no guard against DDL,
// who can rewrite it without its triggers; "" when it has one.
func (s *pgStore) guardNote(ctx context.Context) (string, error) {
	st, err := s.readGuard(ctx)
	if err != nil || st.Guarded {
		return "", err
	}
	logs := "a role that no one logs in as, but that its members can act as"
	if st.OwnerLogsIn {
		logs = "a role that can log in"
	}
	return s.sayf("database %s has no guard against DDL: the owner of darrm's tables, %s (%s), can change them without firing their triggers (ALTER TABLE), and only a witness newer than such a rewrite catches it; a superuser makes the guard with: darrm ledger upgrade %s", s.cfg.Database, st.Owner, logs, shellQuote(s.redacted)), nil
}
