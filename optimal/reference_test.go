package optimal

import (
	"fmt"
	"math"
	"testing"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// referenceOptima are the utilities and upper bounds of gamma_opt that an
// earlier solver printed, for eps = 0.1, Delta = 1e-5, the default delta
// and the uniform prior: `darrm solve --K K --m m --no-cache --format json`
// at commit d5a9826 (before the reduced pairs, the second-order search and
// the in-out loop of Delta > 0), each certified. The canonical gamma_opt is
// defined by the problem, not by the path of the loop (see Solve), so a
// faster path must find the same utility.
var referenceOptima = []struct {
	k           int
	m           float64
	utility, ub float64
	long        bool // more than a second: not in -short
}{
	{k: 101, m: 1, utility: 0.4999999999961643, ub: 0.5000000000000001},
	{k: 101, m: 3, utility: 0.8741374308677095, ub: 0.8741374388561904},
	{k: 101, m: 10, utility: 0.9988937948560477, ub: 0.9988937949065064},
	{k: 251, m: 1, utility: 0.49999999999049877, ub: 0.4999999999999996, long: true},
	{k: 251, m: 3, utility: 0.8749078351467747, ub: 0.8749079981059333, long: true},
	{k: 251, m: 10, utility: 0.9990957923759206, ub: 0.9990958595661443, long: true},
	{k: 501, m: 1, utility: 0.4999999999809442, ub: 0.49999999999999994, long: true},
	{k: 501, m: 3, utility: 0.8750319152504392, ub: 0.8750323965502099, long: true},
	{k: 501, m: 10, utility: 0.9991296585111842, ub: 0.999129988015309, long: true},
}

// TestSolveMatchesReference solves the settings of referenceOptima and
// checks that the utility equals the recorded one within 1e-6 relative
// (the tie-break's tolerance), that each upper bound is above the other
// solver's certified utility, and that the gamma is certified. The cases
// at K = 251 and 501 take seconds to a minute of CPU and run without
// -short.
func TestSolveMatchesReference(t *testing.T) {
	for _, tc := range referenceOptima {
		if tc.long && testing.Short() {
			continue
		}
		t.Run(fmt.Sprintf("K=%d/m=%g", tc.k, tc.m), func(t *testing.T) {
			r := mustOpt(t, constraints.New(tc.k, tc.m, 0.1, 1e-5), gamma.UniformPrior())
			if d := math.Abs(r.Utility-tc.utility) / tc.utility; d > 1e-6 {
				t.Errorf("utility %.16g, reference %.16g: relative difference %.2g", r.Utility, tc.utility, d)
			}
			// Either bound holds for every private gamma, the other
			// solver's included (with its rounding: a relative 1e-12).
			if r.UpperBound < tc.utility*(1-1e-12) {
				t.Errorf("upper bound %.16g below the reference's certified utility %.16g", r.UpperBound, tc.utility)
			}
			if r.Utility > tc.ub*(1+1e-12) {
				t.Errorf("utility %.16g above the reference's upper bound %.16g", r.Utility, tc.ub)
			}
		})
	}
}
