package accountant

import (
	"math"
	"testing"
)

// TestGNMaxExact checks that the exact σ meets the target at its λ, that a
// slightly smaller σ does not meet it at any λ, and that no grid point of the
// paper's search beats it.
func TestGNMaxExact(t *testing.T) {
	for _, target := range []Guarantee{{0.2676, 3e-4}, {0.2556, 3e-4}, {1, 1e-5}, {0.05, 1e-6}, {4, 1e-2}} {
		for _, c := range []Conversion{PaperConversion, ImprovedConversion} {
			sigma, lambda, err := GNMaxSigma(target, c)
			if err != nil {
				t.Fatal(err)
			}
			at, err := ConvertRDP(lambda/(sigma*sigma), lambda, target.Delta, c)
			if err != nil {
				t.Fatal(err)
			}
			if at > target.Eps {
				t.Errorf("%v %v: eps at sigma=%v lambda=%v is %v", target, c, sigma, lambda, at)
			}
			smaller := sigma * (1 - 1e-9)
			if best, _, _ := RhoToDP(1/(smaller*smaller), target.Delta, c); !(best > target.Eps) {
				t.Errorf("%v %v: sigma*(1-1e-9) still meets the target (eps %v)", target, c, best)
			}
		}
		grid, _, err := GNMaxSigmaGrid(target)
		if err != nil {
			t.Fatal(err)
		}
		exact, _, _ := GNMaxSigma(target, PaperConversion)
		if exact > grid || grid > exact*1.01 {
			t.Errorf("%v: grid sigma %v vs exact %v", target, grid, exact)
		}
	}
}

func TestGNMaxGridTooStrict(t *testing.T) {
	// λ_min = log(1/δ)/ε + 1 > 500: no grid point.
	_, _, err := GNMaxSigmaGrid(Guarantee{0.01, 1e-6})
	if err == nil {
		t.Fatal("no error for an empty grid")
	}
	if sigma, _, err := GNMaxSigma(Guarantee{0.01, 1e-6}, PaperConversion); err != nil || math.IsInf(sigma, 0) {
		t.Errorf("exact GNMax for the same target: %v, %v", sigma, err)
	}
}
