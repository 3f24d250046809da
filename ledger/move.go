package ledger

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/darrm/darrm/internal/atomicfile"
)

// importBatch is the number of lines Import copies into the database at a
// time.
const importBatch = 10_000

// Export writes the ledger at location (a PostgreSQL ledger, or a file)
// to a new ledger file at file, an archive: its lines as they are,
// checked again as they are copied, and an end line (its reason "exported")
// after them, so that the file verifies with the same chain and totals
// where the database cannot be reached, and no release charges it: a
// copy charged apart would count the ledger's spends apart. Import makes
// it live again in a database that does not hold it. The ledger is read
// as ReadOnly reads it (it must be of version 4 or the current one);
// neither it nor your record changes. It never writes over a file (one
// there is an error).
func (opts Options) Export(ctx context.Context, location, file string) error {
	if IsURL(file) {
		return &urlError{Redact(file), "ledger export writes a ledger file: name a file (darrm ledger import moves a file into PostgreSQL)"}
	}
	l, err := opts.readOnly(ctx, location)
	if err != nil {
		return err
	}
	defer l.Close()
	if l.format == chained3 {
		return &versionError{Path: l.path, Version: l.version}
	}
	if _, err := os.Lstat(file); err == nil {
		return existsError(file)
	}
	// A link, unlike a rename, never replaces a file made meanwhile.
	err = atomicfile.WriteNew(file, 0o644, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<20)
		n := 0
		if _, err := l.again(ctx, func(_ *chain, _ Spend, b []byte) error {
			// A file holds a line to its line end: a line that holds one
			// (which a database of schema version 3 took) would read as
			// two.
			if n++; bytes.ContainsAny(b, "\r\n") {
				return fmt.Errorf("line %d holds a line break, which a ledger file cannot hold: the ledger stays where it is, and no file was written", n)
			}
			w.Write(b)
			return w.WriteByte('\n')
		}); err != nil {
			return err
		}
		if l.chain.closedBy == nil {
			b, _, err := endLine(l.version, l.chain.head, ending{Reason: reasonExported, At: time.Now().UTC().Truncate(time.Second), From: l.path})
			if err != nil {
				return err
			}
			w.Write(b)
		}
		return w.Flush()
	})
	if errors.Is(err, fs.ErrExist) {
		return existsError(file)
	}
	if err != nil {
		return fmt.Errorf("ledger export: %w", err)
	}
	return nil
}

// Import moves the ledger file at file, a ledger or an archive that
// Export wrote, into the PostgreSQL ledger at url: its lines as they are
// (an archive's but its end line), with their chain, checked again as
// they are copied, in one transaction. The name must not be taken, and
// the database must hold neither this ledger (its identity) nor a live
// ledger of its ensemble: a copy made live twice would count its spends
// twice (a *takenError). The file is opened for a run (Open: locked, and
// checked against your record as a release checks it); your record of its
// ensemble then names url, and the file, unless it is an archive, ends
// with a line that says where it was imported (reason "imported"), so
// that every later spend is counted once, in the database: every release
// on the file is refused.
func (opts Options) Import(ctx context.Context, file, url string) error {
	switch {
	case !IsURL(url):
		return &urlError{url, "ledger import moves a ledger file into PostgreSQL: name the ledger to make as postgres://[user[:password]@]host[:port]/database?ledger=NAME"}
	case IsURL(file):
		return &urlError{Redact(file), "ledger import reads a ledger file: name one (darrm ledger export writes one from a PostgreSQL ledger)"}
	}
	l, _, err := opts.open(ctx, file, false)
	if err != nil {
		return err
	}
	l.importing = true
	if _, err := l.load(ctx, opts, true, false); err != nil {
		l.store.close()
		return err
	}
	defer l.Close()
	if e := l.chain.closedBy; e != nil && e.Reason == reasonExported && !IsURL(e.From) {
		if err := opts.exportedFromLive(ctx, l, e.From); err != nil {
			return err
		}
	}
	// The lines up to the archive's end line, if any: the ledger as it was.
	lines, size, head := l.chain.n, l.size, l.chain.head
	where := Redact(url)
	db, err := newPGLedger(ctx, url, opts)
	var taken *takenError
	switch {
	case err == nil:
		defer db.close()
		if err := db.absent(ctx, l.header.ID, l.header.Ensemble); err != nil {
			return err
		}
		if err := db.copyIn(ctx, l, &lines, &size, &head); err != nil {
			return err
		}
	case errors.As(err, &taken) && taken.Other == "" && taken.ID == l.header.ID && l.chain.closedBy == nil && opts.holdsAll(ctx, url, lines, head):
		// An import that stopped after its copy committed, before the
		// file was ended (a crash): the database holds the ledger under
		// this name with the file's very lines, and the import goes on
		// from there; refused, it could never end the file.
	default:
		return err
	}
	if l.chain.closedBy == nil {
		// The file, a live ledger, ends where its lines now continue:
		// every analyst's release on it is refused from here on, not only
		// the one whose record moves to url (else a user who had
		// released on the file could release its budget there again,
		// beside the database's).
		if err := l.end(ctx, ending{Reason: reasonImported, At: time.Now().UTC().Truncate(time.Second), Where: where, By: opts.Analyst}); err != nil {
			return fmt.Errorf("ledger %s is imported into %s, but the file could not be ended (%w): it is still live beside the database, and a release on it would count the spends apart; move it away where no release finds it", l.path, where, err)
		}
	}
	err = l.state.update(ctx, func(r *Record) {
		r.Path, r.Device, r.Inode = where, 0, 0
		r.Lines, r.Size, r.Head = lines, size, head
	})
	if err != nil {
		return fmt.Errorf("ledger %s is imported into %s, but %w; record it with: darrm ledger adopt %s", l.path, where, err, shellQuote(where))
	}
	if l.team != "" {
		return l.leave(ctx, newRecord(l.header, l.headerHash, where, 0, 0, lines, size, head), false)
	}
	return nil
}

// exportedFromLive refuses the import of the archive l exported from the
// ledger file at from while that file holds the same ledger, live, or
// says it was imported into a database: the import would make a second
// live ledger of the same spends. A file gone or unreadable (the way back
// after a loss; or moved, which this cannot tell) is no refusal.
func (opts Options) exportedFromLive(ctx context.Context, l *Ledger, from string) error {
	src, err := opts.readOnly(ctx, from)
	if err != nil {
		return nil
	}
	defer src.Close()
	switch e := src.chain.closedBy; {
	case src.header.ID != l.header.ID:
		return nil
	case e == nil:
		return &liveSourceError{archive: l.path, from: from}
	case e.Reason == reasonImported:
		// The file moved into a database, where the ledger is live: the
		// archive would go live in a second one.
		return &liveSourceError{archive: l.path, from: from, where: e.Where}
	}
	return nil
}

// liveSourceError refuses the import of an archive whose ledger is live:
// in its ledger file, or where that file was imported (where)
// (Options.exportedFromLive).
type liveSourceError struct{ archive, from, where string }

func (e *liveSourceError) Error() string {
	if e.where != "" {
		return fmt.Sprintf("ledger import: %s is an archive of the ledger file %s, which was imported into %s, where the ledger is live: an import of the archive would make a second live ledger of the same spends; release on %s", e.archive, e.from, e.where, e.where)
	}
	return fmt.Sprintf("ledger import: %s is an archive of the ledger file %s, which holds the ledger live: an import of the archive would make a second live ledger of the same spends; import that file itself (darrm ledger import %s URL), which ends it", e.archive, e.from, shellQuote(e.from))
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *liveSourceError) BadInput() bool { return true }

// holdsAll reports whether the ledger at url holds lines lines whose last
// has the hash head, and no more: the copy an import made of a file.
func (opts Options) holdsAll(ctx context.Context, url string, lines int, head string) bool {
	opts.Witnesses, opts.WitnessDir = nil, ""
	db, err := opts.readOnly(ctx, url)
	if err != nil {
		return false
	}
	defer db.Close()
	return db.chain.n == lines && db.chain.head == head && db.chain.closedBy == nil
}

// copyIn copies the lines of the ledger file l into db, a new ledger, in
// one transaction: an archive's up to its end line, whose count, size
// and last hash it sets.
func (db *pgLedger) copyIn(ctx context.Context, l *Ledger, lines *int, size *int64, head *string) error {
	return db.insert(ctx, l.header, func(tx pgx.Tx, key int32) error {
		var rows [][]any
		var at int64
		flush := func() error {
			_, err := tx.CopyFrom(ctx, pgx.Identifier{"darrm", "lines"}, []string{"ledger", "n", "line", "stop"}, pgx.CopyFromRows(rows))
			rows = rows[:0]
			return err
		}
		_, err := l.again(ctx, func(c *chain, _ Spend, b []byte) error {
			if c.closedBy != nil {
				*lines, *size = c.n-1, at
				return nil
			}
			*head = c.head
			at += int64(len(b)) + 1
			rows = append(rows, []any{key, int64(c.n), append([]byte(nil), b...), at})
			if len(rows) == importBatch {
				return flush()
			}
			return nil
		})
		if err == nil && len(rows) > 0 {
			err = flush()
		}
		return err
	})
}
