package main

import (
	"errors"
	"math"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

// TestSamplingRateAndEpochSteps checks DP-SGD's rate and length from the
// batch size, in integers where floating point would round 3/0.3 up to 11.
func TestSamplingRateAndEpochSteps(t *testing.T) {
	for _, tc := range []struct {
		epochs, batch, n int
		q                float64
		steps            int
		bad              string // the parameter refused, if any
	}{
		{5, 30, 1024, 30.0 / 1024, 171, ""},
		{3, 3, 10, 0.3, 10, ""},
		{1, 10, 10, 1, 1, ""},
		{1, 0, 10, 0, 0, "batch"},
		{1, 11, 10, 0, 0, "batch"},
		{1, 1, 0, 0, 0, "n"},
		{0, 3, 10, 0.3, 0, "epochs"},
		// epochs·n overflows an int: once it counted 1 step.
		{math.MaxInt, 1, math.MaxInt, 1, 0, "epochs"},
		{1 << 40, 1 << 20, 1 << 33, 1.0 / (1 << 13), 1 << 53, ""},
		{1 << 40, 1<<20 - 1, 1 << 33, float64(1<<20-1) / (1 << 33), 0, "epochs"},
	} {
		q, errQ := samplingRate(tc.batch, tc.n)
		steps, err := epochSteps(tc.epochs, tc.batch, tc.n)
		var pe *param.Error
		switch {
		case tc.bad == "" && (errQ != nil || err != nil || q != tc.q || steps != tc.steps):
			t.Errorf("%+v: q %v (%v), steps %d (%v)", tc, q, errQ, steps, err)
		case tc.bad != "" && (!errors.As(err, &pe) || pe.Name != tc.bad):
			t.Errorf("%+v: error %v, want one for %s", tc, err, tc.bad)
		}
	}
}
