package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/statedir"
)

// TestSidecarCommand: darrm sidecar writes the header that PATE's NumPy
// votes need, the one docs/pate.md showed as JSON, from flags, reading
// K, the classes, the layout and the orientation from the votes; the
// votes are then released with it. Counts with abstentions take --K, and
// two-class 0/1 votes their classes; a CSV file without a header gets
// one too.
func TestSidecarCommand(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	labels, counts := pateVotes(250, 120, 10, 0.05)
	writeNPY(t, p("votes.npy"), labels)
	writeNPY(t, p("counts.npy"), counts)
	pate := []string{"--ensemble", "pate-k250", "--relation", "one-vote", "--kind", "fixed", "--partition", "keyed-hash"}
	out, e, code := darrm(t, "", append([]string{"sidecar", p("votes.npy"), "--classes", "10", "--teachers-in-rows"}, pate...)...)
	if code != 0 || !containsFlat(out, "sidecar "+p("votes.npy.meta.json")+": the metadata header of "+p("votes.npy")+", read with it whole (120 queries)") ||
		!containsFlat(out, "votes: class labels of 10 classes, a row per teacher") {
		t.Fatalf("exit %d: %s%s", code, out, e)
	}
	if b, _ := os.ReadFile(p("votes.npy.meta.json")); string(b) != pateSidecar+"\n" {
		t.Errorf("sidecar %s, want %s", b, pateSidecar)
	}
	if _, e, code := darrm(t, "", "aggregate", p("votes.npy"), "--mechanism", "confident-gnmax", "--threshold", "150", "--sigma1", "100", "--sigma2", "40",
		"--delta", "1e-5", "--seed", "1", "--out", p("labels.npy")); code != 0 {
		t.Errorf("release with the sidecar: exit %d: %s", code, e)
	}

	// Counts that sum to fewer than K (abstentions) need K stated.
	if _, e, code := darrm(t, "", append([]string{"sidecar", p("counts.npy")}, pate...)...); code != exitUsage || !strings.Contains(e, "more than K = ") {
		t.Errorf("counts with abstentions without --K: exit %d: %s", code, e)
	}
	if _, e, code := darrm(t, "", append([]string{"sidecar", p("counts.npy"), "--K", "250"}, pate...)...); code != 0 {
		t.Errorf("counts with --K: exit %d: %s", code, e)
	}
	if b, _ := os.ReadFile(p("counts.npy.meta.json")); !strings.Contains(string(b), `"K":250,"classes":10,"layout":"counts"`) || strings.Contains(string(b), "orientation") {
		t.Errorf("counts' sidecar %s", b)
	}

	// Two-class 0/1 votes, and a CSV file without a header.
	two := [][]uint8{{0, 1, 1}, {1, 1, 1}, {0, 0, 1}}
	writeNPY(t, p("two.npy"), two)
	writeCSV(t, p("two.csv"), two)
	private := []string{"--ensemble", "e3", "--relation", "private-teachers", "--eps", "0.5", "--Delta", "0", "--kind", "fixed", "--partition", "shared"}
	for _, args := range [][]string{{p("two.npy"), "--classes", "2", "--queries-in-rows"}, {p("two.csv")}} {
		if _, e, code := darrm(t, "", append(append([]string{"sidecar"}, args...), private...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
		b, _ := os.ReadFile(args[0] + ".meta.json")
		if !strings.Contains(string(b), `"K":3,"classes":2,"layout":"votes"`) || strings.Contains(string(b), "orientation") {
			t.Errorf("%v: sidecar %s", args, b)
		}
		if _, e, code := darrm(t, "", "aggregate", args[0], "--mechanism", "dsub", "--m", "1", "--seed", "1", "--out", p("two-labels.csv")); code != 0 {
			t.Errorf("%v: release by dsub: exit %d: %s", args, code, e)
		}
	}
}

// TestSidecarCommandRefuses: a sidecar is never written over one there
// (but with --replace), nor when a flag breaks a header's rule, the votes
// contradict it, or the votes have a header of their own; each exits 2,
// naming the flag, and leaves the sidecar as it was.
func TestSidecarCommandRefuses(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	labels, _ := pateVotes(25, 30, 10, 0)
	writeNPY(t, p("votes.npy"), labels)
	write := func(args ...string) (string, int) {
		_, e, code := darrm(t, "", append([]string{"sidecar", p("votes.npy"), "--classes", "10", "--teachers-in-rows"}, args...)...)
		return e, code
	}
	pate := []string{"--ensemble", "pate-k25", "--relation", "one-vote", "--kind", "fixed", "--partition", "keyed-hash"}
	if e, code := write(pate...); code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	first, _ := os.ReadFile(p("votes.npy.meta.json"))
	votes := filepath.Join("..", "..", "testdata", "votes-K11.csv")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a sidecar there", pate, p("votes.npy.meta.json") + " is there: a sidecar is replaced only on purpose (--replace)"},
		{"no partition", []string{"--ensemble", "x", "--relation", "one-vote", "--kind", "fixed", "--replace"}, "--partition is required"},
		{"one vote on shared data", []string{"--ensemble", "x", "--relation", "one-vote", "--kind", "fixed", "--partition", "shared", "--replace"},
			"--partition shared: the one-vote relation does not hold on shared data"},
		{"private teachers without a guarantee", []string{"--ensemble", "x", "--relation", "private-teachers", "--kind", "fixed", "--partition", "keyed-hash", "--replace"},
			"--eps and --Delta: the private-teachers relation needs every teacher's (eps, Delta)"},
		{"eps without Delta", append([]string{"--eps", "1", "--replace"}, pate...), "--eps and --Delta go together"},
		{"K of the other axis", append([]string{"--K", "30", "--replace"}, pate...), "has 25 teachers, but K = 30 is stated"},
		{"an ensemble id too long", []string{"--ensemble", strings.Repeat("e", 300), "--relation", "one-vote", "--kind", "fixed", "--partition", "keyed-hash", "--replace"},
			"--ensemble " + `"` + strings.Repeat("e", 32) + `"...` + ": must be printable UTF-8 text of at most 256 bytes"},
		{"standard output", append([]string{"--out", "-"}, pate...), "--out -: a sidecar is a file of its own"},
		{"the votes", append([]string{"--out", p("votes.npy"), "--replace"}, pate...), "--out " + p("votes.npy") + " is the vote file"},
	} {
		if e, code := write(tc.args...); code != exitUsage || !strings.Contains(e, tc.want) {
			t.Errorf("%s: exit %d: %s", tc.name, code, e)
		}
		if b, _ := os.ReadFile(p("votes.npy.meta.json")); string(b) != string(first) {
			t.Errorf("%s: the sidecar changed: %s", tc.name, b)
		}
	}
	if _, e, code := darrm(t, "", append([]string{"sidecar", votes}, pate...)...); code != exitUsage || !strings.Contains(e, "has a metadata header on its first line") {
		t.Errorf("votes with a header: exit %d: %s", code, e)
	}
	if _, e, code := darrm(t, "", append([]string{"sidecar", "-"}, pate...)...); code != exitUsage || !strings.Contains(e, "give its name, not -") {
		t.Errorf("standard input: exit %d: %s", code, e)
	}
	if e, code := write(append([]string{"--ensemble", "pate-k25b", "--replace"}, pate[2:]...)...); code != 0 {
		t.Errorf("--replace: exit %d: %s", code, e)
	}
	if b, _ := os.ReadFile(p("votes.npy.meta.json")); !strings.Contains(string(b), `"ensemble":"pate-k25b"`) {
		t.Errorf("not replaced: %s", b)
	}
}
