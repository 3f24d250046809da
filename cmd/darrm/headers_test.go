package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/ledger"
)

// TestTinyLaplaceScale: a Laplace scale whose per-query eps 2/b is vacuous
// or overflows (issue 40, item 9) is refused before any label or header is
// written, with exit 2 and the flag named, with a ledger or without one;
// the ledger is left as it was.
func TestTinyLaplaceScale(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(ledger.EnvStateDir, t.TempDir())
	counts := countsFile(t, dir, "counts.csv", 5, func(i int) []int { return plurality(200, i%10) })
	led := filepath.Join(dir, "pate.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", counts, "--budget-eps", "10", "--budget-delta", "1e-3"); code != 0 {
		t.Fatal(e)
	}
	before, err := os.ReadFile(led)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "labels.csv")
	for _, scale := range []string{"1e-310", "1e-300", "0.01"} {
		for _, extra := range [][]string{nil, {"--ledger", led}} {
			args := append([]string{"aggregate", counts, "--mechanism", "lnmax", "--laplace-scale", scale, "--out", out}, extra...)
			_, e, code := darrm(t, "", args...)
			if code != exitUsage || !strings.Contains(e, "--laplace-scale = "+scale) || !strings.Contains(e, "at least 0.02") {
				t.Errorf("%v: exit %d: %s", args, code, e)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%v: wrote %s", args, out)
			}
		}
	}
	if after, _ := os.ReadFile(led); !bytes.Equal(before, after) {
		t.Errorf("the ledger changed:\n%s", after)
	}
}

// TestOneVoteNeedsKeyedHash: the one-vote relation holds only on keyed-hash
// shares (issue 40, item 2): a one-vote header with file-position (or
// shared) shares is refused by a release and by ledger init, with exit 2
// and the reason, and so are ledger init's flags that assert it.
func TestOneVoteNeedsKeyedHash(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(ledger.EnvStateDir, t.TempDir())
	orig, err := os.ReadFile("../../testdata/votes-K11-one-vote.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"file-position", "shared"} {
		votes := filepath.Join(dir, p+".csv")
		os.WriteFile(votes, bytes.Replace(orig, []byte(`"partition":"keyed-hash"`), []byte(`"partition":"`+p+`"`), 1), 0o644)
		out := filepath.Join(dir, "labels.csv")
		led := filepath.Join(dir, p+".ledger")
		for _, args := range [][]string{
			{"aggregate", votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--delta", "1e-5", "--seed", "1", "--out", out},
			{"aggregate", votes, "--mechanism", "gnmax", "--eps", "0.1", "--Delta", "1e-5", "--seed", "1", "--out", out},
			{"ledger", "init", led, "--votes", votes, "--budget-eps", "20", "--budget-delta", "1e-3"},
			{"ledger", "init", led, "--ensemble", "e", "--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--relation", "one-vote", "--kind", "fixed", "--partition", p, "--budget-eps", "20", "--budget-delta", "1e-3"},
		} {
			_, e, code := darrm(t, "", args...)
			if code != exitUsage || !strings.Contains(e, "the one-vote relation does not hold on") {
				t.Errorf("%v: exit %d: %s", args, code, e)
			}
			for _, f := range []string{out, led} {
				if _, err := os.Stat(f); err == nil {
					t.Errorf("%v: wrote %s", args, f)
				}
			}
		}
	}
}
