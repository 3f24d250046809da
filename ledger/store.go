package ledger

import (
	"context"
	"math"
	"strings"
)

// store keeps a ledger's lines: a file (fileStore) or the rows of a
// PostgreSQL database (pgStore). What a line may say, the hash chain, the
// budget, the record and the total to publish are the Ledger's, one
// implementation for both: a store only reads and appends lines, each
// exactly as a ledger file holds it (without its line end), and is locked
// for a run.
type store interface {
	// first returns the first line, the header: io.EOF with the bytes
	// there are when it has no line end, errLongLine when it is too long.
	first() ([]byte, error)
	// lines calls each with every whole line after from, in order, up to
	// line to.n or byte to.off, whichever comes first, and returns the
	// position after the last one and the bytes after it that end no line
	// (a torn last line of a file). A line too long is errLongLine.
	lines(ctx context.Context, from, to pos, each func(b []byte) error) (end pos, tail []byte, err error)
	// lineAt returns line at.n, without reading the lines before it, when
	// it ends at byte at.off; false when the store holds no such line
	// there. known is a line the caller has read where it is, its number
	// and end (at itself, when the caller vouches for at.n): a store that
	// cannot find a line by its number (a file) counts the line ends
	// between the two, so that a line at the right byte but of another
	// number is not taken for it.
	lineAt(ctx context.Context, at, known pos) ([]byte, bool, error)
	// append writes b, a line with its line end, of hash hash, as line
	// at.n+1 after line at.n, of hash head, and returns when it is
	// durable; a write that fails is undone or never happened. An append
	// after a line other than the store's last fails.
	append(ctx context.Context, at pos, head string, b []byte, hash string) error
	// cut cuts off what follows at: a torn last line.
	cut(at pos) error
	// where says where the ledger is, for its record: a file's absolute
	// path, device and inode, or a URL without its password.
	where() (path string, dev, ino uint64, err error)
	// user is who the store knows as the run's analyst: the database user
	// of a PostgreSQL ledger, "" for a file.
	user() string
	// cause says why the store can no longer be written by this run (its
	// connection to the server is gone), nil while it can.
	cause() error
	close() error
}

// pos is a place in a ledger: after its first n lines, at byte off of
// its file form (every line with its line end).
type pos struct {
	n   int
	off int64
}

// everything is the end of a ledger, however long.
var everything = pos{n: math.MaxInt, off: math.MaxInt64}

// IsURL reports whether a ledger's location names a ledger kept in a
// PostgreSQL database (postgres:// or postgresql://, a libpq URL whose
// parameter ledger names it), not a file.
func IsURL(location string) bool {
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://")
}

// openStore opens the ledger at location for a run (locked, waiting
// until ctx is done and telling opts.Waiting once; a loss told to opts.Lost),
// or, with readOnly, to read it: the store, the location as messages and
// records name it, and whether no write can be under way (a run that
// holds a file ledger may be writing its last line).
func openStore(ctx context.Context, location string, readOnly bool, opts Options) (store, string, bool, error) {
	if IsURL(location) {
		s, err := openPG(ctx, location, readOnly, opts)
		if err != nil {
			return nil, Redact(location), false, err
		}
		return s, s.redacted, true, nil
	}
	timeout, err := opts.lockTimeout()
	if err != nil {
		return nil, location, false, err
	}
	s, settled, err := openFileStore(ctx, location, readOnly, opts.Waiting, timeout)
	return s, location, settled, err
}
