package shuffleg

import (
	"errors"
	"math"
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
					c, err := Calibrate(plan, 10, target, conv, accountant.AlphaExact)
					if err != nil {
						t.Fatalf("%v p=%v eps=%v %v: %v", a, p, eps, conv, err)
					}
					if c.Eps > eps || c.Eps < eps*(1-1e-9) {
						t.Errorf("%v p=%v eps=%v %v: σ = %v gives ε = %v", a, p, eps, conv, c.Sigma, c.Eps)
					}
					// Independently: the paper's bound at the best α has the closed
					// form ε = ρ + 2·sqrt(ρ·log(1/δ)), ρ = total RDP slope.
					if conv == accountant.PaperConversion {
						rho := 2 * 100 * float64(plan.PrivEpochs) / float64(plan.Amplification()) / (c.Sigma * c.Sigma)
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
		c, err := Calibrate(plan, 10, target, accountant.PaperConversion, accountant.AlphaExact)
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

// TestCalibrateVariants: the three calibrations are Calibrate's, in their
// order, and the tighter rules need less noise.
func TestCalibrateVariants(t *testing.T) {
	target := accountant.Guarantee{Eps: 5, Delta: 1e-6}
	plan, _ := accountingPlan(Interleaved, 50, 0, 1000, 500)
	cals, err := calibrateVariants(plan, 10, target)
	if err != nil || len(cals) != 3 {
		t.Fatalf("%d calibrations (%v)", len(cals), err)
	}
	for i, v := range []struct {
		conv accountant.Conversion
		rule accountant.AlphaRule
	}{{accountant.PaperConversion, accountant.AlphaTable43}, {accountant.PaperConversion, accountant.AlphaExact}, {accountant.ImprovedConversion, accountant.AlphaExact}} {
		want, _ := Calibrate(plan, 10, target, v.conv, v.rule)
		if cals[i] != want {
			t.Errorf("variant %d: %+v, want %+v", i, cals[i], want)
		}
	}
	if !(cals[0].Sigma >= cals[1].Sigma && cals[1].Sigma > cals[2].Sigma) {
		t.Errorf("sigma %v, %v, %v: want Table 4.3 >= exact > improved", cals[0].Sigma, cals[1].Sigma, cals[2].Sigma)
	}
	if _, err := calibrateVariants(plan, 0, target); err == nil {
		t.Error("clip 0: no error")
	}
}

// TestEpsVariants: at the σ that calibrateVariants gives, EpsVariants
// finds the ε of each conversion at its exact order again, at most the
// target; a bad σ is refused.
func TestEpsVariants(t *testing.T) {
	target := accountant.Guarantee{Eps: 5, Delta: 1e-6}
	for _, a := range []Algorithm{DPShuffleG, PrivPub, Interleaved} {
		plan, _ := accountingPlan(a, 50, 25, 1000, 500)
		cals, err := calibrateVariants(plan, 10, target)
		if err != nil {
			t.Fatal(err)
		}
		for i, conv := range []accountant.Conversion{accountant.PaperConversion, accountant.ImprovedConversion} {
			at := cals[i+1]
			got, err := EpsVariants(plan, 10, at.Sigma, target.Delta)
			if err != nil || len(got) != 2 {
				t.Fatalf("%v: %d results (%v)", a, len(got), err)
			}
			c := got[i]
			if c.Conversion != conv || c.AlphaRule != accountant.AlphaExact || c.Sigma != at.Sigma || c.Alpha != at.Alpha || c.Eps != at.Eps || c.Eps > target.Eps || c.Reference != a.Reference() {
				t.Errorf("%v %v: %+v, calibration %+v", a, conv, c, at)
			}
		}
		if _, err := EpsVariants(plan, 10, 0, target.Delta); err == nil {
			t.Errorf("%v: sigma 0: no error", a)
		}
	}
}

// TestCalibrationTable43 checks the order rule of Table 4.3 against the
// accountant's: the same σ and α as SigmaTable43, slightly more noise than
// the exact rule, and refused with the improved conversion.
func TestCalibrationTable43(t *testing.T) {
	target := accountant.Guarantee{Eps: 5, Delta: 1e-6}
	for _, a := range []Algorithm{DPShuffleG, PrivPub, Interleaved} {
		plan, _ := NewPlan(a, 1000, 1000, 50, 0.5)
		c, err := Calibrate(plan, 10, target, accountant.PaperConversion, accountant.AlphaTable43)
		if err != nil {
			t.Fatal(err)
		}
		sigma, alpha, _ := plan.PABI(10).SigmaTable43(target)
		exact, _ := Calibrate(plan, 10, target, accountant.PaperConversion, accountant.AlphaExact)
		if c.Sigma != sigma || c.Alpha != alpha || c.AlphaRule != accountant.AlphaTable43 || !(c.Sigma > exact.Sigma) || c.Eps > 5 {
			t.Errorf("%v: %+v; SigmaTable43 gives σ = %v at α = %v, the exact rule σ = %v", a, c, sigma, alpha, exact.Sigma)
		}
		if _, err := Calibrate(plan, 10, target, accountant.ImprovedConversion, accountant.AlphaTable43); err == nil {
			t.Errorf("%v: Table 4.3 with the improved conversion: no error", a)
		}
	}
}

func TestCalibrateRejects(t *testing.T) {
	plan, _ := NewPlan(DPShuffleG, 100, 0, 10, 1)
	target := accountant.Guarantee{Eps: 1, Delta: 1e-6}
	if _, err := Calibrate(plan, math.Inf(1), target, accountant.PaperConversion, accountant.AlphaExact); err == nil {
		t.Error("infinite clip: no error")
	}
	if _, err := Calibrate(plan, 10, accountant.Guarantee{Eps: 0, Delta: 1e-6}, accountant.PaperConversion, accountant.AlphaExact); err == nil {
		t.Error("eps = 0: no error")
	}
	if _, err := Calibrate(plan, 10, accountant.Guarantee{Eps: 1, Delta: 1}, accountant.PaperConversion, accountant.AlphaExact); err == nil {
		t.Error("delta = 1: no error")
	}
	pub, _ := NewPlan(PublicOnly, 100, 100, 10, 1)
	if _, err := Calibrate(pub, 10, target, accountant.PaperConversion, accountant.AlphaExact); err == nil {
		t.Error("public-only: no error")
	}
}

// TestAccountingPlan checks the reductions between the algorithms' privacy
// accounting (Lemmas 4.5.2 and 4.6.2): Priv-Pub with S private epochs and
// Pub-Priv with K − S are DP-ShuffleG over those epochs, Interleaved
// divides the per-epoch RDP by n + 1 − n_d, and bad parameters are refused.
func TestAccountingPlan(t *testing.T) {
	const sigma = 37.5
	rho := func(a Algorithm, epochs, s, n, nd int) float64 {
		t.Helper()
		pl, err := accountingPlan(a, epochs, s, n, nd)
		if err != nil {
			t.Fatal(err)
		}
		r, err := pl.PABI(3).Rho(sigma)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	dp20 := rho(DPShuffleG, 20, 0, 0, 0)
	if want := 2 * 9 * 20 / (sigma * sigma); math.Abs(dp20-want) > 1e-15*want {
		t.Errorf("DP-ShuffleG rho = %v, want 2G²K/σ² = %v", dp20, want)
	}
	if pp, up := rho(PrivPub, 50, 20, 0, 0), rho(PubPriv, 50, 30, 0, 0); pp != dp20 || up != dp20 {
		t.Errorf("priv-pub %v, pub-priv %v, want %v", pp, up, dp20)
	}
	if in := rho(Interleaved, 20, 0, 100, 41); math.Abs(in*60-dp20) > 1e-15*dp20 {
		t.Errorf("interleaved rho %v, want %v/60", in, dp20)
	}
	if full := rho(Interleaved, 20, 0, 100, 100); full != dp20 {
		t.Errorf("interleaved with n_d = n: %v, want %v", full, dp20)
	}
	for _, bad := range []struct {
		a                Algorithm
		epochs, s, n, nd int
	}{
		{PrivPub, 5, 5, 0, 0}, {PubPriv, 5, 0, 0, 0}, {Interleaved, 5, 0, 10, 11}, {Interleaved, 5, 0, 0, 0},
		{DPShuffleG, 0, 0, 0, 0}, {PublicOnly, 5, 0, 0, 0},
	} {
		if _, err := accountingPlan(bad.a, bad.epochs, bad.s, bad.n, bad.nd); err == nil {
			t.Errorf("accountingPlan(%+v) accepted", bad)
		}
	}
}

// TestAccounting: per algorithm, the given σ's ε under each conversion,
// then the calibrations to each target; a plan that cannot be made is an
// error naming its parameter.
func TestAccounting(t *testing.T) {
	sigma := 3.0
	for _, tc := range []struct {
		name    string
		a       NoiseRequest
		targets []float64 // of the rows, 0 at the given σ
		n       []int     // calibrations per row
		param   string    // of an *accountant.ParamError
	}{
		{"at sigma", NoiseRequest{Algorithms: []Algorithm{DPShuffleG, PrivPub}, Epochs: 10, S: 5, G: 1, Delta: 1e-6, Sigma: &sigma}, []float64{0, 0}, []int{2, 2}, ""},
		{"to targets", NoiseRequest{Algorithms: []Algorithm{Interleaved}, Epochs: 10, N: 10, ND: 5, G: 1, Delta: 1e-6, Targets: []float64{1, 2}}, []float64{1, 2}, []int{3, 3}, ""},
		{"no S", NoiseRequest{Algorithms: []Algorithm{PubPriv}, Epochs: 10, G: 1, Delta: 1e-6, Targets: []float64{1}}, nil, nil, "S"},
	} {
		rows, err := tc.a.Run()
		var pe *accountant.ParamError
		if tc.param != "" {
			if !errors.As(err, &pe) || pe.Name != tc.param {
				t.Errorf("%s: %v, want a ParamError for %s", tc.name, err, tc.param)
			}
			continue
		}
		if err != nil || len(rows) != len(tc.targets) {
			t.Fatalf("%s: %d rows (%v)", tc.name, len(rows), err)
		}
		for i, r := range rows {
			if r.Target != tc.targets[i] || len(r.Calibrations) != tc.n[i] {
				t.Errorf("%s: row %d: target %v, %d calibrations", tc.name, i, r.Target, len(r.Calibrations))
			}
			if r.Target == 0 && r.Calibrations[0].Sigma != sigma {
				t.Errorf("%s: row %d at sigma %v", tc.name, i, r.Calibrations[0].Sigma)
			}
		}
	}
}
