package ledger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

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
//     Ledger.End), which sets the row's retired.

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

const (
	// connectTimeout bounds a connection to the server when the URL sets
	// no connect_timeout.
	connectTimeout = 5 * time.Second
	// writeTimeout bounds an append, its retries included; after an
	// interrupt, writeGrace does.
	writeTimeout = 10 * time.Second
	writeGrace   = 500 * time.Millisecond
	// reconnectFor bounds the attempts to connect again after a
	// connection lost during a write: a run whose server is gone stops
	// within about a second.
	reconnectFor = time.Second
	// maxNameBytes bounds a ledger's name, and an analyst's.
	maxNameBytes = 200
)

// pgLocation is a PostgreSQL ledger's location, parsed.
type pgLocation struct {
	redacted string // the URL without its password (Redact)
	name     string // the ledger's name
	cfg      *pgx.ConnConfig
	secrets  []string // what messages must not show: the password
}

// Redact returns location as darrm prints and records it: a file's path
// as it is, a PostgreSQL URL with its password, and any password or
// sslpassword parameter, replaced by ***.
func Redact(location string) string {
	if !IsURL(location) {
		return location
	}
	scheme, rest, _ := strings.Cut(location, "://")
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	auth, tail := rest[:end], rest[end:]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		if user, _, ok := strings.Cut(auth[:at], ":"); ok {
			auth = user + ":***" + auth[at:]
		}
	}
	if path, query, ok := strings.Cut(tail, "?"); ok {
		params := strings.Split(query, "&")
		for i, p := range params {
			k, _, _ := strings.Cut(p, "=")
			if k, err := url.QueryUnescape(k); err == nil && (k == "password" || k == "sslpassword") {
				params[i] = k + "=***"
			}
		}
		tail = path + "?" + strings.Join(params, "&")
	}
	return scheme + "://" + auth + tail
}

// urlError is a PostgreSQL ledger's URL that names no ledger darrm can
// reach: the caller's input.
type urlError struct{ where, reason string }

func (e *urlError) Error() string  { return fmt.Sprintf("ledger %s: %s", e.where, e.reason) }
func (e *urlError) BadInput() bool { return true }

// parsePG parses a PostgreSQL ledger's location, a libpq URL with the
// ledger's name as its parameter ledger; PGPASSWORD, PGPASSFILE and
// libpq's other variables and parameters are pgx's.
func parsePG(location string) (*pgLocation, error) {
	where := Redact(location)
	bad := func(format string, args ...any) error { return &urlError{where, fmt.Sprintf(format, args...)} }
	const form = "postgres://[user[:password]@]host[:port]/database?ledger=NAME"
	base, query, _ := strings.Cut(location, "?")
	query, _, _ = strings.Cut(query, "#")
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, bad("its parameters are not a URL's query (%v): the form is %s", err, form)
	}
	names := q["ledger"]
	switch {
	case len(names) == 0:
		return nil, bad("names no ledger: add ?ledger=NAME to the URL, the ledger's name in the database (the form is %s)", form)
	case len(names) > 1:
		return nil, bad("names %d ledgers (ledger=%s): give one", len(names), strings.Join(names, ", ledger="))
	}
	name := names[0]
	switch {
	case name == "":
		return nil, bad("ledger= is empty: name the ledger")
	case len(name) > maxNameBytes:
		return nil, bad("the ledger's name has %d bytes: at most %d", len(name), maxNameBytes)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return nil, bad("the ledger's name %q has control characters: they are not allowed", name)
	}
	q.Del("ledger")
	conn := base
	if len(q) > 0 {
		conn += "?" + q.Encode()
	}
	cfg, err := pgx.ParseConfig(conn)
	if err != nil {
		loc := &pgLocation{redacted: where, secrets: secretsOf(location, "")}
		return nil, bad("%s (the form is %s)", loc.redact(err.Error()), form)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "darrm"
	}
	// A server that goes away without a word (a cable pulled, a machine
	// down) is noticed within seconds, not the system's two hours.
	d := &net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: time.Second, Count: 3}}
	cfg.DialFunc = d.DialContext
	return &pgLocation{redacted: where, name: name, cfg: cfg, secrets: secretsOf(location, cfg.Password)}, nil
}

// withLedger returns the PostgreSQL ledger location with its ledger
// parameter naming the ledger name instead, its other parameters as they
// are.
func withLedger(location, name string) string {
	base, query, _ := strings.Cut(location, "?")
	query, _, _ = strings.Cut(query, "#")
	var kept []string
	for _, p := range strings.Split(query, "&") {
		if k, _, _ := strings.Cut(p, "="); p != "" && k != "ledger" {
			kept = append(kept, p)
		}
	}
	return base + "?" + strings.Join(append(kept, "ledger="+url.QueryEscape(name)), "&")
}

// secretsOf returns what messages about location must not show: the
// password of its URL, its parameters' and the one in use, as written
// and escaped.
func secretsOf(location, password string) []string {
	var s []string
	add := func(p string) {
		if p != "" {
			s = append(s, p, url.QueryEscape(p), url.PathEscape(p))
		}
	}
	add(password)
	if u, err := url.Parse(location); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
		add(u.Query().Get("password"))
		add(u.Query().Get("sslpassword"))
	}
	return s
}

// redact removes the location's secrets from a message.
func (p *pgLocation) redact(msg string) string {
	for _, s := range p.secrets {
		msg = strings.ReplaceAll(msg, s, "***")
	}
	return msg
}

// server is where the server is, for messages.
func (p *pgLocation) server() string {
	if strings.HasPrefix(p.cfg.Host, "/") {
		return "the server whose socket is in " + p.cfg.Host
	}
	return fmt.Sprintf("the server at %s", net.JoinHostPort(p.cfg.Host, strconv.Itoa(int(p.cfg.Port))))
}

// serverError is a PostgreSQL ledger that cannot be used: bad when it is
// the caller's input to fix (a database that does not exist, a password
// refused, a ledger not there), else a failure (a server down). Its
// message never holds the password.
type serverError struct {
	where, reason string
	bad           bool
	err           error
}

func (e *serverError) Error() string  { return fmt.Sprintf("ledger %s: %s", e.where, e.reason) }
func (e *serverError) BadInput() bool { return e.bad }
func (e *serverError) Unwrap() error  { return e.err }

// fail returns the error of what, whose error is err: in one line,
// naming what to fix, without the password.
func (p *pgLocation) fail(what string, err error) error {
	mk := func(bad bool, format string, args ...any) error {
		return &serverError{where: p.redacted, reason: p.redact(fmt.Sprintf(format, args...)), bad: bad, err: err}
	}
	user, db := p.cfg.User, p.cfg.Database
	var (
		pe  *pgconn.PgError
		dns *net.DNSError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &pe):
		switch pe.Code {
		case "28P01":
			if p.cfg.Password == "" {
				return mk(true, "%s asks user %s for a password: give it in the URL, in PGPASSWORD or in the password file (PGPASSFILE, ~/.pgpass)", p.server(), user)
			}
			return mk(true, "%s refused the password of user %s: check the URL's user and password, or PGPASSWORD, or the password file (PGPASSFILE, ~/.pgpass)", p.server(), user)
		case "28000":
			return mk(true, "%s refused user %s: %s: check the URL's user, or ask the server's administrator for access", p.server(), user, pe.Message)
		case "3D000":
			return mk(true, "database %s does not exist on %s: fix the URL's database, or create it (createdb %s)", db, p.server(), db)
		case "42501":
			return mk(true, "user %s may not %s: %s: ask the ledgers' owner for the GRANTs of an analyst (docs/aggregate.md, \"A team\")", user, what, pe.Message)
		case "53300":
			return mk(false, "%s has no connection free (%s): try again later", p.server(), pe.Message)
		case "57P01", "57P02", "57P03":
			return mk(false, "%s is shutting down or starting up (%s): try again when it runs", p.server(), pe.Message)
		}
		return mk(false, "%s: %s (SQLSTATE %s)", what, pe.Message, pe.Code)
	case what == "connect" && (errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err)):
		return mk(false, "no answer from %s within %v: check the URL's host and port, and that the server runs (the URL's connect_timeout sets the wait)", p.server(), p.cfg.ConnectTimeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return mk(false, "no server accepts connections at %s: start it, or fix the URL's host and port", strings.TrimPrefix(p.server(), "the server at "))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		// The server ended the session (it stopped or crashed) or the
		// network dropped it, as a run waited for the lock, say.
		return mk(false, "the connection to %s was lost while darrm tried to %s (%v): run again once the server runs", p.server(), what, err)
	case errors.As(err, &dns):
		return mk(true, "cannot find host %s (%v): fix the URL's host", p.cfg.Host, dns.Err)
	case strings.Contains(err.Error(), "password"):
		// The server asked for a password that none of the URL,
		// PGPASSWORD and the password file gave.
		return mk(true, "%s asks user %s for a password: give it in the URL, in PGPASSWORD or in the password file (PGPASSFILE, ~/.pgpass)", p.server(), user)
	}
	// pgx says a connection's attempts one a line: one line here.
	return mk(false, "%s: %s", what, strings.Join(strings.Fields(err.Error()), " "))
}

// connect connects to the server.
func (p *pgLocation) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		return nil, p.fail("connect", err)
	}
	return conn, nil
}

// closeConn closes conn without waiting long on a server gone.
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	conn.Close(ctx)
}

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
		return v, &serverError{where: p.redacted, bad: true, reason: fmt.Sprintf("database %s keeps its ledgers in darrm's schema of version %d; this darrm knows version %d: use a newer darrm", p.cfg.Database, v, schemaVersion)}
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
		return &NotLedgerError{Path: p.redacted, Reason: fmt.Sprintf("%s (create it with darrm ledger init)", what), Err: fs.ErrNotExist}
	}
	switch {
	case v == 0:
		return pgRow{}, none(fmt.Sprintf("database %s holds no darrm ledgers, so no ledger %s", p.cfg.Database, p.name))
	case key == nil:
		return pgRow{}, none(fmt.Sprintf("database %s has no ledger named %s", p.cfg.Database, p.name))
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

// pgLedger is a connection to a database that a ledger is made in (Init,
// Import).
type pgLedger struct {
	*pgLocation
	conn *pgx.Conn
	ctx  context.Context
}

// newPGLedger connects to the database of the PostgreSQL ledger at
// location, to make it: the database's schema is made if it has none, and
// a ledger of that name must not exist (a *takenError).
func newPGLedger(ctx context.Context, location string) (*pgLedger, error) {
	p, err := parsePG(location)
	if err != nil {
		return nil, err
	}
	conn, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	db := &pgLedger{pgLocation: p, conn: conn, ctx: ctx}
	if err := db.makeSchema(); err != nil {
		db.close()
		return nil, err
	}
	if err := db.absent("", ""); err != nil {
		db.close()
		return nil, err
	}
	return db, nil
}

// makeSchema makes the database's darrm schema when it has none, and
// upgrades it when it is of an earlier version, once even when several
// darrm make ledgers in it at once.
func (db *pgLedger) makeSchema() error {
	v, err := db.schema(db.ctx, db.conn)
	if err != nil || v == schemaVersion {
		return err
	}
	if v > 0 {
		return db.upgradeSchema(db.ctx, db.conn)
	}
	err = pgx.BeginFunc(db.ctx, db.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(db.ctx, "SELECT pg_advisory_xact_lock($1, 0)", lockSpace); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(db.ctx, "SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = 'darrm')").Scan(&exists); err != nil || exists {
			return err
		}
		_, err := tx.Exec(db.ctx, schemaSQL)
		return err
	})
	if err != nil {
		return db.fail("make the schema of darrm's ledgers in database "+db.cfg.Database, err)
	}
	_, err = db.schema(db.ctx, db.conn)
	return err
}

// upgradeSchema upgrades the database's darrm schema of an earlier
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
func (db *pgLedger) absent(id, ensemble string) error {
	var name string
	var first []byte
	var live bool
	err := db.conn.QueryRow(db.ctx, `SELECT name, NOT retired, (SELECT line FROM darrm.lines WHERE ledger = l.key AND n = 1) FROM darrm.ledgers l
		WHERE name = $1 OR id = $2 OR ensemble = $3 AND NOT retired ORDER BY name = $1 DESC, id = $2 DESC LIMIT 1`, db.name, id, ensemble).Scan(&name, &live, &first)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return db.fail("read the ledgers of database "+db.cfg.Database, err)
	}
	e := db.existsError(first)
	if name != db.name {
		e.Other, e.Live, e.SameID = name, live, e.ID == id
	}
	return e
}

// existsError is the *takenError of a ledger whose name is taken, of
// first line first.
func (db *pgLedger) existsError(first []byte) *takenError {
	e := &takenError{Path: db.redacted, What: "database " + db.cfg.Database}
	e.Ledger, e.Ensemble, e.ID = headerIdentity(first)
	return e
}

// create makes the ledger of header h, whose line is b (with its line
// end), in one transaction.
func (db *pgLedger) create(h Header, b []byte) error {
	return db.insert(h, func(tx pgx.Tx, key int32) error {
		_, err := tx.Exec(db.ctx, "INSERT INTO darrm.lines (ledger, n, line, stop) VALUES ($1, 1, $2, $3)", key, b[:len(b)-1], int64(len(b)))
		return err
	})
}

// insert makes the row of the ledger of header h and its line rows
// (rows, which move its head on), in one transaction that commits only
// once it is durable: a name, an identity or a live ensemble taken
// meanwhile is a *takenError.
func (db *pgLedger) insert(h Header, rows func(tx pgx.Tx, key int32) error) error {
	err := pgx.BeginFunc(db.ctx, db.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(db.ctx, durableSQL); err != nil {
			return err
		}
		var key int32
		err := tx.QueryRow(db.ctx, "INSERT INTO darrm.ledgers (name, lines, size, head, id, ensemble) VALUES ($1, 0, 0, '', $2, $3) RETURNING key",
			db.name, h.ID, h.Ensemble).Scan(&key)
		if err != nil {
			return err
		}
		return rows(tx, key)
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		if err := db.absent(h.ID, h.Ensemble); err != nil {
			return err
		}
	}
	if err != nil {
		return db.fail("make ledger "+db.name+" in database "+db.cfg.Database, err)
	}
	return nil
}

func (db *pgLedger) close() { closeConn(db.conn) }

// pgStore is a PostgreSQL ledger opened: for a run, on a connection that
// holds the ledger's advisory lock from start to end and is watched
// between writes, so that its loss ends the run (lost).
type pgStore struct {
	*pgLocation
	conn *pgx.Conn
	key  int32
	// header is the ledger's first line, read with its key: a line is
	// never changed.
	header []byte
	// ctx is the run's, which bounds every read; writes outlive it a
	// little (writeGrace), so that a settlement after an interrupt is
	// written.
	ctx      context.Context
	readOnly bool

	// The watchdog: a goroutine that waits on the idle connection, and
	// the end of its wait.
	stopWatch context.CancelFunc
	watched   chan error
	lostOnce  sync.Once
	lostCh    chan struct{}
	lostErr   error
	onLost    func(error) // Book.Lost
}

var _ store = (*pgStore)(nil)

// openPG opens the PostgreSQL ledger at location: for a run, waiting for
// its lock (telling waiting once) until ctx is done; read only, without
// waiting.
func openPG(ctx context.Context, location string, readOnly bool, bk Book) (*pgStore, error) {
	p, err := parsePG(location)
	if err != nil {
		return nil, err
	}
	conn, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &pgStore{pgLocation: p, conn: conn, ctx: ctx, readOnly: readOnly, lostCh: make(chan struct{}), onLost: bk.Lost}
	r, err := p.find(ctx, conn)
	if err == nil && !readOnly && r.version < schemaVersion {
		if err = p.upgradeSchema(ctx, conn); err == nil {
			r, err = p.find(ctx, conn)
		}
	}
	if err == nil {
		s.key, s.header = r.key, r.first
		err = p.checkRow(r)
	}
	if err == nil && !readOnly {
		err = s.lock(bk.Waiting)
	}
	if err != nil {
		closeConn(conn)
		return nil, err
	}
	if !readOnly {
		s.watch()
	}
	return s, nil
}

// lock takes the ledger's advisory lock for the session, waiting while
// another run holds it.
func (s *pgStore) lock(waiting func(string)) error {
	var got bool
	if err := s.conn.QueryRow(s.ctx, "SELECT pg_try_advisory_lock($1, $2)", lockSpace, s.key).Scan(&got); err != nil {
		return s.fail("lock the ledger", err)
	}
	if got {
		return nil
	}
	if waiting != nil {
		waiting("ledger " + s.redacted)
	}
	if _, err := s.conn.Exec(s.ctx, "SELECT pg_advisory_lock($1, $2)", lockSpace, s.key); err != nil {
		if s.ctx.Err() != nil {
			// Told nothing, the server would go on waiting, and take the
			// lock for a moment when the other run ends.
			c, cancel := context.WithTimeout(context.Background(), time.Second)
			s.conn.PgConn().CancelRequest(c)
			cancel()
			return s.ctx.Err()
		}
		return s.fail("lock the ledger", err)
	}
	return nil
}

// watch waits on the idle connection of a run in a goroutine: a
// connection that the server ends (it shuts down) or that breaks makes
// the store lost at once.
func (s *pgStore) watch() {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	s.stopWatch, s.watched = stop, done
	conn := s.conn
	go func() {
		err := conn.PgConn().WaitForNotification(ctx)
		for err == nil {
			err = conn.PgConn().WaitForNotification(ctx)
		}
		if ctx.Err() == nil {
			s.lose(err)
		}
		done <- err
	}()
}

// pause stops the watchdog, so that the connection can be used.
func (s *pgStore) pause() {
	if s.stopWatch == nil {
		return
	}
	s.stopWatch()
	<-s.watched
	s.stopWatch = nil
}

// resume starts the watchdog again after the connection was used.
func (s *pgStore) resume() {
	if !s.readOnly && s.cause() == nil && !s.conn.IsClosed() {
		s.watch()
	}
}

// lose makes the store lost: its connection is gone. It tells Book.Lost.
func (s *pgStore) lose(err error) {
	s.lostOnce.Do(func() {
		s.lostErr = &lostError{where: s.redacted, reason: s.redact(err.Error())}
		close(s.lostCh)
		if s.onLost != nil {
			s.onLost(s.lostErr)
		}
	})
}

// lostError is a run whose PostgreSQL ledger's connection was lost: the
// run writes no more to it, and what it reserved stays charged.
type lostError struct{ where, reason string }

func (e *lostError) Error() string {
	return fmt.Sprintf("ledger %s: the connection to its server was lost during this run (%s): the labels it reserved stay charged, and it writes no more", e.where, e.reason)
}

// ConnectionLost reports that the error is a ledger's connection lost
// during a run, not an interrupt.
func (e *lostError) ConnectionLost() bool { return true }

func (s *pgStore) cause() error {
	select {
	case <-s.lostCh:
		return s.lostErr
	default:
		return nil
	}
}

// use runs f on the connection, the watchdog paused, with the run's
// context.
func (s *pgStore) use(f func(ctx context.Context) error) error {
	if err := s.cause(); err != nil {
		return err
	}
	s.pause()
	defer s.resume()
	if err := s.cause(); err != nil {
		return err
	}
	return f(s.ctx)
}

func (s *pgStore) first() ([]byte, error) {
	switch {
	case s.header == nil:
		return nil, io.EOF
	case len(s.header) > maxLineBytes:
		return nil, errLongLine
	}
	return s.header, nil
}

func (s *pgStore) lines(from, to pos, each func([]byte) error) (pos, []byte, error) {
	end := from
	var lines, size int64 // the head's
	err := s.use(func(ctx context.Context) error {
		// One statement, one snapshot: the rows and the head as one commit
		// left them, and the number of rows up to line from.n, so that a
		// run that reads from the line its record vouches for still finds
		// a row deleted before it (whose line no total it uses depends
		// on, but the ledger must hold every line it had).
		rows, err := s.conn.Query(ctx, `SELECT h.lines, h.size, l.n, l.line, l.stop,
			(SELECT count(*) FROM darrm.lines c WHERE c.ledger = h.key AND c.n <= $2) FROM darrm.ledgers h
			LEFT JOIN darrm.lines l ON l.ledger = h.key AND l.n > $2 AND l.n <= $3 AND l.stop <= $4
			WHERE h.key = $1 ORDER BY l.n`, s.key, int64(from.n), int64(to.n), to.off)
		if err != nil {
			return err
		}
		defer rows.Close()
		var (
			n, stop *int64
			b       []byte
			before  int64
		)
		for rows.Next() {
			if err := rows.Scan(&lines, &size, &n, &b, &stop, &before); err != nil {
				return err
			}
			switch {
			case before != int64(from.n):
				return &CorruptError{Path: s.redacted, Line: from.n, Reason: fmt.Sprintf("the ledger holds %d rows up to line %d: a row of the ledger was deleted (darrm ledger verify names it)", before, from.n)}
			case n == nil:
				continue // no line in the range: the head alone
			case *n != int64(end.n)+1:
				return &CorruptError{Path: s.redacted, Line: end.n + 1, Reason: fmt.Sprintf("its row is missing (the row after line %d is line %d): a row of the ledger was deleted", end.n, *n)}
			case len(b) > maxLineBytes:
				return errLongLine
			case *stop != end.off+int64(len(b))+1:
				return &CorruptError{Path: s.redacted, Line: end.n + 1, Reason: fmt.Sprintf("its row ends at byte %d of the ledger, but the line holds %d bytes after byte %d: the row was changed", *stop, len(b)+1, end.off)}
			}
			if err := each(b); err != nil {
				return err
			}
			end = pos{n: end.n + 1, off: *stop}
		}
		return rows.Err()
	})
	var ce *CorruptError
	switch {
	case err != nil && err != errLongLine && !errors.As(err, &ce) && !isLost(err):
		err = s.fail("read the ledger", err)
	case err == nil && to == everything && (lines != int64(end.n) || size != end.off):
		err = &CorruptError{Path: s.redacted, Line: int(min(lines, int64(end.n))) + 1, Reason: fmt.Sprintf("the ledger's head says it has %d lines (%d bytes), its rows %d lines (%d bytes): rows were written or deleted without darrm", lines, size, end.n, end.off)}
	}
	return end, nil, err
}

// isLost reports whether err is a lost store's.
func isLost(err error) bool {
	var le *lostError
	return errors.As(err, &le)
}

func (s *pgStore) lineAt(at pos) ([]byte, bool, error) {
	var b []byte
	var stop int64
	err := s.use(func(ctx context.Context) error {
		return s.conn.QueryRow(ctx, "SELECT line, stop FROM darrm.lines WHERE ledger = $1 AND n = $2", s.key, int64(at.n)).Scan(&b, &stop)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, s.fail("read the ledger", err)
	}
	return b, stop == at.off && len(b) <= maxLineBytes, nil
}

// writeContext returns the context of a write: the run's, but outliving
// an interrupt by writeGrace, so that a settlement is written after one,
// and bounded by writeTimeout.
func (s *pgStore) writeContext() (context.Context, context.CancelFunc) {
	grace := writeTimeout
	if s.ctx.Err() != nil {
		grace = writeGrace
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), grace)
	stop := context.AfterFunc(s.ctx, func() {
		t := time.AfterFunc(writeGrace, cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	})
	return ctx, func() { stop(); cancel() }
}

// append writes line at.n+1 when the ledger's head is still line at.n of
// hash head (appendSQL). A serialization failure, a deadlock, or a
// connection lost during the write is retried until writeTimeout: a
// connection is made again and takes the ledger's lock again if no other
// run took it meanwhile, and a head that is this very line (a write whose
// commit got through before the connection broke) is success. A head that
// is neither is an error: another process wrote to the ledger.
func (s *pgStore) append(at pos, head string, b []byte, hash string) error {
	if s.readOnly {
		return fmt.Errorf("ledger %s: opened read-only", s.redacted)
	}
	if err := s.cause(); err != nil {
		return err
	}
	s.pause()
	defer s.resume()
	ctx, cancel := s.writeContext()
	defer cancel()
	line, stop := b[:len(b)-1], at.off+int64(len(b))
	var down time.Time // when the connection was first found lost
	for attempt := 1; ; attempt++ {
		var err error
		if s.conn.IsClosed() {
			err = s.reconnect(ctx)
		}
		if err == nil {
			if err = s.tryAppend(ctx, at, line, stop, hash); err == nil {
				return nil
			}
		}
		if isLost(err) || !retryable(err) || ctx.Err() != nil {
			return s.writeErr(ctx, err)
		}
		if s.conn.IsClosed() && down.IsZero() {
			down = time.Now()
		}
		if !down.IsZero() && time.Since(down) > reconnectFor {
			s.lose(err)
			return s.lostErr
		}
		t := time.NewTimer(time.Duration(min(attempt, 10)) * 20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return s.writeErr(ctx, err)
		case <-t.C:
		}
	}
}

// tryAppend is one attempt of append.
func (s *pgStore) tryAppend(ctx context.Context, at pos, line []byte, stop int64, hash string) error {
	_, err := s.conn.Exec(ctx, appendSQL, s.key, int64(at.n), line, stop)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" && pe.Code != "DRM01" && pe.Code != "DRM02" {
		return err
	}
	var n int64
	var h string
	var retired bool
	if err := s.conn.QueryRow(ctx, "SELECT lines, head, retired FROM darrm.ledgers WHERE key = $1", s.key).Scan(&n, &h, &retired); err != nil {
		return err
	}
	switch {
	case n == int64(at.n)+1 && h == hash:
		return nil // this very line: an earlier attempt's commit got through
	case retired:
		return &endedError{where: s.redacted, lines: n}
	}
	return &movedOnError{where: s.redacted, lines: at.n, n: n}
}

// movedOnError is an append refused because the ledger's head is not the
// line this run read.
type movedOnError struct {
	where string
	lines int
	n     int64
}

func (e *movedOnError) Error() string {
	return fmt.Sprintf("ledger %s: its head is line %d, not the line %d that this run read and charged after: another process wrote to the ledger without holding its lock; nothing was appended (darrm ledger verify checks the ledger)", e.where, e.n, e.lines)
}

// endedError is an append refused because the ledger ended meanwhile:
// another process retired it.
type endedError struct {
	where string
	lines int64
}

func (e *endedError) Error() string {
	return fmt.Sprintf("ledger %s: it was retired during this run (its line %d ends it): nothing was appended, and the run hands out no more labels", e.where, e.lines)
}

// BadInput reports that the error is the caller's to resolve: the ledger
// is no longer live.
func (e *endedError) BadInput() bool { return true }

// retryable reports whether an append that failed with err may be tried
// again: a serialization failure or deadlock, or a connection lost.
func retryable(err error) bool {
	var pe *pgconn.PgError
	var moved *movedOnError
	var ended *endedError
	switch {
	case errors.As(err, &moved), errors.As(err, &ended), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.As(err, &pe):
		return strings.HasPrefix(pe.Code, "40") || strings.HasPrefix(pe.Code, "57P") || strings.HasPrefix(pe.Code, "08")
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// reconnect connects again after the run's connection was lost during a
// write, and takes the ledger's lock again, waiting while this run's old
// session still holds it (the server has not yet noticed that it is
// gone): if another run holds it, this run has lost the ledger.
func (s *pgStore) reconnect(ctx context.Context) error {
	old := s.conn.PgConn().PID()
	closeConn(s.conn)
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return err
	}
	s.conn = conn
	start := time.Now()
	for {
		var got bool
		var holder *int32
		err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1::int4, $2::int4), (SELECT pid FROM pg_locks
			WHERE locktype = 'advisory' AND classid::int8 = $1::int8 AND objid::int8 = $2::int8 AND objsubid = 2 AND granted LIMIT 1)`,
			lockSpace, s.key).Scan(&got, &holder)
		switch {
		case err != nil:
			return err
		case got:
			return nil
		case holder != nil && uint32(*holder) != old, time.Since(start) > reconnectFor:
			s.lose(errors.New("another run took the ledger's lock while this run's connection was down"))
			return s.lostErr
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// writeErr is the error of an append.
func (s *pgStore) writeErr(ctx context.Context, err error) error {
	var moved *movedOnError
	var ended *endedError
	switch {
	case err == nil, isLost(err), errors.As(err, &moved), errors.As(err, &ended):
		return err
	case ctx.Err() != nil && s.ctx.Err() == nil:
		err = fmt.Errorf("%w (no write got through in %v)", err, writeTimeout)
	}
	return s.fail("append to the ledger", err)
}

func (s *pgStore) cut(pos) error { return nil } // a row is whole or absent

func (s *pgStore) where() (string, uint64, uint64, error) { return s.redacted, 0, 0, nil }

func (s *pgStore) user() string { return s.cfg.User }

func (s *pgStore) close() error {
	s.pause()
	closeConn(s.conn)
	return nil
}
