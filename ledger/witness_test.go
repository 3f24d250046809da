package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/votefile"
)

// checkpointOf writes a checkpoint of the ledger at location to a new
// file and returns its path.
func checkpointOf(t *testing.T, bk Options, location string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.checkpoint")
	if _, err := bk.Checkpoint(ctx, location, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// releaseLabels runs one release of n labels on the ledger at location
// with bk, as darrm aggregate does, and writes a label file whose header
// states the ledger's line that reserved them; it returns its path.
func releaseLabels(t *testing.T, bk Options, location string, n int) string {
	t.Helper()
	l, err := bk.forRun(ctx, location)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.begin(ctx, "darrm", binding(t, l), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	if err := l.Reserve(ctx, n); err != nil {
		t.Fatal(err)
	}
	m := votefile.LabelMeta{Mechanism: "darrm", K: bound.K, Classes: 2, Relation: "private-teachers", Eps: step.Eps, Delta: step.Delta,
		Ensemble: l.Header().Ensemble, ForRelease: true, Ledger: l.Header().ID, LedgerLines: l.Lines(), LedgerSize: l.Size(), LedgerHead: l.Head()}
	if err := l.Settle(ctx, n); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "labels.csv")
	body := m.HeaderLine() + "\nid,label\n" + strings.Repeat("1,0\n", n)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// witnessed returns a book with its own, empty state folder (a fresh
// analyst) given the witnesses in the files paths.
func witnessed(t *testing.T, paths ...string) Options {
	t.Helper()
	bk := Options{StateDir: t.TempDir()}
	for _, p := range paths {
		w, err := ReadWitness(p)
		if err != nil {
			t.Fatal(err)
		}
		bk.Witnesses = append(bk.Witnesses, w)
	}
	return bk
}

// copyFile copies the file from to a new file to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// witnessErr opens the ledger at location for a run and reads it with
// bk, and returns the errors of both, which must be the same kind.
func witnessErr(t *testing.T, bk Options, location string) error {
	t.Helper()
	err := openErr(location, bk)
	l, rerr := bk.readOnly(ctx, location)
	if rerr == nil {
		l.Close()
	}
	if fmt.Sprint(err) != fmt.Sprint(rerr) {
		t.Errorf("a run: %v; a reader: %v", err, rerr)
	}
	return err
}

// wantWitnessError checks that err is a *RecordError of kind from the
// witness file, whose message names it and says what happened (says).
func wantWitnessError(t *testing.T, name string, err error, kind recordKind, file, says string) {
	t.Helper()
	var re *RecordError
	if !errors.As(err, &re) || re.kind != kind || !re.Witness || re.File != file || !isBad(err) {
		t.Errorf("%s: %v, want a *RecordError of kind %d from witness %s", name, err, kind, file)
		return
	}
	if msg := err.Error(); !strings.Contains(msg, "witness "+file) || !strings.Contains(msg, says) {
		t.Errorf("%s: %v: want it to name witness %s and say %q", name, err, file, says)
	}
}

// TestWitnessRestored: a ledger file copied at 5 lines, charged further,
// then put back (a backup restored) passes its chain's checks and, for
// an analyst with no record, the record's; a checkpoint or a label file
// written after the copy refuses it, for a run and a reader, whoever
// runs them; a witness of the copy itself, older than the ledger, is
// accepted.
func TestWitnessRestored(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spend(t, path, 2)
	spend(t, path, 3)
	old := checkpointOf(t, book, path)
	backup := filepath.Join(t.TempDir(), "backup.ledger")
	copyFile(t, path, backup)
	if n := readLines(t, backup); n != 5 {
		t.Fatalf("the backup has %d lines, want 5", n)
	}
	labels := releaseLabels(t, book, path, 4)
	spend(t, path, 1)
	cp := checkpointOf(t, book, path)
	copyFile(t, backup, path)

	if err := openErr(path, Options{StateDir: t.TempDir()}); err != nil {
		t.Fatalf("the restored ledger, for a fresh analyst without a witness: %v (the hole witnesses close)", err)
	}
	for _, tc := range []struct {
		name, witness string
	}{
		{"a checkpoint", cp},
		{"a label file", labels},
	} {
		err := witnessErr(t, witnessed(t, tc.witness), path)
		wantWitnessError(t, "the ledger restored, against "+tc.name, err, behind, tc.witness, "is behind witness")
		if !strings.Contains(fmt.Sprint(err), "it has 5 lines") {
			t.Errorf("%s: %v: want the ledger's lines", tc.name, err)
		}
	}
	if err := witnessErr(t, witnessed(t, old), path); err != nil {
		t.Errorf("the restored ledger, against the checkpoint of itself: %v", err)
	}
	// Several witnesses: each is checked, the first one that fails says.
	err := witnessErr(t, witnessed(t, old, labels, cp), path)
	wantWitnessError(t, "against three witnesses", err, behind, labels, "is behind witness")
	// Your record refuses it too, and so does the witness, whatever the
	// record says once it is adopted.
	recordError(t, "the ledger restored, against your record", openErr(path, book), behind)
	if _, l, err := book.Adopt(ctx, path); err != nil {
		t.Fatal(err)
	} else {
		l.Close()
	}
	bk := book
	bk.Witnesses = witnessed(t, cp).Witnesses
	wantWitnessError(t, "the ledger adopted, against a checkpoint", openErr(path, bk), behind, cp, "is behind witness")
}

// readLines returns the number of lines of the ledger at path.
func readLines(t *testing.T, path string) int {
	t.Helper()
	_, _, n := readAll(t, path)
	return n
}

// TestWitnessExtends: a witness of any state the ledger had is accepted,
// by a run resumed from its record (which reads only the witnessed line
// before it) and by a run or reader with no record (which reads every
// line): its header alone, a line in the middle, its last line.
func TestWitnessExtends(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	first := checkpointOf(t, book, path)
	spend(t, path, 2)
	middle := releaseLabels(t, book, path, 3)
	spend(t, path, 1)
	last := checkpointOf(t, book, path)
	for _, w := range []string{first, middle, last} {
		bk := witnessed(t, w)
		if err := witnessErr(t, bk, path); err != nil {
			t.Errorf("witness %s, a fresh analyst: %v", w, err)
		}
		rec := book
		rec.Witnesses = bk.Witnesses
		if err := openErr(path, rec); err != nil {
			t.Errorf("witness %s, resumed from the record: %v", w, err)
		}
	}
	// The ledger goes on; the witnesses still hold.
	spend(t, path, 1)
	if err := witnessErr(t, witnessed(t, first, middle, last), path); err != nil {
		t.Errorf("a ledger moved on past its witnesses: %v", err)
	}
}

// TestWitnessForked: a copy of a ledger that went its own way (same id,
// other lines after the copy) is refused by a witness of the other's
// later lines, whether it has more lines than the witness saw or as
// many; a ledger made again for the ensemble is refused by a witness of
// the one it would replace.
func TestWitnessForked(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spend(t, path, 2)
	fork := filepath.Join(t.TempDir(), "fork.ledger")
	copyFile(t, path, fork)
	other := Options{StateDir: t.TempDir()} // another analyst, releasing on the copy
	spendOn(t, other, fork, 3, 3)
	spendOn(t, other, fork, 1, 1)
	spend(t, path, 1)
	cp := checkpointOf(t, book, path) // line 5 of the ledger; the fork has 7
	err := witnessErr(t, witnessed(t, cp), fork)
	wantWitnessError(t, "a fork longer than the witness", err, diverged, cp, "has forked from witness")
	spend(t, path, 1)
	spend(t, path, 1)
	spend(t, path, 1)
	cp = checkpointOf(t, book, path) // line 11; the fork has 7, then 11
	wantWitnessError(t, "a fork shorter than the witness", witnessErr(t, witnessed(t, cp), fork), behind, cp, "is behind witness")
	spendOn(t, other, fork, 1, 1)
	spendOn(t, other, fork, 1, 1)
	wantWitnessError(t, "a fork as long as the witness", witnessErr(t, witnessed(t, cp), fork), diverged, cp, "has forked from witness")

	// The ensemble's ledger made again, in its place.
	l, err := book.readOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	h := l.Header()
	l.Close()
	again := filepath.Join(t.TempDir(), "again.ledger")
	if _, err := (Options{StateDir: t.TempDir()}).create(ctx, again, NewHeader(binding(t, l), h.Budget, h.DeltaPrime, simpleFilter(h.Budget)), false); err != nil {
		t.Fatal(err)
	}
	err = witnessErr(t, witnessed(t, cp), again)
	wantWitnessError(t, "a second ledger of the ensemble", err, secondLedger, cp, "is not the ledger that witness")
}

// TestWitnessBadInput: a witness of another ensemble, and files that are
// no witness, are the caller's input, named; a checkpoint is written
// over an earlier checkpoint of the same ledger only, never over another
// file or a later or forked checkpoint.
func TestWitnessBadInput(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spend(t, path, 1)
	elsewhere := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	cp := checkpointOf(t, book, elsewhere)
	err := witnessErr(t, witnessed(t, cp), path)
	var we *witnessError
	if !errors.As(err, &we) || !isBad(err) || !strings.Contains(err.Error(), "witness "+cp) || !strings.Contains(err.Error(), "ensemble") {
		t.Errorf("a witness of another ensemble: %v, want bad input naming %s", err, cp)
	}

	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	meta := `# {"darrm-labels":1,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","eps":0.5,"delta":0,"ensemble":"e","for_release":true`
	id, head := strings.Repeat("0", 32), strings.Repeat("a", 64)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"text", "hello\n", "neither a checkpoint"},
		{"a ledger", "", "not a checkpoint"},
		{"NumPy labels", "\x93NUMPY\x01\x00", "NumPy label file has no metadata header"},
		{"labels without a header", "id,label\n1,0\n", "without a metadata header"},
		// A darrm before label files named their ledger wrote no
		// "ledger" either, for labels it charged to one.
		{"labels charged to no ledger", meta + "}\nid,label\n1,0\n", "names no ledger: its labels were released without one, or by a darrm before label files named theirs"},
		{"labels of an earlier darrm", meta + `,"ledger":"` + id + `"}` + "\nid,label\n1,0\n", "not the line that reserved"},
		{"checkpoint of another version", `{"darrm-checkpoint":2,"ensemble":"e","ledger_id":"` + id + `","lines":2,"size":9,"head":"` + head + `","path":"x","time":"2026-01-01T00:00:00Z"}`, "this darrm reads version 1"},
		{"checkpoint without lines", `{"darrm-checkpoint":1,"ensemble":"e","ledger_id":"` + id + `","lines":0,"size":9,"head":"` + head + `","path":"x","time":"2026-01-01T00:00:00Z"}`, "lines = 0"},
		{"checkpoint with a short head", `{"darrm-checkpoint":1,"ensemble":"e","ledger_id":"` + id + `","lines":2,"size":9,"head":"ab","path":"x","time":"2026-01-01T00:00:00Z"}`, "head"},
		{"checkpoint with another key", `{"darrm-checkpoint":1,"ensemble":"e","ledger_id":"` + id + `","lines":2,"size":9,"head":"` + head + `","path":"x","time":"2026-01-01T00:00:00Z","x":1}`, "unknown field"},
	} {
		p := write(strings.ReplaceAll(tc.name, " ", "-"), tc.body)
		if tc.name == "a ledger" {
			p = path
		}
		_, err := ReadWitness(p)
		if !errors.As(err, &we) || !isBad(err) || !strings.Contains(err.Error(), "witness "+p+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want bad input naming %s and saying %q", tc.name, err, p, tc.want)
		}
	}
	if _, err := ReadWitness(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing witness: %v", err)
	}
	// A checkpoint is a file from anyone: its error quotes a few bytes of
	// a value or a key, where encoding/json quoted a number of 60,000
	// digits, or a key of that length, whole.
	long := strings.Repeat("9", 60000)
	for _, body := range []string{`{"darrm-checkpoint":1,"lines":` + long + `}`, `{"darrm-checkpoint":1,"` + long + `":1}`} {
		if _, err := ReadWitness(write("long", body)); err == nil || len(err.Error()) > 1000 || !isBad(err) {
			t.Errorf("a checkpoint of a 60,000-byte value or key: %d bytes of error, want a bad input of a few hundred", len(fmt.Sprint(err)))
		}
	}

	// A checkpoint moves on over an earlier one of the same ledger.
	mine := checkpointOf(t, book, path)
	spend(t, path, 1)
	w, err := book.Checkpoint(ctx, path, mine)
	if err != nil || w.Record.Lines != 5 || w.File != mine {
		t.Errorf("a checkpoint over an earlier one: %+v, %v", w, err)
	}
	if got, err := ReadWitness(mine); err != nil || got.Record.Lines != 5 || got.Record.Head != w.Record.Head {
		t.Errorf("the checkpoint read back: %+v, %v; want %+v", got, err, w)
	}
	// Never over a later one (a ledger restored), another ledger's, or
	// a file that is no checkpoint.
	backup := filepath.Join(t.TempDir(), "backup.ledger")
	copyFile(t, path, backup)
	spend(t, path, 1)
	later := checkpointOf(t, book, path)
	for _, tc := range []struct {
		name, location, out string
		kind                recordKind
		bad                 bool
	}{
		{"a later checkpoint", backup, later, behind, false},
		{"another ensemble's", path, cp, 0, true},
		{"a label file", path, releaseLabels(t, book, path, 1), 0, true},
		{"a text file", path, write("notes.txt", "keep me\n"), 0, true},
	} {
		before, _ := os.ReadFile(tc.out)
		_, err := (Options{StateDir: t.TempDir()}).Checkpoint(ctx, tc.location, tc.out)
		after, _ := os.ReadFile(tc.out)
		if string(after) != string(before) {
			t.Errorf("%s: the file was changed", tc.name)
		}
		if tc.bad {
			if !isBad(err) || !strings.Contains(fmt.Sprint(err), tc.out) {
				t.Errorf("a checkpoint over %s: %v, want bad input naming %s", tc.name, err, tc.out)
			}
			continue
		}
		wantWitnessError(t, "a checkpoint over "+tc.name, err, tc.kind, tc.out, "is behind witness")
	}
}

// testPGWitness: a PostgreSQL ledger whose last lines were removed (a
// dump restored) is refused by a checkpoint taken before, for a fresh
// analyst; a checkpoint older than the ledger is accepted by a run that
// resumes from its record, which reads the rows from the witnessed one. A
// checkpoint names the ledger by its URL without the password. It drops
// the guards that would refuse the rows' deletion: it runs at the end.
func testPGWitness(t *testing.T, db string) {
	u := newPG(t, db, "witnessed", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spendOn(t, book, u, 2, 1)
	old := checkpointOf(t, book, u)
	spendOn(t, book, u, 2, 2)
	cp := checkpointOf(t, book, u)
	if b, err := os.ReadFile(cp); err != nil || strings.Contains(string(b), password(t, db)) || !strings.Contains(string(b), Redact(u)) {
		t.Errorf("checkpoint %s (%v): %s; want the URL without its password", cp, err, b)
	}
	rec := book
	rec.Witnesses = witnessed(t, old, cp).Witnesses
	if err := openErr(u, rec); err != nil {
		t.Errorf("a run resumed, against its checkpoints: %v", err)
	}
	spendOn(t, rec, u, 1, 1)
	if err := witnessErr(t, witnessed(t, old, cp), u); err != nil {
		t.Errorf("a fresh analyst, against older checkpoints: %v", err)
	}
	const q = "(SELECT key FROM darrm.ledgers WHERE name = 'witnessed')"
	err := sqlExec(t, db, `DROP TRIGGER IF EXISTS append_only ON darrm.lines;
		DROP TRIGGER IF EXISTS guard_ledger ON darrm.ledgers;
		DELETE FROM darrm.lines WHERE n > 3 AND ledger = `+q+`;
		UPDATE darrm.ledgers SET lines = 3, size = (SELECT stop FROM darrm.lines WHERE n = 3 AND ledger = `+q+`),
			head = (SELECT convert_from(line, 'UTF8')::json->>'sha256' FROM darrm.lines WHERE n = 3 AND ledger = `+q+`)
		WHERE name = 'witnessed'`)
	if err != nil {
		t.Fatal(err)
	}
	if err := openErr(u, Options{StateDir: t.TempDir()}); err != nil {
		t.Fatalf("the ledger restored, for a fresh analyst without a witness: %v", err)
	}
	wantWitnessError(t, "the ledger restored, against a checkpoint", witnessErr(t, witnessed(t, cp), u), behind, cp, "is behind witness")
	if err := witnessErr(t, witnessed(t, old), u); err != nil {
		t.Errorf("the ledger restored, against the checkpoint of its state: %v", err)
	}
}

// TestCheckpointWhileHeld: a checkpoint of a file ledger that a run
// holds is refused, writing nothing (the line the run writes may not be
// on disk yet); once the run has ended it is taken.
func TestCheckpointWhileHeld(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	out := filepath.Join(t.TempDir(), "ledger.checkpoint")
	l := open(t, path)
	_, err := book.Checkpoint(ctx, path, out)
	l.Close()
	if err == nil || !strings.Contains(err.Error(), "a run holds it") {
		t.Errorf("a checkpoint while a run holds the ledger: %v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Errorf("a checkpoint refused was written")
	}
	if w, err := book.Checkpoint(ctx, path, out); err != nil || w.Record.Lines != 1 {
		t.Errorf("a checkpoint once the run has ended: %+v, %v", w, err)
	}
}
