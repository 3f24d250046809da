package transfer

import (
	"slices"
	"testing"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/provenance"
)

// TestSimulated: dsub only for pure-DP teachers, gnmax and darrm-one-vote
// only for a per-query delta > 0.
func TestSimulated(t *testing.T) {
	for _, tc := range []struct {
		delta, target float64
		want          []provenance.MechanismName
	}{
		{1e-5, 3e-5, []provenance.MechanismName{"darrm", "subsample", "rr", "gnmax", "darrm-one-vote"}},
		{0, 1e-6, []provenance.MechanismName{"darrm", "subsample", "dsub", "rr", "gnmax", "darrm-one-vote"}},
		{0, 0, []provenance.MechanismName{"darrm", "subsample", "dsub", "rr"}},
	} {
		p := constraints.New(11, 3, 0.1, tc.delta)
		p.TargetDelta = tc.target
		if got := Simulated(p); !slices.Equal(got, tc.want) {
			t.Errorf("Delta %v delta %v: %v, want %v", tc.delta, tc.target, got, tc.want)
		}
	}
}
