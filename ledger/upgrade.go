package ledger

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
)

// marker is the line Upgrade appends to a version-1 ledger before it puts
// the version-2 ledger in its place: a darrm that reads version 1 refuses
// the file from then on (it is no spend), so that a run of an older darrm
// that was waiting for the old file's lock cannot spend from it unseen.
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

// bindUpgrade binds the header h of the ledger at path, being upgraded,
// to the ensemble that b states, in the ledger's own relation (Upgrade).
func bindUpgrade(path string, h *Header, b ensemble.Binding) error {
	var rel ensemble.Relation
	if err := rel.UnmarshalText([]byte(h.Relation)); err != nil {
		return fmt.Errorf("ledger upgrade: %w", err)
	}
	b.Relation = rel
	if h.Teachers != nil {
		own, err := h.Binding()
		if err != nil {
			return fmt.Errorf("ledger upgrade: %w", err)
		}
		if d := own.Diff(b); len(d) > 0 {
			return &BindingError{Path: path, Ledger: own, Diffs: d}
		}
		return nil
	}
	if b.Ensemble == "" {
		b.Ensemble = h.Ensemble
	}
	if b.K == 0 || b.Teachers == (accountant.Guarantee{}) || b.Kind == ensemble.KindUnstated || b.Partition == ensemble.PartitionUnstated {
		return &BindError{errors.New("upgrade: a version-1 ledger binds no ensemble parameters: state K, the teachers' eps and Delta, kind and partition (the ensemble's id is the old name unless stated, the relation the old one)")}
	}
	h.Bind(b)
	return nil
}

// BackupSuffix is added to a version-1 ledger's name for the copy of it
// that Upgrade keeps.
const BackupSuffix = ".v1"

// Upgraded returns what Upgrade did.
type UpgradeResult struct {
	// Runs is the number of runs whose spends were carried over.
	Runs int
	// Backup is the version-1 file, kept.
	Backup string
	// Previous is the record of the ensemble that Replace replaced.
	Previous *Record
}

// Upgrade turns the ledger at path that has no hash chain (version 1, or
// the version 2 of development builds) into a version-2 ledger in its
// place: a new header (a new ID; Upgraded naming the old file; the old
// relation, budget, δ' and creation time; bound to the ensemble b
// states), then the spend of every run of the old ledger (the last record
// of each, as the old ledger counted them), chained. A version-1 ledger
// binds no parameters, so b must state them all but the ensemble's id
// (the old name when b has none) and the relation (the old one); a
// version-2 ledger keeps its own, which b may only repeat. The old file
// is kept as path+BackupSuffix, with a last line that darrm versions
// without the chain refuse. The new ledger is recorded as its ensemble's;
// an ensemble recorded with another ledger is a *RecordError unless
// opts.Replace. Upgrading again after an interrupted upgrade completes
// it.
func Upgrade(ctx context.Context, path string, b ensemble.Binding, opts InitOptions) (UpgradeResult, error) {
	var res UpgradeResult
	f, err := openFile(path, os.O_RDWR)
	if err != nil {
		return res, err
	}
	defer f.Close()
	if err := lock(ctx, f, true, opts.waiting("ledger "+path)); err != nil {
		return res, err
	}
	old := &Ledger{path: path, f: f, readOnly: true}
	first, err := firstLine(f)
	if err != nil && err != io.EOF && err != errLongLine {
		return res, fmt.Errorf("ledger %s: read: %w", path, err)
	}
	if err := old.parseHeader(first); err != nil {
		var ve *VersionError
		if !errors.As(err, &ve) {
			return res, err
		}
	}
	if old.chained {
		return res, fmt.Errorf("ledger %s is of version %d with a hash chain already: there is nothing to upgrade", path, old.version)
	}
	if err := old.scan(nil); err != nil {
		return res, err
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, io.NewSectionReader(f, 0, old.size)); err != nil {
		return res, fmt.Errorf("ledger %s: read: %w", path, err)
	}

	nh := old.header
	nh.Version = Version
	if err := bindUpgrade(path, &nh, b); err != nil {
		return res, err
	}
	if err := checkHeader(nh); err != nil {
		return res, err
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return res, err
	}
	nh.ID = hex.EncodeToString(id[:])
	nh.Upgraded = &Upgraded{Version: old.version, Lines: old.lines, SHA256: hex.EncodeToString(sum.Sum(nil))}

	st, err := openState(ctx, opts.Options, nh.Ensemble)
	if err != nil {
		return res, err
	}
	defer st.close()
	if err := st.lock(); err != nil {
		return res, err
	}
	rec, err := st.read()
	var bad *badRecordError
	if err != nil && !(opts.Replace && errors.As(err, &bad)) {
		return res, err
	}
	if rec != nil && !opts.Replace {
		return res, &RecordError{Kind: SecondLedger, Path: path, Ensemble: nh.Ensemble, Record: *rec, File: st.path, Command: "upgrade"}
	}
	res.Previous = rec

	// The new ledger, complete and synced, beside the old one.
	buf, head, err := encodeLine("", nh)
	if err != nil {
		return res, err
	}
	for _, s := range old.spends {
		var line []byte
		if line, head, err = encodeLine(head, s); err != nil {
			return res, err
		}
		buf = append(buf, line...)
	}
	lines := 1 + len(old.spends)
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".v2-*")
	if err != nil {
		return res, fmt.Errorf("ledger upgrade: %w", err)
	}
	defer os.Remove(tmp.Name()) // nothing left once renamed
	_, err = tmp.Write(buf)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("ledger upgrade: write %s: %w", tmp.Name(), err)
	}
	if fi, err := f.Stat(); err == nil {
		os.Chmod(tmp.Name(), fi.Mode().Perm())
	}

	// Keep the old file under its backup name, then make it unusable for
	// version-1 readers, then put the new ledger in its place.
	res.Backup = path + BackupSuffix
	if err := os.Link(path, res.Backup); err != nil {
		bst, serr := os.Stat(res.Backup)
		fst, ferr := f.Stat()
		if serr != nil || ferr != nil || !os.SameFile(bst, fst) {
			return res, fmt.Errorf("ledger upgrade: keep the version-1 file as %s: %w (move that file away first)", res.Backup, err)
		}
	}
	if !old.marked {
		var m marker
		m.Upgraded.To, m.Upgraded.Time = Version, time.Now().UTC().Truncate(time.Second)
		mb, _ := json.Marshal(m)
		if err := f.Truncate(old.size); err == nil {
			_, err = f.WriteAt(append(mb, '\n'), old.size)
			if err == nil {
				err = f.Sync()
			}
			if err != nil {
				f.Truncate(old.size)
				return res, fmt.Errorf("ledger upgrade: mark %s as upgraded: %w", path, err)
			}
		} else {
			return res, fmt.Errorf("ledger upgrade: mark %s as upgraded: %w", path, err)
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return res, fmt.Errorf("ledger upgrade: %w", err)
	}
	if err := syncDir(path); err != nil {
		return res, fmt.Errorf("ledger upgrade: %w", err)
	}
	var fi fs.FileInfo
	if fi, err = os.Stat(path); err == nil {
		err = st.write(newRecord(nh, path, fi, lines, head))
	}
	if err != nil {
		return res, fmt.Errorf("ledger upgrade: %s is upgraded, but %w; record it with: darrm ledger adopt %s", path, err, shellQuote(path))
	}
	res.Runs = len(old.spends)
	return res, nil
}
