package ledger

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/jackc/pgx/v5"

	"github.com/darrm/darrm/internal/atomicfile"
)

// importBatch is the number of lines Import copies into the database at a
// time.
const importBatch = 10_000

// Export writes the ledger at location (a PostgreSQL ledger, or a file)
// to a new ledger file at file: its lines as they are, checked again as
// they are copied, so that the file verifies with the same chain and
// totals where the database cannot be reached. The ledger is read as
// ReadOnly reads it (it must be of version 4 or the current one); neither it nor
// your record changes. It never writes over a file (one there is an error). The
// file is a copy for reading: a release on it is refused while your
// record keeps the ledger in PostgreSQL.
func (bk Book) Export(ctx context.Context, location, file string) error {
	if IsURL(file) {
		return &urlError{Redact(file), "ledger export writes a ledger file: name a file (darrm ledger import moves a file into PostgreSQL)"}
	}
	l, err := bk.ReadOnly(ctx, location)
	if err != nil {
		return err
	}
	defer l.Close()
	if l.format == chained3 {
		return &VersionError{Path: l.path, Version: l.version}
	}
	if _, err := os.Lstat(file); err == nil {
		return existsError(file)
	}
	// A link, unlike a rename, never replaces a file made meanwhile.
	err = atomicfile.WriteNew(file, 0o644, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if _, err := l.again(func(_ *chain, _ Spend, b []byte) error {
			w.Write(b)
			return w.WriteByte('\n')
		}); err != nil {
			return err
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

// Import moves the ledger file at file into the PostgreSQL ledger at url,
// whose name must not be taken (a name taken is an error): its lines as they are,
// with their chain, checked again as they are copied, in one
// transaction. The file is opened for a run (Open: locked, and checked
// against your record as a release checks it); your record of its
// ensemble then names url, so that every later spend is counted once, in
// the database: a release on the file is refused (*RecordError).
func (bk Book) Import(ctx context.Context, file, url string) error {
	switch {
	case !IsURL(url):
		return &urlError{url, "ledger import moves a ledger file into PostgreSQL: name the ledger to make as postgres://[user[:password]@]host[:port]/database?ledger=NAME"}
	case IsURL(file):
		return &urlError{Redact(file), "ledger import reads a ledger file: name one (darrm ledger export writes one from a PostgreSQL ledger)"}
	}
	l, err := bk.Open(ctx, file)
	if err != nil {
		return err
	}
	defer l.Close()
	db, err := newPGLedger(ctx, url, bk)
	if err != nil {
		return err
	}
	defer db.close()
	err = db.insert(l.chain.n, l.size, l.chain.head, func(tx pgx.Tx, key int32) error {
		var rows [][]any
		var at int64
		flush := func() error {
			_, err := tx.CopyFrom(ctx, pgx.Identifier{"darrm", "lines"}, []string{"ledger", "n", "line", "stop"}, pgx.CopyFromRows(rows))
			rows = rows[:0]
			return err
		}
		_, err := l.again(func(c *chain, _ Spend, b []byte) error {
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
	if err != nil {
		return err
	}
	err = l.state.update(func(r *Record) { r.Path, r.Device, r.Inode = db.redacted, 0, 0 })
	if err != nil {
		return fmt.Errorf("ledger %s is imported into %s, but %w; record it with: darrm ledger adopt %s", l.path, db.redacted, err, shellQuote(db.redacted))
	}
	return nil
}
