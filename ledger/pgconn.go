package ledger

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

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
		case "DRM03", "DRM04":
			// A line that the database's guards refuse: darrm writes none
			// but one that another user would have to settle or retire.
			return mk(true, "the database refused to %s: %s", what, strings.TrimPrefix(pe.Message, "darrm: "))
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
// holds on them (LOCK TABLE), which the lock timeout ends. A notice whose
// timer fired as f returned is said before told returns, so that it never
// comes after what the run says next, or after the run has ended.
func (p *pgLocation) told(waiting func(string), f func() error) error {
	if waiting == nil {
		return f()
	}
	said := make(chan struct{})
	t := time.AfterFunc(min(time.Second, p.lockTimeout/2), func() {
		defer close(said)
		waiting("the tables of ledger " + p.redacted)
	})
	err := f()
	if !t.Stop() {
		<-said
	}
	return err
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

// preferOnOneConnection makes a connection of sslmode prefer (libpq's
// default, and pgx's) ask the server for TLS on the connection it then
// uses either way, as libpq does: pgx dials again, without TLS, after a
// server that has none says so, and a second connection (a second
// process forked by the server) cost a release on a local server 40% of
// its connection's time, measured. Only one host, without a client
// certificate, is done so; any other configuration is left to pgx.
func preferOnOneConnection(cfg *pgx.ConnConfig) {
	fb := cfg.Fallbacks
	if cfg.TLSConfig == nil || len(fb) != 1 || fb[0].TLSConfig != nil || fb[0].Host != cfg.Host || fb[0].Port != cfg.Port ||
		len(cfg.TLSConfig.Certificates) > 0 || cfg.TLSConfig.GetClientCertificate != nil || cfg.SSLNegotiation == "direct" || cfg.AfterNetConnect != nil {
		return
	}
	tlsConfig := cfg.TLSConfig
	cfg.TLSConfig, cfg.Fallbacks = nil, nil
	cfg.AfterNetConnect = func(ctx context.Context, _ *pgconn.Config, conn net.Conn) (net.Conn, error) {
		if d, ok := ctx.Deadline(); ok {
			conn.SetDeadline(d)
			defer conn.SetDeadline(time.Time{})
		}
		// SSLRequest: its length, 8, and its code, 80877103.
		if _, err := conn.Write([]byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}); err != nil {
			return nil, err
		}
		var answer [1]byte
		if _, err := io.ReadFull(conn, answer[:]); err != nil {
			return nil, err
		}
		switch answer[0] {
		case 'S':
			return tls.Client(conn, tlsConfig), nil
		case 'N':
			return conn, nil
		}
		return nil, fmt.Errorf("the server answered %q to a request for TLS", answer[0])
	}
}
