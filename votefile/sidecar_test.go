package votefile

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/quotetest"
)

// pateSidecar is the header of testdata's 25 teachers' labels on 60
// queries, teachers x queries, as a sidecar holds it.
const pateSidecar = `{"darrm-votes":1,"ensemble":"pate-k25","K":25,"classes":10,"layout":"votes","relation":"one-vote","kind":"fixed","partition":"keyed-hash",
  "teachers":[{"count":25,"source":{"method":"none"}}],"orientation":"teachers-in-rows"}
`

// readPATE reads testdata's NumPy labels with opts.
func readPATE(t *testing.T, opts Options) (Reader, error) {
	t.Helper()
	f, err := os.Open("../testdata/pate-teachers-labels-K25.npy")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	in, _, err := readVotes(f, "labels.npy", opts)
	return in, err
}

// TestSidecar: a NumPy array read with the header of its sidecar is read
// as the header says (layout, classes, K and orientation: no options),
// and every check a header in a file gets names the sidecar.
func TestSidecar(t *testing.T) {
	m, err := readSidecar(strings.NewReader(pateSidecar), "labels.npy.meta.json")
	if err != nil {
		t.Fatal(err)
	}
	in, err := readPATE(t, Options{Meta: m, MetaFile: "labels.npy.meta.json"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for in.Next() {
		n++
	}
	if in.Err() != nil || n != 60 || in.K() != 25 || in.Classes() != 10 || in.Meta() != m || in.Input() != ManyClasses {
		t.Errorf("%d queries (%v), K %d, C %d", n, in.Err(), in.K(), in.Classes())
	}
	// A sidecar that does not state the orientation leaves it to the
	// caller, as a file without a header does.
	unstated, err := readSidecar(strings.NewReader(strings.Replace(pateSidecar, `,"orientation":"teachers-in-rows"`, ``, 1)), "labels.npy.meta.json")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := readPATE(t, Options{Meta: unstated, MetaFile: "labels.npy.meta.json", Orientation: TeachersInRows}); err != nil || r.K() != 25 {
		t.Errorf("orientation given beside a sidecar without one: %v", err)
	}
	he := in.HeaderError(&HeaderError{Field: "relation", Value: "x", Rule: "must be known"})
	var fe *formatError
	if !errors.As(he, &fe) || fe.File != "labels.npy.meta.json" || fe.Line != 0 {
		t.Errorf("a rule of the header broken: %v", he)
	}
	for _, tc := range []struct {
		name, sidecar string
		opts          Options
		file, want    string
	}{
		{"another K", strings.ReplaceAll(pateSidecar, "25", "24"), Options{}, "labels.npy", "read as teachers x queries (Options.Orientation = teachers-in-rows) has 25 teachers, but K = 24 is stated"},
		{"queries in rows", strings.Replace(pateSidecar, `"teachers-in-rows"`, `"queries-in-rows"`, 1), Options{}, "labels.npy", "read as queries x teachers (Options.Orientation = queries-in-rows) has 60 teachers, but K = 25 is stated"},
		{"contradicted orientation", strings.Replace(pateSidecar, `"teachers-in-rows"`, `"queries-in-rows"`, 1), Options{Orientation: TeachersInRows}, "", "the metadata header states orientation queries-in-rows: leave out Options.Orientation = teachers-in-rows"},
		{"orientation repeated", pateSidecar, Options{Orientation: QueriesInRows}, "", "the metadata header states orientation teachers-in-rows: leave out Options.Orientation = queries-in-rows"},
		{"orientation unstated", strings.Replace(pateSidecar, `,"orientation":"teachers-in-rows"`, ``, 1), Options{}, "labels.npy", "shape (25, 60), whose metadata header (labels.npy.meta.json) does not state its orientation: state which axis holds the teachers"},
		{"other classes", pateSidecar, Options{Classes: 5}, "", "the ensemble's classes: 5 given, but the vote file's metadata header states 10"},
		{"counts", pateSidecar, Options{Layout: LayoutCounts}, "", "contradicts the metadata header of labels.npy, which states layout votes"},
	} {
		m, err := readSidecar(strings.NewReader(tc.sidecar), "labels.npy.meta.json")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		tc.opts.Meta, tc.opts.MetaFile = m, "labels.npy.meta.json"
		_, err = readPATE(t, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || tc.file != "" && !errors.As(err, &fe) || tc.file != "" && fe.File != tc.file {
			t.Errorf("%s: %v, want an error of %s with %q", tc.name, err, tc.file, tc.want)
		}
	}
}

// TestSidecarCSV: a CSV file without its header reads as with it when the
// header is its sidecar; a file with a header of its own refuses another.
func TestSidecarCSV(t *testing.T) {
	head := "# " + statedJSON + "\n"
	rows := "q1,0,1,1\nq2,1,1,0\n"
	m, err := readSidecar(strings.NewReader(statedJSON), "v.csv.meta.json")
	if err != nil {
		t.Fatal(err)
	}
	with, _, err := readVotes(strings.NewReader(head+rows), "v.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	beside, _, err := readVotes(strings.NewReader(rows), "v.csv", Options{Meta: m, MetaFile: "v.csv.meta.json"})
	if err != nil || beside.K() != 3 || beside.Input() != TwoClass || *beside.Meta().Teachers[0].Eps != *with.Meta().Teachers[0].Eps {
		t.Fatalf("%v", err)
	}
	_, _, err = readVotes(strings.NewReader("1,0,1,1,0\n"), "v.csv", Options{Meta: m, MetaFile: "v.csv.meta.json"})
	if err == nil || !strings.Contains(err.Error(), "5 votes, but the metadata header (v.csv.meta.json) states K = 3") {
		t.Errorf("K against the sidecar: %v", err)
	}
	_, _, err = readVotes(strings.NewReader(head+rows), "v.csv", Options{Meta: m, MetaFile: "v.csv.meta.json"})
	if err == nil || !strings.Contains(err.Error(), "v.csv, line 1: the file has a metadata header of its own, and v.csv.meta.json states one as well") {
		t.Errorf("two headers: %v", err)
	}
}

// TestReadSidecar: a sidecar holds the header's JSON object, alone, with
// every rule of a header.
func TestReadSidecar(t *testing.T) {
	if m, err := readSidecar(strings.NewReader("\ufeff\n  "+statedJSON+"\n\n"), "s"); err != nil || m.K != 3 {
		t.Errorf("blanks around the object: %v", err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "not a metadata header"},
		{"a CSV comment line", "# " + statedJSON, "not a metadata header"},
		{"a label header", `{"darrm-labels":1}`, "not a metadata header"},
		{"votes after it", statedJSON + "\n0,1,1\n", "not a metadata header"},
		{"a broken rule", strings.Replace(statedJSON, `"K":3`, `"K":4`, 1), "header field K = 4"},
		{"binary", "\x93NUMPY\x01\x00", "binary data"},
		{"an orientation of no name", strings.Replace(pateSidecar, `"teachers-in-rows"`, `"unstated"`, 1), `orientation "unstated": must be one of queries-in-rows, teachers-in-rows`},
		{"counts a row per teacher", strings.Replace(pateSidecar, `"layout":"votes"`, `"layout":"counts"`, 1), "only class labels of more than two classes"},
		{"too long", statedJSON + strings.Repeat(" ", maxLineBytes), "longer than"},
	} {
		_, err := readSidecar(strings.NewReader(tc.in), "s.meta.json")
		var fe *formatError
		if !errors.As(err, &fe) || fe.File != "s.meta.json" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A header on a file's first line cannot state a matrix read whole.
	inFile := "# " + strings.ReplaceAll(pateSidecar, "\n", "") + "\n" + strings.Repeat("1,", 24) + "1\n"
	if _, _, err := readVotes(strings.NewReader(inFile), "v.csv", Options{}); err == nil || !strings.Contains(err.Error(), "v.csv, line 1: the metadata header states orientation teachers-in-rows, which only a header in a sidecar may state") {
		t.Errorf("orientation in a file's header: %v", err)
	}
	if SidecarPath("dir/votes.npy") != "dir/votes.npy.meta.json" {
		t.Error(SidecarPath("dir/votes.npy"))
	}
}

// FuzzReadSidecar: no sidecar makes the reader panic, and what it accepts
// is a valid header.
func FuzzReadSidecar(f *testing.F) {
	f.Add(statedJSON)
	f.Add(pateSidecar)
	f.Add(`{"darrm-votes":1}`)
	f.Fuzz(func(t *testing.T, in string) {
		m, err := readSidecar(strings.NewReader(in), "fuzz")
		if err != nil {
			quotetest.Check(t, err.Error(), []byte(in), 1000)
		} else if err := m.Validate(); err != nil {
			t.Fatalf("%q: read, but %v", in, err)
		}
	})
}
