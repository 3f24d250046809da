package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/statedir"
)

// Record is what a user's darrm remembers of an ensemble's ledger, in
// STATE/ledgers/<hash of the ensemble>.json, STATE the folder of
// Options.StateDir (darrm's state folder by default: $DARRM_STATE_DIR,
// else $XDG_STATE_HOME/darrm, else ~/.local/state/darrm): which ledger it is, the
// hash of its header, and how far it had got when this user last wrote or
// adopted it. A ledger with fewer lines, or whose line Lines does not
// hash to Head, has lost spends. The record vouches for the lines up to
// its line Lines, which were checked when they were read or written: a
// release reads the ledger from there (at byte Size), and its header,
// which must hash to Header and begin the chain that the first spend line
// continues.
type Record struct {
	Version  int    `json:"version"`
	Ensemble string `json:"ensemble"`
	// LedgerID is the ledger's Header.ID.
	LedgerID string `json:"ledger_id"`
	// Header is the hash of the ledger's header line ("" in a record of
	// an earlier darrm: the next release fills it in).
	Header string `json:"header,omitempty"`
	// Path, Device and Inode say where the ledger was: for messages, and
	// to tell a moved file from a copy. A PostgreSQL ledger's Path is its
	// URL without the password (Redact), its Device and Inode 0.
	Path   string `json:"path"`
	Device uint64 `json:"device"`
	Inode  uint64 `json:"inode"`
	// Lines is the number of whole lines, Head the hash of the last,
	// Size their bytes (0 in a record of an earlier darrm, which then
	// reads the whole ledger once).
	Lines   int       `json:"lines"`
	Head    string    `json:"head"`
	Size    int64     `json:"size,omitempty"`
	Updated time.Time `json:"updated"`
}

// recordVersion is the version of the record's format.
const recordVersion = 1

// maxRecordBytes bounds a record file: a record is a few hundred bytes.
const maxRecordBytes = 64 << 10

// newRecord returns the record of the ledger of header h, whose line has
// the hash hh, at path (its device and inode dev, ino), of lines whole
// lines in size bytes, the last of hash head.
func newRecord(h Header, hh, path string, dev, ino uint64, lines int, size int64, head string) Record {
	return Record{Version: recordVersion, Ensemble: h.Ensemble, LedgerID: h.ID, Header: hh, Path: path, Device: dev, Inode: ino,
		Lines: lines, Head: head, Size: size, Updated: time.Now().UTC().Truncate(time.Second)}
}

// recordKind says how a ledger disagrees with its record: secondLedger
// (the record names another ledger), behind (lines removed or an older
// copy restored), tornAfterSync (a line written in full is cut short),
// diverged (the recorded line differs) or moved (a file whose ledger the
// record keeps in PostgreSQL).
type recordKind int

const (
	// secondLedger is a ledger for an ensemble whose record names
	// another ledger.
	secondLedger recordKind = iota
	// behind is a ledger with fewer lines than its record: lines were
	// removed, or an older copy restored.
	behind
	// tornAfterSync is a ledger whose last line is cut short although
	// the record shows it was written in full (its fsync had returned).
	tornAfterSync
	// diverged is a ledger whose line at the record's count is not the
	// one recorded: edited, or another copy of it restored.
	diverged
	// moved is a ledger file that a run would write, whose ledger the
	// record keeps in PostgreSQL: the file it was imported from, or an
	// export of it, a copy for reading.
	moved
	// lowered is a ledger that counts fewer labels of a run than a label
	// file of that run holds: its count was lowered after they left.
	lowered
	// copied is a PostgreSQL ledger behind the record of the same ledger
	// elsewhere (another database, or name): a copy of it, imported
	// there and charged there since.
	copied
	// pastDiffers is a ledger that claims to continue the recorded one
	// (Header.Upgraded) but does not carry its recorded line.
	pastDiffers
	// unchecked is a ledger that claims to continue the recorded one but
	// carries none of its lines to check the claim by.
	unchecked
)

// RecordError is a ledger that disagrees with its ensemble's record. It
// is resolved on purpose: by using the right ledger, or with Options.Adopt
// (darrm ledger adopt), or, for Create and Options.Upgrade, with replace.
type RecordError struct {
	kind     recordKind
	archive  bool   // the ledger is an export's copy, which no adopt takes (moved)
	Path     string // the ledger
	ID       string // its id, for secondLedger
	Ensemble string
	Record   Record
	File     string // the record's file
	Lines    int    // the ledger's whole lines
	// Command is "init" or "upgrade" for a ledger that Init or Upgrade
	// refused to make, "" for one opened.
	Command string
	// Witness says that Record is a witness (Options.Witnesses), read from
	// File, not your record of the ensemble.
	Witness bool
	// Run, Counted and Labels, for a ledger that a label file's labels
	// refute, are that file's run, the labels the ledger counts of it and
	// the labels the file holds; Units, for a run charged per draw, the
	// units of its charge those labels cost (Witness.Units), which Counted
	// then counts.
	Run     string
	Counted int
	Labels  int
	Units   int
}

// archiveWayBack says how to go on from an export's copy of a ledger kept
// in PostgreSQL on purpose: no adopt takes the copy, and your record and
// the team's checkpoint refuse its import while they name the database.
const archiveWayBack = "If that database is lost and this file is the way back, import it with no record of the ensemble and outside the team's witness folder (DARRM_STATE_DIR naming a new folder, DARRM_WITNESS_DIR unset and no --witness-dir), then make the new ledger yours and the team's on purpose: darrm ledger adopt URL"

// Error says how the ledger disagrees with the record and how to resolve
// it on purpose (Say, with Create's or Upgrade's replace).
func (e *RecordError) Error() string {
	if e.Command == "upgrade" {
		return e.Say("call Options.Upgrade again with replace true")
	}
	return e.Say("call Create again with Options.Replace true")
}

// Say returns e's message with replace saying how the caller makes Create
// or Upgrade replace the record on purpose: Error names the argument,
// and a command that sets it by a flag says the flag.
func (e *RecordError) Say(replace string) string {
	if e.Witness {
		return e.sayWitness(replace)
	}
	r := e.Record
	seen := fmt.Sprintf("your record of ensemble %s (%s) says its ledger is %s (id %s) with %d lines, as of %s",
		e.Ensemble, e.File, r.Path, short(r.LedgerID), r.Lines, r.Updated.Format(time.RFC3339))
	q := shellQuote(e.Path)
	// A ledger in PostgreSQL is no file: its copies are databases
	// restored, or ledgers imported again.
	this, copies := "file", "The file was replaced by another copy"
	if IsURL(e.Path) {
		this, copies = "ledger", "The ledger's rows were replaced by another copy (a database restored, a ledger imported again)"
	}
	switch e.kind {
	case secondLedger:
		if e.Command != "" {
			return fmt.Sprintf("ledger %s %s: %s. A second ledger would give the ensemble its budget again. Keep using %s; if you retire it and mean to start a new budget on purpose, %s", e.Command, e.Path, seen, r.Path, replace)
		}
		return fmt.Sprintf("ledger %s (id %s) is a second ledger for ensemble %s: %s. Two ledgers would give the ensemble its budget twice. Use %s; if this ledger replaces it on purpose, run: darrm ledger adopt %s", e.Path, short(e.ID), e.Ensemble, seen, r.Path, q)
	case behind:
		return fmt.Sprintf("ledger %s has %d lines, but %s: lines were removed, or an older copy was restored, or it is a copy that went its own way (runs on two copies). Use the newest copy; if you mean to go on from this %s as it is, forgetting every spend it does not hold (those after its line %d, or, of a copy that went its own way, the other copy's), run: darrm ledger adopt %s", e.Path, e.Lines, seen, this, e.Lines, q)
	case moved:
		if e.archive {
			return fmt.Sprintf("ledger %s is a file copy of a ledger kept in PostgreSQL: %s. Release there, so that every spend is counted once; this file, an export, is for reading. %s", e.Path, seen, archiveWayBack)
		}
		return fmt.Sprintf("ledger %s is a file copy of a ledger kept in PostgreSQL: %s. Release there, so that every spend is counted once; this file (the one imported, or an export) is for reading. If you mean to go on from this file instead, run: darrm ledger adopt %s", e.Path, seen, q)
	case copied:
		return fmt.Sprintf("ledger %s has %d lines, but %s: the same ledger, a copy of it imported there and charged there since, which this one is behind. Release there, so that every spend is counted once; if you mean to go on from this copy instead, forgetting the spends after its line %d, run: darrm ledger adopt %s", e.Path, e.Lines, seen, e.Lines, q)
	case pastDiffers, unchecked:
		return e.sayPast(seen, "your record", "run: darrm ledger adopt "+q)
	case tornAfterSync:
		return fmt.Sprintf("ledger %s: its last line (line %d) is cut short, but %s: that line was written in full (its fsync had returned), so the file was cut afterwards. Restore it from a good copy; if you mean to go on without that line, run: darrm ledger adopt %s", e.Path, e.Lines+1, seen, q)
	}
	return fmt.Sprintf("ledger %s: its line %d is not the one recorded, but the %s's chain holds: %s. %s that went its own way. Use the copy written last; if you mean to go on from this %s as it is, run: darrm ledger adopt %s", e.Path, r.Lines, this, seen, copies, this, q)
}

// sayWitness returns the message of a ledger that disagrees with a
// witness.
func (e *RecordError) sayWitness(replace string) string {
	r := e.Record
	seen := fmt.Sprintf("ledger %s of ensemble %s", short(r.LedgerID), e.Ensemble)
	if r.Path != "" {
		seen += " at " + printable(r.Path)
	}
	seen += fmt.Sprintf(" with %d lines", r.Lines)
	if !r.Updated.IsZero() {
		seen += ", as of " + r.Updated.Format(time.RFC3339)
	}
	q := shellQuote(e.Path)
	if e.Command != "" {
		return fmt.Sprintf("ledger %s %s: the team's checkpoint %s witnesses %s: the ensemble has a ledger, and a second one would give it its budget again. Keep using it; if you retire it and mean to start a new budget on purpose, %s", e.Command, e.Path, printable(e.File), seen, replace)
	}
	switch e.kind {
	case pastDiffers, unchecked:
		return e.sayPast(seen, "witness "+printable(e.File), "leave that witness out and keep a checkpoint of this one (darrm ledger checkpoint)")
	case lowered:
		if e.Units > 0 {
			return fmt.Sprintf("ledger %s counts %d units of run %s, which reserved the draws of witness %s at its line %d, but the %d labels of that label file cost at least %d units (its last row states the units its run's draws had taken when that label was written, each reserved before it was drawn): the run's count was lowered after its labels left (a settlement written by hand). Restore the ledger from a good copy, or go on from the copy the witness saw; nothing can be released against it as it is", e.Path, e.Counted, e.Run, printable(e.File), r.Lines, e.Labels, e.Units)
		}
		return fmt.Sprintf("ledger %s counts %d labels of run %s, which reserved the labels of witness %s at its line %d, but that label file holds %d: the run's count was lowered after its labels left (a settlement written by hand). Restore the ledger from a good copy, or go on from the copy the witness saw; nothing can be released against it as it is", e.Path, e.Counted, e.Run, printable(e.File), r.Lines, e.Labels)
	case secondLedger:
		return fmt.Sprintf("ledger %s (id %s) is not the ledger that witness %s saw: the witness saw %s. A second ledger of the ensemble (made again, imported again, or put in the other's place) would give it its budget again. Release on the ledger the witness saw; if this one replaced it on purpose, leave that witness out and keep a checkpoint of this one (darrm ledger checkpoint)", e.Path, short(e.ID), printable(e.File), seen)
	case moved:
		this, way := "this file (the one imported, or an export)", "If you mean to go on from this file instead, leave that witness out and run: darrm ledger adopt "+q
		if e.archive {
			this, way = "this file, an export,", archiveWayBack
		}
		return fmt.Sprintf("ledger %s is a file copy of a ledger kept in PostgreSQL: witness %s saw %s. Release there, so that every spend is counted once; %s is for reading. %s", e.Path, printable(e.File), seen, this, way)
	case behind:
		return fmt.Sprintf("ledger %s is behind witness %s: it has %d lines, the witness saw %s: lines were removed, or an older copy (a backup) was restored, or it is a copy that went its own way (runs on two copies), and a release on it would spend again what the lines it lacks counted. Use the newest copy of the ledger; if you mean to go on from this one as it is, forgetting every spend it does not hold (those after its line %d, or, of a copy that went its own way, the other copy's), leave that witness out and run: darrm ledger adopt %s", e.Path, printable(e.File), e.Lines, seen, e.Lines, q)
	}
	return fmt.Sprintf("ledger %s has forked from witness %s: its line %d is not the one the witness saw (%s): another copy of the ledger went its own way, or its lines were rewritten. Use the copy the witness saw; if you mean to go on from this one as it is, leave that witness out and run: darrm ledger adopt %s", e.Path, printable(e.File), r.Lines, seen, q)
}

// sayPast returns the message of a ledger that claims to continue the one
// that who saw (seen), which it cannot show it does, with what to do if
// it does on purpose.
func (e *RecordError) sayPast(seen, who, purpose string) string {
	r := e.Record
	if e.kind == unchecked {
		return fmt.Sprintf("ledger %s (id %s) claims to continue ledger %s (an upgrade by a darrm before it carried the old lines), but carries none of its lines, so %s cannot be checked against it: %s saw %s. Release on the ledger %s saw, or keep it for reading; if this ledger continues it and you mean to go on from it, %s", e.Path, short(e.ID), short(r.LedgerID), who, who, seen, who, purpose)
	}
	return fmt.Sprintf("ledger %s (id %s) claims to continue ledger %s, but does not carry its line %d as %s saw it: %s saw %s. It carries another past, or one cut before that line (a forged upgrade, or a ledger that went on after it): release on the ledger %s saw; if this one continues it and you mean to go on from it, %s", e.Path, short(e.ID), short(r.LedgerID), r.Lines, who, who, seen, who, purpose)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *RecordError) BadInput() bool { return true }

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// recordFileError is a record file that cannot be read as one: damaged.
type recordFileError struct{ Path, Reason string }

func (e *recordFileError) Error() string {
	return fmt.Sprintf("ledger record %s: %s; if the ledger you use is the right one, record it as it is with: darrm ledger adopt LEDGER", e.Path, e.Reason)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *recordFileError) BadInput() bool { return true }

// stateErr is an error of the folder of the records: one that the user
// cannot write (read-only, or another user's) is told how to name
// another.
func stateErr(err error) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("ledger record: %w; a release records each ledger it uses in your state folder, which must be writable by you: set %s to a folder that is (it is where your records of the ledgers are kept: use the same one for every run)", err, statedir.Env)
	}
	return fmt.Errorf("ledger record: %w", err)
}

// errRecordChanged is wrapped by advance when the record is no longer the
// one this run wrote: the run's ledger takes no more writes, which no
// record would vouch for.
var errRecordChanged = errors.New("this run's ledger takes no more writes")

// state is the record file of one ensemble, with its lock.
type state struct {
	path     string
	ensemble string
	lockf    *os.File
	locked   bool
	// waiting is told of a wait for the lock, which a run takes again
	// after every write.
	waiting func()
	timeout time.Duration // Options.LockTimeout
	// last is what this process last wrote: only write sets it, so that a
	// record found changed (another ledger used meanwhile) keeps failing
	// every later advance instead of being taken as this run's own.
	last *Record
}

// openState opens the record of ensemble (not locked). A wait for its
// lock is told to opts.Waiting.
func openState(opts Options, ensemble string) (*state, error) {
	dir, err := opts.stateDir()
	if err != nil {
		return nil, err
	}
	timeout, err := opts.lockTimeout()
	if err != nil {
		return nil, err
	}
	dir = filepath.Join(dir, "ledgers")
	sum := sha256.Sum256([]byte(ensemble))
	s := &state{path: filepath.Join(dir, hex.EncodeToString(sum[:16])+".json"), ensemble: ensemble, timeout: timeout}
	s.waiting = opts.waiting(fmt.Sprintf("the record of ensemble %s (%s)", ensemble, s.path))
	return s, nil
}

// lock takes the record's lock, which serialises the check and update of
// the record by runs on different ledgers of one ensemble. It is held for
// short spells, but one of them is a run's check of its whole ledger, so
// a wait for it ends on an interrupt (ctx done) like a wait for the
// ledger's.
func (s *state) lock(ctx context.Context) error {
	if s.locked {
		return nil
	}
	if s.lockf == nil {
		if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
			return stateErr(err)
		}
		f, err := os.OpenFile(s.path[:len(s.path)-len(".json")]+".lock", os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return stateErr(err)
		}
		s.lockf = f
	}
	if err := lock(ctx, s.lockf, true, s.waiting, s.timeout); err != nil {
		if err == errLockTimeout {
			return &lockTimeoutError{what: "ledger record " + s.path, timeout: s.timeout, holder: "another darrm run"}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("ledger record %s: waiting for its lock: %w", s.path, err)
		}
		return fmt.Errorf("ledger record %s: lock: %w", s.path, err)
	}
	s.locked = true
	return nil
}

func (s *state) unlock() {
	if s.locked {
		funlock(s.lockf)
		s.locked = false
	}
}

func (s *state) close() {
	s.unlock()
	if s.lockf != nil {
		s.lockf.Close()
		s.lockf = nil
	}
}

// read returns the record, or nil if there is none.
func (s *state) read() (*Record, error) {
	bad := func(reason string) error { return &recordFileError{s.path, reason} }
	b, err := atomicfile.ReadFile(s.path, maxRecordBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, atomicfile.ErrNotRegular), errors.Is(err, atomicfile.ErrTooLarge):
		return nil, bad(errors.Unwrap(err).Error())
	case err != nil:
		return nil, fmt.Errorf("ledger record: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, bad(fmt.Sprintf("unreadable: %v", err))
	}
	if r.Version != recordVersion || r.LedgerID == "" || r.Lines < 1 || r.Size < 0 {
		return nil, bad(fmt.Sprintf("version %d, ledger id %q, %d lines, %d bytes: not a record this darrm wrote", r.Version, r.LedgerID, r.Lines, r.Size))
	}
	return &r, nil
}

// write replaces the record by r: a temporary file, synced, renamed over
// it (atomicfile.Write, which replaces a link there rather than follow
// it). The rename is durable once the folder is synced; a crash before
// that leaves the record before, which is behind the ledger, never ahead
// of it.
func (s *state) write(ctx context.Context, r Record) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	err = atomicfile.Write(s.path, 0o600, func(f *os.File) error {
		if _, err := f.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
		return nil
	})
	if err != nil {
		return stateErr(err)
	}
	s.last = &r
	return nil
}

// advance moves the record on to lines and head, after a write to the
// ledger: the record must still be the one this run last wrote, or
// another ledger of the ensemble (a copy, or one made by init --replace)
// has been used meanwhile, and the record, which now vouches for that
// one, is left as it is.
func (s *state) advance(ctx context.Context, lines int, size int64, head string) error {
	return s.update(ctx, func(r *Record) { r.Lines, r.Size, r.Head = lines, size, head })
}

// update changes the record by edit, if it is still the one this run
// last wrote (advance).
func (s *state) update(ctx context.Context, edit func(*Record)) error {
	if s == nil || s.last == nil {
		return errors.New("the ledger's record was not read")
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	last := *s.last
	now, err := s.read()
	if err != nil {
		return err
	}
	if now == nil || now.LedgerID != last.LedgerID || now.Lines != last.Lines || now.Head != last.Head {
		return fmt.Errorf("your record of ensemble %s (%s) changed during this run: another ledger of the ensemble was used or adopted meanwhile: %w", last.Ensemble, s.path, errRecordChanged)
	}
	r := last
	edit(&r)
	r.Updated = time.Now().UTC().Truncate(time.Second)
	return s.write(ctx, r)
}
