package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/votefile"
)

// TestTeachersVoteSummary: teachers vote says what it wrote, in one line
// (the file, the layout, K, the classes, the queries, the header's
// ensemble), on standard output, or on standard error when the votes go
// to standard output, which then holds the vote file alone; --format json
// gives the same as a record. Two-class votes and --classes counts alike.
func TestTeachersVoteSummary(t *testing.T) {
	fakeMNIST(t, 200, 40)
	cache := t.TempDir()
	dir := t.TempDir()
	votes := filepath.Join(dir, "votes.csv")
	base := []string{"teachers", "vote", "--dataset", "mnist58", "--K", "3", "--epochs", "1", "--seed", "1", "--cache-dir", cache}
	stdout, stderr, code := darrm(t, "", append(base, "--out", votes)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	vf, err := os.Open(votes)
	if err != nil {
		t.Fatal(err)
	}
	defer vf.Close()
	r, err := votefile.Open(votes, votefile.Options{In: vf})
	if err != nil {
		t.Fatal(err)
	}
	queries := 0
	for r.Next() {
		queries++
	}
	want := fmt.Sprintf("votes: %s (csv, metadata header): 0/1 votes of K = 3 teachers, 2 classes, %d queries; ensemble %s", votes, queries, r.Meta().Ensemble)
	if unwrapped(stdout) != want || queries != 40 {
		t.Errorf("summary %q, want %q (%d queries read)", stdout, want, queries)
	}
	file, _ := os.ReadFile(votes)
	stdout, stderr, code = darrm(t, "", base...)
	if code != 0 || stdout != string(file) || !strings.HasPrefix(stderr, "votes: standard output (csv, metadata header): 0/1 votes of K = 3 teachers") {
		t.Errorf("to standard output: exit %d: the votes differ from the file's: %t; stderr %q", code, stdout != string(file), stderr)
	}
	stdout, _, _ = darrm(t, "", append(base, "--out", votes, "--format", "json")...)
	var doc map[string]any
	decode(t, stdout, &doc)
	if doc["output"] != votes || doc["layout"] != "votes" || doc["K"] != 3.0 || doc["classes"] != 2.0 || doc["queries"] != 40.0 || doc["ensemble"] != r.Meta().Ensemble {
		t.Errorf("JSON %v", doc)
	}

	syntheticMNIST(t)
	counts := filepath.Join(dir, "counts.csv")
	stdout, stderr, code = darrm(t, "", "teachers", "vote", "--dataset", "mnist", "--classes", "10", "--K", "4", "--epochs", "1", "--seed", "1", "--cache-dir", cache, "--out", counts)
	if code != 0 || !strings.HasPrefix(unwrapped(stdout), "votes: "+counts+" (csv, metadata header): vote counts of K = 4 teachers, 10 classes, 100 queries; ensemble ") {
		t.Errorf("--classes: exit %d: %q %s", code, stdout, stderr)
	}
	// The same counts as NumPy, without the header.
	npyCounts := filepath.Join(dir, "counts.npy")
	stdout, stderr, code = darrm(t, "", "teachers", "vote", "--dataset", "mnist", "--classes", "10", "--K", "4", "--epochs", "1", "--seed", "1", "--cache-dir", cache, "--out", npyCounts)
	if code != 0 || !strings.HasPrefix(unwrapped(stdout), "votes: "+npyCounts+" (npy, no metadata header: a NumPy file holds the counts alone): vote counts of K = 4 teachers, 10 classes, 100 queries") {
		t.Errorf("--out .npy: exit %d: %q %s", code, stdout, stderr)
	}
	read := func(path string) [][]int {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := votefile.Open(path, votefile.Options{In: f, Layout: votefile.LayoutCounts})
		if err != nil {
			t.Fatal(err)
		}
		var out [][]int
		for r.Next() {
			out = append(out, slices.Clone(r.Query().Counts))
		}
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		return out
	}
	if a, b := read(counts), read(npyCounts); !reflect.DeepEqual(a, b) || len(a) != 100 {
		t.Errorf("the NumPy counts differ from the CSV counts (%d and %d queries)", len(b), len(a))
	}
	if _, stderr, code := darrm(t, "", append(base, "--out", filepath.Join(dir, "votes.npy"))...); code != 2 || !strings.Contains(stderr, "two-class 0/1 votes are written as CSV") {
		t.Errorf("two-class votes as .npy: exit %d: %s", code, stderr)
	}
}
