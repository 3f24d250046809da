package ledger

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// Options tune how a ledger is opened.
type Options struct {
	// StateDir holds the per-user records (Record); "" is StateDir().
	// It must be an absolute path.
	StateDir string
	// Waiting, if set, is called once when another run holds a lock that
	// must be waited for, with what it locks: "ledger PATH", or "the
	// record of ensemble E (PATH)".
	Waiting func(what string)
}

// waiting returns the function that a wait for the lock on what calls.
func (o Options) waiting(what string) func() {
	if o.Waiting == nil {
		return nil
	}
	return func() { o.Waiting(what) }
}

func (o Options) stateDir() (string, error) {
	if o.StateDir != "" {
		if !filepath.IsAbs(o.StateDir) {
			return "", &stateDirError{Value: o.StateDir}
		}
		return o.StateDir, nil
	}
	return StateDir()
}

// InitOptions tune Init.
type InitOptions struct {
	Options
	// Replace records the new ledger as its ensemble's even when the
	// record names another: the ensemble's budget then starts again, so
	// it is for a user who means it.
	Replace bool
}

// Init creates a ledger at path, which must not exist, bound to the
// ensemble parameters of h (NewHeader), and records it as the ledger of
// its ensemble. An ensemble recorded with another ledger is a
// *RecordError unless opts.Replace; the record replaced is returned (nil
// when there was none).
func Init(ctx context.Context, path string, h Header, opts InitOptions) (previous *Record, err error) {
	h.Version = Version
	if err := checkHeader(h); err != nil {
		return nil, err
	}
	if h.Created.IsZero() {
		h.Created = time.Now().UTC().Truncate(time.Second)
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	h.ID = hex.EncodeToString(id[:])
	b, head, err := encodeLine("", h)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, existsError(path)
	}
	st, rec, err := openRecord(ctx, opts, h.Ensemble)
	if err != nil {
		return nil, err
	}
	defer st.close()
	if rec != nil && !opts.Replace {
		return nil, &RecordError{kind: secondLedger, Path: path, Ensemble: h.Ensemble, Record: *rec, File: st.path, Command: "init"}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, existsError(path)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: create %s: %w", path, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(path)
	}
	if err == nil {
		var fi fs.FileInfo
		if fi, err = os.Stat(path); err == nil {
			err = st.write(newRecord(h, head, path, fi, 1, int64(len(b)), head))
		}
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("ledger: write %s: %w", path, err)
	}
	return rec, nil
}

// existsError is the *ExistsError of Init at path, which exists: what is
// there, read no further than a ledger's first line, and only from a
// regular file (a FIFO would block).
func existsError(path string) error {
	e := &ExistsError{Path: path, What: "a file that is not a ledger"}
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
		var first struct {
			Header *struct {
				Ensemble string `json:"ensemble"`
				ID       string `json:"id"`
			} `json:"header"`
		}
		if err == nil && IsLedger(line) && json.Unmarshal(line, &first) == nil && first.Header != nil {
			e.Ledger, e.Ensemble, e.ID = true, first.Header.Ensemble, first.Header.ID
		}
	}
	return e
}

// openRecord opens and locks the record of ensemble for a command that
// makes its ledger (Init, Upgrade), and reads it: nil when there is none,
// or when it is damaged and opts.Replace replaces it. Close the state.
func openRecord(ctx context.Context, opts InitOptions, ensemble string) (*state, *Record, error) {
	st, err := openState(ctx, opts.Options, ensemble)
	if err != nil {
		return nil, nil, err
	}
	if err := st.lock(); err != nil {
		st.close()
		return nil, nil, err
	}
	rec, err := st.read()
	var bad *recordFileError
	if err != nil && !(opts.Replace && errors.As(err, &bad)) {
		st.close()
		return nil, nil, err
	}
	return st, rec, nil
}

// syncDir makes a file created or renamed in path's folder durable.
func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// Ledger is an open ledger: locked for a run (Open), or read (ReadOnly).
type Ledger struct {
	path       string
	f          *os.File
	readOnly   bool
	header     Header
	headerLine []byte // as read, without its line end
	headerHash string
	format     format
	version    int
	cap        *accountant.Cap // the teachers' cap on every total, if any
	// chain is the ledger as read: its whole lines, the last one's hash
	// and spend, and every run's spend so far.
	chain     chain
	size      int64  // bytes of the whole lines
	recHash   string // hash of the line the record names, when read
	tail      []byte // bytes after the last line end: a torn line
	marked    bool   // a version-3 ledger that Upgrade has marked
	notes     []string
	recordErr error  // what the record says against a ledger read only
	recorded  bool   // a ledger read only has a record that agrees
	state     *state // the record's file, for a run
	broken    error  // a write failed and could not be undone
	run       string // this process's run id, once it has begun
	mech      provenance.MechanismName
	step      accountant.Spend
	held      int                 // labels reserved by this run
	settled   bool                // this run has written its final line
	base      accountant.Sequence // the spends of every run before this one
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

// Open opens and locks the ledger at path for a run: it waits while
// another run holds it (until ctx is done), checks the ledger against its
// ensemble's record (*RecordError), checks every line that the record
// does not vouch for (all of them when there is no record, or when the
// file does not hold the line it names where it says), cuts off a torn
// last line whose fsync cannot have returned, and advances the record. A
// ledger that fails a check is a *CorruptError; one of an earlier version
// a *VersionError. Close releases the lock.
func Open(ctx context.Context, path string, opts Options) (*Ledger, error) {
	f, err := openFile(path, os.O_RDWR)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("%w: a release appends to its ledger, so it must be writable by you (darrm ledger show only reads it)", err)
		}
		return nil, err
	}
	if err := lock(ctx, f, true, opts.waiting("ledger "+path)); err != nil {
		f.Close()
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("ledger %s: lock: %w", path, err)
	}
	l := &Ledger{path: path, f: f}
	if _, err := l.load(ctx, opts, true, false); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// Adopt records the ledger at path, as it is now, as the ledger of its
// ensemble, whatever the record said (which it returns, nil if there was
// none): the way to resolve a *RecordError on purpose. The ledger must
// pass every check of its own; a torn last line is cut off.
func Adopt(ctx context.Context, path string, opts Options) (previous *Record, l *Ledger, err error) {
	f, err := openFile(path, os.O_RDWR)
	if err != nil {
		return nil, nil, err
	}
	if err := lock(ctx, f, true, opts.waiting("ledger "+path)); err != nil {
		f.Close()
		return nil, nil, err
	}
	l = &Ledger{path: path, f: f}
	if previous, err = l.load(ctx, opts, true, true); err != nil {
		f.Close()
		return nil, nil, err
	}
	return previous, l, nil
}

// ReadOnly reads the ledger at path without writing anything: neither the
// file (a torn last line is reported in Notes, not cut off) nor the
// record. It checks every line and the chain, whatever the record says.
// Reading needs no record: what the record says against the ledger is
// not an error here but RecordErr, and a damaged record is a note. It
// does not wait for a run that holds the ledger: it then reads what is
// on disk, and a last line still being written is left out. Ledgers of
// earlier versions are read too. Close it when done.
func ReadOnly(ctx context.Context, path string, opts Options) (*Ledger, error) {
	f, err := openFile(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	locked := tryLock(f, false)
	l := &Ledger{path: path, f: f, readOnly: true}
	if !locked {
		l.notes = append(l.notes, "a run holds the ledger: a line it is writing now is not shown")
	}
	if _, err := l.load(ctx, opts, locked, false); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// OpenRun opens and locks the ledger at path (Open) for a release of
// labels that step describes, by mechanism, from the ensemble that b states:
// it begins the run's spend (Begin) and returns how many labels the
// budget allows, at most limit when limit >= 0, accountant.Unlimited when
// the teachers' cap is within the budget and limit < 0 (Allowance). Close
// the ledger when the run is settled.
func OpenRun(ctx context.Context, path string, mechanism provenance.MechanismName, b provenance.Binding, step accountant.Spend, limit int, opts Options) (*Ledger, int, error) {
	l, err := Open(ctx, path, opts)
	if err != nil {
		return nil, 0, err
	}
	allowed := 0
	if err = l.Begin(mechanism, b, step); err == nil {
		allowed, err = l.Allowance(step, limit)
	}
	if err != nil {
		l.Close()
		return nil, 0, err
	}
	return l, allowed, nil
}

// firstLine reads the header line of f on its own, before the record is
// read: a line appended later is then read after the record, never
// before, so that a run writing at the same time cannot make the ledger
// look behind its record.
func firstLine(f *os.File) ([]byte, error) {
	r := newLineReader(io.NewSectionReader(f, 0, maxLineBytes+1))
	b, err := r.next()
	if err == io.EOF {
		return r.tail, io.EOF
	}
	return bytes.Clone(b), err
}

// load reads and checks the ledger; settled says that no write can be
// under way (the lock is held), so that a torn last line is a write that
// a crash interrupted. For a run (not readOnly) it then cuts off a torn
// last line that it may and advances the record; with adopt, it records
// the ledger as it is, whatever the record said, and returns what it
// said.
func (l *Ledger) load(ctx context.Context, opts Options, settled, adopt bool) (*Record, error) {
	first, err := firstLine(l.f)
	switch {
	case err == errLongLine:
		return nil, &NotLedgerError{Path: l.path, Reason: fmt.Sprintf("is not a ledger: its first line is longer than %d bytes", maxLineBytes)}
	case err != nil && err != io.EOF:
		return nil, fmt.Errorf("ledger %s: read: %w", l.path, err)
	case len(first) == 0 && err == io.EOF:
		return nil, &NotLedgerError{Path: l.path, Reason: "is empty: not a ledger (a ledger whose creation was interrupted is empty too: remove it and run darrm ledger init again)"}
	}
	l.headerLine = first
	var perr error
	if l.headerHash, perr = l.parseHeader(first); perr != nil {
		return nil, perr
	}
	if err == io.EOF {
		return nil, &CorruptError{Path: l.path, Line: 1, Reason: "the header has no line end: not a ledger, or one whose creation was interrupted"}
	}
	if l.format != current && !l.readOnly {
		return nil, &VersionError{Path: l.path, Version: l.version}
	}
	st, err := openState(ctx, opts, l.header.Ensemble)
	if err != nil {
		return nil, err
	}
	if !l.readOnly {
		// Held from the check of the record to its update.
		if err := st.lock(); err != nil {
			return nil, err
		}
	}
	ok := false
	defer func() {
		if !ok || l.readOnly {
			st.close()
		}
	}()
	rec, err := st.read()
	var bad *recordFileError
	switch {
	case errors.As(err, &bad) && adopt:
		rec, err = nil, nil // adopting replaces it
	case errors.As(err, &bad) && l.readOnly:
		l.notes = append(l.notes, fmt.Sprintf("warning: %v (reading the ledger needs no record: it is shown as it is)", err))
		rec, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	check := rec
	if adopt {
		check = nil
	}
	resumed := false
	if check != nil && !l.readOnly && check.LedgerID == l.header.ID && check.Size > 0 {
		if resumed, err = l.resume(check); err != nil {
			return nil, err
		}
	}
	if !resumed {
		if err := l.scan(check); err != nil {
			return nil, err
		}
	}
	if err := l.checkRecord(check, st.path, settled); err != nil {
		var re *RecordError
		if !l.readOnly || !errors.As(err, &re) {
			return nil, err
		}
		l.recordErr = err
	}
	if l.readOnly {
		l.recorded = rec != nil && l.recordErr == nil
		l.noteVersion()
		return rec, nil
	}
	if err := l.cutTail(); err != nil {
		return nil, err
	}
	fi, err := l.f.Stat()
	if err == nil {
		err = st.write(newRecord(l.header, l.headerHash, l.path, fi, l.chain.n, l.size, l.chain.head))
	}
	if err != nil {
		return nil, err
	}
	st.unlock()
	l.state, ok = st, true
	return rec, nil
}

// noteVersion notes, for a version-3 ledger read only, that a run
// refuses it until it is upgraded, or that Upgrade has marked it.
func (l *Ledger) noteVersion() {
	switch {
	case l.format == current:
	case l.marked:
		l.notes = append(l.notes, fmt.Sprintf("marked as upgraded to version %d: this is the copy that darrm ledger upgrade keeps (or an upgrade that was interrupted: run it again)", Version))
	default:
		l.notes = append(l.notes, (&VersionError{Path: l.path, Version: l.version}).Error())
	}
}

// checkRecord checks the ledger against its ensemble's record rec (nil
// for none), read from file, and judges a torn last line; settled says no
// write can be under way.
func (l *Ledger) checkRecord(rec *Record, file string, settled bool) error {
	torn := len(l.tail) > 0
	if torn {
		p := linePrefix(l.chain.head)
		if !bytes.HasPrefix(l.tail, p) && !bytes.HasPrefix(p, l.tail) {
			return &CorruptError{Path: l.path, Line: l.chain.n + 1, Reason: "the last line has no line end and is not the beginning of the next ledger line"}
		}
	}
	if rec != nil {
		lines := l.chain.n
		e := &RecordError{Path: l.path, Ensemble: l.header.Ensemble, Record: *rec, File: file, Lines: lines}
		switch {
		case rec.LedgerID != l.header.ID && l.upgradedFrom(rec):
			e = nil
		case rec.LedgerID != l.header.ID:
			e.kind = secondLedger
			e.ID = l.header.ID
		case torn && lines+1 == rec.Lines:
			e.kind = tornAfterSync
		case lines < rec.Lines:
			e.kind = behind
		case l.recHash != rec.Head:
			e.kind = diverged
		default:
			e = nil
		}
		if e != nil {
			return e
		}
	} else if l.readOnly {
		l.notes = append(l.notes, fmt.Sprintf("you have no record of ensemble %s yet: the first release that uses this ledger makes one", l.header.Ensemble))
	}
	if torn && settled && l.readOnly {
		l.notes = append(l.notes, fmt.Sprintf("its last line (%d bytes) is torn: a write that a crash interrupted before its fsync returned, so the labels it would have covered never left; the next release cuts it off", len(l.tail)))
	}
	return nil
}

// upgradedFrom reports whether rec is a record of the ledger that this
// one was upgraded from (Upgraded), as it was then or behind it: the
// upgrade carried over every spend up to its last line, so this ledger
// carries on from it.
func (l *Ledger) upgradedFrom(rec *Record) bool {
	u := l.header.Upgraded
	return u != nil && u.ID != "" && rec.LedgerID == u.ID && (rec.Lines < u.Lines || rec.Lines == u.Lines && rec.Head == u.Head)
}

// cutTail cuts off a torn last line (checkRecord has judged it): a write
// whose fsync cannot have returned.
func (l *Ledger) cutTail() error {
	if len(l.tail) == 0 {
		return nil
	}
	if err := l.f.Truncate(l.size); err != nil {
		return fmt.Errorf("ledger %s: cut off a torn last line: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("ledger %s: cut off a torn last line: fsync: %w", l.path, err)
	}
	l.notes = append(l.notes, fmt.Sprintf("cut off a torn last line of %d bytes: a write that a crash interrupted before its fsync returned", len(l.tail)))
	l.tail = nil
	return nil
}

// Header returns the ledger's header.
func (l *Ledger) Header() Header { return l.header }

// Spent returns the sequence of the spends of every run so far (the last
// line of each): its Steps are the labels the ledger counts.
func (l *Ledger) Spent() accountant.Sequence { return l.chain.spent }

// Lines returns the number of whole lines of the ledger.
func (l *Ledger) Lines() int { return l.chain.n }

// Head returns the hash of the ledger's last line.
func (l *Ledger) Head() string { return l.chain.head }

// Version returns the ledger's version.
func (l *Ledger) Version() int { return l.version }

// RecordErr returns what the record of a ledger read only (ReadOnly)
// says against it, a *RecordError, or nil.
func (l *Ledger) RecordErr() error { return l.recordErr }

// Recorded reports whether your record of the ensemble names a ledger
// read only (ReadOnly) and agrees with it.
func (l *Ledger) Recorded() bool { return l.recorded }

// RunCount returns the number of runs of a ledger read only (ReadOnly),
// which reads every line.
func (l *Ledger) RunCount() int { return l.chain.runs }

// Notes returns what opening the ledger found worth telling: a torn last
// line cut off or left, a version-1 format, no record yet.
func (l *Ledger) Notes() []string { return append([]string(nil), l.notes...) }
