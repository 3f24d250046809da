package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/statedir"
)

// TestLedgerInitSchedule: ledger init --schedule declares runs in a fixed
// order, each with its count (the last one's the rest of the budget); a
// release is charged to the run whose turn it is, stops at that run's
// end, and a release out of the order is refused naming the run expected,
// with no labels and no charge (issue 57). A schedule that is not one is
// refused naming the file, the line and the rule.
func TestLedgerInitSchedule(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	dir := t.TempDir()
	votes := filepath.Join(dir, "votes.csv")
	rows := `# {"darrm-votes":1,"ensemble":"schedule-25","K":25,"classes":10,"layout":"votes","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":25,"source":{"method":"none"}}]}` + "\n" +
		strings.Repeat("3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,7,7,7,9,9\n", 4)
	if err := os.WriteFile(votes, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	budget := []string{"--budget-eps", "2", "--budget-delta", "1e-5"}
	good := file("good.txt", "# first the noisier run, then the rest of the budget\n--mechanism gnmax --sigma2 80 --delta 1e-5 --queries 6\n\n--mechanism gnmax --sigma2 40 --delta 1e-5\n")
	for _, c := range []struct {
		name, schedule string
		extra          []string
		want           string
	}{
		{"no mechanism", file("nomech.txt", "--sigma2 40 --delta 1e-5 --queries 3\n"), nil, "line 1: no --mechanism"},
		{"open count before the last", file("open.txt", "--mechanism gnmax --sigma2 40 --delta 1e-5\n--mechanism gnmax --sigma2 80 --delta 1e-5 --queries 3\n"), nil,
			"line 2: line 1 has no --queries: only the last run may take the rest of the budget"},
		{"count 0", file("zero.txt", "--mechanism gnmax --sigma2 40 --delta 1e-5 --queries 0\n"), nil, "line 1: --queries = 0: a run's count must be >= 1"},
		{"not a flag", file("word.txt", "gnmax --sigma2 40\n"), nil, `line 1: "gnmax" is not a flag`},
		{"empty", file("empty.txt", "# nothing\n"), nil, "no runs"},
		{"beyond the budget", file("over.txt", "--mechanism gnmax --sigma2 40 --delta 1e-5 --queries 100000\n"), nil, "--queries"},
		{"with --mechanism", good, []string{"--mechanism", "gnmax"}, "--schedule and --mechanism exclude each other"},
		{"with --filter", good, []string{"--filter", "simple"}, "--schedule and --filter exclude each other"},
	} {
		led := filepath.Join(dir, "bad.ledger")
		args := append(append([]string{"ledger", "init", led, "--votes", votes, "--schedule", c.schedule}, budget...), c.extra...)
		_, e, code := darrm(t, "", args...)
		if code != exitUsage || !strings.Contains(unwrapped(e), c.want) {
			t.Errorf("%s: exit %d, want %d saying %q: %s", c.name, code, exitUsage, c.want, e)
		}
		if _, err := os.Stat(led); err == nil {
			t.Errorf("%s: a ledger was made", c.name)
		}
	}

	led := filepath.Join(dir, "schedule.ledger")
	out, e, code := darrm(t, "", append([]string{"ledger", "init", led, "--votes", votes, "--schedule", good}, budget...)...)
	if code != 0 || !strings.Contains(unwrapped(out), "a schedule of 2 runs, in this order") || !strings.Contains(unwrapped(out), "1. gnmax labels of") ||
		!strings.Contains(unwrapped(out), ": 6 labels") || !strings.Contains(unwrapped(out), "its declared use composed exactly, as one run") {
		t.Fatalf("ledger init --schedule: exit %d:\n%s%s", code, out, e)
	}
	release := func(sigma2 string) (int, string, int) {
		labels := filepath.Join(dir, "labels.csv")
		os.Remove(labels)
		_, e, code := darrm(t, "", "aggregate", votes, "--mechanism", "gnmax", "--sigma2", sigma2, "--delta", "1e-5", "--ledger", led, "--out", labels)
		b, _ := os.ReadFile(labels)
		return labelsIn(b), e, code
	}
	// Out of order: the second run's settings first.
	before, _ := os.ReadFile(led)
	if n, e, code := release("40"); code != exitUsage || n != 0 || !strings.Contains(unwrapped(e), "charges only run 1 of its declared schedule of 2, 6 gnmax labels") {
		t.Errorf("a release out of order: exit %d, %d labels: %s", code, n, e)
	}
	if after, _ := os.ReadFile(led); string(after) != string(before) {
		t.Error("a refused release changed the ledger")
	}
	// In order: the first run's 6 labels, 4 and then the 2 left of it.
	for i, want := range []int{4, 2} {
		if n, e, _ := release("80"); n != want {
			t.Errorf("release %d of the first run: %d labels, want %d: %s", i+1, n, want, e)
		}
	}
	if n, e, code := release("80"); code != exitUsage || n != 0 || !strings.Contains(unwrapped(e), "charges only run 2 of its declared schedule of 2") {
		t.Errorf("the first run's settings after its end: exit %d, %d labels: %s", code, n, e)
	}
	if n, e, code := release("40"); code != 0 || n != 4 {
		t.Errorf("the second run: exit %d, %d labels: %s", code, n, e)
	}
}
