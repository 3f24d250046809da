package shuffleexp

import (
	"errors"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/shuffleg"
)

// TestCalibrateVariants: the three calibrations are Calibrate's, in their
// order, and the tighter rules need less noise.
func TestCalibrateVariants(t *testing.T) {
	target := accountant.Guarantee{Eps: 5, Delta: 1e-6}
	plan, _ := accountingPlan(shuffleg.Interleaved, 50, 0, 1000, 500)
	cals, err := calibrateVariants(plan, 10, target)
	if err != nil || len(cals) != 3 {
		t.Fatalf("%d calibrations (%v)", len(cals), err)
	}
	for i, v := range []struct {
		conv accountant.Conversion
		rule accountant.AlphaRule
	}{{accountant.PaperConversion, accountant.AlphaTable43}, {accountant.PaperConversion, accountant.AlphaExact}, {accountant.ImprovedConversion, accountant.AlphaExact}} {
		want, _ := plan.Calibrate(10, target, v.conv, v.rule)
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
	for _, a := range []shuffleg.Algorithm{shuffleg.DPShuffleG, shuffleg.PrivPub, shuffleg.Interleaved} {
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

// TestAccountingPlan checks the reductions between the algorithms' privacy
// accounting (Lemmas 4.5.2 and 4.6.2): Priv-Pub with S private epochs and
// Pub-Priv with K − S are DP-ShuffleG over those epochs, Interleaved
// divides the per-epoch RDP by n + 1 − n_d (its run's Dilution, which
// accountant's tests check the RDP of), and bad parameters are refused.
func TestAccountingPlan(t *testing.T) {
	run := func(a shuffleg.Algorithm, epochs, s, n, nd int) accountant.PABI {
		t.Helper()
		pl, err := accountingPlan(a, epochs, s, n, nd)
		if err != nil {
			t.Fatal(err)
		}
		return pl.PABI(3)
	}
	dp20 := run(shuffleg.DPShuffleG, 20, 0, 0, 0)
	if want := (accountant.PABI{G: 3, Epochs: 20, Dilution: 1}); dp20 != want {
		t.Errorf("DP-ShuffleG run %+v, want %+v", dp20, want)
	}
	if pp, up := run(shuffleg.PrivPub, 50, 20, 0, 0), run(shuffleg.PubPriv, 50, 30, 0, 0); pp != dp20 || up != dp20 {
		t.Errorf("priv-pub %+v, pub-priv %+v, want %+v", pp, up, dp20)
	}
	if in, want := run(shuffleg.Interleaved, 20, 0, 100, 41), (accountant.PABI{G: 3, Epochs: 20, Dilution: 60}); in != want {
		t.Errorf("interleaved run %+v, want %+v", in, want)
	}
	if full := run(shuffleg.Interleaved, 20, 0, 100, 100); full != dp20 {
		t.Errorf("interleaved with n_d = n: %+v, want %+v", full, dp20)
	}
	for _, bad := range []struct {
		a                shuffleg.Algorithm
		epochs, s, n, nd int
	}{
		{shuffleg.PrivPub, 5, 5, 0, 0}, {shuffleg.PubPriv, 5, 0, 0, 0}, {shuffleg.Interleaved, 5, 0, 10, 11}, {shuffleg.Interleaved, 5, 0, 0, 0},
		{shuffleg.DPShuffleG, 0, 0, 0, 0}, {shuffleg.PublicOnly, 5, 0, 0, 0},
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
		param   string    // of a parameter error
	}{
		{"at sigma", NoiseRequest{Algorithms: []shuffleg.Algorithm{shuffleg.DPShuffleG, shuffleg.PrivPub}, Epochs: 10, S: 5, G: 1, Delta: 1e-6, Sigma: &sigma}, []float64{0, 0}, []int{2, 2}, ""},
		{"to targets", NoiseRequest{Algorithms: []shuffleg.Algorithm{shuffleg.Interleaved}, Epochs: 10, N: 10, ND: 5, G: 1, Delta: 1e-6, Targets: []float64{1, 2}}, []float64{1, 2}, []int{3, 3}, ""},
		{"no S", NoiseRequest{Algorithms: []shuffleg.Algorithm{shuffleg.PubPriv}, Epochs: 10, G: 1, Delta: 1e-6, Targets: []float64{1}}, nil, nil, "S"},
	} {
		rows, err := tc.a.Run()
		var pe *param.Error
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
