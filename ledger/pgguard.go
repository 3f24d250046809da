package ledger

import (
	"context"

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

// guardTag marks darrm's guard of this darrm (a comment on schema
// darrm_guard, which only a superuser changes): a guard without it is an
// earlier darrm's, whose fingerprint missed a trigger's condition, a
// column's collation and default and an index's expression, and that
// sealed whatever the schema held when it was made; a superuser's run,
// init or upgrade makes it anew (secure).
const guardTag = "darrm guard 2"

// guardDDLSQL makes darrm's guard against DDL in a database that has
// darrm's schema, as a superuser. Its fingerprint holds every part of
// darrm's objects that can run code or change what a row means: a
// trigger's whole definition (its events, columns, condition, function
// and arguments) and whether it is enabled, a column's type, collation,
// default, identity and generation, an index's definition, a
// constraint's, a function's (its source, language, settings and
// security), a policy's and a rule's, and every object in schema darrm.
const guardDDLSQL = `
CREATE SCHEMA darrm_guard;
COMMENT ON SCHEMA darrm_guard IS '` + guardTag + `';
GRANT USAGE ON SCHEMA darrm_guard TO PUBLIC;
CREATE TABLE darrm_guard.sealed (fingerprint text NOT NULL);
GRANT SELECT ON darrm_guard.sealed TO PUBLIC;
CREATE FUNCTION darrm_guard.fingerprint() RETURNS text LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp AS $$
WITH s AS (SELECT oid FROM pg_namespace WHERE nspname = 'darrm'), r AS (SELECT c.oid FROM pg_class c WHERE c.relnamespace IN (SELECT oid FROM s))
SELECT md5(coalesce(string_agg(x, E'\n' ORDER BY x), '')) FROM (
	SELECT format('schema %s %s', n.nspname, pg_get_userbyid(n.nspowner)) x FROM pg_namespace n WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('object %s', pg_describe_object(d.classid, d.objid, d.objsubid))
		FROM pg_depend d WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid IN (SELECT oid FROM s)
	UNION ALL SELECT format('relation %s %s %s %s %s %s %s %s', c.oid::regclass, c.relkind, pg_get_userbyid(c.relowner), c.relpersistence,
		c.relrowsecurity, c.relforcerowsecurity, c.relhasrules, c.relispartition)
		FROM pg_class c WHERE c.oid IN (SELECT oid FROM r)
	UNION ALL SELECT format('column %s %s %s %s %s %s %s %s %s', a.attrelid::regclass, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
		a.attcollation::regcollation, a.attidentity, a.attgenerated, pg_get_expr(ad.adbin, ad.adrelid))
		FROM pg_attribute a LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
		WHERE a.attrelid IN (SELECT oid FROM r) AND a.attnum > 0 AND NOT a.attisdropped
	UNION ALL SELECT format('trigger %s %s %s', t.tgrelid::regclass, t.tgenabled, CASE WHEN t.tgisinternal
		THEN format('internal %s %s %s', (SELECT conname FROM pg_constraint WHERE oid = t.tgconstraint), t.tgfoid::regprocedure, t.tgtype)
		ELSE pg_get_triggerdef(t.oid) END)
		FROM pg_trigger t WHERE t.tgrelid IN (SELECT oid FROM r)
	UNION ALL SELECT format('function %s %s %s %s', p.oid::regprocedure, pg_get_userbyid(p.proowner), p.prokind,
		CASE WHEN p.prokind = 'a' THEN md5(p.prosrc) ELSE md5(pg_get_functiondef(p.oid)) END)
		FROM pg_proc p WHERE p.pronamespace IN (SELECT oid FROM s)
	UNION ALL SELECT format('constraint %s %s %s %s', co.conrelid::regclass, co.conname, co.contype, pg_get_constraintdef(co.oid))
		FROM pg_constraint co WHERE co.conrelid IN (SELECT oid FROM r)
	UNION ALL SELECT format('index %s %s', i.indexrelid::regclass, pg_get_indexdef(i.indexrelid))
		FROM pg_index i WHERE i.indrelid IN (SELECT oid FROM r)
	UNION ALL SELECT format('inherits %s %s', i.inhrelid::regclass, i.inhparent::regclass)
		FROM pg_inherits i WHERE i.inhrelid IN (SELECT oid FROM r) OR i.inhparent IN (SELECT oid FROM r)
	UNION ALL SELECT format('policy %s %s %s %s %s %s %s', p.polrelid::regclass, p.polname, p.polcmd, p.polpermissive, p.polroles::regrole[],
		pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid))
		FROM pg_policy p WHERE p.polrelid IN (SELECT oid FROM r)
	UNION ALL SELECT format('rule %s %s %s %s', w.ev_class::regclass, w.rulename, w.ev_enabled, pg_get_ruledef(w.oid))
		FROM pg_rewrite w WHERE w.ev_class IN (SELECT oid FROM r)
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

// unguardSQL drops darrm's guard against DDL, of whichever darrm, so
// that a superuser makes it anew (guardDDLSQL).
const unguardSQL = `
DROP EVENT TRIGGER IF EXISTS darrm_guard;
DROP EVENT TRIGGER IF EXISTS darrm_guard_rewrite;
DROP SCHEMA IF EXISTS darrm_guard CASCADE;
`

// guardStateSQL reads whether the session's user is a superuser, whether
// the database has darrm's guard against DDL (of any darrm), and whether
// it is this darrm's (guardTag).
const guardStateSQL = `SELECT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user),
	(SELECT count(*) = 2 FROM pg_catalog.pg_event_trigger WHERE evtname IN ('darrm_guard', 'darrm_guard_rewrite') AND evtenabled <> 'D'),
	coalesce(pg_catalog.obj_description(pg_catalog.to_regnamespace('darrm_guard'), 'pg_namespace') = '` + guardTag + `', false)`

// rebuild, within tx, which holds the schema's lock, rids darrm's schema
// of what darrm does not make (cleanSQL), runs migrate (the upgrade of
// its tables, if any) and makes darrm's indexes, functions and triggers
// (guardSQL), all with the catalog's search_path; when the session's
// user is a superuser, it makes darrm's guard against DDL anew, sealing
// the schema as darrm made it. Nothing of the tables' owner's runs
// before cleanSQL has removed it.
func rebuild(ctx context.Context, tx pgx.Tx, migrate string) error {
	var super bool
	if err := tx.QueryRow(ctx, "SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user").Scan(&super); err != nil {
		return err
	}
	// The tables locked first, so that the catalogs cleanSQL reads after
	// hold every trigger, rule or index another session made on them: one
	// that committed while this waited is seen, and none comes after.
	sql := "SET LOCAL search_path = pg_catalog, pg_temp;\nLOCK TABLE darrm.schema_version, darrm.ledgers, darrm.lines IN ACCESS EXCLUSIVE MODE;\n"
	if super {
		sql += unguardSQL
	}
	sql += cleanSQL + migrate + guardSQL + ownFunctionsSQL
	if super {
		sql += guardDDLSQL
	}
	_, err := tx.Exec(ctx, sql)
	return err
}

// foreignTablesSQL names, for a superuser's session, each of darrm's
// tables that is not a plain table of its own (a view, whose query runs
// functions as whoever reads it; a table with a parent or a child; a
// table with a column of a type of another schema than the catalog's,
// whose cast to json or output function a read of its rows runs), ""
// when there is none or the user is no superuser.
const foreignTablesSQL = `SELECT coalesce(string_agg(what, ', '), '')
	FROM (SELECT ARRAY[pg_catalog.to_regclass('darrm.schema_version'), pg_catalog.to_regclass('darrm.ledgers'), pg_catalog.to_regclass('darrm.lines')]::pg_catalog.oid[]) d(darrm_tables),
	LATERAL (
	SELECT pg_catalog.format('%s (%s)', c.oid::pg_catalog.regclass,
		CASE WHEN c.relkind <> 'r' THEN pg_catalog.format('a relation of kind %s', c.relkind) ELSE 'a table with a parent or a child' END)
		FROM pg_catalog.pg_class c WHERE c.oid = ANY (darrm_tables)
		AND (c.relkind <> 'r' OR EXISTS (SELECT FROM pg_catalog.pg_inherits i WHERE c.oid IN (i.inhrelid, i.inhparent)))
	UNION ALL
	SELECT pg_catalog.format('column %s.%I of type %s', a.attrelid::pg_catalog.regclass, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod))
		FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem
		WHERE a.attrelid = ANY (darrm_tables) AND a.attnum > 0 AND NOT a.attisdropped
		AND (t.typnamespace <> 'pg_catalog'::pg_catalog.regnamespace OR e.typnamespace <> 'pg_catalog'::pg_catalog.regnamespace)
) f(what)
	WHERE (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user)`

// vet refuses a superuser's session on a database where one of darrm's
// tables is not a plain table of the catalog's types (foreignTablesSQL),
// before darrm reads any of them: a view's query, or a column type's cast,
// which the tables' owner of a database without the guard can put there,
// runs its functions as the superuser who reads it.
func (p *pgLocation) vet(ctx context.Context, conn *pgx.Conn) error {
	var bad string
	if err := conn.QueryRow(ctx, foreignTablesSQL).Scan(&bad); err != nil {
		return p.fail("read the tables of darrm's schema in database "+p.cfg.Database, err)
	}
	if bad != "" {
		return &serverError{where: p.redacted, bad: true, reason: p.sayf("in database %s, %s: darrm does not read, as a superuser, a table of darrm's that is not a plain table of the catalog's types, whose owner's functions would run as the superuser: a superuser removes it (what remains of darrm's schema, darrm's guard against DDL then keeps)", p.cfg.Database, bad)}
	}
	return nil
}

// secure makes darrm's guard against DDL of this darrm in the database
// of conn, whose schema is of the current version, when the session's
// user is a superuser and the database has none or an earlier darrm's:
// it rebuilds the schema first (rebuild), so that the superuser's run
// that follows never runs what the tables' owner planted, and reports
// whether it did. A run of another user on a database whose guard is an
// earlier darrm's is refused (a *serverError that says who renews it):
// that guard lets the tables' owner switch darrm's triggers off.
func (p *pgLocation) secure(ctx context.Context, conn *pgx.Conn) (bool, error) {
	var super, guarded, current bool
	if err := conn.QueryRow(ctx, guardStateSQL).Scan(&super, &guarded, &current); err != nil {
		return false, p.fail("read the guard of darrm's tables in database "+p.cfg.Database, err)
	}
	switch {
	case guarded && current:
		return false, nil
	case guarded && !super:
		return false, &serverError{where: p.redacted, bad: true, reason: p.sayf("database %s has the guard against DDL of an earlier darrm, which lets the owner of darrm's tables switch their triggers off with a condition of its own (settling an analyst's run), and which this darrm does not run on: a superuser renews it with: darrm ledger upgrade %s", p.cfg.Database, shellQuote(p.redacted))}
	case !super:
		return false, nil
	}
	made := false
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, 0)", lockSpace); err != nil {
			return err
		}
		var v int
		if err := tx.QueryRow(ctx, guardStateSQL).Scan(&super, &guarded, &current); err != nil || guarded && current {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT version FROM darrm.schema_version").Scan(&v); err != nil || v != schemaVersion {
			return err
		}
		err := rebuild(ctx, tx, "")
		made = err == nil
		return err
	})
	if err != nil {
		return false, p.fail("make darrm's guard against DDL in database "+p.cfg.Database, err)
	}
	return made, nil
}

// guardState says whether the database of a PostgreSQL ledger has darrm's
// guard against DDL, which refuses a change of darrm's tables that no
// trigger sees (ALTER TABLE ... DISABLE TRIGGER, ALTER COLUMN ... USING)
// to every role but a superuser.
type guardState struct {
	// Guarded says that it has, and Current that it is this darrm's.
	Guarded, Current bool
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
	err := s.use(func() (err error) {
		st, err = guardOf(ctx, s.conn)
		return err
	})
	if err != nil {
		return st, s.fail("read the guard of darrm's tables in database "+s.cfg.Database, err)
	}
	return st, nil
}

// guardOf reads, on conn, whether its database has darrm's guard against
// DDL (of this darrm, Current) and who owns darrm's tables.
func guardOf(ctx context.Context, conn *pgx.Conn) (guardState, error) {
	var st guardState
	var super bool
	err := conn.QueryRow(ctx, `SELECT g.*, coalesce(o.rolname, ''), coalesce(o.rolcanlogin, false)
		FROM (`+guardStateSQL+`) g LEFT JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass('darrm.lines') LEFT JOIN pg_catalog.pg_roles o ON o.oid = c.relowner`).Scan(&super, &st.Guarded, &st.Current, &st.Owner, &st.OwnerLogsIn)
	st.Current = st.Guarded && st.Current
	return st, err
}

// guard says whether the store's database has darrm's guard against DDL,
// which opening it for a run made when its user is a superuser and it
// had none of this darrm's (secure).
func (s *pgStore) guard(ctx context.Context) (guardState, error) {
	st, err := s.readGuard(ctx)
	st.Made = s.guardMade
	return st, err
}

// schemaNote says, of a ledger whose database keeps its ledgers in an
// earlier schema (read only: a run upgrades it or is refused), what that
// schema lets a user do and who upgrades it, and of one whose schema this
// opening upgraded, that darrm of before no longer opens it; "" when the
// schema was current.
func (s *pgStore) schemaNote() string {
	switch {
	case s.schemaFrom > 0:
		return s.sayf("database %s's darrm schema was upgraded from version %d (which %s) to %d: a darrm of before now refuses its ledgers, saying to use a newer one", s.cfg.Database, s.schemaFrom, oldSchemaLets[s.schemaFrom], schemaVersion)
	case s.row.version > 0 && s.row.version < schemaVersion:
		return s.sayf("database %s keeps its ledgers in darrm's schema of version %d, which %s: the next run of the owner of darrm's tables upgrades it to %d (where darrm's guard against DDL is in place, a superuser's: darrm ledger upgrade %s), and until then no release of this darrm runs there", s.cfg.Database, s.row.version, oldSchemaLets[s.row.version], schemaVersion, shellQuote(s.redacted))
	}
	return ""
}

// guardNote says, of a ledger whose database has no guard against DDL or
// an earlier darrm's, who can rewrite it without its triggers; "" when
// it has this darrm's.
func (s *pgStore) guardNote(ctx context.Context) (string, error) {
	st, err := s.readGuard(ctx)
	if err != nil || st.Current {
		return "", err
	}
	if st.Guarded {
		return s.sayf("database %s has the guard against DDL of an earlier darrm, which lets the owner of darrm's tables, %s, switch their triggers off with a condition of its own; this darrm runs no release on it until a superuser renews it with: darrm ledger upgrade %s", s.cfg.Database, st.Owner, shellQuote(s.redacted)), nil
	}
	logs := "a role that no one logs in as, but that its members can act as"
	if st.OwnerLogsIn {
		logs = "a role that can log in"
	}
	return s.sayf("database %s has no guard against DDL: the owner of darrm's tables, %s (%s), can change them without firing their triggers (ALTER TABLE), and only a witness newer than such a rewrite catches it; a superuser makes the guard with: darrm ledger upgrade %s", s.cfg.Database, st.Owner, logs, shellQuote(s.redacted)), nil
}
