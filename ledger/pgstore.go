package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

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
	// row is what the ledger's row said when it was opened.
	row      pgRow
	readOnly bool
	// schemaFrom is the version of darrm's schema that opening the
	// ledger upgraded the database from, 0 when it was current.
	schemaFrom int

	// The watchdog: a goroutine that waits on the idle connection, and
	// the end of its wait.
	stopWatch context.CancelFunc
	watched   chan error
	lostOnce  sync.Once
	lostCh    chan struct{}
	lostErr   error
	onLost    func(error) // Options.Lost
	// guardMade says that opening the store made darrm's guard against
	// DDL (secure).
	guardMade bool
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
	s := &pgStore{pgLocation: p, conn: conn, readOnly: readOnly, lostCh: make(chan struct{}), onLost: opts.Lost}
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
		if err := p.vet(ctx, conn); err != nil {
			return err
		}
		r, err = p.find(ctx, conn)
		if err == nil && !readOnly && r.version < schemaVersion {
			if s.schemaFrom, err = p.upgradeSchema(ctx, conn); err == nil {
				r, err = p.find(ctx, conn)
			}
		}
		if err == nil && !readOnly {
			s.guardMade, err = p.secure(ctx, conn)
		}
		return err
	})
	if err == nil {
		s.key, s.header, s.row = r.key, r.first, r
		err = p.checkRow(r)
	}
	if err == nil && !readOnly {
		err = s.lock(ctx, opts.Waiting)
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
func (s *pgStore) lock(ctx context.Context, waiting func(string)) error {
	var got bool
	if err := s.conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", lockSpace, s.key).Scan(&got); err != nil {
		return s.fail("lock the ledger", err)
	}
	if got {
		return nil
	}
	if waiting != nil {
		waiting("ledger " + s.redacted)
	}
	if _, err := s.conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", lockSpace, s.key); err != nil {
		if ctx.Err() != nil {
			// Told nothing, the server would go on waiting, and take the
			// lock for a moment when the other run ends.
			c, cancel := context.WithTimeout(context.Background(), time.Second)
			s.conn.PgConn().CancelRequest(c)
			cancel()
			return ctx.Err()
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

// use runs f on the connection, the watchdog paused.
func (s *pgStore) use(f func() error) error {
	if err := s.cause(); err != nil {
		return err
	}
	s.pause()
	defer s.resume()
	if err := s.cause(); err != nil {
		return err
	}
	return f()
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

func (s *pgStore) lines(ctx context.Context, from, to pos, each func([]byte) error) (pos, []byte, error) {
	var stopped error // each's error, which stopped the read
	end := from
	var lines, size int64 // the head's
	err := s.use(func() error {
		// One statement, one snapshot: the rows and the head as one commit
		// left them, and the number of rows up to line from.n, so that a
		// run that reads from the line its record vouches for still finds
		// a row deleted before it (whose line no total it uses depends
		// on, but the ledger must hold every line it had).
		// A line is read to maxLineBytes+1 bytes at most, enough to see
		// that it is too long: read whole, an analyst's row of 200 MB
		// would allocate 600 MB before that check.
		rows, err := s.conn.Query(ctx, `SELECT h.lines, h.size, l.n, substring(l.line from 1 for $5), l.stop,
			(SELECT count(*) FROM darrm.lines c WHERE c.ledger = h.key AND c.n <= $2) FROM darrm.ledgers h
			LEFT JOIN darrm.lines l ON l.ledger = h.key AND l.n > $2 AND l.n <= $3 AND l.stop <= $4
			WHERE h.key = $1 ORDER BY l.n`, s.key, int64(from.n), int64(to.n), to.off, maxLineBytes+1)
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
				stopped = err
				return err
			}
			end = pos{n: end.n + 1, off: *stop}
		}
		return rows.Err()
	})
	var ce *CorruptError
	switch {
	case stopped != nil:
		err = stopped // the caller's own
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

func (s *pgStore) lineAt(ctx context.Context, at, _ pos) ([]byte, bool, error) {
	var b []byte
	var stop int64
	err := s.use(func() error {
		return s.conn.QueryRow(ctx, "SELECT substring(line from 1 for $3), stop FROM darrm.lines WHERE ledger = $1 AND n = $2", s.key, int64(at.n), maxLineBytes+1).Scan(&b, &stop)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, s.fail("read the ledger", err)
	}
	return b, stop == at.off && len(b) <= maxLineBytes, nil
}

// writeContext returns the context of a write of a run whose context is
// run: run's, but outliving an interrupt by writeGrace, so that a
// settlement is written after one, and bounded by writeTimeout.
func writeContext(run context.Context) (context.Context, context.CancelFunc) {
	grace := writeTimeout
	if run.Err() != nil {
		grace = writeGrace
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(run), grace)
	stop := context.AfterFunc(run, func() {
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
func (s *pgStore) append(run context.Context, at pos, head string, b []byte, hash string) error {
	if s.readOnly {
		return fmt.Errorf("ledger %s: opened read-only", s.redacted)
	}
	if err := s.cause(); err != nil {
		return err
	}
	s.pause()
	defer s.resume()
	ctx, cancel := writeContext(run)
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
			return s.writeErr(ctx, run, err)
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
			return s.writeErr(ctx, run, err)
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

// writeErr is the error of an append of a run whose context is run, in
// ctx (writeContext).
func (s *pgStore) writeErr(ctx, run context.Context, err error) error {
	var moved *movedOnError
	var ended *endedError
	switch {
	case err == nil, isLost(err), errors.As(err, &moved), errors.As(err, &ended):
		return err
	case ctx.Err() != nil && run.Err() == nil:
		err = fmt.Errorf("%w (no write got through in %v)", err, writeTimeout)
	}
	return s.fail("append to the ledger", err)
}

func (s *pgStore) cut(pos) error { return nil } // a row is whole or absent

func (s *pgStore) where() (string, uint64, uint64, error) { return s.redacted, 0, 0, nil }

func (s *pgStore) user() string { return s.row.user }

func (s *pgStore) close() error {
	s.pause()
	closeConn(s.conn)
	return nil
}
