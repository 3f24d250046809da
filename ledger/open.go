package ledger

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/provenance"
)

// Options are how darrm opens and makes ledgers (Open, Create): where it
// keeps its records of the ledgers you use (the state folder, Record),
// who charges the runs, what it tells you while it waits for a ledger,
// the witnesses a ledger must extend. Give the same ones to every call
// on ledgers, so that a ledger made and the releases charged to it keep
// one record. The zero value keeps the records in darrm's state folder
// and opens a ledger for a run.
type Options struct {
	// StateDir holds the records (Record); "" is darrm's state folder:
	// $DARRM_STATE_DIR if set, else $XDG_STATE_HOME/darrm if that is
	// set, else $HOME/.local/state/darrm. It must be an absolute path.
	StateDir string
	// Waiting, if set, is called once for each wait for a lock, with what
	// it locks: "ledger LOCATION" or "the record of ensemble E (PATH)",
	// which another run holds, or "the tables of ledger LOCATION" (a
	// PostgreSQL ledger), which a statement has waited for a while,
	// likely for a lock that another session holds (LOCK TABLE). It may be
	// called from another goroutine.
	Waiting func(what string)
	// Lost, if set, is called once, from another goroutine, when a run's
	// ledger is lost: the connection to the server of a PostgreSQL ledger
	// ends (the server stops, the network fails). The run writes no more
	// (what it reserved stays charged); a caller cancels its release's
	// context there, so that the release stops at once, even while it
	// waits for input, instead of at its next reservation. It must not
	// call the Ledger (Close waits for the goroutine that calls Lost).
	Lost func(err error)
	// Analyst names who charges the runs opened with these Options, written
	// in each run's lines (Spend.Analyst) and held to the analyst's share
	// when the ledger gives shares (Header.Shares); "" is the database
	// user of a ledger in PostgreSQL, and no one for a file.
	Analyst string
	// LockTimeout bounds each wait for a lock: on a ledger another run
	// holds, on your record of its ensemble, and on the tables of a
	// PostgreSQL ledger that another session locked (its server's
	// lock_timeout). A wait that reaches it fails, the run having written
	// nothing; 0 is DefaultLockTimeout.
	LockTimeout time.Duration
	// Witnesses are states of ledgers kept outside their stores
	// (ReadWitness: checkpoints, label files). Every ledger opened, for a
	// run or read only, is checked against each: one behind a witness,
	// forked from it or another ledger of the ensemble than the one it
	// saw is refused (*RecordError), whatever your record says; a witness
	// of another ensemble is bad input.
	Witnesses []Witness
	// ReadOnly has Open read the ledger without writing anything: neither
	// the ledger (a torn last line is reported in Notes, not cut off) nor
	// the record. It checks every line and the chain, whatever the
	// record says. Reading needs no record: what the record says against
	// the ledger is not an error here but Ledger.RecordErr, and a damaged
	// record is a note. It does not wait for a run that holds the
	// ledger: it then reads what is there, and a last line still being
	// written to a file is left out. Ledgers of earlier versions are read
	// too.
	ReadOnly bool
	// Replace has Create start the ensemble's budget again, for a caller
	// who means it: the ledgers the new one replaces are retired first.
	Replace bool
	// Memo keeps what the accountant computed of the ledgers' steps for
	// the calls that ask again (accountant.Memo): a ledger charges the
	// same step at each of its lines. nil keeps nothing from one call to
	// the next.
	Memo *accountant.Memo
	// WitnessDir, if set, is a team's witness folder: an absolute path to
	// a folder that the ledgers' stores cannot write (another machine,
	// the team's repository, a network share that the database's
	// administrators cannot write), holding a checkpoint of each
	// ensemble's ledger. Every ledger opened is checked against its
	// ensemble's checkpoint there, as against Witnesses, and every run
	// leaves its ledger's state there once it has settled (as Create,
	// Adopt, Import and Upgrade do), so that a rollback after a release is
	// refused by every analyst who uses the folder.
	WitnessDir string
}

// Open opens the ledger at location, a file or postgres://...?ledger=NAME
// (the store is chosen by the location, and the rules are the same for
// both), and checks it: for a run, unless opts.ReadOnly, it locks it (it
// waits while another run holds it, until ctx is done), checks it against
// its ensemble's record (*RecordError), checks every line that the record
// does not vouch for (all of them when there is no record, or when the
// ledger does not hold the line it names where it says), cuts off a torn
// last line whose fsync cannot have returned, and advances the record. A
// ledger that fails a check is a *CorruptError; one of an earlier version
// a *versionError, for a run. A release begins its run on it
// (Ledger.Begin). Close it when done: that releases the lock.
func Open(ctx context.Context, location string, opts Options) (*Ledger, error) {
	if opts.ReadOnly {
		return opts.readOnly(ctx, location)
	}
	return opts.forRun(ctx, location)
}

// Create creates a ledger at location, a file that must not exist or a
// PostgreSQL ledger whose name is not taken (postgres://...?ledger=NAME:
// the database's schema is made when it has none), bound to the ensemble
// parameters of h (NewHeader, VotesHeader, NewUseHeader), and records it
// as the ledger of its ensemble. An ensemble recorded with another
// ledger, or with a live ledger in the database, is refused (a
// *RecordError, a *takenError) unless opts.Replace, which starts the
// ensemble's budget again: the ledgers it replaces (the one the record
// names, and the database's live ledger of the ensemble) are retired
// first, each with an end line that names the new ledger, so that no
// release charges them any more, whoever runs it. The record replaced is
// returned (nil when there was none).
func Create(ctx context.Context, location string, h Header, opts Options) (previous *Record, err error) {
	return opts.create(ctx, location, h, opts.Replace)
}

// DefaultLockTimeout is the wait for a lock of a Options whose LockTimeout
// is 0.
const DefaultLockTimeout = 30 * time.Second

// maxLockTimeout is the longest wait for a lock (Options.LockTimeout):
// the longest a PostgreSQL server's lock_timeout takes, 2^31-1 ms, which
// a wait for a file's lock keeps too, one rule for both.
const maxLockTimeout = (1<<31 - 1) * time.Millisecond

// lockTimeout returns the bound of a wait for a lock (LockTimeout).
func (opts Options) lockTimeout() (time.Duration, error) {
	switch {
	case opts.LockTimeout < 0:
		return 0, paramError("LockTimeout", opts.LockTimeout.String(), "must be positive, or 0 for the default wait")
	case opts.LockTimeout > maxLockTimeout:
		return 0, paramError("LockTimeout", opts.LockTimeout.String(), fmt.Sprintf("must be at most %v, the longest wait for a lock that a PostgreSQL server takes (its lock_timeout)", maxLockTimeout))
	case opts.LockTimeout == 0:
		return DefaultLockTimeout, nil
	}
	return opts.LockTimeout, nil
}

// waiting returns the function that a wait for the lock on what calls.
func (opts Options) waiting(what string) func() {
	if opts.Waiting == nil {
		return nil
	}
	return func() { opts.Waiting(what) }
}

func (opts Options) stateDir() (string, error) {
	if opts.StateDir != "" {
		if !filepath.IsAbs(opts.StateDir) {
			return "", &statedir.Error{Value: opts.StateDir}
		}
		return opts.StateDir, nil
	}
	return statedir.Default()
}

// create is Create, replace its Options.Replace.
func (opts Options) create(ctx context.Context, location string, h Header, replace bool) (previous *Record, err error) {
	h.Version = Version
	if err := checkHeader(h); err != nil {
		return nil, err
	}
	if b, err := h.binding(); err != nil {
		return nil, &bindError{err}
	} else if err := CheckCap(b, h.Budget, h.DeltaPrime); err != nil {
		return nil, err
	}
	if h.Use != nil {
		if err := fitsUse(opts.Memo, h); err != nil {
			return nil, err
		}
	}
	if h.Created.IsZero() {
		h.Created = time.Now().UTC().Truncate(time.Second)
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	h.ID = hex.EncodeToString(id[:])
	b, head, err := encodeLine(Version, "", h)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	create := func() (string, uint64, uint64, error) { return createFile(location, b) }
	var live *takenError // the database's live ledger of the ensemble
	if IsURL(location) {
		db, err := newPGLedger(ctx, location, opts)
		if err != nil {
			return nil, err
		}
		defer db.close()
		if err := db.absent(ctx, h.ID, h.Ensemble); err != nil {
			if !replace || !errors.As(err, &live) || live.Other == "" || live.SameID {
				return nil, err
			}
		}
		create = func() (string, uint64, uint64, error) { return db.redacted, 0, 0, db.create(ctx, h, b) }
	} else if _, err := os.Lstat(location); err == nil {
		return nil, existsError(location)
	}
	if replace {
		// Before the record is locked: a run on a ledger to retire holds
		// its lock and then takes the record's, so the retirement waits
		// for the run to end.
		if err := opts.retireReplaced(ctx, location, h, live); err != nil {
			return nil, err
		}
	}
	st, rec, err := openRecord(ctx, opts, replace, h.Ensemble)
	if err != nil {
		return nil, err
	}
	defer st.close()
	team, seen, err := opts.named(location, h.Ensemble, rec, st.path, replace)
	if err != nil {
		return nil, err
	}
	where, dev, ino, err := create()
	if err != nil {
		return nil, err
	}
	r := newRecord(h, head, where, dev, ino, 1, int64(len(b)), head)
	if err := st.write(ctx, r); err != nil {
		if IsURL(location) {
			return nil, fmt.Errorf("ledger %s is made, but %w; record it with: darrm ledger adopt %s", where, err, shellQuote(where))
		}
		os.Remove(location)
		return nil, fmt.Errorf("ledger: write %s: %w", location, err)
	}
	if team != "" {
		r.Device, r.Inode = 0, 0
		if err := writeCheckpoint(team, r, seen != nil); err != nil {
			return rec, fmt.Errorf("ledger %s is made and recorded, but the team's checkpoint %s is not written: %w", where, printable(team), err)
		}
	}
	return rec, nil
}

// retireReplaced retires the ledgers that the ledger of header h at
// location replaces: the database's live ledger of the ensemble (live)
// and the ledger your record names, where it still is.
func (opts Options) retireReplaced(ctx context.Context, location string, h Header, live *takenError) error {
	e := ending{Reason: reasonRetired, At: h.Created, Successor: h.ID, Where: Redact(location), By: opts.Analyst}
	if live != nil {
		if err := opts.retire(ctx, withLedger(location, live.Other), h.Ensemble, "", e); err != nil {
			return err
		}
	}
	st, err := openState(opts, h.Ensemble)
	if err != nil {
		return err
	}
	rec, err := st.read()
	st.close()
	var bad *recordFileError
	if err != nil && !errors.As(err, &bad) {
		return err
	}
	if rec == nil || live != nil && rec.LedgerID == live.ID {
		return nil
	}
	return opts.retireRecorded(ctx, rec, location, e, h.Ensemble)
}

// retireRecorded retires with e the ledger that rec names, where it still
// is (a file moved or removed since is left), for the ledger that
// replaces it: Create and Upgrade with replace, and Adopt.
func (opts Options) retireRecorded(ctx context.Context, rec *Record, current string, e ending, ensemble string) error {
	if err := opts.retire(ctx, withPassword(rec.Path, current), ensemble, rec.LedgerID, e); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// retire ends the ledger at location, of ensemble and, unless "", of
// identity id, with e (Ledger.end): a ledger that has ended already is
// left as it is. It reads the ledger whole, without the record (which
// Init holds), and refuses one of another ensemble or identity.
func (opts Options) retire(ctx context.Context, location, ensemble, id string, e ending) error {
	// Who retires a ledger in PostgreSQL is its database user, whom the
	// database checks, whatever the analyst named for the ledger made.
	opts.Analyst = ""
	l, _, err := opts.open(ctx, location, false)
	if err != nil {
		return fmt.Errorf("retire the ledger replaced: %w", err)
	}
	defer l.store.close()
	if err := l.readHeader(); err != nil {
		return fmt.Errorf("retire the ledger replaced: %w", err)
	}
	switch {
	case l.header.Ensemble != ensemble || id != "" && l.header.ID != id:
		return fmt.Errorf("retire the ledger replaced: %s, which your record names as the ledger of ensemble %s (id %.8s), now holds ledger %.8s of ensemble %s: it is not the ledger to retire; move it away, or check which ledger the ensemble's budget is on (darrm ledger show)", l.path, ensemble, id, l.header.ID, l.header.Ensemble)
	}
	if err := l.scan(ctx, nil); err != nil {
		return err
	}
	if err := l.cutTail(); err != nil || l.chain.closedBy != nil {
		return err
	}
	if u := l.store.user(); u != "" {
		e.By = u
	}
	return l.end(ctx, e)
}

// openRecord opens and locks the record of ensemble for a command that
// makes its ledger (Init, Upgrade, Import), and reads it: nil when there
// is none, or when it is damaged and replace replaces it. Close the
// state.
func openRecord(ctx context.Context, opts Options, replace bool, ensemble string) (*state, *Record, error) {
	st, err := openState(opts, ensemble)
	if err != nil {
		return nil, nil, err
	}
	if err := st.lock(ctx); err != nil {
		st.close()
		return nil, nil, err
	}
	rec, err := st.read()
	var bad *recordFileError
	if err != nil && !(replace && errors.As(err, &bad)) {
		st.close()
		return nil, nil, err
	}
	return st, rec, nil
}

// Ledger is an open ledger: locked for a run (Open), or read
// (Open with Options.ReadOnly).
type Ledger struct {
	// path is where the ledger is, as messages and records name it: a
	// file's path, or a URL without its password (Redact).
	path       string
	store      store
	readOnly   bool
	header     Header
	headerLine []byte // as read, without its line end
	headerHash string
	format     format
	version    int
	cap        *accountant.Cap // the teachers' cap on every total, if any
	// chain is the ledger as read: its whole lines, the last one's hash
	// and spend, and every run's spend so far.
	chain   chain
	size    int64  // bytes of the whole lines
	recHash string // hash of the line the record names, when read
	// vouched is the line the record vouches for, where a run resumed
	// from it: its number and end are known without reading before it.
	vouched pos
	// team, for a run, is its ensemble's checkpoint in the team's
	// witness folder (Options.WitnessDir), which it leaves once settled.
	team      string
	tail      []byte // bytes after the last line end: a torn line
	marked    bool   // a version-3 ledger that Upgrade has marked
	notes     []string
	recordErr error            // what the record says against a ledger read only
	recorded  bool             // a ledger read only has a record that agrees
	state     *state           // the record's file, for a run
	broken    error            // a write failed and could not be undone
	run       string           // this process's run id, once it has begun
	analyst   string           // who charges this run (Options.Analyst)
	memo      *accountant.Memo // Options.Memo
	// share, when the ledger gives shares, is this run's analyst's part
	// of the budget, and mine the spends of the analyst's runs before
	// this one.
	share   *accountant.Guarantee
	mine    accountant.Sequence
	mineUse []int // of a declared use, mine's labels of each of its runs
	mech    provenance.MechanismName
	step    accountant.Spend
	charge  *accountant.Charge  // what the filter charges a label of step, if open
	rule    rule                // how this run's lines add: the ledger's, its filter chosen
	chose   bool                // this run, the first, chooses the ledger's filter
	held    int                 // labels reserved by this run
	settled bool                // this run has written its final line
	base    accountant.Sequence // the spends of every run before this one
	// useEnd, on a ledger whose use is declared, is the count of labels
	// up to the end of the run of the use this run releases.
	useEnd int
	// importing opens a copy exported for Import, which copies
	// its lines but its end.
	importing bool
	// checking reads the ledger without its lock, as a run reads it
	// and refuses it, and writes nothing (Options.CheckRun).
	checking bool

	// recordedElse says, of the copy an upgrade kept or a ledger
	// retired, read only, that your record names another ledger (the
	// upgraded one, the one that replaced it, or one recorded since):
	// recorded is false, and no RecordError is kept.
	recordedElse bool
}

// forRun is Open for a run.
func (opts Options) forRun(ctx context.Context, location string) (*Ledger, error) {
	l, _, err := opts.open(ctx, location, false)
	if err != nil {
		return nil, err
	}
	if _, err := l.load(ctx, opts, true, false); err != nil {
		l.store.close()
		return nil, err
	}
	return l, nil
}

// open opens the store of the ledger at location (for a run, locked),
// and reports whether no write can be under way.
func (opts Options) open(ctx context.Context, location string, readOnly bool) (*Ledger, bool, error) {
	if opts.Analyst != "" {
		if err := checkAnalyst(opts.Analyst); err != nil {
			return nil, false, paramError("analyst", strconv.Quote(opts.Analyst), err.Error())
		}
	}
	s, where, settled, err := openStore(ctx, location, readOnly, opts)
	if err != nil {
		return nil, false, err
	}
	if u := s.user(); u != "" && opts.Analyst != "" && opts.Analyst != u {
		s.close()
		return nil, false, paramError("analyst", strconv.Quote(opts.Analyst), fmt.Sprintf("the analyst of a run on a ledger in PostgreSQL is the database user that charges it, here %q, which the database checks: leave the analyst out, or connect as %q", u, opts.Analyst))
	}
	l := &Ledger{path: where, store: s, readOnly: readOnly, analyst: opts.Analyst, memo: opts.Memo}
	if p, ok := s.(*pgStore); ok && p.overridden != "" {
		l.notes = append(l.notes, p.overridden)
	}
	if p, ok := s.(*pgStore); ok {
		if note := p.schemaNote(); note != "" {
			l.notes = append(l.notes, note)
		}
	}
	if p, ok := s.(*pgStore); ok && readOnly {
		note, err := p.guardNote(ctx)
		if err != nil {
			s.close()
			return nil, false, err
		}
		if note != "" {
			l.notes = append(l.notes, note)
		}
	}
	if l.analyst == "" {
		l.analyst = s.user()
	}
	if !settled {
		l.notes = append(l.notes, "a run holds the ledger: a line it is writing now is not shown")
	}
	return l, settled, nil
}

// Adopt records the ledger at location, as it is now, as the ledger of
// its ensemble, whatever the record said (which it returns, nil if there
// was none): the way to resolve a *RecordError on purpose. The ledger
// must pass every check of its own; a torn last line is cut off.
//
// Another ledger that the record named (another identity, elsewhere) is
// then retired where it still is, as Create with replace retires it: two
// live ledgers would give the ensemble its budget twice, to analysts
// whose records name either. An older copy of the same ledger is not
// another ledger, and is not retired.
func (opts Options) Adopt(ctx context.Context, location string) (previous *Record, l *Ledger, err error) {
	if l, _, err = opts.open(ctx, location, false); err != nil {
		return nil, nil, err
	}
	if previous, err = l.load(ctx, opts, true, true); err != nil {
		l.store.close()
		return nil, nil, err
	}
	where, _, _, err := l.store.where()
	if err == nil && previous != nil && previous.LedgerID != l.header.ID && previous.Path != where {
		e := ending{Reason: reasonRetired, At: time.Now().UTC().Truncate(time.Second), Successor: l.header.ID, Where: where, By: opts.Analyst}
		if err = opts.retireRecorded(ctx, previous, location, e, l.header.Ensemble); err != nil {
			err = fmt.Errorf("ledger %s is now the recorded ledger of ensemble %s, but the ledger your record named, %s (id %.8s), is not retired: %w", where, l.header.Ensemble, previous.Path, previous.LedgerID, err)
		}
	}
	if err == nil {
		err = l.leaveCheckpoint(ctx, true)
	}
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	return previous, l, nil
}

// readOnly is Open with Options.ReadOnly.
func (opts Options) readOnly(ctx context.Context, location string) (*Ledger, error) {
	l, settled, err := opts.open(ctx, location, true)
	if err != nil {
		return nil, err
	}
	if _, err := l.load(ctx, opts, settled, false); err != nil {
		l.store.close()
		return nil, err
	}
	return l, nil
}

// load reads and checks the ledger; settled says that no write can be
// under way (the lock is held), so that a torn last line is a write that
// a crash interrupted. For a run (not readOnly) it then cuts off a torn
// last line that it may and advances the record; with adopt, it records
// the ledger as it is, whatever the record said, and returns what it
// said.
func (l *Ledger) load(ctx context.Context, opts Options, settled, adopt bool) (*Record, error) {
	if err := l.readHeader(); err != nil {
		return nil, err
	}
	st, err := openState(opts, l.header.Ensemble)
	if err != nil {
		return nil, err
	}
	if !l.readOnly {
		// Held from the check of the record to its update.
		if err := st.lock(ctx); err != nil {
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
	if check != nil && (!l.readOnly || l.checking) && check.LedgerID == l.header.ID && check.Size > 0 {
		if resumed, err = l.resume(ctx, check); err != nil {
			return nil, err
		}
	}
	if !resumed {
		if err := l.scan(ctx, check); err != nil {
			return nil, err
		}
	}
	if err := l.endErr(); err != nil && (!l.readOnly || l.checking) && !(l.importing && l.chain.closedBy.Reason == reasonExported) {
		return nil, err
	}
	if err := l.checkRecord(ctx, check, st.path, settled); err != nil {
		var re *RecordError
		if !l.readOnly || l.checking || !errors.As(err, &re) {
			return nil, err
		}
		if re.kind == secondLedger && l.readAlone() {
			// The copy an upgrade kept, or a ledger retired, is never
			// the ensemble's ledger again, nor one to adopt: read, it
			// is checked on its own (the record's ledger named), not
			// refused with an adopt that refuses it too.
			l.notes = append(l.notes, fmt.Sprintf("your record of ensemble %s names ledger %s (id %s), the one to release on", re.Ensemble, re.Record.Path, short(re.Record.LedgerID)))
			l.recordedElse = true
		} else {
			l.recordErr = err
		}
	}
	witnesses, team, err := opts.teamWitnesses(l.header.Ensemble)
	if err != nil {
		return nil, err
	}
	if adopt {
		// The team's checkpoint is replaced on purpose, as the record is.
		witnesses = opts.Witnesses
	}
	for _, w := range witnesses {
		if err := l.checkWitness(ctx, w); err != nil {
			if l.readOnly && w.Record.LedgerID != l.header.ID && l.readAlone() {
				// The copy an upgrade kept, or a ledger retired, is read
				// on its own: a witness of the ensemble's ledger, the
				// one that continued or replaced it among them, is not
				// of it.
				this := "this copy an upgrade kept"
				if !l.keptCopy() {
					this = "this retired ledger"
				}
				l.notes = append(l.notes, fmt.Sprintf("witness %s is of ledger %s, not of %s: not checked against it", w.File, short(w.Record.LedgerID), this))
				continue
			}
			return nil, err
		}
		l.notes = append(l.notes, fmt.Sprintf("extends witness %s: its line %d is the one the witness saw", w.File, w.Record.Lines))
	}
	if l.readOnly {
		l.recorded = rec != nil && l.recordErr == nil && !l.recordedElse
		l.noteVersion()
		if note := l.header.continuesNote(); note != "" {
			l.notes = append(l.notes, note)
		}
		if e := l.ended(); e != nil {
			l.notes = append(l.notes, e.say("it"))
		}
		return rec, nil
	}
	if err := l.cutTail(); err != nil {
		return nil, err
	}
	where, dev, ino, err := l.store.where()
	if err == nil {
		err = st.write(ctx, newRecord(l.header, l.headerHash, where, dev, ino, l.chain.n, l.size, l.chain.head))
	}
	if err != nil {
		return nil, err
	}
	st.unlock()
	l.state, l.team, ok = st, team, true
	return rec, nil
}

// readHeader reads and checks the ledger's header; a ledger of version 3
// cannot be opened for a run.
func (l *Ledger) readHeader() error {
	first, err := l.store.first()
	switch {
	case err == errLongLine:
		return &NotLedgerError{Path: l.path, Reason: fmt.Sprintf("is not a ledger: its first line is longer than %d bytes", maxLineBytes)}
	case err != nil && err != io.EOF:
		return fmt.Errorf("ledger %s: read: %w", l.path, err)
	case len(first) == 0 && err == io.EOF:
		return &NotLedgerError{Path: l.path, Reason: "is empty: not a ledger (a ledger whose creation was interrupted is empty too: remove it and run darrm ledger init again)"}
	}
	l.headerLine = first
	var perr error
	if l.headerHash, perr = l.parseHeader(first); perr != nil {
		return perr
	}
	if err == io.EOF {
		return &CorruptError{Path: l.path, Line: 1, Reason: "the header has no line end: not a ledger, or one whose creation was interrupted"}
	}
	if !l.readOnly || l.checking {
		return l.versionErr()
	}
	return nil
}

// versionErr is the refusal of a run on a ledger of version 3, nil for
// one of the current version.
func (l *Ledger) versionErr() error {
	if l.format != chained3 {
		return nil
	}
	e := &versionError{Path: l.path, Version: l.version}
	if fs, ok := l.store.(*fileStore); ok && endsMarked(fs.f) && !interruptedUpgrade(fs.f, fs.path, l.version) {
		// Not "upgrade it once": an upgrade of the kept copy makes a
		// second live ledger.
		e.Kept = true
	}
	return e
}

// checkRecord checks the ledger against its ensemble's record rec (nil
// for none), read from file, and judges a torn last line; settled says no
// write can be under way.
func (l *Ledger) checkRecord(ctx context.Context, rec *Record, file string, settled bool) error {
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
		elsewhere := rec.LedgerID == l.header.ID && IsURL(rec.Path) && IsURL(l.path) && !samePlace(rec.Path, l.path)
		if ok, err := l.continues(ctx, rec, e); ok {
			return err
		}
		switch {
		case rec.LedgerID != l.header.ID:
			e.kind = secondLedger
			e.ID = l.header.ID
		case !l.readOnly && IsURL(rec.Path) && !IsURL(l.path):
			e.kind, e.archive = moved, l.isArchive()
		case torn && lines+1 == rec.Lines:
			e.kind = tornAfterSync
		case lines < rec.Lines && elsewhere:
			e.kind = copied
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
		if elsewhere {
			l.notes = append(l.notes, fmt.Sprintf("your record of ensemble %s named this ledger (id %s) at %s: the ledger here is a copy of it (an import), and from now on your record names this one; release on one copy only, and retire or remove the other", l.header.Ensemble, short(l.header.ID), rec.Path))
		}
	} else if l.readOnly {
		l.notes = append(l.notes, fmt.Sprintf("you have no record of ensemble %s yet: the first release that uses this ledger makes one", l.header.Ensemble))
	}
	if torn && settled && l.readOnly {
		l.notes = append(l.notes, fmt.Sprintf("its last line (%d bytes) is torn: as far as your record shows, a write that a crash interrupted before its fsync returned, whose labels never left (a whole line cut later is caught by its writer's record or a witness folder); the next release cuts it off", len(l.tail)))
	}
	return nil
}

// samePlace reports whether the PostgreSQL ledger locations a and b (a
// record's, without its password) name one ledger: the same server,
// database and name, whoever connects.
func samePlace(a, b string) bool {
	pa, erra := parsePG(a)
	pb, errb := parsePG(b)
	return erra == nil && errb == nil && pa.name == pb.name && pa.cfg.Database == pb.cfg.Database &&
		pa.cfg.Host == pb.cfg.Host && pa.cfg.Port == pb.cfg.Port
}

// cutTail cuts off a torn last line (checkRecord has judged it): a write
// whose fsync cannot have returned.
func (l *Ledger) cutTail() error {
	if len(l.tail) == 0 {
		return nil
	}
	if err := l.store.cut(pos{n: l.chain.n, off: l.size}); err != nil {
		return err
	}
	l.notes = append(l.notes, fmt.Sprintf("cut off a torn last line of %d bytes: as far as your record shows, a write that a crash interrupted before its fsync returned", len(l.tail)))
	l.tail = nil
	return nil
}

// Header returns the ledger's header.
func (l *Ledger) Header() Header { return l.header }

// ID returns the ledger's identity (Header.ID), which a label file's
// header states.
func (l *Ledger) ID() string { return l.header.ID }

// Spent returns the sequence of the spends of every run so far (the last
// line of each): its Steps are the labels the ledger counts.
func (l *Ledger) Spent() accountant.Sequence { return l.chain.spent }

// Lines returns the number of whole lines of the ledger.
func (l *Ledger) Lines() int { return l.chain.n }

// Head returns the hash of the ledger's last line.
func (l *Ledger) Head() string { return l.chain.head }

// Size returns the bytes of the ledger's whole lines, each with its line
// end, as a ledger file holds them.
func (l *Ledger) Size() int64 { return l.size }

// Version returns the ledger's version.
func (l *Ledger) Version() int { return l.version }

// RecordErr returns what the record of a ledger read only (ReadOnly)
// says against it, a *RecordError, or nil.
func (l *Ledger) RecordErr() error { return l.recordErr }

// Recorded reports whether your record of the ensemble names a ledger
// read only (ReadOnly) and agrees with it.
func (l *Ledger) Recorded() bool { return l.recorded }

// RecordedElse reports whether your record of the ensemble names another
// ledger than the one read (ReadOnly), the copy an upgrade kept or a
// ledger retired: no release charges either, so it is read on its own,
// and no RecordErr refuses it.
func (l *Ledger) RecordedElse() bool { return l.recordedElse }

// RunCount returns the number of runs of a ledger read only (ReadOnly),
// which reads every line.
func (l *Ledger) RunCount() int { return l.chain.runs }

// Notes returns what opening the ledger found worth telling: a torn last
// line cut off or left, a version-1 format, no record yet.
func (l *Ledger) Notes() []string { return append([]string(nil), l.notes...) }
