package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/statedir"
)

// twoClassNPY writes the votes of the CSV vote file csv (its header on
// its first line, then a header row and rows q,v1,...,vK) as a NumPy
// array, queries x K of uint8, at npyPath, with its header, edited by
// edit, in the sidecar beside it; and the CSV file with the same header
// at csvPath.
func twoClassNPY(t *testing.T, csv, csvPath, npyPath string, edit func(string) string) {
	t.Helper()
	raw, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	header := edit(strings.TrimPrefix(lines[0], "# "))
	var votes [][]uint8
	for _, l := range lines[2:] {
		var row []uint8
		for _, v := range strings.Split(l, ",")[1:] {
			row = append(row, v[0]-'0')
		}
		votes = append(votes, row)
	}
	writeNPY(t, npyPath, votes)
	if err := os.WriteFile(npyPath+".meta.json", []byte(header+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csvPath, []byte("# "+header+"\n"+strings.Join(lines[1:], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNPYTwoClassMechanisms: two-class NumPy votes, whose sidecar states
// classes 2 in layout votes, are released by every two-class mechanism,
// with the labels of the same votes in CSV (the same seed).
func TestNPYTwoClassMechanisms(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	same := func(s string) string { return s }
	pure := func(s string) string { return strings.Replace(s, `"Delta":0.00001`, `"Delta":0`, 1) }
	twoClassNPY(t, filepath.Join("..", "..", "testdata", "votes-K11.csv"), p("private.csv"), p("private.npy"), same)
	twoClassNPY(t, filepath.Join("..", "..", "testdata", "votes-K11.csv"), p("pure.csv"), p("pure.npy"), pure)
	twoClassNPY(t, filepath.Join("..", "..", "testdata", "votes-K11-one-vote.csv"), p("one-vote.csv"), p("one-vote.npy"), same)
	gamma := filepath.Join("..", "..", "testdata", "gamma-K11-m3.json")
	for _, tc := range []struct {
		mechanism, votes string
		args             []string
	}{
		{"darrm", "private", []string{"--gamma", gamma}},
		{"subsample", "private", nil},
		{"rr", "private", nil},
		{"dsub", "pure", nil},
		{"gnmax", "one-vote", []string{"--eps", "0.1", "--Delta", "1e-5"}},
		{"darrm-one-vote", "one-vote", []string{"--target-eps", "0.3", "--delta", "1e-5", "--cache-dir", t.TempDir()}},
	} {
		labels := map[string][]string{}
		for _, ext := range []string{"csv", "npy"} {
			out := p(tc.mechanism + "-" + ext + "-labels.csv")
			args := append([]string{"aggregate", p(tc.votes + "." + ext), "--mechanism", tc.mechanism, "--seed", "3", "--out", out}, tc.args...)
			if _, stderr, code := darrm(t, "", args...); code != 0 {
				t.Fatalf("%s on %s votes: exit %d: %s", tc.mechanism, ext, code, stderr)
			}
			for _, l := range readLines(t, out) {
				if id, label, ok := strings.Cut(l, ","); ok && !strings.HasPrefix(l, "#") && id != "id" {
					labels[ext] = append(labels[ext], label)
				}
			}
		}
		if len(labels["npy"]) != 20 || strings.Join(labels["npy"], "") != strings.Join(labels["csv"], "") {
			t.Errorf("%s: NumPy labels %v, CSV labels %v", tc.mechanism, labels["npy"], labels["csv"])
		}
	}
}
