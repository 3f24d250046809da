package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/plan"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestPlanKeys: a plan's JSON names each parameter as the aggregate flag
// it feeds, and says the neighbour, or that there is none.
func TestPlanKeys(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
	count := plan.Count{Run: 194, PerQuery: accountant.Guarantee{Eps: 0.17, Delta: 1e-5}, Total: accountant.Total{Method: accountant.Exact, Guarantee: accountant.Guarantee{Eps: 1.998, Delta: 1e-5}}, Ledger: 167, Filter: accountant.ZCDPFilter}
	req := func(name provenance.MechanismName, in votefile.Input) plan.Request {
		delta := 1e-5
		var m ensemble.Mechanism
		switch name {
		case ensemble.ConfidentGNMax{}.Name():
			m = ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: delta}, Sigma2: 40, Noise: noisymax.DiscreteNoise}}
		case ensemble.LNMax{}.Name():
			m = ensemble.LNMax{Scale: 20}
		case ensemble.OneVoteDaRRM{}.Name():
			m = ensemble.OneVoteDaRRM{Eps: 0.3, Delta: delta}
		default:
			m = ensemble.DaRRM{Target: ensemble.Target{M: 3, Delta: delta}}
		}
		classes := 10
		if in == votefile.TwoClass {
			classes = 2
		}
		return plan.Request{ReleaseSpec: ensemble.ReleaseSpec{Mechanism: m, Teachers: &accountant.Guarantee{Eps: 0.1}, Budget: &budget}, K: 11, Classes: classes}
	}
	for _, tc := range []struct {
		name   string
		doc    Plan
		want   []string
		absent []string
	}{
		{"confident-gnmax count", Plan{Plan: plan.Plan{Request: req(ensemble.ConfidentGNMax{}.Name(), votefile.ManyClasses), Count: count}},
			[]string{"threshold", "sigma1", "sigma2", "delta", "queries", "budget_eps", "budget_delta", "publish_method", "publish_reference", "ledger_queries", "ledger_filter"}, []string{"m", "planned", "neighbour"}},
		{"darrm-one-vote plan", Plan{Chosen: true, Plan: plan.Plan{Request: req(ensemble.OneVoteDaRRM{}.Name(), votefile.TwoClass), Count: count, Queries: 100, Parameter: "target eps", Neighbour: 0.05, NeighbourRun: 90}},
			[]string{"target_eps", "delta", "queries", "planned", "neighbour", "neighbour_queries", "at_limit"}, []string{"m", "sigma2"}},
		{"darrm plan at m = K", Plan{Chosen: true, Plan: plan.Plan{Request: req(ensemble.DaRRM{}.Name(), votefile.TwoClass), Count: count, Queries: 5, Parameter: "m", AtLimit: true}},
			[]string{"m", "eps", "Delta", "delta", "at_limit"}, []string{"target_eps"}},
		{"lnmax", Plan{Plan: plan.Plan{Request: req(ensemble.LNMax{}.Name(), votefile.ManyClasses), Count: count}},
			[]string{"laplace_scale", "classes"}, []string{"sigma2", "delta", "for"}},
		{"confident-gnmax plan on proxy votes", Plan{Chosen: true, Plan: plan.Plan{Request: req(ensemble.ConfidentGNMax{}.Name(), votefile.ManyClasses), Count: count, Queries: 100, Parameter: "sigma2",
			Utility: &plan.Utility{Correct: 90, Answered: 95, Thresholds: []plan.ThresholdUtility{{Threshold: 0, Correct: 90, Answered: 95}, {Threshold: 120, Correct: 80, Answered: 84}}}}},
			[]string{"for", "expected_correct", "expected_answered", "thresholds", "threshold_note"}, []string{"m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.doc.Write(&b, cliout.JSON); err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := json.Unmarshal(b.Bytes(), &v); err != nil {
				t.Fatalf("%v\n%s", err, b.String())
			}
			for _, k := range tc.want {
				if _, ok := v[k]; !ok {
					t.Errorf("no key %q in %s", k, b.String())
				}
			}
			for _, k := range tc.absent {
				if _, ok := v[k]; ok {
					t.Errorf("key %q in %s", k, b.String())
				}
			}
			if tc.doc.Plan.AtLimit && (v["neighbour"] != nil || v["at_limit"] != true) {
				t.Errorf("at the limit: neighbour %v, at_limit %v", v["neighbour"], v["at_limit"])
			}
		})
	}
}

// TestPlanTableSettingsSafe: a table prints a planned setting rounded
// toward more noise, so that the value copied into aggregate releases the
// queries planned: a target_eps of 8/7 (7 queries of darrm-one-vote at
// (8, 1e-6), composed purely) printed to the nearest, 1.14286, released 6,
// and the comparison's laplace-scale 48.74 for 48.7427, 299 of 300.
func TestPlanTableSettingsSafe(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 8, Delta: 1e-6}}
	count := plan.Count{Run: 7, Total: accountant.Total{Method: accountant.Exact, Guarantee: accountant.Guarantee{Eps: 8, Delta: 1e-6}}}
	doc := func(m ensemble.Mechanism, teachers *accountant.Guarantee, classes int) Plan {
		return Plan{Chosen: true, Plan: plan.Plan{Request: plan.Request{ReleaseSpec: ensemble.ReleaseSpec{Mechanism: m, Teachers: teachers, Budget: &budget}, K: 11, Classes: classes}, Count: count, Queries: 7}}
	}
	for _, tc := range []struct {
		name      string
		doc       Plan
		want, not string
	}{
		{"target_eps down", doc(ensemble.OneVoteDaRRM{Eps: 8.0 / 7}, nil, 2), "│ 1.14285 ", "1.14286"},
		{"m down", doc(ensemble.DaRRM{Target: ensemble.Target{M: 9.402337228714524}}, &accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, 2), "│ 9.40233 ", "9.40234"},
		{"laplace_scale up", doc(ensemble.LNMax{Scale: 113.28125}, nil, 10), "│ 113.282 ", "113.281"},
		{"sigma2 up", doc(ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 54.018000817997695, Noise: noisymax.DiscreteNoise}, nil, 10), "│ 54.0181 ", "54.018 "},
		{"exact when nearest is safe", doc(ensemble.LNMax{Scale: 48.7427}, nil, 10), "│ 48.7427 ", "48.7428"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.doc.Write(&b, cliout.Table); err != nil {
				t.Fatal(err)
			}
			if out := b.String(); !strings.Contains(out, tc.want) || strings.Contains(out, tc.not) {
				t.Errorf("want %q, not %q, in\n%s", tc.want, tc.not, out)
			}
		})
	}
	for _, tc := range []struct {
		m       ensemble.Mechanism
		classes int
		want    string
	}{
		{ensemble.LNMax{Scale: 48.74267578124999}, 10, "laplace-scale 48.75"},
		{ensemble.ConfidentGNMax{Sigma1: 81.02700122699655, GNMax: ensemble.GNMax{Sigma2: 54.018000817997695}}, 10, "threshold 0, sigma1 81.03, sigma2 54.02"},
		{ensemble.GNMax{Sigma2: 41.32491}, 10, "sigma2 41.33"},
		{ensemble.OneVoteDaRRM{Eps: 0.27068464}, 2, "target-eps 0.2706"},
		{spreadMax{LNMax: ensemble.LNMax{Scale: 2}, Spread: 2.00001}, 10, "laplace-scale 2, spread 2.001"},
	} {
		var row PlanCompareRow
		row.setParameters(plan.Plan{Request: plan.Request{ReleaseSpec: ensemble.ReleaseSpec{Mechanism: tc.m}, Classes: tc.classes}})
		if got := row.parameters(", "); got != tc.want {
			t.Errorf("parameters %q, want %q", got, tc.want)
		}
	}
}

// spreadMax is a mechanism of a program's own: LNMax with a setting whose
// field's tag says a table rounds it up.
type spreadMax struct {
	ensemble.LNMax
	Spread float64 `json:"spread" flag:"spread" round:"up"`
}

// TestSettingRounding checks that a table rounds a setting as its
// field's tag says, toward more noise, whatever the mechanism, and prints
// a setting of no stated direction exactly.
func TestSettingRounding(t *testing.T) {
	for _, tc := range []struct {
		m     ensemble.Mechanism
		flag  string
		v     float64
		want4 string
	}{
		{ensemble.DaRRM{}, "m", 5.98831, "5.988"},
		{ensemble.OneVoteDaRRM{}, "target-eps", 8.0 / 7, "1.142"},
		{ensemble.GNMax{}, "sigma2", 34.0721, "34.08"},
		{ensemble.ConfidentGNMax{}, "sigma1", 56.5101, "56.52"},
		{ensemble.ConfidentGNMax{}, "threshold", 201.25, "201.25"},
		{ensemble.LNMax{}, "laplace-scale", 48.7427, "48.75"},
		{spreadMax{}, "spread", 2.00001, "2.001"},
		{spreadMax{}, "laplace-scale", 48.7427, "48.75"},
		{ensemble.LNMax{}, "spread", 2.00001, "2.00001"},
	} {
		if got := (number{tc.flag, tc.v, flagRounding(tc.m, tc.flag)}).text(4); got != tc.want4 {
			t.Errorf("%s's %s = %v: %q, want %q", tc.m.Name(), tc.flag, tc.v, got, tc.want4)
		}
	}
}
