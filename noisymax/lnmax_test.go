package noisymax

import (
	"errors"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

// A scale whose per-query ε = 2/b is above MaxLNMaxEps (or overflows to
// +Inf) is refused by LNMaxSpend, naming the scale and the rule, so that no
// release states a vacuous or infinite guarantee; the bound itself passes.
func TestLNMaxScaleBound(t *testing.T) {
	for _, b := range []float64{1e-310, 1e-300, 1e-10, 0.0199} {
		_, err := LNMaxSpend(b)
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != "laplace-scale" || pe.Value != b {
			t.Errorf("scale %v: %v, want a ParamError naming the laplace scale", b, err)
		}
	}
	for _, b := range []float64{2 / MaxLNMaxEps, 0.3, 20} {
		s, err := LNMaxSpend(b)
		if err != nil || !(s.Eps <= MaxLNMaxEps) {
			t.Errorf("scale %v: eps %v, %v; want accepted, at most %v", b, s.Eps, err, MaxLNMaxEps)
		}
	}
}
