package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/votefile"
)

// TestPureBudget: a pure-DP budget (δ = 0) is spent by pure-DP releases,
// with a ledger or without one and under every --composition: their
// simple composition is pure, and every composition whose total fits the
// budget counts, so that (3, 0) allows 9 labels of (0.1·3, 0) and 29 of
// LNMax's (2/20, 0).
func TestPureBudget(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(ledger.EnvStateDir, t.TempDir()) // its ensembles' records apart
	votes := smallVotes(t, dir, 40)
	counts := countsFile(t, dir, "counts.csv", 40, func(i int) []int { return plurality(200, i%10) })
	maxQ := func(step accountant.Guarantee) int {
		n := 0
		for g, _ := accountant.ComposeSimple(step, n+1); g.Within(accountant.Guarantee{Eps: 3}); g, _ = accountant.ComposeSimple(step, n+1) {
			n++
		}
		return n
	}
	eps := 0.1
	subsample := []string{"aggregate", votes, "--mechanism", "subsample", "--m", "3", "--eps", "0.1", "--Delta", "0", "--no-cache"}
	lnmax := []string{"aggregate", counts, "--mechanism", "lnmax", "--laplace-scale", "20"}
	led := filepath.Join(dir, "pure.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--ensemble", "pure", "--K", "3", "--eps", "0.1", "--Delta", "0", "--kind", "per-query", "--partition", "shared", "--budget-eps", "3", "--budget-delta", "0"); code != 0 {
		t.Fatal(e)
	}
	withHeader(t, votes, &votefile.Meta{Ensemble: "pure", K: 3, Classes: 2, Relation: accountant.PrivateTeachers, Kind: votefile.PerQuery, Partition: votefile.SharedData,
		Teachers: []votefile.TeacherGroup{{Count: 3, Guarantee: accountant.Guarantee{Eps: 0.1}}}})
	pate := filepath.Join(dir, "pate.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", pate, "--votes", counts, "--budget-eps", "3", "--budget-delta", "0"); code != 0 {
		t.Fatal(e)
	}
	budget := []string{"--budget-eps", "3", "--budget-delta", "0"}
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"subsample, general", append(subsample, budget...), maxQ(accountant.Guarantee{Eps: 3 * eps})},
		{"subsample, optimal", append(subsample, append(budget, "--composition", "optimal")...), 9},
		{"subsample, simple", append(subsample, append(budget, "--composition", "simple")...), 9},
		{"subsample, ledger", append(subsample, "--ledger", led), 9},
		{"lnmax, general", append(lnmax, budget...), maxQ(accountant.Guarantee{Eps: 2.0 / 20})},
		{"lnmax, ledger", append(lnmax, "--ledger", pate), 29},
	} {
		out, e, code := darrm(t, "", append(tc.args, "--out", filepath.Join(dir, "labels.csv"), "--format", "json")...)
		var d map[string]any
		if code == exitBudget {
			decode(t, out, &d)
		}
		n, ok := d["queries_answered"].(float64)
		if !ok {
			n, _ = d["released"].(float64)
		}
		if code != exitBudget || int(n) != tc.want {
			t.Errorf("%s: exit %d, %v labels, want %d and exit %d: %s", tc.name, code, n, tc.want, exitBudget, strings.TrimSpace(e))
		}
	}
}
