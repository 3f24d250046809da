package votefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpen: a NumPy array opens with the header of the sidecar beside it
// in one call, read in place; a sidecar given by name is read instead, a
// file without one opens without a header, and a sidecar that is no
// regular file is refused naming it.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	npy, err := os.ReadFile("../testdata/pate-teachers-labels-K25.npy")
	if err != nil {
		t.Fatal(err)
	}
	votes := filepath.Join(dir, "labels.npy")
	if err := os.WriteFile(votes, npy, 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := Open(votes, Options{Orientation: TeachersInRows, Classes: 10}); err != nil || f.Meta() != nil || f.HeaderFile != "" {
		t.Errorf("without a sidecar: %v", err)
	} else {
		f.Close()
	}
	if err := os.WriteFile(SidecarPath(votes), []byte(pateSidecar), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(votes, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for f.Next() {
		n++
	}
	if f.Err() != nil || n != 60 || f.K() != 25 || f.Meta() == nil || f.HeaderFile != SidecarPath(votes) {
		t.Errorf("%d queries (%v), K %d, header from %q", n, f.Err(), f.K(), f.HeaderFile)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(strings.Replace(pateSidecar, "pate-k25", "other", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := Open(votes, Options{MetaFile: other}); err != nil || f.Meta().Ensemble != "other" || f.HeaderFile != other {
		t.Errorf("a sidecar given: %v", err)
	} else {
		f.Close()
	}
	if err := os.Remove(SidecarPath(votes)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(SidecarPath(votes), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(votes, Options{}); err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), SidecarPath(votes)) {
		t.Errorf("a folder as the sidecar: %v", err)
	}
}

// TestOpenMayAbstain: a File reads as the reader it holds, so that what
// a reader of C classes says of abstentions (MayAbstain, Abstained) is
// said of the File too.
func TestOpenMayAbstain(t *testing.T) {
	f, err := Open("counts.csv", Options{In: strings.NewReader("1,2,0\n3,0,1\n"), Layout: LayoutCounts, K: 4})
	if err != nil {
		t.Fatal(err)
	}
	for f.Next() {
	}
	if f.Err() != nil || !f.MayAbstain() || f.Abstained() != 1 {
		t.Errorf("MayAbstain %v, Abstained %d (%v): want true, 1", f.MayAbstain(), f.Abstained(), f.Err())
	}
}
