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
