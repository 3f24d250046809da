package ledger

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/provenance"
)

// marker is the line Upgrade appends to a ledger of an earlier version
// before it puts the upgraded ledger in its place: a darrm that reads
// that version refuses the file from then on (it is no spend), so that a
// run of an older darrm that was waiting for the old file's lock cannot
// spend from it unseen.
type marker struct {
	Upgraded struct {
		To   int       `json:"to"`
		Time time.Time `json:"time"`
	} `json:"upgraded"`
}

// isMarker reports whether line b is an upgrade marker.
func isMarker(b []byte) bool {
	var m marker
	return json.Unmarshal(b, &m) == nil && m.Upgraded.To > 0
}

// endsMarked reports whether the file f ends with an upgrade marker: the
// version-3 file that Upgrade kept, or one whose upgrade was interrupted
// after it was marked (interruptedUpgrade tells them apart). A marker is
// far shorter than the 4 KiB read.
func endsMarked(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Size() < 2 {
		return false
	}
	n := min(fi.Size(), 4096)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, fi.Size()-n); err != nil {
		return false
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	return isMarker(b[bytes.LastIndexByte(b, '\n')+1:])
}

// interruptedUpgrade reports whether the marked version-3 file f, at
// path, is one whose upgrade was interrupted before the new ledger took
// its place: its backup name links to it still. Once the upgrade is
// done, the file at the backup name is the kept copy, and an upgrade of
// it would make a second live ledger of the same spends (7 labels
// released on each of two, where 7 fitted).
func interruptedUpgrade(f *os.File, path string, version int) bool {
	bst, berr := os.Stat(backupName(path, version))
	fst, ferr := f.Stat()
	return berr == nil && ferr == nil && os.SameFile(bst, fst)
}

// bindUpgrade binds the header h of the ledger at path, being upgraded,
// to the ensemble that b states, in the ledger's own relation (Upgrade).
func bindUpgrade(path string, h *Header, b provenance.Binding) error {
	var rel accountant.Relation
	if err := rel.UnmarshalText([]byte(h.Relation)); err != nil {
		return fmt.Errorf("ledger upgrade: %w", err)
	}
	b.Relation = rel
	own, err := h.binding()
	if err != nil {
		return fmt.Errorf("ledger upgrade: %w", err)
	}
	if d := diffBindings(own, b); len(d) > 0 {
		return &bindingError{Path: path, Ledger: own, Diffs: d}
	}
	return nil
}

// version3Filter is the filter that holds the spends of a ledger
// upgraded from version 3 (Upgrade). Version 3 stated no rule and took a
// run when any of simple, general or optimal composition said it fitted;
// of these only simple composition is a filter for runs chosen one after
// the other, and a filter's halting rule is fixed before the first run:
// the upgrade keeps that one, never one that the spends, once seen, would
// make pay (a zCDP filter can allow more labels of the same spends).
const version3Filter = accountant.Simple

// backupName is the name under which Upgrade keeps the ledger at path, of
// the given version: path.v3.
func backupName(path string, version int) string { return path + ".v" + strconv.Itoa(version) }

// UpgradeResult is what Upgrade did.
type UpgradeResult struct {
	// Current says that the ledger was of the current version already:
	// Upgrade changed nothing in it.
	Current bool
	// Guarded, for a ledger in PostgreSQL, says whether its database has
	// darrm's guard against DDL (a change of its tables that no trigger
	// sees), which Upgrade makes (GuardMade) when the user is a superuser
	// and the database has none; TablesOwner is the role that owns
	// darrm's tables, which can change them without the guard.
	Guarded, GuardMade bool
	TablesOwner        string
	// SchemaFrom, for a ledger in PostgreSQL, is the version of darrm's
	// schema that Upgrade upgraded its database from, 0 when it was
	// current; SchemaTo is the version it upgraded it to, this darrm's.
	SchemaFrom, SchemaTo int
	// From is the old ledger's version; To the version of the ledger
	// Upgrade leaves in its place (version 4 for one of version 3, which
	// keeps its rule; From when it was Current).
	From, To int
	// Runs is the number of runs whose spends were carried over.
	Runs int
	// Backup is the old file, kept.
	Backup string
	// Filter is the composition that holds the upgraded ledger's runs to
	// its budget: the one the old ledger was under (simple composition
	// for version 3), kept; another filter is a new ledger's choice, made
	// before its first run (Init).
	Filter accountant.Method
	// Previous is the record of the ensemble that Replace replaced.
	Previous *Record
}

// Upgrade turns the ledger at location, of version 3, into one of the
// current version in its place: a new header (a new ID; Upgraded giving
// the old file's version, length and hash, its id and the hash of its
// last line; the old relation, binding, budget, δ' and creation time; the
// composition the old ledger was under, version3Filter), then the spend of every run of the old
// ledger (the last line of each), chained, each described by its
// guarantee and with the totals before it. b may only repeat the
// ledger's binding. The old file is kept as backupName(path, version),
// with a last line that darrm versions that read it refuse. The new
// ledger is recorded as its ensemble's. An ensemble recorded with another
// ledger is a *RecordError unless replace, which retires that ledger where
// it still is, as Create does; a ledger that its record
// refuses (behind it, another copy) is refused as a release would refuse
// it. Upgrading again after an interrupted upgrade completes it. A ledger
// of the current version is read and checked (a *CorruptError if it is
// damaged) and left as it is (Current): a PostgreSQL ledger always is.
func (opts Options) Upgrade(ctx context.Context, location string, b provenance.Binding, replace bool) (UpgradeResult, error) {
	var res UpgradeResult
	s, path, _, err := openStore(ctx, location, false, opts)
	if err != nil {
		return res, err
	}
	defer s.close()
	old := &Ledger{path: path, store: s, readOnly: true, memo: opts.Memo}
	first, err := s.first()
	if err != nil && err != io.EOF {
		return res, fmt.Errorf("ledger %s: read: %w", path, err)
	}
	old.headerLine = first
	if old.headerHash, err = old.parseHeader(first); err != nil {
		return res, err
	}
	res.From, res.To = old.version, old.version
	if old.format != chained3 {
		// Nothing to upgrade, if nothing is damaged: a damaged ledger is
		// said to be so, not to be current.
		if err := old.scan(ctx, nil); err != nil {
			return res, err
		}
		res.Current, res.Filter = true, old.header.Filter
		if p, ok := s.(*pgStore); ok {
			var g guardState
			g, err = p.guard(ctx)
			res.Guarded, res.GuardMade, res.TablesOwner, res.SchemaFrom = g.Guarded, g.Made, g.Owner, p.schemaFrom
			if p.schemaFrom > 0 {
				res.SchemaTo = schemaVersion
			}
		}
		return res, err
	}
	file, ok := s.(*fileStore)
	if !ok {
		return res, &versionError{Path: path, Version: old.version}
	}
	f := file.f

	nh := old.header
	nh.Version = version4
	if err := bindUpgrade(path, &nh, b); err != nil {
		return res, err
	}
	if err := checkHeader(nh); err != nil {
		return res, err
	}
	st, rec, err := openRecord(ctx, opts, replace, nh.Ensemble)
	if err != nil {
		return res, err
	}
	defer st.close()
	own := rec != nil && rec.LedgerID == old.header.ID
	if err := old.scan(ctx, rec); err != nil {
		return res, err
	}
	if old.keptCopy() {
		return res, &versionError{Path: path, Version: old.version, Kept: true}
	}
	var spends []Spend
	if err := old.Runs(ctx, func(s Spend) error { spends = append(spends, s); return nil }); err != nil {
		return res, err
	}
	nh.Filter = version3Filter
	switch {
	case own:
		if err := old.checkRecord(ctx, rec, st.path, true); err != nil {
			return res, err
		}
	case rec != nil && !replace:
		return res, &RecordError{kind: secondLedger, Path: path, Ensemble: nh.Ensemble, Record: *rec, File: st.path, Command: "upgrade"}
	case rec != nil:
		res.Previous = rec
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, io.NewSectionReader(f, 0, old.size)); err != nil {
		return res, fmt.Errorf("ledger %s: read: %w", path, err)
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return res, err
	}
	nh.ID = hex.EncodeToString(id[:])
	nh.Upgraded = &upgraded{Version: old.version, Lines: old.chain.n, SHA256: hex.EncodeToString(sum.Sum(nil)), ID: old.header.ID, Head: old.chain.head, Past: old.chain.n}

	// The new ledger, complete and synced, beside the old one; then the old
	// file kept under its backup name and made unusable for the darrm
	// versions that read it; then the new ledger in its place, the folder
	// synced.
	perm := fs.FileMode(0o600)
	if fi, err := f.Stat(); err == nil {
		perm = fi.Mode().Perm()
	}
	var size int64
	var hh, head string
	err = atomicfile.Replace(path, perm, func(tmp *os.File) (err error) {
		if size, hh, head, err = writeUpgraded(tmp, nh, io.NewSectionReader(f, 0, old.size), spends); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}, func() error {
		res.Backup = backupName(path, old.version)
		return retire(f, path, res.Backup, old)
	})
	if err != nil {
		return res, fmt.Errorf("ledger upgrade: %w", err)
	}
	lines := 1 + nh.Upgraded.Past + len(spends)
	var fi fs.FileInfo
	var team string
	if fi, err = os.Stat(path); err == nil {
		abs, _ := filepath.Abs(path)
		dev, ino := fileID(fi)
		err = st.write(ctx, newRecord(nh, hh, abs, dev, ino, lines, size, head))
		if team, _ = opts.teamCheckpoint(nh.Ensemble); err == nil && team != "" {
			// The upgraded ledger carries the old one's lines: it extends
			// a checkpoint of it, and, unless replace, takes only a
			// checkpoint of the ledger it upgrades that that ledger holds:
			// an upgrade of another copy of it, or of another ledger,
			// never takes the checkpoint (two copies upgraded apart would
			// deliver twice the budget).
			old.team = team
			err = old.leave(ctx, newRecord(nh, hh, abs, 0, 0, lines, size, head), replace)
		}
	}
	if err != nil {
		return res, fmt.Errorf("ledger upgrade: %s is upgraded, but %w; record it with: darrm ledger adopt %s", path, err, shellQuote(path))
	}
	res.Runs, res.Filter, res.To = len(spends), nh.Filter, nh.Version
	if res.Previous != nil {
		// The other ledger the record named is retired where it still
		// is, as Create with replace retires it; after the record's lock
		// is released, since a run on it takes its own lock and then the
		// record's.
		st.close()
		where, _ := filepath.Abs(path)
		e := ending{Reason: reasonRetired, At: time.Now().UTC().Truncate(time.Second), Successor: nh.ID, Where: where, By: opts.Analyst}
		if err := opts.retireRecorded(ctx, res.Previous, location, e, nh.Ensemble); err != nil {
			return res, fmt.Errorf("ledger upgrade: %s is upgraded and recorded, but the ledger your record named, %s (id %.8s), is not retired: %w", path, res.Previous.Path, res.Previous.LedgerID, err)
		}
	}
	return res, nil
}

// retire keeps the old ledger f, at path, as backup, and marks it so
// that the darrm versions that read it refuse it.
func retire(f *os.File, path, backup string, old *Ledger) error {
	if err := os.Link(path, backup); err != nil {
		bst, serr := os.Stat(backup)
		fst, ferr := f.Stat()
		if serr != nil || ferr != nil || !os.SameFile(bst, fst) {
			return fmt.Errorf("keep the version-%d file as %s: %w (move that file away first)", old.version, backup, err)
		}
	}
	if old.marked {
		return nil
	}
	var m marker
	m.Upgraded.To, m.Upgraded.Time = version4, time.Now().UTC().Truncate(time.Second)
	mb, _ := json.Marshal(m)
	err := f.Truncate(old.size)
	if err == nil {
		if _, err = f.WriteAt(append(mb, '\n'), old.size); err == nil {
			err = f.Sync()
		}
		if err != nil {
			f.Truncate(old.size)
		}
	}
	if err != nil {
		return fmt.Errorf("mark %s as upgraded: %w", path, err)
	}
	return nil
}

// writeUpgraded writes to w the ledger of header h, the lines of the old
// ledger that past reads (h.Upgraded.Past of them), each in a past line,
// and the spends, each line with the totals of the spends before it, and
// returns its size and the hashes of its header and of its last line.
func writeUpgraded(w io.Writer, h Header, past io.Reader, spends []Spend) (size int64, hh, head string, err error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	line, head, err := encodeLine(h.Version, "", h)
	if err != nil {
		return 0, "", "", err
	}
	hh = head
	bw.Write(line)
	size = int64(len(line))
	r := newLineReader(past)
	for range h.Upgraded.Past {
		b, err := r.next()
		if err != nil {
			return 0, "", "", fmt.Errorf("read the old ledger again: %w", err)
		}
		line, head = encodePast(h.Version, head, b)
		bw.Write(line)
		size += int64(len(line))
	}
	var prior accountant.Sequence
	for _, s := range spends {
		p := prior
		s.Prior = &p
		if line, head, err = encodeLine(h.Version, head, s); err != nil {
			return 0, "", "", err
		}
		bw.Write(line)
		size += int64(len(line))
		if prior, err = prior.AddSpend(s.step(), s.Queries); err != nil {
			return 0, "", "", err
		}
	}
	return size, hh, head, bw.Flush()
}

// readAlone reports whether the ledger, read, is one that no release
// charges again whatever your record says, the copy an upgrade kept
// (keptCopy) or a ledger retired: not the ensemble's ledger, nor a
// second one.
func (l *Ledger) readAlone() bool {
	return l.keptCopy() || l.chain.closedBy != nil && l.chain.closedBy.Reason == reasonRetired
}

// keptCopy reports whether the ledger is the version-3 copy that
// Upgrade kept, marked, after the upgrade ended (not one interrupted,
// still in the ledger's place).
func (l *Ledger) keptCopy() bool {
	fs, ok := l.store.(*fileStore)
	return ok && l.format == chained3 && l.marked && !interruptedUpgrade(fs.f, fs.path, l.version)
}

// noteVersion notes, for a version-3 ledger read only, that a run
// refuses it until it is upgraded, or that Upgrade has marked it.
func (l *Ledger) noteVersion() {
	switch {
	case l.format != chained3:
	case l.marked:
		if fs, ok := l.store.(*fileStore); ok && interruptedUpgrade(fs.f, fs.path, l.version) {
			l.notes = append(l.notes, fmt.Sprintf("marked as upgraded to version %d, and still in the ledger's place: an upgrade that was interrupted; run darrm ledger upgrade %s again to complete it", version4, shellQuote(l.path)))
			break
		}
		l.notes = append(l.notes, (&versionError{Path: l.path, Version: l.version, Kept: true}).Error())
	default:
		l.notes = append(l.notes, (&versionError{Path: l.path, Version: l.version}).Error())
	}
}
