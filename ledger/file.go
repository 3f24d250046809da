package ledger

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/darrm/darrm/internal/atomicfile"
)

// fileStore keeps a ledger in a file of JSON lines, locked (flock) for
// the whole of a run.
type fileStore struct {
	path string
	f    *os.File
}

// openFileStore opens the ledger file at path: for a run, for writing and
// locked, waiting (and telling waiting once) while another run holds it,
// until ctx is done or for at most timeout; read only, without waiting,
// and settled when no run holds it.
func openFileStore(ctx context.Context, path string, readOnly bool, waiting func(string), timeout time.Duration) (*fileStore, bool, error) {
	if readOnly {
		f, err := openFile(path, os.O_RDONLY)
		if err != nil {
			return nil, false, err
		}
		return &fileStore{path: path, f: f}, tryLock(f, false), nil
	}
	f, err := openFile(path, os.O_RDWR)
	if err != nil {
		return nil, false, unwritable(err)
	}
	var wait func()
	if waiting != nil {
		wait = func() { waiting("ledger " + path) }
	}
	if err := lock(ctx, f, true, wait, timeout); err != nil {
		f.Close()
		switch {
		case ctx.Err() != nil:
			return nil, false, err
		case err == errLockTimeout:
			return nil, false, &lockTimeoutError{what: "ledger " + path, timeout: timeout, holder: "another darrm run"}
		}
		return nil, false, fmt.Errorf("ledger %s: lock: %w", path, err)
	}
	return &fileStore{path: path, f: f}, true, nil
}

// unwritable says, of an error opening a ledger file for a run, that a
// release appends to it: a ledger the user may not write, or one on a
// read-only file system (a share mounted read-only), is told so alike.
func unwritable(err error) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("%w: a release appends to its ledger, so it must be writable by you, on a file system mounted for writing (darrm ledger show only reads it)", err)
	}
	return err
}

// openFile opens path as a ledger file: a regular file, or a
// *NotLedgerError (never waiting on a FIFO, never reading a device).
func openFile(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|oNonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NotLedgerError{Path: path, Reason: "no such file (create it with darrm ledger init)", Err: err}
	}
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			return nil, &NotLedgerError{Path: path, Reason: "is a directory, not a ledger file"}
		}
		return nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		what := "not a regular file"
		switch {
		case st.IsDir():
			what = "a directory"
		case st.Mode()&fs.ModeNamedPipe != 0:
			what = "a FIFO"
		case st.Mode()&fs.ModeDevice != 0:
			what = "a device"
		}
		return nil, &NotLedgerError{Path: path, Reason: "is " + what + ", not a ledger file"}
	}
	return f, nil
}

// first reads the header line on its own, before the record is read: a
// line appended later is then read after the record, never before, so
// that a run writing at the same time cannot make the ledger look behind
// its record.
func (s *fileStore) first() ([]byte, error) { return firstLine(s.f) }

func firstLine(f *os.File) ([]byte, error) {
	r := newLineReader(io.NewSectionReader(f, 0, maxLineBytes+1))
	b, err := r.next()
	if err == io.EOF {
		return r.tail, io.EOF
	}
	return append([]byte(nil), b...), err
}

func (s *fileStore) lines(_ context.Context, from, to pos, each func([]byte) error) (pos, []byte, error) {
	r := newLineReader(io.NewSectionReader(s.f, from.off, to.off-from.off))
	if to.n-from.n == 1 {
		// One line, well under the 4 KiB read, which a longer one grows.
		r = &lineReader{br: bufio.NewReaderSize(io.NewSectionReader(s.f, from.off, to.off-from.off), 4<<10)}
	}
	end := from
	for end.n < to.n {
		b, err := r.next()
		if err == io.EOF {
			return end, r.tail, nil
		}
		if err != nil {
			return end, nil, err
		}
		if err := each(b); err != nil {
			return end, nil, err
		}
		end = pos{n: end.n + 1, off: from.off + r.end}
	}
	return end, nil, nil
}

func (s *fileStore) lineAt(_ context.Context, at, known pos) ([]byte, bool, error) {
	if at.n != known.n {
		if ok, err := s.endsBetween(min(at.off, known.off), max(at.off, known.off), abs(at.n-known.n)); !ok || err != nil {
			return nil, false, err
		}
	}
	return lineEndingAt(s.f, at.off)
}

// endsBetween reports whether the file holds n line ends between the
// bytes from and to (from included).
func (s *fileStore) endsBetween(from, to int64, n int) (bool, error) {
	buf := make([]byte, 64<<10)
	count := 0
	for at := from; at < to && count <= n; {
		k, err := s.f.ReadAt(buf[:min(int64(len(buf)), to-at)], at)
		count += bytes.Count(buf[:k], []byte{'\n'})
		at += int64(k)
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return count == n, nil
}

func abs(n int) int { return max(n, -n) }

// append writes b after the last whole line and syncs it, or cuts it off
// again.
func (s *fileStore) append(_ context.Context, at pos, _ string, b []byte, _ string) error {
	_, err := s.f.WriteAt(b, at.off)
	if err == nil {
		if err = s.f.Sync(); err != nil {
			err = fmt.Errorf("fsync: %w", err)
		}
	}
	if err == nil {
		return nil
	}
	err = fmt.Errorf("ledger %s: write: %w", s.path, err)
	if terr := s.f.Truncate(at.off); terr != nil {
		return &brokenError{fmt.Errorf("%w; cutting the partial line off failed too (%v): the ledger takes no more writes in this run, and the next run judges its last line", err, terr)}
	}
	if serr := s.f.Sync(); serr != nil {
		return &brokenError{fmt.Errorf("%w; syncing the cut failed too (%v): the ledger takes no more writes in this run", err, serr)}
	}
	return err
}

// brokenError is a write that failed and could not be undone: the store
// takes no more writes in this run.
type brokenError struct{ err error }

func (e *brokenError) Error() string { return e.err.Error() }
func (e *brokenError) Unwrap() error { return e.err }

func (s *fileStore) cut(at pos) error {
	if err := s.f.Truncate(at.off); err != nil {
		return fmt.Errorf("ledger %s: cut off a torn last line: %w", s.path, err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("ledger %s: cut off a torn last line: fsync: %w", s.path, err)
	}
	return nil
}

func (s *fileStore) user() string { return "" }

func (s *fileStore) where() (string, uint64, uint64, error) {
	fi, err := s.f.Stat()
	if err != nil {
		return "", 0, 0, err
	}
	path := s.path
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	dev, ino := fileID(fi)
	return path, dev, ino, nil
}

func (s *fileStore) cause() error { return nil }
func (s *fileStore) close() error { return s.f.Close() }

// createFile makes the ledger file at path, which must not exist, of its
// first line b, durably, and returns where it is for its record; the
// file is removed on an error.
func createFile(path string, b []byte) (string, uint64, uint64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return "", 0, 0, existsError(path)
	}
	if err != nil {
		return "", 0, 0, fmt.Errorf("ledger: create %s: %w", path, err)
	}
	s := &fileStore{path: path, f: f}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	var where string
	var dev, ino uint64
	if err == nil {
		where, dev, ino, err = s.where()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = atomicfile.SyncDir(path)
	}
	if err != nil {
		os.Remove(path)
		return "", 0, 0, fmt.Errorf("ledger: write %s: %w", path, err)
	}
	return where, dev, ino, nil
}

// existsError is the *takenError of Init at path, which exists: what is
// there, read no further than a ledger's first line, and only from a
// regular file (a FIFO would block).
func existsError(path string) error {
	e := &takenError{Path: path, What: "a file that is not a ledger"}
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		e.What = "a file"
	case fi.Mode()&fs.ModeSymlink != 0:
		e.What = "a symbolic link"
	case fi.IsDir():
		e.What = "a directory"
	case !fi.Mode().IsRegular():
		e.What = "a device, FIFO or socket"
	default:
		f, err := os.Open(path)
		if err != nil {
			break
		}
		defer f.Close()
		line, err := newLineReader(io.LimitReader(f, maxLineBytes+1)).next()
		if err == nil {
			e.Ledger, e.Ensemble, e.ID = headerIdentity(line)
		}
	}
	return e
}

// headerIdentity reads the ensemble and id of a ledger's first line b;
// false when b is no ledger's header.
func headerIdentity(b []byte) (ok bool, ensemble, id string) {
	var first struct {
		Header *struct {
			Ensemble string `json:"ensemble"`
			ID       string `json:"id"`
		} `json:"header"`
	}
	if !IsLedger(b) || json.Unmarshal(b, &first) != nil || first.Header == nil {
		return false, "", ""
	}
	return true, first.Header.Ensemble, first.Header.ID
}
