package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestPureBudget: a pure-DP budget (δ = 0) is spent by pure-DP releases,
// with a ledger or without one and under every --composition: their
// simple composition is pure, and every composition whose total fits the
// budget counts, so that (3, 0) allows 10 labels of (3 × 0.1, 0) = (0.3,
// 0) and 29 of LNMax's (2/20, 0). (When m·eps was the float64 product
// 0.30000000000000004, ten of them did not fit and the budget allowed 9.)
func TestPureBudget(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, t.TempDir()) // its ensembles' records apart
	votes := smallVotes(t, dir, 40)
	counts := countsFile(t, dir, "counts.csv", 40, func(i int) []int { return plurality(200, i%10) })
	maxQ := func(step accountant.Guarantee) int {
		n := 0
		simple := accountant.Composition{Method: accountant.Simple}
		for g, _ := simple.Compose(step, n+1); g.Within(accountant.Guarantee{Eps: 3}); g, _ = simple.Compose(step, n+1) {
			n++
		}
		return n
	}
	subsample := []string{"aggregate", votes, "--mechanism", "subsample", "--m", "3", "--eps", "0.1", "--Delta", "0", "--no-cache"}
	lnmax := []string{"aggregate", counts, "--mechanism", "lnmax", "--laplace-scale", "20"}
	led := filepath.Join(dir, "pure.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--ensemble", "pure", "--K", "3", "--eps", "0.1", "--Delta", "0", "--kind", "per-query", "--partition", "shared", "--budget-eps", "3", "--budget-delta", "0"); code != 0 {
		t.Fatal(e)
	}
	withHeader(t, votes, provenance.Binding{Ensemble: "pure", Teachers: provenance.Teachers{K: 3, Each: accountant.Guarantee{Eps: 0.1}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes))
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
		// A run composes the pure loss of its label's pairs, less than its
		// guarantee 0.3 = m·eps: the majority of the K = 3 teachers moves
		// most when one of them votes 0 for sure and the other two are at
		// the corner (e^0.1/(1+e^0.1), 1/(1+e^0.1)), a loss of 2·0.1, and
		// the gamma sampled, c·gamma_Sub with c just below 1, keeps it
		// just below 0.2: 15 of them fit in 3.
		{"subsample, general", append(subsample, budget...), 15},
		{"subsample, optimal", append(subsample, append(budget, "--composition", "optimal")...), 15},
		{"subsample, simple", append(subsample, append(budget, "--composition", "simple")...), 15},
		// A version-5 ledger charges the same pure point (issue 57;
		// version 4 charged the guarantee 0.3 and allowed 10).
		{"subsample, ledger", append(subsample, "--ledger", led), 15},
		{"lnmax, general", append(lnmax, budget...), maxQ(accountant.Guarantee{Eps: 2.0 / 20})},
		{"lnmax, ledger", append(lnmax, "--ledger", pate), 29},
	} {
		out, e, code := darrm(t, "", append(tc.args, "--out", filepath.Join(dir, "labels.csv"), "--format", "json")...)
		var d map[string]any
		if code == exitBudget {
			decode(t, out, &d)
		}
		n, _ := d["released"].(float64)
		if code != exitBudget || int(n) != tc.want {
			t.Errorf("%s: exit %d, %v labels, want %d and exit %d: %s", tc.name, code, n, tc.want, exitBudget, strings.TrimSpace(e))
		}
	}
}

// TestConfidentGNMaxBudget: issue 35's case. Confident-GNMax (T = 200,
// σ1 = 150, σ2 = 40, discrete noise, every query charged) on 250
// teachers' votes over 10 classes with budget (2, 1e-5): one run releases
// 194 queries (the exact composition of the discrete Gaussians), and
// publishes that total; on a ledger with the same budget, whose runs may
// be chosen adaptively, the zCDP filter allows 167 and its total stays
// within the budget.
func TestConfidentGNMaxBudget(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, t.TempDir())
	counts := countsFile(t, dir, "counts.csv", 300, func(i int) []int { return plurality(250, i%10) })
	release := []string{"aggregate", counts, "--input-format", "counts", "--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40",
		"--delta", "1e-5", "--format", "json"}
	out, stderr, code := darrm(t, "", append(release, "--budget-eps", "2", "--budget-delta", "1e-5", "--out", filepath.Join(dir, "labels.csv"))...)
	var doc struct {
		Released int `json:"released"`
		Publish  struct {
			Source, Method string
			Eps, Delta     float64
		} `json:"publish"`
	}
	if decode(t, out, &doc); code != exitBudget || doc.Released != 194 || doc.Publish.Source != "run" || doc.Publish.Method != "exact" || doc.Publish.Eps > 2 || doc.Publish.Delta > 1e-5 {
		t.Errorf("one run: exit %d, %+v: %s", code, doc, stderr)
	}
	led := filepath.Join(dir, "pate.ledger")
	// Issue 57's default for a one-vote ledger, gdp-filter or simple(0),
	// allows as many as one run (194); the zCDP filter, named, allows 167.
	if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", counts, "--budget-eps", "2", "--budget-delta", "1e-5", "--filter", "zcdp-filter"); code != 0 {
		t.Fatal(e)
	}
	out, stderr, code = darrm(t, "", append(release, "--ledger", led, "--out", filepath.Join(dir, "ledger-labels.csv"))...)
	// The ledger's filter allows 167; what it publishes is its budget,
	// which holds every release charged to it.
	if decode(t, out, &doc); code != exitBudget || doc.Released != 167 || doc.Publish.Source != "ledger" || doc.Publish.Method != "zcdp-filter budget" || doc.Publish.Eps != 2 || doc.Publish.Delta != 1e-5 {
		t.Errorf("on a ledger: exit %d, %+v: %s", code, doc, stderr)
	}
}
