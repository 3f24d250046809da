package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"slices"
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
	// lockTimeout bounds each wait for a lock (Options.LockTimeout), the
	// session's lock_timeout; holder says who holds the lock that a wait
	// gave up on, asked on the connection in use.
	lockTimeout time.Duration
	holder      func() string
	// overridden, if not "", says that the URL's parameters override its
	// database, host, port or user, and what the run uses: a note.
	overridden string
}

// Redact returns location as darrm prints and records it: a file's path
// as it is, a PostgreSQL URL with its password, and any password or
// sslpassword parameter, replaced by ***. A password written unescaped
// may hold '/', '?', '#' or '@', so that no parse can tell where the
// user information ends: any '@' may end it, and everything from the
// user name's ':' to the URL's last '@' is masked (a URL whose path or
// parameters hold an '@' loses more than its password, never less).
func Redact(location string) string {
	if !IsURL(location) {
		return location
	}
	scheme, rest, _ := strings.Cut(location, "://")
	auth := ""
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if user, _, ok := strings.Cut(rest[:at], ":"); ok {
			auth, rest = user+":***@", rest[at+1:]
		}
	}
	if path, query, ok := strings.Cut(rest, "?"); ok {
		params := strings.Split(query, "&")
		for i, p := range params {
			k, _, _ := strings.Cut(p, "=")
			if k, err := url.QueryUnescape(k); err == nil && (k == "password" || k == "sslpassword") {
				params[i] = k + "=***"
			}
		}
		rest = path + "?" + strings.Join(params, "&")
	}
	return scheme + "://" + auth + rest
}

// HasPassword reports whether location is a PostgreSQL ledger's URL that
// holds a password, in its user information (or what may be one, however
// malformed) or in a password or sslpassword parameter: every user of
// the machine can read a command line while it runs (ps), and a shell
// keeps it in its history, where ~/.pgpass and PGPASSWORD are read by
// the driver and seen by no one else.
func HasPassword(location string) bool {
	return IsURL(location) && len(secretsOf(location, "")) > 0
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
	secrets := secretsOf(location, "")
	bad := func(format string, args ...any) error {
		return &urlError{where, scrubf(secrets, format, args...)}
	}
	const form = "postgres://[user[:password]@]host[:port]/database?ledger=NAME"
	base, query, _ := strings.Cut(location, "?")
	query, _, _ = strings.Cut(query, "#")
	// The driver's parameters go to it as written, for it to decode as
	// libpq does ('+' is itself, %20 a space); the ledger's name is
	// darrm's, decoded as a form's.
	var names, params []string
	for _, kv := range strings.Split(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != "ledger" {
			if kv != "" {
				params = append(params, kv)
			}
			continue
		}
		name, err := url.QueryUnescape(v)
		if err != nil {
			return nil, bad("its parameter ledger=%s is not escaped as a URL's (%v): the form is "+form, v, err)
		}
		names = append(names, name)
	}
	switch {
	case len(names) == 0:
		return nil, bad("names no ledger: add ?ledger=NAME to the URL, the ledger's name in the database (the form is " + form + ")")
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
	conn := base
	if len(params) > 0 {
		conn += "?" + strings.Join(params, "&")
	}
	cfg, err := pgx.ParseConfig(conn)
	if err != nil {
		return nil, bad("%v (the form is "+form+")", err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok && !strings.Contains(cfg.RuntimeParams["options"], "application_name") {
		cfg.RuntimeParams["application_name"] = "darrm"
	}
	// A server that goes away without a word (a cable pulled, a machine
	// down) is noticed within seconds, not the system's two hours.
	d := &net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: time.Second, Count: 3}}
	cfg.DialFunc = d.DialContext
	p := &pgLocation{redacted: where, name: name, cfg: cfg, secrets: secretsOf(location, cfg.Password)}
	p.overridden = p.overrides(base, params)
	return p, nil
}

// overrides says, when the parameters params override what the URL base
// says before them (libpq's rule, which darrm keeps: dbname=, host=,
// port=, user= win), what the run uses, for a note: "" when none does.
func (p *pgLocation) overrides(base string, params []string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	said := map[string]string{"dbname": strings.TrimPrefix(u.Path, "/"), "host": u.Hostname(), "port": u.Port(), "user": u.User.Username()}
	var over []string
	for _, kv := range params {
		k, v, _ := strings.Cut(kv, "=")
		if was, ok := said[k]; ok && was != "" {
			if v, err := url.PathUnescape(v); err == nil && v != was {
				over = append(over, fmt.Sprintf("%s=%s over the URL's %s", k, v, was))
			}
		}
	}
	if len(over) == 0 {
		return ""
	}
	return p.sayf("its parameters set %s (libpq's rule): this run uses database %s of %s as user %s", strings.Join(over, ", "), p.cfg.Database, p.server(), p.cfg.User)
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
// password in use, and whatever its URL may hold as one, as written and
// escaped: the text that Redact masks in its user information (however
// malformed) and its password and sslpassword parameters.
func secretsOf(location, password string) []string {
	var s []string
	add := func(p string) {
		if p != "" {
			s = append(s, p, url.QueryEscape(p), url.PathEscape(p))
			if u, err := url.PathUnescape(p); err == nil && u != p {
				s = append(s, u)
			}
			if u, err := url.QueryUnescape(p); err == nil && u != p {
				s = append(s, u)
			}
		}
	}
	add(password)
	_, rest, _ := strings.Cut(location, "://")
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if _, p, ok := strings.Cut(rest[:at], ":"); ok {
			add(p)
			rest = rest[at+1:]
		}
	}
	if u, err := url.Parse(location); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
	if _, query, ok := strings.Cut(rest, "?"); ok {
		for _, p := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(p, "=")
			if k, err := url.QueryUnescape(k); err == nil && (k == "password" || k == "sslpassword") {
				add(v)
			}
		}
	}
	return s
}

// minSecret is the length of the shortest part of a secret that
// messages mask: a driver's message may quote a piece of a malformed URL
// (a port, a host) cut out of a password.
const minSecret = 4

// redact removes the location's secrets from a message: every run of
// minSecret bytes or more that is part of one.
func (p *pgLocation) redact(msg string) string {
	return scrub(msg, p.secrets)
}

// sayf formats a message about the location whose arguments may hold its
// secrets (scrubf).
func (p *pgLocation) sayf(format string, args ...any) string {
	return scrubf(p.secrets, format, args...)
}

// scrubf formats a message whose string and error arguments are scrubbed
// of secrets: darrm's own words, which a secret may share a part with,
// stay whole.
func scrubf(secrets []string, format string, args ...any) string {
	args = slices.Clone(args)
	for i, a := range args {
		switch a := a.(type) {
		case string:
			args[i] = scrub(a, secrets)
		case error:
			args[i] = scrub(a.Error(), secrets)
		}
	}
	return fmt.Sprintf(format, args...)
}

// scrub replaces by *** every run of msg that is minSecret bytes or more
// of one of secrets (all of a shorter secret).
func scrub(msg string, secrets []string) string {
	hide := make([]bool, len(msg))
	found := false
	for _, s := range secrets {
		n := min(minSecret, len(s))
		for i := 0; i+n <= len(msg); i++ {
			for j := 0; j+n <= len(s); j++ {
				k := 0
				for i+k < len(msg) && j+k < len(s) && msg[i+k] == s[j+k] {
					k++
				}
				if k >= n {
					for m := i; m < i+k; m++ {
						hide[m] = true
					}
					found = true
				}
			}
		}
	}
	if !found {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		if !hide[i] {
			b.WriteByte(msg[i])
			continue
		}
		b.WriteString("***")
		for i+1 < len(msg) && hide[i+1] {
			i++
		}
	}
	return b.String()
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
		return &serverError{where: p.redacted, reason: p.sayf(format, args...), bad: bad, err: err}
	}
	user, db := p.cfg.User, p.cfg.Database
	var (
		pe  *pgconn.PgError
		dns *net.DNSError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &pe) && pe.Code == "55P03":
		holder := "another session"
		if p.holder != nil {
			holder = p.holder()
		}
		return &lockTimeoutError{what: "ledger " + p.redacted, timeout: p.lockTimeout, holder: holder}
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

// bound makes every wait of the location's sessions for a lock end after
// opts's lock timeout: the server's lock_timeout, which a wait for a table
// that another session locked (LOCK TABLE) obeys as a wait for a run's
// advisory lock does. It outranks the URL's options.
func (p *pgLocation) bound(opts Options) error {
	timeout, err := opts.lockTimeout()
	if err != nil {
		return err
	}
	p.lockTimeout = timeout
	p.cfg.RuntimeParams["lock_timeout"] = strconv.FormatInt(max(timeout.Milliseconds(), 1), 10)
	return nil
}

// lockHolder says who holds the lock that a wait on conn gave up on: the
// session that holds the strongest lock on a table of darrm's that a
// run's reads or appends wait for (a share lock or stronger: LOCK TABLE,
// not another run's writes), or else the advisory lock of the ledger of
// row key (another darrm run), as pg_locks and pg_stat_activity tell it.
func (p *pgLocation) lockHolder(conn *pgx.Conn, key int32) string {
	const unknown = "another session"
	if conn == nil || conn.IsClosed() {
		return unknown
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var (
		pid             int32
		user, app, mode string
		table           *string
	)
	err := conn.QueryRow(ctx, `SELECT l.pid, coalesce(a.usename, ''), coalesce(a.application_name, ''), l.mode, c.relname
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		LEFT JOIN pg_class c ON c.oid = l.relation LEFT JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE l.granted AND l.pid <> pg_backend_pid() AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND (n.nspname = 'darrm' AND l.mode IN ('ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')
			OR l.locktype = 'advisory' AND l.classid::int8 = $1::int8 AND l.objid::int8 = $2::int8 AND l.objsubid = 2)
		ORDER BY l.locktype = 'advisory', l.mode = 'AccessExclusiveLock' DESC, l.mode = 'ExclusiveLock' DESC LIMIT 1`,
		lockSpace, key).Scan(&pid, &user, &app, &mode, &table)
	if err != nil {
		return unknown
	}
	who := p.sayf("session %d of user %s (application %q)", pid, user, app)
	if table == nil {
		return "another darrm run, " + who
	}
	return p.sayf("%s, which holds %s on darrm.%s", who, mode, *table)
}

// told runs f, a statement on the ledger's tables, and tells waiting, if
// it has not returned within a second (half the lock timeout, if less),
// that it waits for them: most likely for a lock that another session
// holds on them (LOCK TABLE), which the lock timeout ends.
func (p *pgLocation) told(waiting func(string), f func() error) error {
	if waiting == nil {
		return f()
	}
	t := time.AfterFunc(min(time.Second, p.lockTimeout/2), func() { waiting("the tables of ledger " + p.redacted) })
	defer t.Stop()
	return f()
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
func newPGLedger(ctx context.Context, location string, opts Options) (*pgLedger, error) {
	p, err := parsePG(location)
	if err != nil {
		return nil, err
	}
	if err := p.bound(opts); err != nil {
		return nil, err
	}
	conn, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	db := &pgLedger{pgLocation: p, conn: conn, ctx: ctx}
	p.holder = func() string { return p.lockHolder(db.conn, 0) }
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
	e := &takenError{Path: db.redacted, What: db.sayf("database %s", db.cfg.Database)}
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
	onLost    func(error) // Options.Lost
}

var _ store = (*pgStore)(nil)

// openPG opens the PostgreSQL ledger at location: for a run, waiting for
// its lock (telling waiting once) until ctx is done; read only, without
// waiting.
func openPG(ctx context.Context, location string, readOnly bool, opts Options) (*pgStore, error) {
	p, err := parsePG(location)
	if err != nil {
		return nil, err
	}
	if err := p.bound(opts); err != nil {
		return nil, err
	}
	conn, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &pgStore{pgLocation: p, conn: conn, ctx: ctx, readOnly: readOnly, lostCh: make(chan struct{}), onLost: opts.Lost}
	p.holder = func() string {
		// Asked between the run's statements: the watchdog waits on the
		// connection then.
		if s.stopWatch != nil {
			s.pause()
			defer s.resume()
		}
		return p.lockHolder(s.conn, s.key)
	}
	var r pgRow
	err = p.told(opts.Waiting, func() (err error) {
		r, err = p.find(ctx, conn)
		if err == nil && !readOnly && r.version < schemaVersion {
			if err = p.upgradeSchema(ctx, conn); err == nil {
				r, err = p.find(ctx, conn)
			}
		}
		return err
	})
	if err == nil {
		s.key, s.header = r.key, r.first
		err = p.checkRow(r)
	}
	if err == nil && !readOnly {
		err = s.lock(opts.Waiting)
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

// lose makes the store lost: its connection is gone. It tells Options.Lost.
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
		// Read for its message alone: the run appends nothing more.
		var last struct {
			End ending `json:"end"`
		}
		var b []byte
		if err := s.conn.QueryRow(ctx, "SELECT line FROM darrm.lines WHERE ledger = $1 AND n = $2", s.key, n).Scan(&b); err != nil {
			return err
		}
		json.Unmarshal(b, &last)
		return &endedError{path: s.redacted, end: last.End, line: int(n)}
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
