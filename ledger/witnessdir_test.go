package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// TestWitnessDir: with a team's witness folder, every release leaves the
// ledger's state there and every run and reader checks it, so that a
// backup restored after a release is refused for an analyst who has
// never used the ledger (no record, no witness given), as it is not
// without the folder; a second ledger of the ensemble is refused at init
// unless it replaces the first; a relative folder is refused.
func TestWitnessDir(t *testing.T) {
	team := t.TempDir()
	as := func() Options { return Options{StateDir: t.TempDir(), WitnessDir: team} }
	alice, bob := as(), as()
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	path := filepath.Join(t.TempDir(), "team.ledger")
	h := NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget))
	if _, err := alice.create(ctx, path, h, false); err != nil {
		t.Fatal(err)
	}
	cp, err := alice.teamCheckpoint(h.Ensemble)
	if err != nil {
		t.Fatal(err)
	}
	state := func() Record {
		t.Helper()
		w, err := ReadWitness(cp)
		if err != nil {
			t.Fatal(err)
		}
		return w.Record
	}
	if r := state(); r.Lines != 1 {
		t.Errorf("after init, the team's checkpoint: %+v", r)
	}
	spendOn(t, alice, path, 3, 3)
	backup := filepath.Join(t.TempDir(), "backup.ledger")
	copyFile(t, path, backup)
	spendOn(t, bob, path, 4, 4)
	if r := state(); r.Lines != 5 {
		t.Errorf("after two releases, the team's checkpoint: %+v, want 5 lines", r)
	}
	copyFile(t, backup, path)
	if err := openErr(path, Options{StateDir: t.TempDir()}); err != nil {
		t.Errorf("the backup restored, for an analyst without the folder: %v (nothing catches it)", err)
	}
	wantWitnessError(t, "the backup restored, for a fresh analyst with the folder", witnessErr(t, as(), path), behind, cp, "lines were removed, or an older copy")

	// A second ledger of the ensemble, by an analyst without a record.
	second := filepath.Join(t.TempDir(), "second.ledger")
	var re *RecordError
	if _, err := as().create(ctx, second, h, false); !errors.As(err, &re) || re.kind != secondLedger || !strings.Contains(err.Error(), "the team's checkpoint") {
		t.Errorf("a second ledger of the ensemble: %v", err)
	}
	if _, err := os.Stat(second); err == nil {
		t.Error("the second ledger was made")
	}
	rel := as()
	rel.WitnessDir = "relative/folder"
	if err := openErr(path, rel); err == nil || !strings.Contains(err.Error(), "WitnessDir") {
		t.Errorf("a relative witness folder: %v", err)
	}
}

// TestWitnessDirAdopt: ledger adopt of a ledger that the team's checkpoint
// refuses (a copy put back on purpose) records it and moves the team's
// checkpoint to it, as it does the record: the releases after it go on.
func TestWitnessDirAdopt(t *testing.T) {
	team := t.TempDir()
	bk := Options{StateDir: t.TempDir(), WitnessDir: team}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	path := filepath.Join(t.TempDir(), "team.ledger")
	if _, err := bk.create(ctx, path, NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup.ledger")
	copyFile(t, path, backup)
	spendOn(t, bk, path, 2, 2)
	copyFile(t, backup, path)
	if err := openErr(path, bk); err == nil {
		t.Fatal("the copy put back: accepted")
	}
	_, l, err := bk.Adopt(ctx, path)
	if err != nil {
		t.Fatalf("adopt: %v", err)
	}
	// Adopt says which checkpoint it replaced, as it says which record.
	want := fmt.Sprintf("witnessed ledger %s with 3 lines", short(l.Header().ID))
	if notes := strings.Join(l.Notes(), "\n"); !strings.Contains(notes, "the team's checkpoint") || !strings.Contains(notes, want) || !strings.Contains(notes, "it now witnesses this ledger, with 1 line,") {
		t.Errorf("adopt's notes: %q, want the checkpoint it replaced (%q)", notes, want)
	}
	l.Close()
	spendOn(t, Options{StateDir: t.TempDir(), WitnessDir: team}, path, 1, 1)
	if _, l, err = bk.Adopt(ctx, path); err != nil {
		t.Fatalf("adopt again: %v", err)
	}
	defer l.Close()
	if notes := strings.Join(l.Notes(), "\n"); strings.Contains(notes, "checkpoint") {
		t.Errorf("adopt of the ledger the checkpoint already witnesses: %q, want no note of it", notes)
	}
}

// TestWitnessDirFork: while alice's release runs (its labels reserved,
// not yet settled), whoever can write the file puts an earlier copy in
// the ledger's place (or a second copy is used): bob's release on the
// copy is refused, behind the team's checkpoint that alice's reservation
// left before her labels left (the fifth audit of issue 87 delivered 320
// labels where 160 were allowed, the checkpoint then moved onto the
// copy); and a copy that went its own way never takes the checkpoint
// from the ledger it forked from.
func TestWitnessDirFork(t *testing.T) {
	team := t.TempDir()
	as := func() Options { return Options{StateDir: t.TempDir(), WitnessDir: team} }
	alice, bob := as(), as()
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	path := filepath.Join(t.TempDir(), "team.ledger")
	h := NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget))
	if _, err := alice.create(ctx, path, h, false); err != nil {
		t.Fatal(err)
	}
	cp, err := alice.teamCheckpoint(h.Ensemble)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(t.TempDir(), "copy.ledger")
	copyFile(t, path, copied)

	l, err := alice.forRun(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.begin(ctx, "darrm", binding(t, l), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	if err := l.Reserve(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if w, err := ReadWitness(cp); err != nil || w.Record.Lines != 2 {
		t.Fatalf("after alice's reservation, the team's checkpoint: %+v, %v; want her line 2", w, err)
	}
	// The copy, from before alice's run, in the ledger's place.
	if err := os.Rename(copied, path); err != nil {
		t.Fatal(err)
	}
	wantWitnessError(t, "bob's release on the copy put in the ledger's place during alice's run", openErr(path, bob), behind, cp, "lines were removed, or an older copy")

	// A copy that went its own way (bob's run on it without the folder)
	// cannot take the checkpoint: alice's settlement, on the file she
	// holds, extends it.
	spendOn(t, Options{StateDir: t.TempDir()}, path, 4, 4)
	forked := Options{StateDir: t.TempDir(), WitnessDir: team}
	fl, err := forked.forRun(ctx, path)
	if err == nil {
		fl.Close()
		t.Errorf("a run on the fork with the folder: opened")
	}
	if err := l.Settle(ctx, 3); err != nil {
		t.Fatalf("alice's settlement on the ledger she holds: %v", err)
	}
	if w, err := ReadWitness(cp); err != nil || w.Record.Lines != 3 || w.Record.Head != l.Head() {
		t.Errorf("after alice settled, the team's checkpoint: %+v, %v; want her line 3", w, err)
	}
	// The fork, three lines long too, does not hold alice's line 3: it
	// never replaces her checkpoint.
	fork := mustRead(t, path)
	defer fork.Close()
	fork.team = cp
	if err := fork.leaveCheckpoint(ctx, false); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Errorf("the fork leaves its checkpoint over alice's: %v", err)
	}
}

// TestWitnessDirRace: two runs on two copies of a ledger, each checking
// the team's checkpoint before the other writes it, would both pass and
// both deliver their labels (the sixth audit of issue 87: 320 where 160
// were allowed); a run reads, checks and writes the checkpoint holding
// the folder, so that a run whose copy's state another wrote meanwhile
// sees it and is refused before its labels leave. Here the test holds
// the folder while the other copy's state is written, as a run's leave
// does, and alice's reservation waits for it.
func TestWitnessDirRace(t *testing.T) {
	team := t.TempDir()
	alice := Options{StateDir: t.TempDir(), WitnessDir: team}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	path := filepath.Join(t.TempDir(), "team.ledger")
	h := NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget))
	if _, err := alice.create(ctx, path, h, false); err != nil {
		t.Fatal(err)
	}
	cp, err := alice.teamCheckpoint(h.Ensemble)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "copy.ledger")
	copyFile(t, path, other)
	spendOn(t, Options{StateDir: t.TempDir()}, other, 4, 4) // bob's run on the copy
	bobState := checkpointOf(t, Options{StateDir: t.TempDir()}, other)

	l, err := alice.forRun(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.begin(ctx, "darrm", binding(t, l), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockFolder(ctx, cp)
	if err != nil {
		t.Fatal(err)
	}
	reserved := make(chan error, 1)
	go func() { reserved <- l.Reserve(ctx, 3) }()
	time.Sleep(200 * time.Millisecond) // alice's reservation is at the folder's lock
	copyFile(t, bobState, cp)
	unlock()
	if err := <-reserved; err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Errorf("alice's reservation after bob's copy wrote the checkpoint: %v", err)
	}
	if w, err := ReadWitness(cp); err != nil || w.Record.Lines != 3 {
		t.Errorf("the team's checkpoint after: %+v, %v; want bob's, which alice's reservation did not replace", w, err)
	}
}

// TestWitnessDirUpgradeCopies: two copies of a ledger of version 3,
// upgraded apart with the team's folder set: the first upgrade takes
// the checkpoint, the second (another analyst, no record, no --replace)
// does not, and its ledger is refused by the folder (the seventh audit
// of issue 87 delivered 18 labels where 9 were allowed, the second
// upgrade having taken the checkpoint); an upgrade of a ledger without
// runs leaves a checkpoint at a line it carries, which its releases
// extend.
func TestWitnessDirUpgradeCopies(t *testing.T) {
	team := t.TempDir()
	as := func() Options { return Options{StateDir: t.TempDir(), WitnessDir: team} }
	dir := t.TempDir()
	path, copied := filepath.Join(dir, "team.ledger"), filepath.Join(dir, "copy.ledger")
	h := writeV3(t, path, unique(bound), v3Runs())
	copyFile(t, path, copied)
	alice, bob := as(), as()
	if _, err := alice.Upgrade(ctx, path, provenance.Binding{}, false); err != nil {
		t.Fatalf("alice's upgrade: %v", err)
	}
	cp, err := alice.teamCheckpoint(h.Ensemble)
	if err != nil {
		t.Fatal(err)
	}
	w, err := ReadWitness(cp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Upgrade(ctx, copied, provenance.Binding{}, false); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Errorf("bob's upgrade of his copy: %v", err)
	}
	if after, err := ReadWitness(cp); err != nil || after.Record != w.Record {
		t.Errorf("the team's checkpoint after bob's upgrade: %+v, %v; want alice's %+v", after.Record, err, w.Record)
	}
	if err := openErr(copied, as()); err == nil {
		t.Error("a release on bob's upgraded copy, with the folder: opened")
	}
	spendOn(t, alice, path, 2, 2)

	// A ledger of version 3 without runs: its upgrade's checkpoint is at
	// a line it carries.
	empty := filepath.Join(t.TempDir(), "empty.ledger")
	eh := writeV3(t, empty, unique(bound), nil)
	carol := Options{StateDir: t.TempDir(), WitnessDir: t.TempDir()}
	if _, err := carol.Upgrade(ctx, empty, provenance.Binding{}, false); err != nil {
		t.Fatalf("the upgrade of a ledger without runs: %v", err)
	}
	if ecp, err := carol.teamCheckpoint(eh.Ensemble); err != nil {
		t.Fatal(err)
	} else if ew, err := ReadWitness(ecp); err != nil || ew.Record.Lines != 2 {
		t.Fatalf("its checkpoint: %+v, %v; want its line 2, the old header carried", ew.Record, err)
	}
	spendOn(t, carol, empty, 1, 1)
}
