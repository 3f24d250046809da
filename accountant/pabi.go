package accountant

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/roots"
)

// PABI is a run of noisy contractive gradient steps whose privacy is
// bounded by privacy amplification by iteration, as in the DP-ShuffleG
// family (thesis Lemmas 4.5.2 and 4.6.2): each of Epochs epochs that touch
// the private data is (α, 2αG²/(σ²·Dilution))-RDP, and the epochs compose
// (Proposition 4.3.5). The algorithms themselves, and how each maps to a
// PABI run, are in package shuffleg.
type PABI struct {
	G        float64 // Lipschitz constant of every f(·; d): the clipping norm
	Epochs   int     // epochs that use the private data, >= 1
	Dilution int     // n + 1 − n_d for Interleaved (Lemma 4.6.2); 1 for the others
}

func (p PABI) validate() error {
	if err := param.Positive("G", p.G); err != nil {
		return err
	}
	if err := param.Count("epochs", p.Epochs, 1); err != nil {
		return err
	}
	return param.Count("dilution", p.Dilution, 1)
}

// coef returns the total RDP slope times σ².
func (p PABI) coef() float64 {
	return 2 * p.G * p.G * float64(p.Epochs) / float64(p.Dilution)
}

// rho returns the slope of the whole run's RDP curve: each epoch's
// composed over Epochs (Proposition 4.3.5).
func (p PABI) rho(sigma float64) (float64, error) {
	if err := p.check(sigma); err != nil {
		return 0, err
	}
	rho := p.coef() / (sigma * sigma)
	if !(rho > 0) || math.IsInf(rho, 1) {
		// Said of σ, which the caller gave, not of the slope, which
		// no caller gives: the conversion's own error read "--rho = +Inf".
		return 0, &param.Error{Name: "sigma", Value: sigma, Rule: fmt.Sprintf("the run's zCDP slope coef/sigma² = %v: must be a finite number > 0 in floating point", rho)}
	}
	return rho, nil
}

// Eps returns the smallest ε such that the run is (ε, δ)-DP with noise σ
// under conversion c, over every order α > 1, and that α. With
// PaperConversion it is the bound of Lemma 4.5.2 / 4.6.2 at its best α.
func (p PABI) Eps(sigma, delta float64, c Conversion) (eps, alpha float64, err error) {
	rho, err := p.rho(sigma)
	if err != nil {
		return 0, 0, err
	}
	eps, alpha, err = c.RhoToDP(rho, delta)
	if err != nil {
		return 0, 0, fmt.Errorf("PABI: %w", err)
	}
	if math.IsInf(eps, 1) {
		// A finite slope near the largest float converts to an ε that
		// overflows: no bound, and no number a document can hold.
		return 0, 0, &param.Error{Name: "sigma", Value: sigma, Rule: fmt.Sprintf("the run's eps at delta = %v overflows (zCDP slope coef/sigma² = %v): must be larger", delta, rho)}
	}
	return eps, alpha, nil
}

// sigma returns the smallest noise σ with which the run is (ε, δ)-DP under
// conversion c, choosing α exactly, and that α (Calibrate with AlphaExact). With PaperConversion,
// σ = sqrt(coef)/(sqrt(L+ε) - sqrt(L)), where L = log(1/δ) and coef·α/σ² is
// the run's RDP (Lemmas 4.5.2, 4.6.2).
func (p PABI) sigma(target Guarantee, c Conversion) (sigma, alpha float64, err error) {
	if err := p.validate(); err != nil {
		return 0, 0, fmt.Errorf("PABI: %w", err)
	}
	sigma, alpha, err = c.SigmaFor(p.coef(), target)
	if err != nil {
		return 0, 0, fmt.Errorf("PABI: %w", err)
	}
	return sigma, alpha, nil
}

// sigmaTable43 returns the smallest σ with which the run is (ε, δ)-DP under
// PaperConversion when α is set by the rule of Table 4.3 and Section 4.5.3,
// α = sqrt(log(1/δ)/ρ) for the run's RDP slope ρ (e.g. α = σ·sqrt(log(1/δ))/(G·sqrt(2K))
// for DP-ShuffleG), rather than minimised; and that α. Since the rule's α
// is not the minimiser 1 + sqrt(log(1/δ)/ρ), this σ is slightly larger than
// sigma's.
//
// With y = sqrt(ρ) and L = log(1/δ) the bound is y·sqrt(L) + L·y/(sqrt(L) - y),
// which is increasing for y < sqrt(L); it equals ε at
// y = 2ε·sqrt(L)/(2L + ε + sqrt(4L² + ε²)), where α > 1.
func (p PABI) sigmaTable43(target Guarantee) (sigma, alpha float64, err error) {
	if err := p.validate(); err != nil {
		return 0, 0, fmt.Errorf("PABI: %w", err)
	}
	if err := param.Positive("eps", target.Eps); err != nil {
		return 0, 0, fmt.Errorf("PABI: %w", err)
	}
	if err := param.ConversionDelta("delta", target.Delta); err != nil {
		return 0, 0, fmt.Errorf("PABI: %w", err)
	}
	eps, L := target.Eps, -outward.Ln(target.Delta)
	y := 2 * eps * math.Sqrt(L) / (2*L + eps + math.Sqrt(4*L*L+eps*eps))
	rho := y * y
	// The rule ties α to σ; check the bound at the rounded pair and raise σ
	// if rounding left it above ε.
	coef := p.coef()
	sigma, ok, _ := roots.RaiseUntil(math.Sqrt(coef/rho), func(sigma float64) (bool, error) {
		r := coef / (sigma * sigma)
		alpha = math.Sqrt(L / r)
		if !(alpha > 1) {
			return false, nil
		}
		at, err := PaperConversion.ConvertRDP(alpha*r, alpha, target.Delta)
		return err == nil && at <= eps, nil
	})
	if !ok {
		// A target no σ meets in floating point (ε near 0, σ near +Inf)
		// is the target's fault, the caller's parameter.
		return 0, 0, fmt.Errorf("PABI: %w", &param.Error{Name: "eps", Value: target.Eps, Rule: fmt.Sprintf("no sigma near %v meets (eps, %v) in floating point", math.Sqrt(coef/rho), target.Delta)})
	}
	return sigma, alpha, nil
}

// AlphaRule selects how the Rényi order α of a PABI run's bound is chosen
// when its noise is calibrated: AlphaExact (minimised exactly, the zero
// value) or AlphaTable43 (the rule of Table 4.3).
// A AlphaRule prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type AlphaRule int

const (
	// AlphaExact minimises the bound over α exactly.
	AlphaExact AlphaRule = iota
	// AlphaTable43 sets α by the rule of Table 4.3, α = sqrt(log(1/δ)/ρ),
	// with the paper's conversion: the thesis' own choice.
	AlphaTable43
)

var alphaRuleNames = enum.Names[AlphaRule]{What: "alpha rule", List: []string{AlphaExact: "exact", AlphaTable43: "table-4.3"}}

// String returns the name of a.
func (a AlphaRule) String() string { return alphaRuleNames.String(a) }

// MarshalText returns the name of a.
func (a AlphaRule) MarshalText() ([]byte, error) { return []byte(alphaRuleNames.String(a)), nil }

// UnmarshalText sets a from its name: "exact" or "table-4.3".
func (a *AlphaRule) UnmarshalText(text []byte) error { return alphaRuleNames.Unmarshal(a, text) }

// Calibrate returns the smallest σ with which the run is (ε, δ)-DP under
// conversion c when α is chosen by rule r (exactly, or by Table
// 4.3's rule), that α, and the ε the bound gives at σ and α, at most
// target.Eps. AlphaTable43 is defined with PaperConversion only.
func (p PABI) Calibrate(target Guarantee, c Conversion, r AlphaRule) (sigma, alpha, eps float64, err error) {
	switch r {
	case AlphaExact:
		if sigma, _, err = p.sigma(target, c); err != nil {
			return 0, 0, 0, err
		}
		eps, alpha, err = p.Eps(sigma, target.Delta, c)
		return sigma, alpha, eps, err
	case AlphaTable43:
		if err := c.CheckAlphaRule(r); err != nil {
			return 0, 0, 0, err
		}
		if sigma, alpha, err = p.sigmaTable43(target); err != nil {
			return 0, 0, 0, err
		}
		rho, err := p.rho(sigma)
		if err != nil {
			return 0, 0, 0, err
		}
		eps, err = PaperConversion.ConvertRDP(rho*alpha, alpha, target.Delta)
		return sigma, alpha, eps, err
	}
	return 0, 0, 0, fmt.Errorf("PABI: unknown alpha rule %v", r)
}

// CheckAlphaRule reports, as a setting error, an order rule r of PABI's
// calibration that does not go with the conversion c: Table 4.3's rule goes
// with the paper's conversion only.
func (c Conversion) CheckAlphaRule(r AlphaRule) error {
	if r == AlphaTable43 && c != PaperConversion {
		return &param.SettingError{Name: "alpha rule", Value: r.String(), Rule: fmt.Sprintf("Table 4.3's order is defined with the paper's conversion, not %v", c)}
	}
	return nil
}

func (p PABI) check(sigma float64) error {
	if err := p.validate(); err != nil {
		return fmt.Errorf("PABI: %w", err)
	}
	if err := param.Positive("sigma", sigma); err != nil {
		return fmt.Errorf("PABI: %w", err)
	}
	return nil
}
