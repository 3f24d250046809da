package setup

import (
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/constraints"
)

// TestOneVoteTarget: a release whose target is its own states the
// one-vote relation, its one eps and its delta where given, and refuses
// more than one eps (OneVoteTarget); resolved, its m and Delta
// are 1 and 0, its delta 0 unless given.
func TestOneVoteTarget(t *testing.T) {
	delta := 1e-5
	for _, tc := range []struct {
		eps   []float64
		delta *float64
		want  resolve.Stated
		err   string
	}{
		{nil, nil, resolve.Stated{}, ""},
		{[]float64{0.3}, &delta, resolve.Stated{Eps: &[]float64{0.3}[0], TargetDelta: &delta}, ""},
		{[]float64{0.3, 0.4}, nil, resolve.Stated{}, "--target-eps: 2 values: give the one eps of each release"},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.Float64Slice("target-eps", nil, "")
		for _, e := range tc.eps {
			if err := fs.Set("target-eps", strconv.FormatFloat(e, 'g', -1, 64)); err != nil {
				t.Fatal(err)
			}
		}
		s, err := OneVoteTarget(fs, tc.eps, tc.delta)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %v, want %q", tc.eps, err, tc.err)
			}
			continue
		}
		if err != nil || s.Relation == nil || *s.Relation != accountant.OneVote || (s.Eps == nil) != (tc.want.Eps == nil) || s.Eps != nil && *s.Eps != *tc.want.Eps || s.TargetDelta != tc.delta || s.M != nil || s.Delta != nil {
			t.Errorf("%v, %v: %+v, %v", tc.eps, tc.delta, s, err)
		}
		if p := resolve.Problem(11, constraints.Problem{}, s); p.M != 1 || p.Delta != 0 || p.TargetDelta != 0 && tc.delta == nil {
			t.Errorf("%v: resolved %+v: want m = 1, Delta = 0, delta 0 unless given", tc.eps, p.Problem)
		}
	}
}
