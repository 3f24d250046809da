package accountant

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

func thesisRuns() []PABI {
	// Section 4.7.4: K = 50 epochs, p = 0.5, clipping norm 10, n = 1000:
	// DP-ShuffleG, Priv-Pub and Pub-Priv (S = 25 private epochs),
	// Interleaved (n_d = 500).
	return []PABI{
		{G: 10, Epochs: 50, Dilution: 1},
		{G: 10, Epochs: 25, Dilution: 1},
		{G: 10, Epochs: 50, Dilution: 501},
	}
}

// TestPABISigma checks that the calibrated σ meets the target, that
// 1e-9 less noise does not, that the improved conversion needs less noise
// than the paper's and Table 4.3's α more, and that Eps inverts Sigma.
func TestPABISigma(t *testing.T) {
	for _, p := range thesisRuns() {
		for _, eps := range []float64{1, 5, 10} {
			target := Guarantee{eps, 1e-6}
			var sig [2]float64
			for i, c := range []Conversion{PaperConversion, ImprovedConversion} {
				sigma, alpha, err := p.sigma(target, c)
				if err != nil {
					t.Fatal(err)
				}
				sig[i] = sigma
				got, _, err := p.Eps(sigma, target.Delta, c)
				if err != nil {
					t.Fatal(err)
				}
				if got > eps || got < eps*(1-1e-9) {
					t.Errorf("%v eps=%v %v: Eps(Sigma) = %v", p, eps, c, got)
				}
				rho, _ := p.rho(sigma)
				if at, _ := c.ConvertRDP(rho*alpha, alpha, target.Delta); at > eps {
					t.Errorf("%v eps=%v %v: eps at the returned alpha %v is %v", p, eps, c, alpha, at)
				}
				if less, _, _ := p.Eps(sigma*(1-1e-9), target.Delta, c); !(less > eps) {
					t.Errorf("%v eps=%v %v: sigma*(1-1e-9) still meets the target (%v)", p, eps, c, less)
				}
			}
			if !(sig[1] < sig[0]) {
				t.Errorf("%v eps=%v: improved sigma %v not below paper sigma %v", p, eps, sig[1], sig[0])
			}
			t43, alpha, err := p.sigmaTable43(target)
			if err != nil {
				t.Fatal(err)
			}
			if !(t43 > sig[0]) || alpha <= 1 {
				t.Errorf("%v eps=%v: Table 4.3 sigma %v (alpha %v) not above the exact paper sigma %v", p, eps, t43, alpha, sig[0])
			}
			// At Table 4.3's α the paper's bound is exactly ε.
			rho, _ := p.rho(t43)
			if at, _ := PaperConversion.ConvertRDP(rho*alpha, alpha, target.Delta); at > eps || at < eps*(1-1e-9) {
				t.Errorf("%v eps=%v: paper bound at Table 4.3's alpha = %v", p, eps, at)
			}
		}
	}
}

// TestPABILemmas checks the RDP slopes of Lemmas 4.5.2 and 4.6.2.
func TestPABILemmas(t *testing.T) {
	const sigma = 37.5
	base := PABI{G: 3, Epochs: 20, Dilution: 1}
	rho, err := base.rho(sigma)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * 9 * 20 / (sigma * sigma); relErr(rho, want) > 1e-15 {
		t.Errorf("DP-ShuffleG rho = %v, want 2G²K/σ² = %v", rho, want)
	}
	// Interleaved divides by n + 1 - n_d (60 for n = 100, n_d = 41).
	in, _ := PABI{G: 3, Epochs: 20, Dilution: 60}.rho(sigma)
	if relErr(in*60, rho) > 1e-15 {
		t.Errorf("diluted rho %v, want %v/60", in, rho)
	}
	// Lemma 4.5.2 at an arbitrary α is the paper conversion of the slope.
	alpha := 7.0
	lemma := 2*alpha*9*20/(sigma*sigma) + -math.Log(1e-6)/(alpha-1)
	if at, _ := PaperConversion.ConvertRDP(rho*alpha, alpha, 1e-6); relErr(at, lemma) > 1e-14 {
		t.Errorf("Lemma 4.5.2 at alpha=7: %v, ConvertRDP %v", lemma, at)
	}
}

// TestCalibrationExtremes checks that calibrated noise meets the target in
// floating point even where ε is tiny against log(1/δ) and rounding of
// ρα + cost(α) matters (δ close to 1, ε = 1e-9), or where δ is denormal.
func TestCalibrationExtremes(t *testing.T) {
	run := PABI{G: 10, Epochs: 50, Dilution: 501}
	for _, target := range []Guarantee{{1e-9, 0.999999}, {1e-9, 0.5}, {1e6, 1e-300}, {1e-3, 5e-324}, {3, 1e-12}} {
		for _, c := range []Conversion{PaperConversion, ImprovedConversion} {
			sigma, _, err := run.sigma(target, c)
			if err != nil {
				t.Fatalf("%v %v: %v", target, c, err)
			}
			if eps, _, err := run.Eps(sigma, target.Delta, c); err != nil || eps > target.Eps {
				t.Errorf("%v %v: Eps(Sigma) = %v, %v", target, c, eps, err)
			}
			gs, gl, err := c.SigmaFor(1, target)
			if err != nil {
				t.Fatalf("GNMax %v %v: %v", target, c, err)
			}
			if eps, _ := c.ConvertRDP(gl/(gs*gs), gl, target.Delta); eps > target.Eps {
				t.Errorf("GNMax %v %v: eps at sigma %v lambda %v = %v", target, c, gs, gl, eps)
			}
		}
		sigma, alpha, err := run.sigmaTable43(target)
		if err != nil {
			t.Fatalf("Table 4.3 %v: %v", target, err)
		}
		rho, _ := run.rho(sigma)
		if eps, _ := PaperConversion.ConvertRDP(rho*alpha, alpha, target.Delta); eps > target.Eps {
			t.Errorf("Table 4.3 %v: eps at sigma %v alpha %v = %v", target, sigma, alpha, eps)
		}
	}
}

// TestPABICalibrate checks that Calibrate agrees with Sigma and Eps under
// the exact rule and with sigmaTable43 under Table 4.3's, that the ε it
// reports is the bound at the σ and α it returns, and that Table 4.3's rule
// refuses the improved conversion.
func TestPABICalibrate(t *testing.T) {
	target := Guarantee{Eps: 5, Delta: 1e-6}
	for _, p := range thesisRuns() {
		for _, tc := range []struct {
			rule AlphaRule
			conv Conversion
		}{{AlphaExact, PaperConversion}, {AlphaExact, ImprovedConversion}, {AlphaTable43, PaperConversion}} {
			sigma, alpha, eps, err := p.Calibrate(target, tc.conv, tc.rule)
			if err != nil {
				t.Fatalf("%v %v %v: %v", p, tc.rule, tc.conv, err)
			}
			var want float64
			if tc.rule == AlphaExact {
				want, _, _ = p.sigma(target, tc.conv)
			} else {
				want, _, _ = p.sigmaTable43(target)
			}
			if sigma != want {
				t.Errorf("%v %v %v: sigma %v, want %v", p, tc.rule, tc.conv, sigma, want)
			}
			rho, _ := p.rho(sigma)
			if at, _ := tc.conv.ConvertRDP(rho*alpha, alpha, target.Delta); at != eps || eps > target.Eps || eps < target.Eps*(1-1e-9) {
				t.Errorf("%v %v %v: eps %v, bound at (sigma, alpha) %v, target %v", p, tc.rule, tc.conv, eps, at, target.Eps)
			}
		}
		var se *param.SettingError
		if _, _, _, err := p.Calibrate(target, ImprovedConversion, AlphaTable43); !errors.As(err, &se) || se.Name != "alpha rule" {
			t.Errorf("%v: Table 4.3's rule with the improved conversion: %v, want a *param.SettingError", p, err)
		}
	}
	for _, s := range []string{"exact", "table-4.3"} {
		var r AlphaRule
		if err := r.UnmarshalText([]byte(s)); err != nil || r.String() != s {
			t.Errorf("AlphaRule.UnmarshalText(%q) = %v, %v", s, r, err)
		}
	}
	if err := new(AlphaRule).UnmarshalText([]byte("optimal")); err == nil || !strings.Contains(err.Error(), "exact, table-4.3") {
		t.Errorf("AlphaRule.UnmarshalText(optimal): %v", err)
	}
}

// TestCheckAlphaRule: Table 4.3's rule goes with the paper's conversion
// only; the exact rule with either.
func TestCheckAlphaRule(t *testing.T) {
	for _, tc := range []struct {
		r  AlphaRule
		c  Conversion
		ok bool
	}{
		{AlphaExact, PaperConversion, true},
		{AlphaExact, ImprovedConversion, true},
		{AlphaTable43, PaperConversion, true},
		{AlphaTable43, ImprovedConversion, false},
	} {
		err := tc.c.CheckAlphaRule(tc.r)
		var se *param.SettingError
		if tc.ok && err != nil || !tc.ok && (!errors.As(err, &se) || err.Error() != "alpha rule table-4.3: Table 4.3's order is defined with the paper's conversion, not improved") {
			t.Errorf("%v with %v: %v", tc.r, tc.c, err)
		}
	}
}

// TestPABIEpsOverflow checks that a σ whose slope is finite but whose ε
// overflows is refused by its name, never returned as an ε of +Inf (which
// no JSON document holds): DP-ShuffleG's K = 50 epochs of G = 10 at
// σ = 1e-152 have slope 1e306, which converts to ε = +Inf.
func TestPABIEpsOverflow(t *testing.T) {
	run := PABI{G: 10, Epochs: 50, Dilution: 1}
	for _, c := range []Conversion{PaperConversion, ImprovedConversion} {
		eps, _, err := run.Eps(1e-152, 1e-6, c)
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != "sigma" {
			t.Errorf("%v: Eps(1e-152) = %v, %v; want a param.Error on sigma", c, eps, err)
		}
	}
}
