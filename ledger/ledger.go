// Package ledger keeps a persistent, crash-safe record of the privacy spent
// on one teacher ensemble across runs, and enforces a total budget on it.
//
// A ledger is a file of JSON lines: a header naming the ensemble, its
// neighbouring relation, the parameters it is bound to (K, the teachers'
// (ε, Δ), kind and partition: a release that states others is refused),
// the total budget and the slack δ' of composition, then one record per
// write to disk of a release's spend. Each line
// carries the SHA-256 of the line before it and its own, which covers
// both (a hash chain), so that a line changed, removed or moved is
// detected. Spends are written ahead: a release reserves the labels it is
// about to hand out, and the reservation is on disk (fsync) before they
// leave the process, so that a crash can over-count the spend, never
// under-count it. A write that fails is cut off again before anything
// else is written. The file is locked (flock) for the whole of a run, so
// concurrent runs are serialised.
//
// Outside the ledger, a per-user record (Record, in StateDir) keeps for
// each ensemble the identity of its ledger, its number of lines and the
// hash of its last line, advanced after every write. A ledger that is
// behind its record (lines removed, an old copy restored) or that is a
// second ledger for a recorded ensemble is refused (*RecordError), until
// the user resolves it on purpose (Adopt). The threat is accidents and
// honest mistakes, not a user who edits the files on purpose: the hashes
// are not keyed.
//
// Totals come from the accountant: optimal composition (Kairouz, Oh and
// Viswanath 2015, Thm 3.3) when every query had the same guarantee,
// heterogeneous general composition (their Thm 3.5) otherwise, or simple
// composition when that is smaller; for fixed private teachers the total
// is the smaller of that and the teachers' post-processing cap
// (ensemble.Binding.Cap), which can make every further release free.
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
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
)

// Version is the version of the file format. Version 2 chains its lines,
// names the ledger (Header.ID) and binds the ensemble's parameters
// (Header.Teachers). Ledgers without the chain (version 1, and the
// version 2 of development builds, which bound the parameters but had no
// chain) are read (ReadOnly) and upgraded (Upgrade); no release can be
// charged to them.
const Version = 2

// Header is the first line of a ledger.
type Header struct {
	Version int `json:"version"`
	// ID is the ledger's identity: random, drawn by Init, so that two
	// ledgers are never taken for one.
	ID         string               `json:"id,omitempty"`
	Ensemble   string               `json:"ensemble"`
	Relation   string               `json:"relation"`
	Budget     accountant.Guarantee `json:"budget"`
	DeltaPrime float64              `json:"delta_prime"`
	Created    time.Time            `json:"created"`
	// Teachers are the parameters of the ensemble the ledger is bound to
	// (nil in version 1).
	Teachers *Teachers `json:"teachers,omitempty"`
	// Upgraded, for a ledger made by Upgrade, identifies the ledger it
	// was made from.
	Upgraded *Upgraded `json:"upgraded_from,omitempty"`
}

// Teachers are the parameters of an ensemble that a ledger binds, besides
// its id and relation: K, each teacher's (ε, Δ) (the common bound of
// teachers with different guarantees), and their kind and partition.
type Teachers struct {
	K         int                `json:"K"`
	Eps       float64            `json:"eps"`
	Delta     float64            `json:"Delta"`
	Kind      ensemble.Kind      `json:"kind"`
	Partition ensemble.Partition `json:"partition"`
}

// NewHeader returns the header of a ledger bound to b, with a budget and
// slack δ'.
func NewHeader(b ensemble.Binding, budget accountant.Guarantee, deltaPrime float64) Header {
	h := Header{Ensemble: b.Ensemble, Relation: b.Relation.String(), Budget: budget, DeltaPrime: deltaPrime}
	h.Bind(b)
	return h
}

// Bind sets the parameters h binds to b's (its ensemble, relation and
// teachers).
func (h *Header) Bind(b ensemble.Binding) {
	h.Ensemble, h.Relation = b.Ensemble, b.Relation.String()
	h.Teachers = &Teachers{K: b.K, Eps: b.Teachers.Eps, Delta: b.Teachers.Delta, Kind: b.Kind, Partition: b.Partition}
}

// Binding returns the parameters the ledger is bound to (version 2).
func (h Header) Binding() (ensemble.Binding, error) {
	var r ensemble.Relation
	if err := r.UnmarshalText([]byte(h.Relation)); err != nil {
		return ensemble.Binding{}, err
	}
	b := ensemble.Binding{Ensemble: h.Ensemble, Relation: r}
	if t := h.Teachers; t != nil {
		b.K, b.Teachers, b.Kind, b.Partition = t.K, accountant.Guarantee{Eps: t.Eps, Delta: t.Delta}, t.Kind, t.Partition
	}
	return b, b.Validate()
}

// Upgraded identifies the ledger that Upgrade turned into a version-2
// one.
type Upgraded struct {
	// Version is the old ledger's (1, or 2 without the chain).
	Version int `json:"version"`
	// Lines is its number of whole lines, SHA256 the hash of those bytes.
	Lines  int    `json:"lines"`
	SHA256 string `json:"sha256"`
}

// Spend is one record: run Run had handed out, or was about to hand out,
// Queries labels, each with guarantee (Eps, Delta), by Mechanism. The last
// record of a run counts; Final marks the exact count written at its end.
type Spend struct {
	Run       string    `json:"run"`
	Time      time.Time `json:"time"`
	Mechanism string    `json:"mechanism"`
	Eps       float64   `json:"eps"`
	Delta     float64   `json:"delta"`
	Queries   int       `json:"queries"`
	Final     bool      `json:"final"`
}

// CorruptError reports a ledger that cannot be trusted; nothing may be
// released against it.
type CorruptError struct {
	Path   string
	Line   int
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("ledger %s, line %d: %s; no release is possible until it is restored from a good copy (docs/aggregate.md, \"After an error\")", e.Path, e.Line, e.Reason)
}

// NotLedgerError reports a path that is no ledger file at all: missing, a
// directory, a device, a FIFO.
type NotLedgerError struct {
	Path   string
	Reason string
	Err    error // fs.ErrNotExist for a missing file
}

func (e *NotLedgerError) Error() string { return fmt.Sprintf("ledger %s: %s", e.Path, e.Reason) }

func (e *NotLedgerError) Unwrap() error { return e.Err }

// VersionError reports a ledger that a run cannot use: of version 1, or
// of a version 2 without the hash chain (Chain false), which must be
// upgraded first (Upgrade); or of a version this darrm does not know.
type VersionError struct {
	Path    string
	Version int
	Chain   bool
}

func (e *VersionError) Error() string {
	switch {
	case e.Version == 1:
		return fmt.Sprintf("ledger %s is of version 1, which does not bind the ensemble's parameters (K, the teachers' eps and Delta, kind, partition) and has no hash chain: it must be upgraded to version %d before a release can be charged to it; upgrade it once, stating the ensemble's parameters, with: darrm ledger upgrade %s --K K --eps EPS --Delta DELTA --kind KIND --partition PARTITION", e.Path, Version, shellQuote(e.Path))
	case e.Version == Version && !e.Chain:
		return fmt.Sprintf("ledger %s is of an early version %d without a hash chain (written by a development build): upgrade it once with: darrm ledger upgrade %s", e.Path, Version, shellQuote(e.Path))
	}
	return fmt.Sprintf("ledger %s is of version %d; this darrm reads versions 1 and %d: use a newer darrm", e.Path, e.Version, Version)
}

// BindingError refuses a release that states other parameters of the
// ensemble than the ledger is bound to: each differing parameter, the
// ledger's value and the release's. With Unstated, it refuses a release
// that does not state its ensemble (a vote file without a metadata
// header) on a ledger whose teachers' cap bounds every total: nothing
// ties its labels to those teachers, so they cannot fall under the cap.
type BindingError struct {
	Path     string
	Ledger   ensemble.Binding
	Diffs    []ensemble.BindingDiff // A: the ledger's, B: the release's
	Unstated bool
}

func (e *BindingError) Error() string {
	if e.Unstated {
		return fmt.Sprintf("ledger %s is bound to %v, whose teachers' cap bounds every total; this release's vote file has no metadata header, so nothing ties its labels to those teachers and they cannot be counted under their cap: put the ensemble's metadata header on the vote file's first line (e.g. the first line of a vote file of theirs that has one; docs/aggregate.md, \"The metadata header\") and run the release again", e.Path, e.Ledger)
	}
	var parts []string
	for _, d := range e.Diffs {
		parts = append(parts, fmt.Sprintf("%s %s (the ledger's: %s)", d.Field, d.B, d.A))
	}
	return fmt.Sprintf("ledger %s is bound to %v; this release states %s: a ledger keeps the budget of one ensemble, and releases of other teachers or in another relation cannot share a budget", e.Path, e.Ledger, strings.Join(parts, ", "))
}

// ErrBudget is wrapped by Reserve when the budget allows no more labels.
var ErrBudget = errors.New("the ledger's budget is spent")

// Options tune how a ledger is opened.
type Options struct {
	// StateDir holds the per-user records (Record); "" is StateDir().
	StateDir string
	// Waiting, if set, is called once when another run holds the ledger,
	// before Open waits for it.
	Waiting func(path string)
}

func (o Options) stateDir() (string, error) {
	if o.StateDir != "" {
		return o.StateDir, nil
	}
	return StateDir()
}

// ParamError is a header parameter outside its domain: Name is
// "ensemble", "relation", "budget-eps", "budget-delta" or "delta-prime".
type ParamError struct {
	Name, Value, Rule string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("ledger: %s = %s: %s", e.Name, e.Value, e.Rule)
}

// BindError is a header whose ensemble parameters are missing or invalid.
type BindError struct{ Err error }

func (e *BindError) Error() string { return "ledger: " + e.Err.Error() }

func (e *BindError) Unwrap() error { return e.Err }

// checkName refuses an ensemble name that is empty or holds control
// characters (which a terminal would act on when it is printed).
func checkName(name string) error {
	if name == "" {
		return &ParamError{"ensemble", `""`, "name the teacher ensemble the budget is for"}
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return &ParamError{"ensemble", strconv.Quote(name), "control characters are not allowed"}
	}
	return nil
}

// checkHeader validates the parameters of a header.
func checkHeader(h Header) error {
	if err := checkName(h.Ensemble); err != nil {
		return err
	}
	if h.Relation == "" || strings.IndexFunc(h.Relation, unicode.IsControl) >= 0 {
		return &ParamError{"relation", strconv.Quote(h.Relation), "must name a neighbouring relation"}
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	b := h.Budget
	if !(b.Eps > 0) || math.IsInf(b.Eps, 0) {
		return &ParamError{"budget-eps", g(b.Eps), "must be a finite number > 0"}
	}
	if !(b.Delta >= 0 && b.Delta < 1) {
		return &ParamError{"budget-delta", g(b.Delta), "must be in [0, 1)"}
	}
	if !(h.DeltaPrime > 0 && h.DeltaPrime < 1) {
		return &ParamError{"delta-prime", g(h.DeltaPrime), "must be in (0, 1)"}
	}
	if h.Version >= 2 {
		if h.Teachers == nil {
			return &BindError{errors.New("no ensemble parameters: a ledger binds K, the teachers' eps and Delta, kind and partition (NewHeader)")}
		}
		if _, err := h.Binding(); err != nil {
			return &BindError{err}
		}
	}
	return nil
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
// *RecordError unless opts.Replace.
func Init(path string, h Header, opts InitOptions) error {
	h.Version = Version
	if err := checkHeader(h); err != nil {
		return err
	}
	if h.Created.IsZero() {
		h.Created = time.Now().UTC().Truncate(time.Second)
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	h.ID = hex.EncodeToString(id[:])
	b, head, err := encodeLine("", h)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	st, err := openState(opts.Options, h.Ensemble)
	if err != nil {
		return err
	}
	defer st.close()
	if err := st.lock(); err != nil {
		return err
	}
	rec, err := st.read()
	if err != nil {
		return err
	}
	if rec != nil && !opts.Replace {
		return &RecordError{Kind: SecondLedger, Path: path, Ensemble: h.Ensemble, Record: *rec, File: st.path, Command: "init"}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("ledger: create %s: %w", path, err)
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
			err = st.write(newRecord(h, path, fi, 1, head))
		}
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("ledger: write %s: %w", path, err)
	}
	return nil
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
	path     string
	f        *os.File
	readOnly bool
	header   Header
	cap      *accountant.Cap // the teachers' cap on every total, if any
	chained  bool            // the lines are chained: a ledger a run can use
	version  int
	lines    int    // whole lines
	size     int64  // bytes of the whole lines
	head     string // hash of the last line
	recHash  string // hash of the line the record names, when read
	tail     []byte // bytes after the last line end: a torn line
	marked   bool   // a version-1 ledger that Upgrade has marked
	spends   []Spend
	index    map[string]int
	notes    []string
	state    *state // the record's file, for a run
	broken   error  // a write failed and could not be undone
	run      string // this process's run id, once it has begun
	mech     string
	step     accountant.Guarantee
	held     int // labels reserved by this run
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
// another run holds it (until ctx is done), checks every line and the
// chain, checks the ledger against its ensemble's record (*RecordError),
// cuts off a torn last line whose fsync cannot have returned, and
// advances the record. A ledger that fails a check is a *CorruptError; a
// version-1 ledger a *VersionError. Close releases the lock.
func Open(ctx context.Context, path string, opts Options) (*Ledger, error) {
	f, err := openFile(path, os.O_RDWR)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("%w: a release appends to its ledger, so it must be writable by you (darrm ledger show only reads it)", err)
		}
		return nil, err
	}
	if err := lock(ctx, f, true, func() {
		if opts.Waiting != nil {
			opts.Waiting(path)
		}
	}); err != nil {
		f.Close()
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("ledger %s: lock: %w", path, err)
	}
	l := &Ledger{path: path, f: f}
	if _, err := l.load(opts, true, false); err != nil {
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
	if err := lock(ctx, f, true, func() {
		if opts.Waiting != nil {
			opts.Waiting(path)
		}
	}); err != nil {
		f.Close()
		return nil, nil, err
	}
	l = &Ledger{path: path, f: f}
	if previous, err = l.load(opts, true, true); err != nil {
		f.Close()
		return nil, nil, err
	}
	return previous, l, nil
}

// ReadOnly reads the ledger at path without writing anything: neither the
// file (a torn last line is reported in Notes, not cut off) nor the
// record. It does not wait for a run that holds the ledger: it then reads
// what is on disk, and a last line still being written is left out.
// Version-1 ledgers are read too. Close it when done.
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
	if _, err := l.load(opts, locked, false); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// OpenRun opens and locks the ledger at path (Open) for a release of
// labels of guarantee step by mechanism, from the ensemble that b states:
// it begins the run's spend (Begin) and returns how many labels the
// budget allows, at most limit when limit >= 0, accountant.Unlimited when
// the teachers' cap is within the budget and limit < 0 (Allowance). Close
// the ledger when the run is settled.
func OpenRun(ctx context.Context, path, mechanism string, b ensemble.Binding, step accountant.Guarantee, limit int, opts Options) (*Ledger, int, error) {
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
	r := newLineReader(io.NewSectionReader(f, 0, MaxLineBytes+1))
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
func (l *Ledger) load(opts Options, settled, adopt bool) (*Record, error) {
	first, err := firstLine(l.f)
	if err != nil && err != io.EOF {
		if err == errLongLine {
			return nil, &CorruptError{Path: l.path, Line: 1, Reason: "not a ledger: " + err.Error()}
		}
		return nil, fmt.Errorf("ledger %s: read: %w", l.path, err)
	}
	if len(first) == 0 {
		return nil, &CorruptError{Path: l.path, Line: 1, Reason: "empty: no header"}
	}
	if err := l.parseHeader(first); err != nil {
		return nil, err
	}
	if err == io.EOF {
		return nil, &CorruptError{Path: l.path, Line: 1, Reason: "the header has no line end: not a ledger, or one whose creation was interrupted"}
	}
	if !l.chained {
		if !l.readOnly {
			return nil, &VersionError{Path: l.path, Version: l.version}
		}
		if err := l.scan(nil); err != nil {
			return nil, err
		}
		if l.marked {
			l.notes = append(l.notes, fmt.Sprintf("marked as upgraded to a chained version %d: this is the copy that darrm ledger upgrade keeps (or an upgrade that was interrupted: run it again)", Version))
		} else {
			l.notes = append(l.notes, (&VersionError{Path: l.path, Version: l.version}).Error())
		}
		if len(l.tail) > 0 {
			l.notes = append(l.notes, fmt.Sprintf("its last line (%d bytes) has no line end and is not counted", len(l.tail)))
		}
		return nil, nil
	}
	st, err := openState(opts, l.header.Ensemble)
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
	var bad *badRecordError
	if adopt && errors.As(err, &bad) {
		rec, err = nil, nil // adopting replaces it
	}
	if err != nil {
		return nil, err
	}
	check := rec
	if adopt {
		check = nil
	}
	if err := l.scan(check); err != nil {
		return nil, err
	}
	if err := l.checkRecord(check, st.path, settled); err != nil {
		return nil, err
	}
	if l.readOnly {
		return rec, nil
	}
	if err := l.cutTail(); err != nil {
		return nil, err
	}
	fi, err := l.f.Stat()
	if err == nil {
		err = st.write(newRecord(l.header, l.path, fi, l.lines, l.head))
	}
	if err != nil {
		return nil, err
	}
	st.unlock()
	l.state, ok = st, true
	return rec, nil
}

// parseHeader reads the header line, of either version.
func (l *Ledger) parseHeader(b []byte) error {
	corrupt := func(format string, args ...any) error {
		return &CorruptError{Path: l.path, Line: 1, Reason: fmt.Sprintf(format, args...)}
	}
	var ln line
	if err := json.Unmarshal(b, &ln); err != nil || ln.Header == nil {
		return corrupt("not a ledger: the first line must be its header")
	}
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(*ln.Header, &v); err != nil {
		return corrupt("header: %v", err)
	}
	switch {
	case (v.Version == 1 || v.Version == Version) && ln.Prev == nil:
		// Version 1, or the version 2 of development builds: no chain.
		if v1Hash(*ln.Header) != ln.SHA256 {
			return corrupt("sha256 does not match the content: the line was changed")
		}
	case v.Version == Version && ln.Prev != nil && *ln.Prev == "":
		if chainHash("", "header", *ln.Header) != ln.SHA256 {
			return corrupt("sha256 does not match the content: the line was changed")
		}
		l.chained = true
	case v.Version == Version:
		return corrupt("the header must begin the chain (prev \"\")")
	default:
		return &VersionError{Path: l.path, Version: v.Version}
	}
	dec := json.NewDecoder(bytes.NewReader(*ln.Header))
	if l.chained {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&l.header); err != nil {
		return corrupt("header: %v", err)
	}
	if err := checkHeader(l.header); err != nil {
		return corrupt("header: %v", err)
	}
	if l.chained && len(l.header.ID) != 32 {
		return corrupt("header: id %q: want 32 hexadecimal digits", l.header.ID)
	}
	if v.Version == Version {
		b, err := l.header.Binding()
		if err == nil {
			l.cap, _, err = b.Cap(l.header.DeltaPrime)
		}
		if err != nil {
			return corrupt("header: teachers' cap: %v", err)
		}
	}
	l.version = v.Version
	return nil
}

// scan reads every line from the start, checks it and the chain, and
// collects the spends; rec, if any, names a line whose hash to remember.
func (l *Ledger) scan(rec *Record) error {
	if _, err := l.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("ledger %s: %w", l.path, err)
	}
	r := newLineReader(l.f)
	l.index = map[string]int{}
	l.spends = nil
	n := 0
	prev := ""
	var recHash string
	var markAt int64
	for {
		b, err := r.next()
		if err == io.EOF {
			break
		}
		n++
		corrupt := func(format string, args ...any) error {
			return &CorruptError{Path: l.path, Line: n, Reason: fmt.Sprintf(format, args...)}
		}
		if err == errLongLine {
			return corrupt("%v", err)
		}
		if err != nil {
			return fmt.Errorf("ledger %s: read: %w", l.path, err)
		}
		if n == 1 {
			prev = l.lineHash(b)
			if rec != nil && rec.Lines == 1 {
				recHash = prev
			}
			continue
		}
		if l.marked {
			return corrupt("a line after the mark of an upgrade to version %d", Version)
		}
		if !l.chained && isMarker(b) {
			l.marked, markAt = true, r.end-int64(len(b))-1
			continue
		}
		h, err := l.parseSpend(b, prev, n)
		if err != nil {
			return err
		}
		prev = h
		if rec != nil && rec.Lines == n {
			recHash = h
		}
	}
	l.lines, l.size, l.head = n, r.end, prev
	if l.marked {
		l.lines, l.size = n-1, markAt
	}
	l.recHash = recHash
	l.tail = r.tail
	return nil
}

// lineHash is the hash of the header line b, checked by parseHeader.
func (l *Ledger) lineHash(b []byte) string {
	var ln line
	json.Unmarshal(b, &ln)
	return ln.SHA256
}

// parseSpend checks spend line n, b, after the line of hash prev, records
// its spend and returns its hash.
func (l *Ledger) parseSpend(b []byte, prev string, n int) (string, error) {
	corrupt := func(format string, args ...any) error {
		return &CorruptError{Path: l.path, Line: n, Reason: fmt.Sprintf(format, args...)}
	}
	var ln line
	dec := json.NewDecoder(bytes.NewReader(b))
	if l.chained {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&ln); err != nil {
		return "", corrupt("not a ledger line: %v", err)
	}
	if ln.Spend == nil || ln.Header != nil {
		return "", corrupt("want a header on the first line and spends after it")
	}
	if l.chained {
		switch {
		case ln.Prev == nil || *ln.Prev != prev:
			return "", corrupt("the chain is broken: this line does not follow line %d (a line was removed, inserted or changed)", n-1)
		case chainHash(prev, "spend", *ln.Spend) != ln.SHA256:
			return "", corrupt("sha256 does not match the content: the line was changed")
		}
	} else if v1Hash(*ln.Spend) != ln.SHA256 {
		return "", corrupt("sha256 does not match the content: the line was changed")
	}
	var s Spend
	dec = json.NewDecoder(bytes.NewReader(*ln.Spend))
	if l.chained {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&s); err != nil {
		return "", corrupt("spend: %v", err)
	}
	if err := checkSpend(s); err != nil {
		return "", corrupt("spend: %v", err)
	}
	if i, ok := l.index[s.Run]; ok {
		l.spends[i] = s
	} else {
		l.index[s.Run] = len(l.spends)
		l.spends = append(l.spends, s)
	}
	return ln.SHA256, nil
}

// checkSpend validates a spend.
func checkSpend(s Spend) error {
	switch {
	case s.Run == "":
		return errors.New("no run id")
	case s.Queries < 0:
		return fmt.Errorf("queries = %d: must be >= 0", s.Queries)
	case !(s.Eps > 0) || math.IsInf(s.Eps, 0):
		return fmt.Errorf("eps = %v: must be a finite number > 0", s.Eps)
	case !(s.Delta >= 0 && s.Delta < 1):
		return fmt.Errorf("delta = %v: must be in [0, 1)", s.Delta)
	}
	return nil
}

// checkRecord checks the ledger against its ensemble's record rec (nil
// for none), read from file, and judges a torn last line; settled says no
// write can be under way.
func (l *Ledger) checkRecord(rec *Record, file string, settled bool) error {
	torn := len(l.tail) > 0
	if torn {
		p := linePrefix(l.head)
		if !bytes.HasPrefix(l.tail, p) && !bytes.HasPrefix(p, l.tail) {
			return &CorruptError{Path: l.path, Line: l.lines + 1, Reason: "the last line has no line end and is not the beginning of the next ledger line"}
		}
	}
	if rec != nil {
		e := &RecordError{Path: l.path, Ensemble: l.header.Ensemble, Record: *rec, File: file, Lines: l.lines}
		switch {
		case rec.LedgerID != l.header.ID:
			e.Kind = SecondLedger
			e.ID = l.header.ID
		case torn && l.lines+1 == rec.Lines:
			e.Kind = TornAfterSync
		case l.lines < rec.Lines:
			e.Kind = Behind
		case l.recHash != rec.Head:
			e.Kind = Diverged
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

// Spends returns the spend of every run so far (the last record of each).
func (l *Ledger) Spends() []Spend { return append([]Spend(nil), l.spends...) }

// Lines returns the number of whole lines of the ledger.
func (l *Ledger) Lines() int { return l.lines }

// Head returns the hash of the ledger's last line.
func (l *Ledger) Head() string { return l.head }

// Notes returns what opening the ledger found worth telling: a torn last
// line cut off or left, a version-1 format, no record yet.
func (l *Ledger) Notes() []string { return append([]string(nil), l.notes...) }

// Total returns the total privacy of the spends, with the composition
// that gave it, and of extra more labels of guarantee step.
func (l *Ledger) total(step accountant.Guarantee, extra int) (accountant.Guarantee, string, error) {
	var runs []accountant.Run
	add := func(g accountant.Guarantee, k int) {
		if k == 0 {
			return
		}
		for i := range runs {
			if runs[i].Step == g {
				runs[i].K += k
				return
			}
		}
		runs = append(runs, accountant.Run{Step: g, K: k})
	}
	for _, s := range l.spends {
		add(accountant.Guarantee{Eps: s.Eps, Delta: s.Delta}, s.Queries)
	}
	add(step, extra)
	return Compose(runs, l.header.DeltaPrime)
}

// Balance is what a ledger has spent.
type Balance struct {
	// Total is the privacy spent: the smaller of Queries and the
	// teachers' Cap, one that meets the budget if either does
	// (accountant.CapTotal); Bound says which.
	Total accountant.Guarantee
	Bound accountant.Bound
	// Queries is the composition of every spend, by Composition.
	Queries     accountant.Guarantee
	Composition string
	// Cap is the teachers' cap on every total, nil when there is none.
	Cap *accountant.Cap
	// Free says that the cap is within the budget: every further release
	// from these teachers is free, however many labels it has.
	Free bool
}

// Balance returns the privacy spent so far.
func (l *Ledger) Balance() (Balance, error) {
	q, method, err := l.total(accountant.Guarantee{}, 0)
	if err != nil {
		return Balance{}, err
	}
	b := Balance{Queries: q, Composition: method, Cap: l.cap, Free: l.cap != nil && l.cap.Within(l.header.Budget)}
	b.Total, b.Bound = accountant.CapTotal(q, l.cap, &l.header.Budget)
	return b, nil
}

// Total returns the total privacy spent so far (Balance: the smaller of
// the composition and the teachers' cap) and how it was obtained: the
// composition's name, or "teachers' cap".
func (l *Ledger) Total() (accountant.Guarantee, string, error) {
	b, err := l.Balance()
	if b.Bound == accountant.TeachersBound {
		return b.Total, "teachers' cap (" + b.Cap.Rule() + ")", err
	}
	return b.Total, b.Composition, err
}

// within reports whether spends of composition q meet the budget: q does,
// or the teachers' cap, which bounds them too, does.
func (l *Ledger) within(q accountant.Guarantee) bool {
	b := l.header.Budget
	return q.Within(b) || l.cap != nil && l.cap.Within(b)
}

// Compose returns the total of a sequence of steps, given as runs of equal
// steps: optimal composition with slack deltaPrime when all steps are equal
// (and there are at most accountant.MaxOptimalSteps), heterogeneous general
// composition otherwise, or simple composition when it is no larger in
// either ε or δ; and the name of the composition used.
func Compose(runs []accountant.Run, deltaPrime float64) (accountant.Guarantee, string, error) {
	if len(runs) == 0 {
		return accountant.Guarantee{}, "none", nil
	}
	simple, err := accountant.ComposeSimpleSeq(runs)
	if err != nil {
		return accountant.Guarantee{}, "", err
	}
	var adv accountant.Guarantee
	name := "general (heterogeneous)"
	if len(runs) == 1 && runs[0].K <= accountant.MaxOptimalSteps {
		adv, err = accountant.ComposeOptimal(runs[0].Step, runs[0].K, deltaPrime)
		name = "optimal"
	} else {
		adv, err = accountant.ComposeGeneralSeq(runs, deltaPrime)
	}
	if err != nil {
		return accountant.Guarantee{}, "", err
	}
	if simple.Eps <= adv.Eps && simple.Delta <= adv.Delta {
		return simple, "simple", nil
	}
	return adv, name, nil
}

// maxAllowance bounds the search of Allowance.
const maxAllowance = 1 << 50

// Allowance returns how many more labels of guarantee step the budget
// allows (at most limit when limit >= 0): limit, or accountant.Unlimited
// when limit < 0, if the teachers' cap is within the budget.
func (l *Ledger) Allowance(step accountant.Guarantee, limit int) (int, error) {
	if l.cap != nil && l.cap.Within(l.header.Budget) {
		return limit, nil
	}
	fits := func(k int) (bool, error) {
		g, _, err := l.total(step, k)
		return err == nil && l.within(g), err
	}
	if ok, err := fits(0); err != nil || !ok {
		return 0, err
	}
	lo, hi := 0, 1
	for {
		if limit >= 0 && hi > limit {
			hi = limit + 1
			break
		}
		if hi > maxAllowance {
			return 0, fmt.Errorf("ledger %s: more than %d labels of %v fit in the budget", l.path, maxAllowance, step)
		}
		ok, _ := fits(hi)
		if !ok {
			break
		}
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok, _ := fits(mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// Status is the state of a ledger as a release reports it.
type Status struct {
	Ensemble string               `json:"ensemble"`
	Relation string               `json:"relation"`
	Budget   accountant.Guarantee `json:"budget"`
	// Total is the privacy spent so far, the smaller of the composition
	// of the spends (Queries, by Composition) and the teachers' Cap;
	// TotalBound says which.
	Total       accountant.Guarantee `json:"total"`
	Composition string               `json:"composition"`
	TotalBound  accountant.Bound     `json:"total_bound"`
	Queries     accountant.Guarantee `json:"queries"`
	Cap         *accountant.Cap      `json:"cap,omitempty"`
	// QueriesLeft is how many more labels of the guarantee given to
	// Status the budget allows: -1 when every further release is free
	// (Free: the teachers' cap is within the budget).
	QueriesLeft int  `json:"queries_left"`
	Free        bool `json:"free"`
}

// Status returns the ledger's budget, its total so far, and how many more
// labels of guarantee step its budget allows.
func (l *Ledger) Status(step accountant.Guarantee) (Status, error) {
	b, err := l.Balance()
	if err != nil {
		return Status{}, err
	}
	left, err := l.Allowance(step, -1)
	if err != nil {
		return Status{}, err
	}
	h := l.header
	return Status{Ensemble: h.Ensemble, Relation: h.Relation, Budget: h.Budget, Total: b.Total, Composition: b.Composition,
		TotalBound: b.Bound, Queries: b.Queries, Cap: b.Cap, QueriesLeft: left, Free: b.Free}, nil
}

// Begin starts this run's spend: mechanism, the per-label guarantee, and
// the ensemble the release states (b), which must be the one the ledger
// is bound to: every parameter both state must agree, and on a ledger
// whose teachers' cap bounds every total the release must state its
// ensemble (Binding.Stated); a *BindingError otherwise.
func (l *Ledger) Begin(mechanism string, b ensemble.Binding, step accountant.Guarantee) error {
	if l.readOnly {
		return fmt.Errorf("ledger %s: opened read-only", l.path)
	}
	if err := checkSpend(Spend{Run: "-", Eps: step.Eps, Delta: step.Delta}); err != nil {
		return fmt.Errorf("ledger %s: %s's guarantee %v: %w", l.path, mechanism, step, err)
	}
	bound, err := l.header.Binding()
	if err != nil {
		return err
	}
	if d := bound.Diff(b); len(d) > 0 {
		return &BindingError{Path: l.path, Ledger: bound, Diffs: d}
	}
	if l.cap != nil && !b.Stated() {
		return &BindingError{Path: l.path, Ledger: bound, Unstated: true}
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	l.run, l.mech, l.step = hex.EncodeToString(id[:]), mechanism, step
	return nil
}

// Reserve records, on disk, that this run will have handed out labels
// labels in all. It is called before they leave the process.
// A reservation beyond the budget is refused with ErrBudget.
func (l *Ledger) Reserve(labels int) error {
	if labels <= l.held {
		return nil
	}
	if l.run == "" {
		return fmt.Errorf("ledger: Begin was not called")
	}
	saved := l.spends
	l.spends = nil
	for _, s := range saved {
		if s.Run != l.run {
			l.spends = append(l.spends, s)
		}
	}
	total, method, err := l.total(l.step, labels)
	l.spends = saved
	if err != nil {
		return fmt.Errorf("ledger %s: %w", l.path, err)
	}
	if !l.within(total) {
		return fmt.Errorf("ledger %s: %d labels of %v would bring the total to %v by %s composition, over the budget %v: %w", l.path, labels, l.step, total, method, l.header.Budget, ErrBudget)
	}
	return l.write(labels, false)
}

// Settle records the exact number of labels this run handed out.
func (l *Ledger) Settle(labels int) error {
	if l.run == "" {
		return nil
	}
	if labels < 0 || labels > l.held {
		return fmt.Errorf("ledger %s: settle %d labels, %d were reserved: the count must be in [0, reserved]", l.path, labels, l.held)
	}
	return l.write(labels, true)
}

// write appends this run's spend of labels and advances the record. A
// write that fails is cut off again (the file truncated to its last whole
// line and synced) before write returns, so that nothing is ever appended
// after a fragment; if that fails too, the ledger takes no more writes.
func (l *Ledger) write(labels int, final bool) error {
	if l.run == "" {
		return fmt.Errorf("ledger: Begin was not called")
	}
	if l.broken != nil {
		return l.broken
	}
	s := Spend{Run: l.run, Time: time.Now().UTC(), Mechanism: l.mech, Eps: l.step.Eps, Delta: l.step.Delta, Queries: labels, Final: final}
	b, h, err := encodeLine(l.head, s)
	if err != nil {
		return err
	}
	if err := l.append(b); err != nil {
		return err
	}
	l.lines++
	l.size += int64(len(b))
	l.head = h
	l.held = labels
	if i, ok := l.index[l.run]; ok {
		l.spends[i] = s
	} else {
		l.index[l.run] = len(l.spends)
		l.spends = append(l.spends, s)
	}
	if err := l.state.advance(l.lines, l.head); err != nil {
		return fmt.Errorf("ledger %s: the spend is written, but %w", l.path, err)
	}
	return nil
}

// append writes b after the last whole line and syncs it, or undoes it.
func (l *Ledger) append(b []byte) error {
	_, err := l.f.WriteAt(b, l.size)
	if err == nil {
		if err = l.f.Sync(); err != nil {
			err = fmt.Errorf("fsync: %w", err)
		}
	}
	if err == nil {
		return nil
	}
	err = fmt.Errorf("ledger %s: write: %w", l.path, err)
	if terr := l.f.Truncate(l.size); terr != nil {
		l.broken = fmt.Errorf("%w; cutting the partial line off failed too (%v): the ledger takes no more writes in this run, and the next run judges its last line", err, terr)
		return l.broken
	}
	if serr := l.f.Sync(); serr != nil {
		l.broken = fmt.Errorf("%w; syncing the cut failed too (%v): the ledger takes no more writes in this run", err, serr)
		return l.broken
	}
	return err
}

// Close releases the lock.
func (l *Ledger) Close() error {
	if l.state != nil {
		l.state.close()
	}
	return l.f.Close()
}

// shellQuote quotes s for a POSIX shell when it needs it, for the commands
// that messages give.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
