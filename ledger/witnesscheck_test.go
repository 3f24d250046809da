package ledger

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// TestWitnessFiles: a FIFO given as a witness is refused at once, not
// waited on; a checkpoint whose ensemble or path holds an escape
// sequence or a NUL is refused, printed escaped; a checkpoint whose line
// number is off by one, its bytes and hash those of a line the ledger
// holds, is refused, before or after the line a release resumes from.
func TestWitnessFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadWitness(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO as a witness: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a FIFO as a witness: still waiting after 5 s")
	}

	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	for range 4 {
		spend(t, path, 1)
	}
	cp := checkpointOf(t, book, path)
	b, err := os.ReadFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"ensemble", "path"} {
		var c map[string]any
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		c[field] = "x\x1b[31m\x00"
		bad := filepath.Join(dir, field+".checkpoint")
		out, _ := json.Marshal(c)
		if err := os.WriteFile(bad, out, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadWitness(bad)
		if err == nil || !strings.Contains(err.Error(), field+` = "x\x1b[31m\x00": control characters are not allowed`) || strings.ContainsAny(err.Error(), "\x1b\x00") {
			t.Errorf("a checkpoint whose %s holds ESC and NUL: %v", field, err)
		}
	}

	// A checkpoint of line 3 said to be of line 2 or 4, its bytes and
	// hash line 3's, for a reader (which knows every line's number) and a
	// run that resumes from its record, before or after the line it
	// vouches for.
	l := mustRead(t, path)
	var lines []pos
	var heads []string
	if _, err := l.again(ctx, func(c *chain, _ Spend, _ []byte) error {
		lines, heads = append(lines, pos{n: c.n, off: c.end}), append(heads, c.head)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	l.Close() // a reader holds a file ledger's lock, shared
	for _, at := range []int{3, 7} {
		for _, off := range []int{-1, 1} {
			w := Witness{File: "off-by-one", Record: Record{Ensemble: l.Header().Ensemble, LedgerID: l.ID(), Lines: at + off, Size: lines[at-1].off, Head: heads[at-1]}}
			for name, bk := range map[string]Options{"a reader": {StateDir: t.TempDir(), ReadOnly: true}, "a run": book} {
				bk.Witnesses = []Witness{w}
				l, err := Open(ctx, path, bk)
				if err == nil {
					l.Close()
				}
				var re *RecordError
				if !errors.As(err, &re) || re.kind != diverged {
					t.Errorf("%s, a checkpoint of line %d said to be of line %d: %v", name, at, at+off, err)
				}
			}
		}
	}
}
