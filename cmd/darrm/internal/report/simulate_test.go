package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/provenance"
)

// TestNewSimulate: each result keeps its aggregator's label and numbers,
// and the mechanisms darrm's interval lies above are listed.
func TestNewSimulate(t *testing.T) {
	p := resolve.Resolved{Problem: constraints.Problem{K: 3, M: 1, Eps: 0.1, Delta: 1e-5, TargetDelta: 1e-5}}
	res := []ensemble.SimResult{
		{Name: "darrm", Privacy: ensemble.Privacy{Source: "certificate"}, Queries: 100, Agree: 90, Rate: 0.9, Lo: 0.85, Hi: 0.95, Exact: 0.9},
		{Name: "rr", Queries: 100, Agree: 60, Rate: 0.6, Lo: 0.5, Hi: 0.7},
		{Name: "subsample", Queries: 100, Agree: 88, Rate: 0.88, Lo: 0.8, Hi: 0.93},
		// Below darrm, in another relation: not ranked against it.
		{Name: "gnmax", Privacy: ensemble.Privacy{Relation: accountant.OneVote}, Queries: 100, Agree: 55, Rate: 0.55, Lo: 0.45, Hi: 0.65},
	}
	for _, tc := range []struct {
		name  string
		res   []ensemble.SimResult
		above []provenance.MechanismName
	}{
		{"darrm and two others", res, []provenance.MechanismName{ensemble.RR{}.Name()}},
		{"without darrm", res[1:], nil},
	} {
		labels := make([]string, len(tc.res))
		for i, r := range tc.res {
			labels[i] = "the " + string(r.Name)
		}
		out := NewSimulate(p, "U(0.5,1)", []float64{0.6, 0.7, 0.8}, 5, tc.res, labels, "darrm")
		if out.K != 3 || out.Queries != 100 || out.Seed != 5 || out.Teachers != "U(0.5,1)" || out.Note == "" || !slices.Equal(out.Above, tc.above) || len(out.Results) != len(tc.res) {
			t.Fatalf("%s: %+v", tc.name, out)
		}
		for i, r := range out.Results {
			want := tc.res[i]
			if r.Mechanism != want.Name || r.Relation != want.Privacy.Relation || r.Label != labels[i] || r.Agree != want.Agree || r.Agreement != want.Rate || r.Lo != want.Lo || r.Hi != want.Hi || r.Source != want.Privacy.Source {
				t.Errorf("%s: result %d %+v from %+v", tc.name, i, r, want)
			}
		}
		var table strings.Builder
		if err := out.Write(&table, cliout.Table); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(table.String(), "one-vote") || !strings.Contains(unwrapped(table.String()), "rank mechanisms within a relation only") {
			t.Errorf("%s: the table does not say the relations apart:\n%s", tc.name, table.String())
		}
	}
}

func TestAbove(t *testing.T) {
	res := []ensemble.SimResult{
		{Name: "darrm", Lo: 0.8, Hi: 0.9},
		{Name: "rr", Lo: 0.6, Hi: 0.7},
		{Name: "subsample", Lo: 0.75, Hi: 0.85},
		{Name: "gnmax", Lo: 0.5, Hi: 0.79},
		// Below darrm, but in another relation: not ranked against it.
		{Name: "darrm-one-vote", Privacy: ensemble.Privacy{Relation: accountant.OneVote}, Lo: 0.7, Hi: 0.75},
	}
	if got := above(res, "darrm"); !slices.Equal(got, []provenance.MechanismName{ensemble.RR{}.Name(), ensemble.GNMax{}.Name()}) {
		t.Errorf("above(darrm) = %v", got)
	}
	if got := above(res, "darrm-one-vote"); got != nil {
		t.Errorf("above(darrm-one-vote), the only one of its relation: %v", got)
	}
	if got := above(res, "rr"); got != nil {
		t.Errorf("above(rr) = %v", got)
	}
	if got := above(res, "dsub"); got != nil {
		t.Errorf("above(dsub), not in the results: %v", got)
	}
}
