package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMaxQueries: --max-queries N releases the first N queries with any
// mechanism and exits 0, the rest counted as not requested, not stopped;
// a budget that stops the release before N exits 4, naming what stopped
// it; a release of every query exits 0.
func TestMaxQueries(t *testing.T) {
	dir := t.TempDir()
	counts := ptrCounts(t, dir, "counts.csv", 40, 238)
	for _, tc := range []struct {
		name, votes string
		args        []string
		queries     int
	}{
		{"darrm", "../../testdata/votes-K11.csv", nil, 20},
		{"subsample", "../../testdata/votes-K11.csv", []string{"--mechanism", "subsample"}, 20},
		{"darrm-one-vote", "../../testdata/votes-K11-one-vote.csv", []string{"--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--delta", "1e-5"}, 20},
		{"gnmax", counts, []string{"--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5"}, 40},
		{"confident-gnmax", counts, []string{"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5"}, 40},
		{"lnmax", counts, []string{"--mechanism", "lnmax", "--laplace-scale", "50"}, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(more ...string) (int, map[string]any, string) {
				args := append([]string{"aggregate", tc.votes, "--out", filepath.Join(t.TempDir(), "labels.csv"), "--format", "json"}, tc.args...)
				stdout, stderr, code := darrm(t, "", append(args, more...)...)
				var doc map[string]any
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatalf("%v: exit %d, not JSON: %s %s", more, code, stdout, stderr)
				}
				return code, doc, stderr
			}
			code, doc, e := run("--max-queries", "5")
			if code != 0 || doc["released"] != 5.0 || doc["not_requested"] != float64(tc.queries-5) || doc["stopped_by_budget"] != 0.0 {
				t.Errorf("--max-queries 5: exit %d, released %v, not requested %v, stopped %v (%s); want 0, 5, the rest, none",
					code, doc["released"], doc["not_requested"], doc["stopped_by_budget"], e)
			}
			if code, doc, _ := run(); code != 0 || doc["released"] != float64(tc.queries) || doc["not_requested"] != 0.0 {
				t.Errorf("every query: exit %d, %v released", code, doc["released"])
			}
			// A budget of one query's guarantee: it stops the run
			// before the 5 asked for.
			perQuery := doc["per_query"].(map[string]any)
			budget := []string{"--budget-eps", strconv.FormatFloat(perQuery["eps"].(float64), 'g', -1, 64), "--budget-delta", strconv.FormatFloat(perQuery["delta"].(float64), 'g', -1, 64)}
			if tc.name == "darrm" || tc.name == "subsample" {
				// Fixed teachers: their cap, within any budget that holds
				// it, frees every label; one below it allows none.
				budget = []string{"--budget-eps", "0.1", "--budget-delta", "1e-6"}
			}
			code, doc, e = run(append(budget, "--max-queries", "5")...)
			if code != exitBudget || doc["stopped_by_budget"].(float64) == 0 || doc["released"].(float64) >= 5 || !strings.Contains(e, "privacy budget reached") {
				t.Errorf("a budget below 5 queries: exit %d, released %v, stopped %v (%s); want %d, stopped by the budget", code, doc["released"], doc["stopped_by_budget"], e, exitBudget)
			}
		})
	}
}
