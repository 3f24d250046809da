package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/pgtest"
	"github.com/darrm/darrm/votefile"
)

// reserved begins a run of darrm labels on the ledger at location with
// bk and reserves n of them (labels, or units of a run charged per
// draw); it returns the run, which the caller closes (l.store.close: no
// settlement), and the metadata of its label file.
func reserved(t *testing.T, bk Options, location string, n int) (*Ledger, votefile.LabelMeta) {
	t.Helper()
	l, err := bk.forRun(ctx, location)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.begin(ctx, "darrm", binding(t, l), accountant.ApproxStep(step)); err != nil {
		l.store.close()
		t.Fatal(err)
	}
	if err := l.Reserve(ctx, n); err != nil {
		l.store.close()
		t.Fatal(err)
	}
	return l, votefile.LabelMeta{Mechanism: "darrm", K: bound.K, Classes: 2, Relation: "private-teachers", Eps: step.Eps, Delta: step.Delta,
		Ensemble: l.Header().Ensemble, ForRelease: true, Ledger: l.Header().ID, LedgerLines: l.Lines(), LedgerSize: l.Size(), LedgerHead: l.Head()}
}

// reserveKilled runs a release of n labels on the ledger at location
// with bk that is killed after its labels left: it reserves them, writes
// them to a label file, whose path it returns, and never settles.
func reserveKilled(t *testing.T, bk Options, location string, n int) string {
	t.Helper()
	l, m := reserved(t, bk, location, n)
	defer l.store.close()
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

// reserveKilledUnits is reserveKilled for a run charged per draw: it
// reserves units and writes a label file whose rows state units (the
// units column, in format); it settles settle units, or never if settle
// < 0 (the run killed).
func reserveKilledUnits(t *testing.T, bk Options, location string, reserve int, units []int, format votefile.Format, settle int) string {
	t.Helper()
	l, m := reserved(t, bk, location, reserve)
	defer l.store.close()
	m.LedgerUnits = true
	var b strings.Builder
	lw, err := votefile.NewLabelWriter(&b, format, true, m.HeaderLine())
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	lw.Units = func() (int, error) { return units[i], nil }
	for i = range units {
		if err := lw.WriteLabel(&votefile.Query{Index: i + 1}, 1, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "labels."+format.String())
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if settle >= 0 {
		if err := l.Settle(ctx, settle); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestLabelFileWitnessesUnits: a label file of a run charged per draw,
// whose lines count units of its draws' charge, witnesses its last row's
// units (ReadWitness sets Witness.Units, for every caller), not its
// labels: the run killed after its reservation and settled by hand at
// those units passes; at one unit less it is refused, naming both. The
// file cut after a row (a stream the run was killed writing) witnesses
// that row's units, exactly. A label file without the units column (an
// earlier darrm's, or charged per query) witnesses its labels.
func TestLabelFileWitnessesUnits(t *testing.T) {
	units := []int{40, 95, 95, 180, 230, 310}
	for _, format := range []votefile.Format{votefile.FormatCSV, votefile.FormatJSONL} {
		for _, rows := range []int{len(units), 3, 1} {
			path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 200, Delta: 0.1}})
			full := reserveKilledUnits(t, book, path, 500, units, format, -1)
			// The stream cut after rows rows: their lines alone.
			b, err := os.ReadFile(full)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(b), "\n")
			keep := 1 + rows // the header
			if format == votefile.FormatCSV {
				keep++ // the row of names
			}
			labels := full + ".cut"
			if err := os.WriteFile(labels, []byte(strings.Join(lines[:keep], "")), 0o644); err != nil {
				t.Fatal(err)
			}
			want := units[rows-1]
			if w, err := ReadWitness(labels); err != nil || w.Labels != rows || w.Units != want {
				t.Fatalf("%v, %d rows: witness %+v, %v; want %d labels and the last row's %d units", format, rows, w, err, rows, want)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			l := mustRead(t, path)
			last := l.chain.last
			l.Close()
			for _, settled := range []int{want, want - 1, rows} {
				if err := os.WriteFile(path, raw, 0o644); err != nil {
					t.Fatal(err)
				}
				last.Queries, last.Final = settled, true
				appendSpend(t, path, last)
				err := witnessErr(t, witnessed(t, labels), path)
				name := fmt.Sprintf("%v, %d rows (units %d), settled at %d", format, rows, want, settled)
				switch {
				case settled >= want && err != nil:
					t.Errorf("%s: %v", name, err)
				case settled < want:
					wantWitnessError(t, name, err, lowered, labels, fmt.Sprintf("counts %d units of run", settled))
					if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("but the %d labels of that label file cost at least %d units", rows, want)) {
						t.Errorf("%s: %v: want it to say what the labels cost", name, err)
					}
				}
			}
		}
	}
	// Without the column, the labels are what the file witnesses.
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	labels := reserveKilled(t, book, path, 88)
	if w, err := ReadWitness(labels); err != nil || w.Labels != 88 || w.Units != 0 {
		t.Errorf("a label file without units: %+v, %v", w, err)
	}
}

// TestLabelFileCutMidRow: a stream that stops while a flush is being
// written (the run killed blocked on a pipe, its reader gone, its disk
// or quota full) ends in a row cut part-way. Such a label file witnesses
// the rows before the cut: their labels, and the units of the last of
// them (the tenth audit of issue 87 found it refused as unreadable, so
// that it told a settlement lowered to 0 from the honest ledger in
// neither case). A cut anywhere in the last row, in either format, and a
// label file charged per query cut in its last row, witness the rows
// before it; a file whose rows cannot be read before its last line end
// is still refused.
func TestLabelFileCutMidRow(t *testing.T) {
	units := []int{40, 95, 95, 180, 230, 310}
	for _, format := range []votefile.Format{votefile.FormatCSV, votefile.FormatJSONL} {
		path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 200, Delta: 0.1}})
		full := reserveKilledUnits(t, book, path, 500, units, format, -1)
		b, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		l := mustRead(t, path)
		last := l.chain.last
		l.Close()
		last.Queries, last.Final = 0, true
		appendSpend(t, path, last)
		lastRow := strings.LastIndexByte(string(b[:len(b)-1]), '\n') + 1
		for cut := lastRow + 1; cut < len(b); cut++ {
			name := fmt.Sprintf("%v cut %d bytes into its last row %q", format, cut-lastRow, b[lastRow:])
			labels := filepath.Join(t.TempDir(), "cut."+format.String())
			if err := os.WriteFile(labels, b[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := ReadWitness(labels)
			// A cut that leaves a row darrm reads (units of fewer digits,
			// no lower than the row before) witnesses it as it reads.
			if err != nil || w.Labels < len(units)-1 || w.Units < units[len(units)-2] || w.Units > units[len(units)-1] {
				t.Errorf("%s: witness %+v, %v; want at least the %d rows before it and their last units, %d", name, w, err, len(units)-1, units[len(units)-2])
				continue
			}
			wantWitnessError(t, name+", the run settled at 0 by hand", witnessErr(t, witnessed(t, labels), path), lowered, labels, "counts 0 units of run")
		}
	}
	// Charged per query: the labels before the cut row.
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	labels := reserveKilled(t, book, path, 88)
	b, err := os.ReadFile(labels)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(labels, b[:len(b)-2], 0o644); err != nil {
		t.Fatal(err)
	}
	if w, err := ReadWitness(labels); err != nil || w.Labels != 87 || w.Units != 0 {
		t.Errorf("a label file charged per query, its last row cut: %+v, %v; want the 87 labels before it", w, err)
	}
	// A row that cannot be read before the last line end is no cut.
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(b), "1,0\n1,0\n", "1,0\n1,x\n", 1)+"1,"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadWitness(bad); err == nil || !strings.Contains(err.Error(), "cannot all be read") {
		t.Errorf("a label file with a bad row and a cut last row: %v; want it refused as one whose labels cannot all be read", err)
	}
}

// TestPGLabelFileWitnessesUnits: on PostgreSQL, the same witness of
// units: a run charged per draw whose analyst settled it (theirs to
// settle) at its label file's last row's units passes; one settled a unit
// below is refused by that label file.
func TestPGLabelFileWitnessesUnits(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL: without -short")
	}
	db := pgtest.DB(t)
	units := []int{40, 95, 180}
	for _, settle := range []int{180, 179} {
		u := pgURL(db, fmt.Sprintf("units%d", settle))
		budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 200, Delta: 0.1}}
		if _, err := book.create(ctx, u, NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); err != nil {
			t.Fatal(err)
		}
		labels := reserveKilledUnits(t, book, u, 300, units, votefile.FormatCSV, settle)
		err := witnessErr(t, witnessed(t, labels), u)
		if settle == 180 {
			if err != nil {
				t.Errorf("settled at the last row's units: %v", err)
			}
			continue
		}
		wantWitnessError(t, "settled a unit below the last row's units", err, lowered, labels, "counts 179 units of run")
	}
}

// TestWitnessedLineChangedInPlace: whoever can write a ledger file
// settles a run killed after 88 labels left at 0, and carol releases
// after it, so that her record vouches for a line after that settlement.
// Her next release, given the run's label file as a witness, refuses the
// ledger: it counts 0 of the file's 88. The settlement is then changed in
// place to 88, at the same length, its own hash redone. A release that
// resumes from its record takes its totals from the vouched line, which
// still count 0, and the raised line must not witness what they do not
// hold: carol's release once read the run's
// lines alone, unchained to the vouched line, and releasing 13,994 labels
// beyond the budget from the command line. The chain is broken at the
// line after the raised one, which her release and a fresh analyst's now
// say, as ledger verify does.
func TestWitnessedLineChangedInPlace(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	raiseWitnessedSettlement(t, path, func(s Spend) { appendSpend(t, path, s) }, func(n int, change func([]byte) []byte) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(b, []byte("\n"))
		lines[n-1] = append(change(bytes.TrimSuffix(lines[n-1], []byte("\n"))), '\n')
		if err := os.WriteFile(path, bytes.Join(lines, nil), 0o644); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPGWitnessedLineChangedInPlace is TestWitnessedLineChangedInPlace on
// a ledger in PostgreSQL: the run's own user settles it at 0 (the
// database lets a run's user settle its run), and a superuser changes
// the row back in place, the append-only guard disabled for that one
// UPDATE, as docs/aggregate.md's remove-head.sql does.
func TestPGWitnessedLineChangedInPlace(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL: without -short")
	}
	db := pgtest.DB(t)
	u := newPG(t, db, "raised", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	conn := connectAs(t, u)
	raiseWitnessedSettlement(t, u, func(s Spend) {
		if err := appendForged(t, conn, "raised", s); err != nil {
			t.Fatalf("the run's user settles it at 0: %v", err)
		}
	}, func(n int, change func([]byte) []byte) {
		key, _, _, _, _ := headLine(t, conn, "raised")
		var line []byte
		if err := conn.QueryRow(ctx, "SELECT line FROM darrm.lines WHERE ledger = $1 AND n = $2", key, n).Scan(&line); err != nil {
			t.Fatal(err)
		}
		line = change(line)
		s := sessionOn(t, db)
		defer s.close()
		for _, q := range []string{"BEGIN", "ALTER TABLE darrm.lines DISABLE TRIGGER append_only"} {
			if err := s.exec(q); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.exec("UPDATE darrm.lines SET line = $1 WHERE ledger = $2 AND n = $3", line, key, n); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"ALTER TABLE darrm.lines ENABLE TRIGGER append_only", "COMMIT"} {
			if err := s.exec(q); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// raiseWitnessedSettlement is the scenario of
// TestWitnessedLineChangedInPlace on the ledger at location: forge
// appends a spend line, replace puts in place of line n that line as
// change changes it.
func raiseWitnessedSettlement(t *testing.T, location string, forge func(Spend), replace func(n int, change func([]byte) []byte)) {
	releaseLabels(t, book, location, 3)
	labels := reserveKilled(t, book, location, 88)
	l := mustRead(t, location)
	settlement, last := l.chain.n+1, l.chain.last
	l.Close()
	last.Queries, last.Final = 0, true
	forge(last)
	carol := Options{StateDir: t.TempDir()}
	releaseLabels(t, carol, location, 2)
	carol.Witnesses = witnessed(t, labels).Witnesses
	wantWitnessError(t, "the settlement of 0", openErr(location, carol), lowered, labels, "counts 0 labels of run")

	replace(settlement, func(b []byte) []byte {
		prev, raw, _, ok := splitSpendLine(b)
		if !ok || !bytes.Contains(raw, []byte(`"queries":0,"final":true`)) {
			t.Fatalf("line %d is not the settlement of 0: %s", settlement, b)
		}
		// 88 for 0, and a digit less of the time's nanoseconds: the same
		// length.
		raised := strings.Replace(string(raw), `"queries":0,`, `"queries":88,`, 1)
		raised = regexp.MustCompile(`("time":"[^"]*\.\d*)\dZ"`).ReplaceAllString(raised, `${1}Z"`)
		if len(raised) != len(raw) {
			t.Fatalf("raised settlement of %d bytes, want %d", len(raised), len(raw))
		}
		return []byte(`{"prev":"` + prev + `","spend":` + raised + `,"sha256":"` + chainHash(Version, prev, "spend", []byte(raised)) + `"}`)
	})

	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"carol, resuming from her record", carol},
		{"a fresh analyst", Options{StateDir: t.TempDir(), Witnesses: carol.Witnesses}},
	} {
		var ce *CorruptError
		if err := openErr(location, tc.opts); !errors.As(err, &ce) || ce.Line != settlement+1 || !strings.Contains(err.Error(), "the chain is broken") {
			t.Errorf("%s, with the run's label file, after the settlement was raised in place: %v, want the chain broken at line %d", tc.name, err, settlement+1)
		}
	}
}
