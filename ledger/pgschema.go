package ledger

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A ledger in PostgreSQL is the rows of one database's schema darrm: a
// row of darrm.ledgers per ledger (its name, the identity and ensemble
// its header states, whether it is retired, and its head: the number of
// its lines, their bytes and the hash of the last), and a row of
// darrm.lines per line, holding the line exactly as a ledger file holds
// it, with its number and the byte just past it in the file form.
// schemaSQL makes them, and the guards that hold whoever writes, short of
// a superuser or the tables' owner who drops them:
//   - a line row is only appended (append_only), and only as the line
//     after the head, whose hash it names as its prev; appending it moves
//     the head on (append_line), so that an analyst needs no UPDATE on
//     any table;
//   - a ledger's first line is the header of the identity and ensemble
//     its row states;
//   - at most one ledger of an ensemble is live (ledgers_live, a unique
//     index), and an identity is never used twice (a unique key): a copy
//     imported again or a second ledger made for an ensemble is refused;
//   - a ledger row is never renamed, given another identity, reopened
//     once retired, moved back or deleted (guard_ledger): one ledger
//     cannot be swapped for another. Retiring is a line (an end line,
//     Ledger.end), which sets the row's retired.

// schemaVersion is the version of the schema darrm keeps ledgers in; a
// database of a later one is refused (a newer darrm made it), one of an
// earlier one is upgraded by the first run of its owner (migrateSQL).
const schemaVersion = 2

// guardSQL makes the functions and triggers of schema version 2, in a
// database whose tables have its columns.
const guardSQL = `
CREATE UNIQUE INDEX ledgers_live ON darrm.ledgers (ensemble) WHERE NOT retired;
CREATE FUNCTION darrm.append_line() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	j jsonb;
	l darrm.ledgers%ROWTYPE;
BEGIN
	SELECT * INTO STRICT l FROM darrm.ledgers WHERE key = NEW.ledger FOR UPDATE;
	BEGIN
		j := convert_from(NEW.line, 'UTF8')::jsonb;
	EXCEPTION WHEN others THEN
		RAISE EXCEPTION 'darrm: line % of ledger % is not a ledger line', NEW.n, l.name USING ERRCODE = 'DRM01';
	END;
	IF l.retired THEN
		RAISE EXCEPTION 'darrm: ledger % is retired: no line follows its end', l.name USING ERRCODE = 'DRM02';
	END IF;
	IF NEW.n <> l.lines + 1 OR coalesce(j->>'prev', '') <> l.head OR NEW.stop <> l.size + octet_length(NEW.line) + 1 THEN
		RAISE EXCEPTION 'darrm: line % of ledger % does not follow its head, line % of hash %', NEW.n, l.name, l.lines, l.head USING ERRCODE = 'DRM01';
	END IF;
	IF NEW.n = 1 AND (j->'header'->>'id' IS DISTINCT FROM l.id OR j->'header'->>'ensemble' IS DISTINCT FROM l.ensemble) THEN
		RAISE EXCEPTION 'darrm: the header of ledger % is not of the identity and ensemble of its row', l.name USING ERRCODE = 'DRM01';
	END IF;
	UPDATE darrm.ledgers SET lines = NEW.n, size = NEW.stop, head = j->>'sha256', retired = j ? 'end'
		WHERE key = NEW.ledger;
	RETURN NEW;
END
$$;
CREATE TRIGGER append_line BEFORE INSERT ON darrm.lines
	FOR EACH ROW EXECUTE FUNCTION darrm.append_line();
CREATE FUNCTION darrm.guard_ledger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		IF NEW.lines <> 0 OR NEW.size <> 0 OR NEW.head <> '' OR NEW.retired THEN
			RAISE EXCEPTION 'darrm: a ledger row is made empty; its lines move its head' USING ERRCODE = 'insufficient_privilege';
		END IF;
		RETURN NEW;
	END IF;
	IF TG_OP <> 'UPDATE' OR NEW.key <> OLD.key OR NEW.name <> OLD.name OR NEW.id <> OLD.id OR NEW.ensemble <> OLD.ensemble
		OR NEW.created <> OLD.created OR OLD.retired OR NEW.lines <> OLD.lines + 1 THEN
		RAISE EXCEPTION 'darrm ledgers are never renamed, reopened, moved back or deleted: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER guard_ledger BEFORE INSERT OR UPDATE OR DELETE ON darrm.ledgers
	FOR EACH ROW EXECUTE FUNCTION darrm.guard_ledger();
CREATE TRIGGER guard_ledger_truncate BEFORE TRUNCATE ON darrm.ledgers
	FOR EACH STATEMENT EXECUTE FUNCTION darrm.refuse_edit();
`

// schemaSQL makes the schema, version schemaVersion.
const schemaSQL = `
CREATE SCHEMA darrm;
CREATE TABLE darrm.schema_version (version integer NOT NULL);
INSERT INTO darrm.schema_version VALUES (2);
CREATE TABLE darrm.ledgers (
	key integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name text NOT NULL UNIQUE,
	lines bigint NOT NULL,
	size bigint NOT NULL,
	head text NOT NULL,
	created timestamptz NOT NULL DEFAULT now(),
	id text NOT NULL UNIQUE,
	ensemble text NOT NULL,
	retired boolean NOT NULL DEFAULT false
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
` + guardSQL

// migrateSQL upgrades a database of schema version 1, which stated no
// ledger's identity and let a second ledger of an ensemble be made, to
// version 2: each row takes the identity and ensemble of its header.
// Two ledgers of one identity or two live ledgers of one ensemble (a
// budget counted twice) fail the unique keys, and the upgrade with them
// (duplicatesSQL names them).
const migrateSQL = `
ALTER TABLE darrm.ledgers ADD COLUMN id text, ADD COLUMN ensemble text, ADD COLUMN retired boolean NOT NULL DEFAULT false;
UPDATE darrm.ledgers l SET id = h.j->'header'->>'id', ensemble = h.j->'header'->>'ensemble'
	FROM (SELECT ledger, convert_from(line, 'UTF8')::jsonb j FROM darrm.lines WHERE n = 1) h WHERE h.ledger = l.key;
ALTER TABLE darrm.ledgers ALTER id SET NOT NULL, ALTER ensemble SET NOT NULL, ADD UNIQUE (id);
UPDATE darrm.schema_version SET version = 2;
` + guardSQL

// duplicatesSQL lists, in a database of schema version 1, the ledgers
// that share an ensemble (a copy shares its identity too): what the
// upgrade to version 2 refuses.
const duplicatesSQL = `SELECT string_agg(name, ', ' ORDER BY key), coalesce(h.j->'header'->>'ensemble', '?')
	FROM darrm.ledgers l JOIN (SELECT ledger, convert_from(line, 'UTF8')::jsonb j FROM darrm.lines WHERE n = 1) h ON h.ledger = l.key
	GROUP BY h.j->'header'->>'ensemble' HAVING count(*) > 1`

// durableSQL makes the transaction it runs in wait for its commit to be
// on disk, whatever the server, the database, the role or the URL's
// options say (synchronous_commit off acknowledges a commit before it is
// durable): a charge is durable before its labels leave. It is SET LOCAL
// synchronous_commit TO on, as a query, so that an append is one
// statement.
const durableSQL = `SELECT set_config('synchronous_commit', 'on', true)`

// appendSQL appends line $2+1 to ledger $1 at byte $4, durably
// (durableSQL), in one statement: the trigger append_line moves the head
// on to it when the head is line $2, whose hash the line names as its
// prev, and refuses it otherwise, so that a run that lost its lock (its
// connection) can never append twice or after another.
const appendSQL = `INSERT INTO darrm.lines (ledger, n, line, stop) SELECT $1, $2 + 1, $3, $4 FROM (` + durableSQL + `) durable`

// lockSpace is the first key of the advisory locks of darrm's runs, the
// ledger's row key the second: "darm".
const lockSpace int32 = 0x6461726d

// schema reports the version of the database's darrm schema, 0 when it
// has none.
func (p *pgLocation) schema(ctx context.Context, conn *pgx.Conn) (int, error) {
	var v int
	err := conn.QueryRow(ctx, "SELECT version FROM darrm.schema_version").Scan(&v)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && (pe.Code == "3F000" || pe.Code == "42P01"):
		return 0, nil
	case err != nil:
		return 0, p.fail("read the ledgers of database "+p.cfg.Database, err)
	case v > schemaVersion:
		return v, &serverError{where: p.redacted, bad: true, reason: p.sayf("database %s keeps its ledgers in darrm's schema of version %d; this darrm knows version %d: use a newer darrm", p.cfg.Database, v, schemaVersion)}
	}
	return v, nil
}

// pgRow is what the row of a ledger in darrm.ledgers says of it.
type pgRow struct {
	key          int32
	version      int    // the database's schema's
	id, ensemble string // "" in a database of schema version 1
	first        []byte // the first line, nil when it has none
}

// find returns the row of the ledger p names, in one query, whatever the
// version of the database's schema: a *NotLedgerError when the database
// has no such ledger (or no ledgers).
func (p *pgLocation) find(ctx context.Context, conn *pgx.Conn) (pgRow, error) {
	var (
		v            int
		key          *int32
		id, ensemble *string
		first        []byte
	)
	err := conn.QueryRow(ctx, `SELECT v.version, l.key, to_jsonb(l)->>'id', to_jsonb(l)->>'ensemble',
		(SELECT line FROM darrm.lines WHERE ledger = l.key AND n = 1)
		FROM darrm.schema_version v LEFT JOIN darrm.ledgers l ON l.name = $1`, p.name).Scan(&v, &key, &id, &ensemble, &first)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && (pe.Code == "3F000" || pe.Code == "42P01"), errors.Is(err, pgx.ErrNoRows):
		v = 0
	case err != nil:
		return pgRow{}, p.fail("read the ledgers of database "+p.cfg.Database, err)
	case v > schemaVersion:
		_, err := p.schema(ctx, conn)
		return pgRow{}, err
	}
	none := func(what string) error {
		return &NotLedgerError{Path: p.redacted, Reason: what + " (create it with darrm ledger init)", Err: fs.ErrNotExist}
	}
	switch {
	case v == 0:
		return pgRow{}, none(p.sayf("database %s holds no darrm ledgers, so no ledger %s", p.cfg.Database, p.name))
	case key == nil:
		return pgRow{}, none(p.sayf("database %s has no ledger named %s", p.cfg.Database, p.name))
	}
	r := pgRow{key: *key, version: v, first: first}
	if id != nil && ensemble != nil {
		r.id, r.ensemble = *id, *ensemble
	}
	return r, nil
}

// checkRow checks that the ledger's row states the identity and ensemble
// of its header: a row whose name was moved onto another ledger's lines
// (by the tables' owner with the guards dropped) is not the ledger its
// name was given to.
func (p *pgLocation) checkRow(r pgRow) error {
	if r.version < 2 || r.first == nil {
		return nil
	}
	ok, ensemble, id := headerIdentity(r.first)
	if !ok || id == r.id && ensemble == r.ensemble {
		return nil
	}
	return &CorruptError{Path: p.redacted, Line: 1, Reason: fmt.Sprintf("the row of ledger %s in database %s names ledger %s of ensemble %s, but its header is ledger %s of ensemble %s: the row was changed without darrm (a name moved onto another ledger's lines)", p.name, p.cfg.Database, r.id, r.ensemble, id, ensemble)}
}

// version to schemaVersion (migrateSQL), once even when several darrm do
// at once: a run that charges a ledger needs its guards. Only the tables'
// owner may; two ledgers of one ensemble are refused, named.
func (p *pgLocation) upgradeSchema(ctx context.Context, conn *pgx.Conn) error {
	var dup, ensemble string
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, 0)", lockSpace); err != nil {
			return err
		}
		var v int
		if err := tx.QueryRow(ctx, "SELECT version FROM darrm.schema_version").Scan(&v); err != nil || v != 1 {
			return err
		}
		err := tx.QueryRow(ctx, duplicatesSQL+" LIMIT 1").Scan(&dup, &ensemble)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		if _, err := tx.Exec(ctx, durableSQL); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, migrateSQL)
		return err
	})
	var pe *pgconn.PgError
	switch {
	case dup != "":
		return &serverError{where: p.redacted, bad: true, reason: fmt.Sprintf("database %s keeps its ledgers in darrm's schema of version 1, and ledgers %s are all of ensemble %s: its budget is counted more than once (a copy imported again, or a second ledger made for it). This darrm charges a database only where one ledger of an ensemble is live: keep one of them and remove the others (docs/aggregate.md, \"Upgrading a database\")", p.cfg.Database, dup, ensemble)}
	case errors.As(err, &pe) && pe.Code == "42501":
		return &serverError{where: p.redacted, bad: true, err: err, reason: fmt.Sprintf("database %s keeps its ledgers in darrm's schema of version 1, which does not stop a second live ledger of an ensemble; user %s may not upgrade it to version %d: the ledgers' owner upgrades it with darrm ledger upgrade %s", p.cfg.Database, p.cfg.User, schemaVersion, shellQuote(p.redacted))}
	case err != nil:
		return p.fail("upgrade the schema of darrm's ledgers in database "+p.cfg.Database, err)
	}
	return nil
}

// absent checks that the database has no ledger of this name, and, for
// a ledger of identity id and ensemble ensemble ("" when not yet known),
// none of that identity and no live one of that ensemble.
