package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/report"
)

// TestLedgerAcrossRuns charges two releases of the same teachers to one
// ledger: the second is cut at what the budget has left (exit 4), the
// ledger shows both, a GNMax release cannot use a private-teachers ledger,
// and a corrupted ledger releases nothing.
func TestLedgerAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "teachers.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--ensemble", "k11", "--budget-eps", "3", "--budget-delta", "1e-3"); code != 0 {
		t.Fatal(e)
	}
	votes := strings.Repeat("1,1,1,1,1,1,0,0,0,0,0\n", 6)
	args := append([]string{"aggregate", "--mechanism", "subsample", "--no-cache", "--ledger", led, "--format", "json"}, stated...)
	first := filepath.Join(dir, "a.csv")
	out, errOut, code := darrm(t, votes, append(args, "--out", first)...)
	if code != 0 {
		t.Fatalf("first release: exit %d: %s", code, errOut)
	}
	var doc struct {
		report.Aggregate
		Totals []map[string]any `json:"totals"`
	}
	decode(t, out, &doc)
	if doc.Answered != 6 || doc.Ledger == nil || doc.Ledger.QueriesLeft < 1 || doc.Ledger.QueriesLeft >= 6 {
		t.Fatalf("first release: answered %d, ledger %+v", doc.Answered, doc.Ledger)
	}
	left := doc.Ledger.QueriesLeft
	second := filepath.Join(dir, "b.csv")
	_, errOut, code = darrm(t, votes, append(args, "--out", second)...)
	if code != exitBudget {
		t.Fatalf("second release: exit %d, want %d: %s", code, exitBudget, errOut)
	}
	b, _ := os.ReadFile(second)
	if n := strings.Count(string(b), "\n") - 1; n != left {
		t.Errorf("second release wrote %d labels, the ledger allowed %d", n, left)
	}
	out, errOut, code = darrm(t, "", "ledger", "show", led, "--format", "csv")
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, "subsample") {
		t.Errorf("ledger show: exit %d:\n%s%s", code, out, errOut)
	}
	_, errOut, code = darrm(t, votes, append([]string{"aggregate", "--mechanism", "gnmax", "--ledger", led, "--out", filepath.Join(dir, "g.csv")}, stated...)...)
	if code != exitUsage || !strings.Contains(errOut, "cannot share a budget") {
		t.Errorf("gnmax on a private-teachers ledger: exit %d: %s", code, errOut)
	}
	raw, _ := os.ReadFile(led)
	os.WriteFile(led, []byte(strings.Replace(string(raw), `"queries":6`, `"queries":1`, 1)), 0o644)
	third := filepath.Join(dir, "c.csv")
	_, errOut, code = darrm(t, votes, append(args, "--out", third)...)
	if code != exitUsage || !strings.Contains(errOut, "sha256") {
		t.Errorf("corrupted ledger: exit %d: %s", code, errOut)
	}
	for _, f := range []string{third, filepath.Join(dir, "g.csv")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}
