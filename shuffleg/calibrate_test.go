package shuffleg

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// TestCalibrationRoundTrip calibrates every private algorithm and checks
// with the accountant that the σ found gives back the target ε: not above
// it (the guarantee holds) and not visibly below it (σ is the smallest).
func TestCalibrationRoundTrip(t *testing.T) {
	for _, conv := range []accountant.Conversion{accountant.PaperConversion, accountant.ImprovedConversion} {
		for _, eps := range []float64{1, 5, 10} {
			for _, a := range []Algorithm{DPShuffleG, PrivPub, PubPriv, Interleaved} {
				for _, p := range []float64{0.5, 1} {
					plan, err := NewPlan(a, 1000, 1000, 50, p)
					if err != nil {
						t.Fatal(err)
					}
					target := accountant.Guarantee{Eps: eps, Delta: 1e-6}
					c, err := plan.Calibrate(10, target, conv, accountant.AlphaExact)
					if err != nil {
						t.Fatalf("%v p=%v eps=%v %v: %v", a, p, eps, conv, err)
					}
					if c.Eps > eps || c.Eps < eps*(1-1e-9) {
						t.Errorf("%v p=%v eps=%v %v: σ = %v gives ε = %v", a, p, eps, conv, c.Sigma, c.Eps)
					}
					// Independently: the paper's bound at the best α has the closed
					// form ε = ρ + 2·sqrt(ρ·log(1/δ)), ρ = total RDP slope.
					if conv == accountant.PaperConversion {
						rho := 2 * 100 * float64(plan.PrivEpochs) / float64(plan.amplification()) / (c.Sigma * c.Sigma)
						if got := rho + 2*math.Sqrt(rho*math.Log(1e6)); math.Abs(got-eps) > 1e-9*eps {
							t.Errorf("%v p=%v eps=%v: closed form gives ε = %v at σ = %v", a, p, eps, got, c.Sigma)
						}
					}
				}
			}
		}
	}
}

// TestCalibrationOrdering checks Table 4.3's comparison at p = 0.5: Priv-Pub
// and Pub-Priv compose half the epochs of DP-ShuffleG, so σ shrinks by
// sqrt(2); Interleaved's PABI factor n + 1 − n_d = 501 shrinks it further.
func TestCalibrationOrdering(t *testing.T) {
	target := accountant.Guarantee{Eps: 5, Delta: 1e-6}
	sigma := map[Algorithm]float64{}
	for _, a := range []Algorithm{DPShuffleG, PrivPub, PubPriv, Interleaved} {
		plan, _ := NewPlan(a, 1000, 1000, 50, 0.5)
		c, err := plan.Calibrate(10, target, accountant.PaperConversion, accountant.AlphaExact)
		if err != nil {
			t.Fatal(err)
		}
		sigma[a] = c.Sigma
	}
	if r := sigma[DPShuffleG] / sigma[PrivPub]; math.Abs(r-math.Sqrt2) > 1e-9 {
		t.Errorf("σ_DP/σ_PrivPub = %v, want sqrt(2)", r)
	}
	if sigma[PrivPub] != sigma[PubPriv] {
		t.Errorf("σ_PrivPub = %v != σ_PubPriv = %v", sigma[PrivPub], sigma[PubPriv])
	}
	if r := sigma[DPShuffleG] / sigma[Interleaved]; math.Abs(r-math.Sqrt(501)) > 1e-9*r {
		t.Errorf("σ_DP/σ_Interleaved = %v, want sqrt(501)", r)
	}
}

// TestCalibrationTable43 checks the order rule of Table 4.3 against the
// accountant's: the same σ and α as its calibration of the run by that
// rule (accountant.PABI.Calibrate), slightly more noise than
// the exact rule, and refused with the improved conversion.
func TestCalibrationTable43(t *testing.T) {
	target := accountant.Guarantee{Eps: 5, Delta: 1e-6}
	for _, a := range []Algorithm{DPShuffleG, PrivPub, Interleaved} {
		plan, _ := NewPlan(a, 1000, 1000, 50, 0.5)
		c, err := plan.Calibrate(10, target, accountant.PaperConversion, accountant.AlphaTable43)
		if err != nil {
			t.Fatal(err)
		}
		sigma, alpha, _, _ := plan.PABI(10).Calibrate(target, accountant.PaperConversion, accountant.AlphaTable43)
		exact, _ := plan.Calibrate(10, target, accountant.PaperConversion, accountant.AlphaExact)
		if c.Sigma != sigma || c.Alpha != alpha || c.AlphaRule != accountant.AlphaTable43 || !(c.Sigma > exact.Sigma) || c.Eps > 5 {
			t.Errorf("%v: %+v; the accountant's Table 4.3 gives σ = %v at α = %v, the exact rule σ = %v", a, c, sigma, alpha, exact.Sigma)
		}
		if _, err := plan.Calibrate(10, target, accountant.ImprovedConversion, accountant.AlphaTable43); err == nil {
			t.Errorf("%v: Table 4.3 with the improved conversion: no error", a)
		}
	}
}

func TestCalibrateRejects(t *testing.T) {
	plan, _ := NewPlan(DPShuffleG, 100, 0, 10, 1)
	target := accountant.Guarantee{Eps: 1, Delta: 1e-6}
	if _, err := plan.Calibrate(math.Inf(1), target, accountant.PaperConversion, accountant.AlphaExact); err == nil {
		t.Error("infinite clip: no error")
	}
	if _, err := plan.Calibrate(10, accountant.Guarantee{Eps: 0, Delta: 1e-6}, accountant.PaperConversion, accountant.AlphaExact); err == nil {
		t.Error("eps = 0: no error")
	}
	if _, err := plan.Calibrate(10, accountant.Guarantee{Eps: 1, Delta: 1}, accountant.PaperConversion, accountant.AlphaExact); err == nil {
		t.Error("delta = 1: no error")
	}
	pub, _ := NewPlan(PublicOnly, 100, 100, 10, 1)
	if _, err := pub.Calibrate(10, target, accountant.PaperConversion, accountant.AlphaExact); err == nil {
		t.Error("public-only: no error")
	}
}

// TestNewPlanBounds: epochs beyond maxEpochs and a negative count of
// public samples are refused, naming them: a run of 2^31 epochs allocated
// its trace, 16 GiB, before its first step.
func TestNewPlanBounds(t *testing.T) {
	for _, tc := range []struct {
		nPublic, epochs int
		want            string
	}{
		{0, maxEpochs + 1, "epochs = 1048577: must be in [1, 1048576]"},
		{0, 1 << 31, "epochs = 2147483648"},
		{0, 0, "epochs = 0"},
		{-1, 10, "public samples = -1: must be >= 0"},
	} {
		if _, err := NewPlan(DPShuffleG, 10, tc.nPublic, tc.epochs, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewPlan(n public %d, epochs %d): %v, want %q", tc.nPublic, tc.epochs, err, tc.want)
		}
	}
	if _, err := NewPlan(DPShuffleG, 10, 0, maxEpochs, 1); err != nil {
		t.Errorf("epochs = maxEpochs: %v", err)
	}
}

// TestCalibrateNamesClip: a clip whose square underflows or overflows is
// refused naming the clip, where the analysis refused its own "coef = 0".
func TestCalibrateNamesClip(t *testing.T) {
	plan, err := NewPlan(DPShuffleG, 100, 0, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, clip := range []float64{5e-324, 1e-200, 1e-151, 1e151, 1e153, 1e154, 1e200, 1e308} {
		if _, err := plan.Calibrate(clip, accountant.Guarantee{Eps: 1, Delta: 1e-5}, accountant.PaperConversion, accountant.AlphaRule(0)); err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("clip = %v: must be in [1e-150, 1e150]", clip)) {
			t.Errorf("clip %v: %v", clip, err)
		}
	}
	for _, clip := range []float64{1e-150, 1, 1e150} {
		if _, err := plan.Calibrate(clip, accountant.Guarantee{Eps: 1, Delta: 1e-5}, accountant.PaperConversion, accountant.AlphaRule(0)); err != nil {
			t.Errorf("clip %v: %v", clip, err)
		}
	}
}
