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
	"time"

	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/plural"
)

// A team's witness folder (Options.WitnessDir) holds, for each ensemble,
// a checkpoint of its ledger that every release leaves and every run and
// reader checks: a witness that no one has to remember to give, kept
// where the ledger's store cannot write (a folder the database's owner
// cannot write: another machine, the team's repository, a network share),
// so that a ledger rolled back (a backup restored, its rows rewritten by
// its tables' owner) or put in another's place is refused by every
// analyst who uses the folder, whose releases since the rollback left a
// newer checkpoint there, not only by one whose own record saw them.

// teamCheckpoint returns the checkpoint of ensemble in opts's witness
// folder, "" without one: <first 32 hex digits of the SHA-256 of the
// ensemble>.checkpoint, as a record is named.
func (opts Options) teamCheckpoint(ensemble string) (string, error) {
	if opts.WitnessDir == "" {
		return "", nil
	}
	if !filepath.IsAbs(opts.WitnessDir) {
		return "", paramError("WitnessDir", opts.WitnessDir, "must be an absolute path: a relative one would name another folder from each working directory")
	}
	sum := sha256.Sum256([]byte(ensemble))
	return filepath.Join(opts.WitnessDir, hex.EncodeToString(sum[:16])+".checkpoint"), nil
}

// named returns the team's checkpoint of ensemble (its path, and what it
// holds) for a ledger to be made at location, refusing, unless replace,
// the ledger that your record (rec, read from file) or that checkpoint
// names: a second ledger of the ensemble (a *RecordError).
func (opts Options) named(location, ensemble string, rec *Record, file string, replace bool) (string, *Witness, error) {
	if rec != nil && !replace {
		return "", nil, &RecordError{kind: secondLedger, Path: Redact(location), Ensemble: ensemble, Record: *rec, File: file, Command: "init"}
	}
	team, err := opts.teamCheckpoint(ensemble)
	if err != nil {
		return "", nil, err
	}
	seen, err := readTeamCheckpoint(team)
	if err != nil {
		return "", nil, err
	}
	if seen != nil && !replace {
		return "", nil, &RecordError{kind: secondLedger, Path: Redact(location), Ensemble: ensemble, Record: seen.Record, File: team, Command: "init", Witness: true}
	}
	return team, seen, nil
}

// CheckCreate returns what Create of a ledger of ensemble at location
// would be refused for whatever its header says: a file there, or, unless
// opts.Replace, a ledger of the ensemble that your record or the team's
// checkpoint names. It writes nothing and waits for no lock, so that a
// caller whose header takes long work (a declared use's solve of
// gamma_opt) asks it first; Create checks it all again, the record
// locked, and a PostgreSQL ledger's name there.
func (opts Options) CheckCreate(location, ensemble string) error {
	if !IsURL(location) {
		if _, err := os.Lstat(location); err == nil {
			return existsError(location)
		}
	}
	st, err := openState(opts, ensemble)
	if err != nil {
		return err
	}
	rec, err := st.read()
	st.close()
	var bad *recordFileError
	if err != nil && !(opts.Replace && errors.As(err, &bad)) {
		return err
	}
	_, _, err = opts.named(location, ensemble, rec, st.path, opts.Replace)
	return err
}

// readTeamCheckpoint reads the checkpoint at path of a team's witness
// folder: nil when there is none yet; anything else there is refused.
func readTeamCheckpoint(path string) (*Witness, error) {
	if path == "" {
		return nil, nil
	}
	w, isCheckpoint, err := readWitness(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err == nil && !isCheckpoint:
		return nil, &witnessError{File: path, Reason: "is a label file, in the team's witness folder: that folder holds the checkpoints darrm writes there"}
	case err != nil:
		return nil, err
	}
	return &w, nil
}

// leaveCheckpoint writes the ledger's state now to its checkpoint in the
// team's witness folder (Ledger.team), if any: over a checkpoint of the
// same ledger that it extends (one its open checked, which only this run
// can have moved on since, holding the ledger), or, with over, over any
// checkpoint (a ledger made, adopted or upgraded on purpose in another's
// place); never over a checkpoint of another ledger otherwise.
func (l *Ledger) leaveCheckpoint(ctx context.Context, over bool) error {
	if l.team == "" {
		return nil
	}
	where, _, _, err := l.store.where()
	if err != nil {
		return err
	}
	return l.leave(ctx, newRecord(l.header, l.headerHash, where, 0, 0, l.chain.n, l.size, l.chain.head), over)
}

// leave writes the state r of the ledger (at r.Path) to its checkpoint
// in the team's witness folder, as leaveCheckpoint does: unless over, only
// where the ledger extends the checkpoint there (it holds the line the
// checkpoint saw), so that a copy of the ledger that went its own way
// (one put in the ledger's place during a run) never takes the
// checkpoint from the ledger it forked from.
func (l *Ledger) leave(ctx context.Context, r Record, over bool) error {
	unlock, err := lockFolder(ctx, l.team)
	if err != nil {
		return fmt.Errorf("ledger %s: the team's checkpoint: %w", r.Path, err)
	}
	defer unlock()
	old, err := readTeamCheckpoint(l.team)
	if err != nil {
		return fmt.Errorf("ledger %s: the team's checkpoint: %w", r.Path, err)
	}
	// The checkpoint is of the ledger of r, or of l, the ledger that r's
	// continues (Upgrade): l must hold its line.
	extends := old == nil || over
	if !extends && (old.Record.LedgerID == r.LedgerID && old.Record.Lines <= r.Lines || old.Record.LedgerID == l.header.ID) {
		held, err := l.holds(ctx, old.Record.Lines, old.Record.Size, old.Record.Head)
		if err != nil {
			return err
		}
		extends = held.held
	}
	if !extends {
		return fmt.Errorf("ledger %s: the team's checkpoint %s now witnesses ledger %s with %d lines, last line %.16s, which this ledger (id %s, %d lines) does not hold: another ledger of the ensemble, or another copy of this one, was used or made meanwhile; it is left as it is", r.Path, printable(l.team), short(old.Record.LedgerID), old.Record.Lines, old.Record.Head, short(r.LedgerID), r.Lines)
	}
	if err := writeCheckpoint(l.team, r, old != nil); err != nil {
		return fmt.Errorf("ledger %s: leave the team's checkpoint: %w", r.Path, err)
	}
	if over && old != nil && (old.Record.LedgerID != r.LedgerID || old.Record.Lines != r.Lines || old.Record.Head != r.Head) {
		// Said as the record replaced is said: every analyst who uses the
		// folder now checks against this ledger, not the one it witnessed.
		l.notes = append(l.notes, fmt.Sprintf("the team's checkpoint %s witnessed ledger %s with %s, last line %.16s (%s, on %s); it now witnesses this ledger, with %s, last line %.16s", printable(l.team), short(old.Record.LedgerID), plural.Of(old.Record.Lines, "line", "lines"), old.Record.Head, printable(old.Record.Path), old.Record.Updated.Format(time.RFC3339), plural.Of(r.Lines, "line", "lines"), r.Head))
	}
	return nil
}

// lockFolder holds the folder of the checkpoint at path, until the
// function it returns is called, against every other darrm that reads,
// checks and writes a checkpoint there (leave, Checkpoint): two runs on
// two copies of a ledger that checked the checkpoint one after the
// other, each before the other wrote, would both pass and both deliver
// their labels (320 where 160 were allowed). It locks the folder
// itself, so that it leaves no file.
func lockFolder(ctx context.Context, path string) (func(), error) {
	dir := filepath.Dir(path)
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := lock(ctx, d, true, nil, DefaultLockTimeout); err != nil {
		d.Close()
		if err == errLockTimeout {
			return nil, fmt.Errorf("gave up after waiting %v for the lock on folder %s, which another darrm holds while it writes a checkpoint there", DefaultLockTimeout, printable(dir))
		}
		return nil, fmt.Errorf("lock folder %s: %w", printable(dir), err)
	}
	return func() { d.Close() }, nil
}

// writeCheckpoint writes the checkpoint of the state r to path: a new
// file, or with replace in place of the one there, atomically.
func writeCheckpoint(path string, r Record, replace bool) error {
	c := checkpoint{Version: checkpointVersion, Ensemble: r.Ensemble, LedgerID: r.LedgerID, Lines: r.Lines, Size: r.Size, Head: r.Head, Path: r.Path, Time: r.Updated}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	fill := func(f *os.File) error {
		_, err := f.Write(append(b, '\n'))
		return err
	}
	if replace {
		return atomicfile.Write(path, 0o644, fill)
	}
	return atomicfile.WriteNew(path, 0o644, fill)
}

// teamWitnesses returns opts's witnesses of ensemble with the checkpoint
// of its team's witness folder, if any, and that checkpoint's path.
func (opts Options) teamWitnesses(ensemble string) ([]Witness, string, error) {
	path, err := opts.teamCheckpoint(ensemble)
	if err != nil {
		return nil, "", err
	}
	w, err := readTeamCheckpoint(path)
	if err != nil || w == nil {
		return opts.Witnesses, path, err
	}
	return append(append([]Witness(nil), opts.Witnesses...), *w), path, nil
}
