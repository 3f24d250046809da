package report

import (
	"slices"
	"testing"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/votefile"
)

// TestNewSimulate: each result keeps its aggregator's label and numbers,
// and the mechanisms darrm's interval lies above are listed.
func TestNewSimulate(t *testing.T) {
	p := gamma.Problem{Params: constraints.Params{K: 3, M: 1, Eps: 0.1, Delta: 1e-5, TargetDelta: 1e-5}}
	res := []ensemble.SimResult{
		{Name: "darrm", Privacy: ensemble.Privacy{Source: "certificate"}, Queries: 100, Agree: 90, Rate: 0.9, Lo: 0.85, Hi: 0.95, Exact: 0.9},
		{Name: "rr", Queries: 100, Agree: 60, Rate: 0.6, Lo: 0.5, Hi: 0.7},
		{Name: "subsample", Queries: 100, Agree: 88, Rate: 0.88, Lo: 0.8, Hi: 0.93},
	}
	for _, tc := range []struct {
		name  string
		res   []ensemble.SimResult
		above []votefile.Mechanism
	}{
		{"darrm and two others", res, []votefile.Mechanism{votefile.RR}},
		{"without darrm", res[1:], nil},
	} {
		labels := make([]string, len(tc.res))
		for i, r := range tc.res {
			labels[i] = "the " + string(r.Name)
		}
		out := NewSimulate(p, "U(0.5,1)", []float64{0.6, 0.7, 0.8}, 5, tc.res, labels)
		if out.K != 3 || out.Queries != 100 || out.Seed != 5 || out.Teachers != "U(0.5,1)" || out.Note == "" || !slices.Equal(out.Above, tc.above) || len(out.Results) != len(tc.res) {
			t.Fatalf("%s: %+v", tc.name, out)
		}
		for i, r := range out.Results {
			want := tc.res[i]
			if r.Mechanism != want.Name || r.Label != labels[i] || r.Agree != want.Agree || r.Agreement != want.Rate || r.Lo != want.Lo || r.Hi != want.Hi || r.Source != want.Privacy.Source {
				t.Errorf("%s: result %d %+v from %+v", tc.name, i, r, want)
			}
		}
	}
}
