package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/votefile"
)

// reserveKilled runs a release of n labels on the ledger at location
// with bk that is killed after its labels left: it reserves them, writes
// them to a label file, whose path it returns, and never settles.
func reserveKilled(t *testing.T, bk Options, location string, n int) string {
	t.Helper()
	l, err := bk.forRun(ctx, location)
	if err != nil {
		t.Fatal(err)
	}
	defer l.store.close()
	if err := l.begin(ctx, "darrm", binding(t, l), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	if err := l.Reserve(ctx, n); err != nil {
		t.Fatal(err)
	}
	m := votefile.LabelMeta{Mechanism: "darrm", K: bound.K, Classes: 2, Relation: "private-teachers", Eps: step.Eps, Delta: step.Delta,
		Ensemble: l.Header().Ensemble, ForRelease: true, Ledger: l.Header().ID, LedgerLines: l.Lines(), LedgerSize: l.Size(), LedgerHead: l.Head()}
	path := filepath.Join(t.TempDir(), "labels.csv")
	if err := os.WriteFile(path, []byte(m.HeaderLine()+"\nid,label\n"+strings.Repeat("1,0\n", n)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLabelFileWitnessesSettlement: a run killed after 88 labels left,
// whose count anyone who can write the ledger file lowers to 0 with a
// settlement of its own hash, passes every check of the chain, the
// record of the run's analyst and a later checkpoint; the run's label
// file, given as a witness, refuses it, for a run and a reader, whoever
// runs them. A label file of a run that counts its labels passes.
func TestLabelFileWitnessesSettlement(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	honest := releaseLabels(t, book, path, 3)
	labels := reserveKilled(t, book, path, 88)
	if w, err := ReadWitness(labels); err != nil || w.Labels != 88 {
		t.Fatalf("the label file as a witness: %+v, %v; want its 88 labels", w, err)
	}
	l := mustRead(t, path)
	last := l.chain.last
	l.Close() // a reader holds a file ledger's lock, shared
	last.Queries, last.Final = 0, true
	appendSpend(t, path, last)
	if err := openErr(path, book); err != nil {
		t.Errorf("the lowered ledger, for the analyst whose record it extends: %v (a file ledger cannot tell who wrote a line)", err)
	}
	later := checkpointOf(t, Options{StateDir: t.TempDir()}, path)
	if spent, _, _ := readAll(t, path); spent.Steps != 3 {
		t.Fatalf("the lowered ledger counts %d labels, want the 3 of the honest run", spent.Steps)
	}
	wantWitnessError(t, "the killed run's label file", witnessErr(t, witnessed(t, labels, later), path), lowered, labels, "counts 0 labels of run")
	if err := witnessErr(t, witnessed(t, honest, later), path); err != nil {
		t.Errorf("the honest run's label file: %v", err)
	}
}

// TestLabelFileWitnessesUnits: a label file of a run charged per draw,
// whose lines count units of its draws' charge, witnesses the fewest
// units its labels cost (Witness.Units, which the caller sets), not its
// labels: a run counted below them is refused, naming both; one counted
// at them passes.
func TestLabelFileWitnessesUnits(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	labels := reserveKilled(t, book, path, 88)
	for _, c := range []struct {
		units int
		says  string
	}{
		{88, ""},
		{89, "counts 88 units of run"},
	} {
		bk := witnessed(t, labels)
		bk.Witnesses[0].Units = c.units
		err := witnessErr(t, bk, path)
		switch {
		case c.says == "" && err != nil:
			t.Errorf("a run counted at the %d units its labels cost: %v", c.units, err)
		case c.says != "":
			wantWitnessError(t, fmt.Sprintf("a run counted below the %d units its labels cost", c.units), err, lowered, labels, c.says)
			if err != nil && !strings.Contains(err.Error(), "but the 88 labels of that label file cost at least 89 units") {
				t.Errorf("%v: want it to say what the labels cost", err)
			}
		}
	}
}
