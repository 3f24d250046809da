package ledger

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgLedger is a connection to a database that a ledger is made in (Init,
// Import).
type pgLedger struct {
	*pgLocation
	conn *pgx.Conn
	// bare says that the database has no darrm schema yet: insert makes
	// it with the ledger, so that a ledger refused before (your record
	// names another of its ensemble) leaves the database as it was.
	bare bool
}

// newPGLedger connects to the database of the PostgreSQL ledger at
// location, to make it: a schema of an earlier version is upgraded, and
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
	db := &pgLedger{pgLocation: p, conn: conn}
	p.holder = func() string { return p.lockHolder(db.conn, 0) }
	err = db.vet(ctx, conn)
	v := 0
	if err == nil {
		v, err = db.schema(ctx, conn)
	}
	if err == nil && v == 0 {
		db.bare = true
		return db, nil
	}
	if err == nil {
		err = db.makeSchema(ctx)
	}
	if err != nil {
		db.close()
		return nil, err
	}
	if err := db.absent(ctx, "", ""); err != nil {
		db.close()
		return nil, err
	}
	return db, nil
}

// makeSchema makes the database's darrm schema when it has none, and
// upgrades it when it is of an earlier version, once even when several
// darrm make ledgers in it at once; a superuser makes darrm's guard
// against DDL where it has none of this darrm's (secure).
func (db *pgLedger) makeSchema(ctx context.Context) error {
	if err := db.vet(ctx, db.conn); err != nil {
		return err
	}
	v, err := db.schema(ctx, db.conn)
	switch {
	case err != nil:
		return err
	case v == schemaVersion:
		_, err := db.secure(ctx, db.conn)
		return err
	case v > 0:
		if _, err := db.upgradeSchema(ctx, db.conn); err != nil {
			return err
		}
		_, err := db.secure(ctx, db.conn)
		return err
	}
	err = pgx.BeginFunc(ctx, db.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, 0)", lockSpace); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = 'darrm')").Scan(&exists); err != nil || exists {
			return err
		}
		if _, err := tx.Exec(ctx, tablesSQL); err != nil {
			return err
		}
		return rebuild(ctx, tx, "")
	})
	if err != nil {
		return db.fail("make the schema of darrm's ledgers in database "+db.cfg.Database, err)
	}
	v, err = db.schema(ctx, db.conn)
	if err == nil && v == schemaVersion {
		_, err = db.secure(ctx, db.conn)
	}
	return err
}

// absent checks that the database has no ledger of this name, and, for
// a ledger of identity id and ensemble ensemble ("" when not yet known),
// none of that identity and no live one of that ensemble.
func (db *pgLedger) absent(ctx context.Context, id, ensemble string) error {
	if db.bare {
		return nil // no schema, no ledgers
	}
	var name string
	var first []byte
	var live bool
	err := db.conn.QueryRow(ctx, `SELECT name, NOT retired, (SELECT line FROM darrm.lines WHERE ledger = l.key AND n = 1) FROM darrm.ledgers l
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
func (db *pgLedger) create(ctx context.Context, h Header, b []byte) error {
	return db.insert(ctx, h, func(tx pgx.Tx, key int32) error {
		_, err := tx.Exec(ctx, "INSERT INTO darrm.lines (ledger, n, line, stop) VALUES ($1, 1, $2, $3)", key, b[:len(b)-1], int64(len(b)))
		return err
	})
}

// insert makes the row of the ledger of header h and its line rows
// (rows, which move its head on), in one transaction that commits only
// once it is durable: a name, an identity or a live ensemble taken
// meanwhile is a *takenError.
func (db *pgLedger) insert(ctx context.Context, h Header, rows func(tx pgx.Tx, key int32) error) error {
	if db.bare {
		if err := db.makeSchema(ctx); err != nil {
			return err
		}
		db.bare = false
	}
	err := pgx.BeginFunc(ctx, db.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, durableSQL); err != nil {
			return err
		}
		var key int32
		err := tx.QueryRow(ctx, "INSERT INTO darrm.ledgers (name, lines, size, head, id, ensemble) VALUES ($1, 0, 0, '', $2, $3) RETURNING key",
			db.name, h.ID, h.Ensemble).Scan(&key)
		if err != nil {
			return err
		}
		return rows(tx, key)
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		if err := db.absent(ctx, h.ID, h.Ensemble); err != nil {
			return err
		}
	}
	if err != nil {
		return db.fail("make ledger "+db.name+" in database "+db.cfg.Database, err)
	}
	return nil
}

func (db *pgLedger) close() { closeConn(db.conn) }
