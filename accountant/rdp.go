package accountant

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/roots"
)

// Conversion is a rule that turns a Rényi-DP bound into an (ε, δ)-DP
// bound: PaperConversion (the thesis', the zero value) or
// ImprovedConversion (Canonne, Kamath and Steinke; Balle et al.).
type Conversion int

const (
	// PaperConversion is the thesis' rule (Proposition 4.3.4 and Theorem
	// B.4.1; Mironov 2017, Prop. 3): (α, r)-RDP implies
	// (r + log(1/δ)/(α-1), δ)-DP.
	PaperConversion Conversion = iota
	// ImprovedConversion is the tighter rule of Canonne, Kamath and
	// Steinke 2020 (Prop. 12) and Balle et al. 2020 (Thm 21): (α, r)-RDP
	// implies (r + log((α-1)/α) - (log δ + log α)/(α-1), δ)-DP.
	ImprovedConversion
)

var conversionNames = enum.Names[Conversion]{What: "conversion", List: []string{PaperConversion: "paper", ImprovedConversion: "improved"}}

// String returns "paper" or "improved".
func (c Conversion) String() string { return conversionNames.String(c) }

// Reference names the result that c implements.
func (c Conversion) Reference() string {
	switch c {
	case PaperConversion:
		return "Proposition 4.3.4 / Theorem B.4.1 (Mironov 2017 Prop. 3)"
	case ImprovedConversion:
		return "Canonne-Kamath-Steinke 2020 Prop. 12 / Balle et al. 2020 Thm 21"
	}
	return c.String()
}

// MarshalText returns the name of c, so that a Conversion reads and prints as
// text (a flag, a JSON or config value).
func (c Conversion) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText sets c from its name: "paper" or "improved".
func (c *Conversion) UnmarshalText(b []byte) error { return conversionNames.Unmarshal(c, b) }

// gaussianRho returns ρ = Δ²/(2σ²), the slope of the Gaussian mechanism's
// RDP curve ε(α) = ρ·α (Mironov 2017, Prop. 7).
//
// Every mechanism of this package has a curve of this form: GNMax has
// ρ = 1/σ² (Section 4.1 of Papernot et al. 2018), an epoch of DP-ShuffleG
// ρ = 2G²/σ² (Lemma 4.5.2). Composition adds slopes, and
// RhoToDP and rhoForDP convert them exactly.
func gaussianRho(sensitivity, sigma float64) (float64, error) {
	if err := param.Positive("sensitivity", sensitivity); err != nil {
		return 0, fmt.Errorf("gaussian RDP: %w", err)
	}
	if err := param.Positive("sigma", sigma); err != nil {
		return 0, fmt.Errorf("gaussian RDP: %w", err)
	}
	r := sensitivity / sigma
	return r * r / 2, nil
}

// Gaussian is a run of Steps composed Gaussian mechanisms with L2
// sensitivity Sensitivity, each adding noise of standard deviation
// Sigma·Sensitivity (Sigma is in units of the sensitivity).
type Gaussian struct {
	Sensitivity float64
	Sigma       float64
	Steps       int
}

// Rho returns the slope ρ of the run's RDP curve ε(α) = ρ·α: Steps times
// gaussianRho (Mironov 2017, Prop. 7; composition, Prop. 1).
func (g Gaussian) Rho() (float64, error) {
	if err := param.Count("steps", g.Steps, 1); err != nil {
		return 0, fmt.Errorf("Gaussian mechanism: %w", err)
	}
	if noise := g.Sigma * g.Sensitivity; g.Sigma > 0 && g.Sensitivity > 0 && math.IsInf(noise, 1) {
		// Said of the sensitivity, where the product was named sigma.
		return 0, fmt.Errorf("Gaussian mechanism: %w", &param.Error{Name: "sensitivity", Value: g.Sensitivity,
			Rule: fmt.Sprintf("with sigma = %v, the noise sigma·sensitivity overflows: must be smaller", g.Sigma)})
	}
	one, err := gaussianRho(g.Sensitivity, g.Sigma*g.Sensitivity)
	if err != nil {
		return 0, err
	}
	// A σ so small (or large) that the slope overflows (or underflows)
	// is the σ's fault, not the slope's, which no caller set.
	rho := float64(g.Steps) * one
	if !(rho > 0) || math.IsInf(rho, 1) {
		return 0, fmt.Errorf("Gaussian mechanism: %w", &param.Error{Name: "sigma", Value: g.Sigma,
			Rule: fmt.Sprintf("the run's zCDP slope steps·(sensitivity/sigma)²/2 = %v over %d steps: must be a finite number > 0 in floating point", rho, g.Steps)})
	}
	return rho, nil
}

// Eps returns the ε with which the run is (ε, δ)-DP under conversion c at
// Rényi order alpha, or, when alpha is 0, at the order that minimises ε
// (RhoToDP); it returns the order used.
func (g Gaussian) Eps(delta, alpha float64, c Conversion) (eps, order float64, err error) {
	rho, err := g.Rho()
	if err != nil {
		return 0, 0, err
	}
	if alpha != 0 {
		// The order is the caller's; ρ·α, checked below, is not.
		if err := param.Alpha(alpha); err != nil {
			return 0, 0, fmt.Errorf("Gaussian mechanism: %w", err)
		}
	}
	if alpha == 0 {
		return c.RhoToDP(rho, delta)
	}
	if math.IsInf(rho*alpha, 1) {
		// Said of the order, where the conversion named the Rényi DP.
		return 0, 0, fmt.Errorf("Gaussian mechanism: %w", &param.Error{Name: "alpha", Value: alpha,
			Rule: fmt.Sprintf("the Rényi DP at it, rho·alpha with rho = %v, overflows: must be smaller", rho)})
	}
	eps, err = c.ConvertRDP(rho*alpha, alpha, delta)
	return eps, alpha, err
}

// ConvertRDP returns ε such that an (α, r)-RDP mechanism is (ε, δ)-DP
// under conversion c, at the given order α. A result below 0 is reported
// as 0: (ε, δ)-DP with ε < 0 implies (0, δ)-DP.
func (c Conversion) ConvertRDP(r, alpha, delta float64) (float64, error) {
	if err := param.AtLeast("rdp", r, 0); err != nil {
		return 0, fmt.Errorf("RDP conversion: %w", err)
	}
	if err := param.Alpha(alpha); err != nil {
		return 0, fmt.Errorf("RDP conversion: %w", err)
	}
	if err := c.Check(delta); err != nil {
		return 0, fmt.Errorf("RDP conversion: %w", err)
	}
	return convertUp(r, alpha-1, -outward.Ln(delta), c), nil
}

// convertUp returns r + conversionCost(t, L, c), at least 0, raised above
// its rounding: the terms of the cost cancel each other and r where ε
// is small against them (at α = 1024 log t and log1p t are near 6.93
// and ε may be 10^-3; near α = 1/δ the cost cancels ρα), so a few ulps
// of the result are no bound; the error of each term is bounded by the
// magnitudes that enter it (costError) and added before the last raise.
func convertUp(r, t, L float64, c Conversion) float64 {
	cost, err := conversionCostErr(t, L, c)
	s := r + cost
	err += 4 * 0x1p-53 * (math.Abs(r) + math.Abs(cost) + math.Abs(s))
	// Where the terms do not cancel, 8 ulps of the result hold the error,
	// and the result is the one it always was.
	return math.Max(0, math.Max(outward.Up(s, 8), outward.Up(s+err, 2)))
}

// conversionCost returns ε - r at order α = 1 + t, with L = log(1/δ).
// Working with t = α - 1 keeps orders close to 1 exact.
func conversionCost(t, L float64, c Conversion) float64 {
	cost, _ := conversionCostErr(t, L, c)
	return cost
}

// conversionCostErr returns conversionCost and a bound of its rounding
// error, L's own (a logarithm's, within an ulp) included: for the
// improved conversion log((α-1)/α) is computed as -log1p(1/t) for t >= 1
// (log t - log1p t cancels there: at t = 1023 an ulp of 6.93 is 10^-15,
// against a result of 10^-3), and the error of (L - log1p t)/t is bounded
// by (L + log1p t)/t, not by the difference, which may cancel.
func conversionCostErr(t, L float64, c Conversion) (cost, err float64) {
	const u = 0x1p-53
	if c == PaperConversion {
		cost = L / t
		return cost, 8 * u * cost
	}
	// log((α-1)/α) - (log δ + log α)/(α-1)
	l1 := math.Log1p(t)
	var b float64
	if t >= 1 {
		b = -math.Log1p(1 / t)
	} else {
		b = outward.Ln(t) - l1 // of opposite signs: no cancellation
	}
	q := (L - l1) / t
	cost = b + q
	return cost, 16 * u * (math.Abs(b) + (L+l1)/t + math.Abs(q) + math.Abs(cost))
}

// RhoToDP returns the smallest ε such that a mechanism with RDP curve
// ε(α) = ρ·α is (ε, δ)-DP under conversion c, minimising over every order
// α > 1, and the minimising α.
//
// PaperConversion has the closed form α = 1 + sqrt(L/ρ), ε = ρ + 2·sqrt(ρL)
// with L = log(1/δ). For ImprovedConversion the derivative of ε(α) is
// ρ - (L - log α)/(α-1)², so the minimiser is the unique root of the
// increasing function ρ(α-1)² + log α - L, found by bisection to machine
// precision. A result below 0 is reported as 0.
func (c Conversion) RhoToDP(rho, delta float64) (eps, alpha float64, err error) {
	if err := param.Positive("rho", rho); err != nil {
		return 0, 0, fmt.Errorf("RDP conversion: %w", err)
	}
	if err := c.Check(delta); err != nil {
		return 0, 0, fmt.Errorf("RDP conversion: %w", err)
	}
	L := -outward.Ln(delta)
	hi := math.Sqrt(L / rho) // the paper's optimal α - 1
	if math.IsInf(hi, 1) {
		// ρ below L/MaxFloat64: the paper's α - 1 overflows, but not its
		// ε = ρ + 2·sqrt(ρL); the improved conversion's root is below
		// 1/δ, where log1p(t) >= L already.
		if c == PaperConversion {
			return outward.Up(rho+2*math.Sqrt(rho)*math.Sqrt(L), 8), hi, nil
		}
		hi = 1 / delta
	}
	t := hi
	if c == ImprovedConversion {
		t = rootLog(func(t float64) float64 { return rho*t*t + math.Log1p(t) - L }, hi)
	}
	return convertUp(rho*(1+t), t, L, c), 1 + t, nil
}

// rhoForDP returns the largest slope ρ such that a mechanism with RDP curve
// ε(α) = ρ·α is (ε, δ)-DP under conversion c, and the order α at which it
// is. It inverts RhoToDP: ρ = max over α of (ε - cost(α))/α, where cost(α)
// is the conversion's ε - r.
//
// PaperConversion has the closed form ρ = (sqrt(L+ε) - sqrt(L))² with
// L = log(1/δ). For ImprovedConversion the maximiser is the root of
// ε = cost(α) - α·cost'(α), which decreases in α on (1, 1/δ), where the
// optimum lies; it is found by bisection to machine precision.
func rhoForDP(target Guarantee, c Conversion) (rho, alpha float64, err error) {
	if err := param.Positive("eps", target.Eps); err != nil {
		return 0, 0, fmt.Errorf("RDP calibration: %w", err)
	}
	if err := c.Check(target.Delta); err != nil {
		return 0, 0, fmt.Errorf("RDP calibration: %w", err)
	}
	eps, L := target.Eps, -outward.Ln(target.Delta)
	// An ε so small that the slope it allows underflows has no calibration:
	// said as ε, the caller's, not as the slope.
	tooSmall := &param.Error{Name: "eps", Value: eps, Rule: "too small: the zCDP slope it allows underflows to 0"}
	if c == PaperConversion {
		s := math.Sqrt(L+eps) + math.Sqrt(L)
		rho = eps * eps / (s * s)
		if !(rho > 0) {
			return 0, 0, fmt.Errorf("RDP calibration: %w", tooSmall)
		}
		if math.IsInf(rho, 1) {
			// Said of ε, where the conversion named the slope.
			return 0, 0, fmt.Errorf("RDP calibration: %w", &param.Error{Name: "eps", Value: eps, Rule: "too large: the zCDP slope it allows overflows"})
		}
		return rho, 1 + math.Sqrt(L/rho), nil
	}
	// With t = α - 1 and u = L - log α > 0:
	// cost = log t - log1p t + u/t, cost' = -u/t², so the stationarity
	// condition is ε = log t - log1p t + u/t + (1+t)·u/t².
	phi := func(t float64) float64 {
		u := L - math.Log1p(t)
		return eps - (outward.Ln(t) - math.Log1p(t) + u/t + (1+t)*u/(t*t))
	}
	t := rootLog(phi, math.Min(math.Expm1(L), math.MaxFloat64))
	if rho = (eps - conversionCost(t, L, c)) / (1 + t); !(rho > 0) {
		return 0, 0, fmt.Errorf("RDP calibration: %w", tooSmall)
	}
	return rho, 1 + t, nil
}

// SigmaFor returns the smallest noise σ at which a mechanism whose Rényi
// curve is coef·α/σ² for every α > 1 (a Gaussian mechanism of squared
// sensitivity 2·coef; Mironov 2017, Prop. 7) is (ε, δ)-DP by target under
// conversion c, and the order α at which it is: σ = sqrt(coef/ρ) for
// rhoForDP's ρ, raised by as much as rounding needs (one ulp, then
// geometrically more) so that the ways a caller may recompute ε meet the
// target in floating point: RhoToDP(coef/σ²), and ConvertRDP at the
// returned order α of (coef/σ²)·α and of coef·α/σ²; and that α.
func (c Conversion) SigmaFor(coef float64, target Guarantee) (sigma, alpha float64, err error) {
	if err := param.Positive("coef", coef); err != nil {
		return 0, 0, err
	}
	rho, _, err := rhoForDP(target, c)
	if err != nil {
		return 0, 0, err
	}
	sigma, ok, err := roots.RaiseUntil(math.Sqrt(coef/rho), func(sigma float64) (bool, error) {
		r := coef / (sigma * sigma)
		eps, a, err := c.RhoToDP(r, target.Delta)
		if err != nil {
			return false, err
		}
		if !(a > 1) {
			// An ε so large that the order of its bound rounds to 1,
			// where no Rényi DP converts: said as ε, the caller's, not
			// as the order, which no caller of a calibration gives.
			return false, &param.Error{Name: "eps", Value: target.Eps, Rule: "too large: the Renyi order of its calibration rounds to 1"}
		}
		at, err := c.ConvertRDP(r*a, a, target.Delta)
		if err != nil {
			return false, err
		}
		// The curve at α as a caller writes it, coef·α/σ², rounds
		// otherwise than r·α.
		at2, err := c.ConvertRDP(coef*a/(sigma*sigma), a, target.Delta)
		alpha = a
		return err == nil && eps <= target.Eps && at <= target.Eps && at2 <= target.Eps, err
	})
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		return 0, 0, &param.Error{Name: "eps", Value: target.Eps, Rule: fmt.Sprintf("no sigma near %v meets (eps, %v) in floating point", math.Sqrt(coef/rho), target.Delta)}
	}
	return sigma, alpha, nil
}

// Check checks the conversion c of Rényi DP to (ε, δ)-DP at δ: a
// conversion this package has, and δ as param.ConversionDelta checks it.
func (c Conversion) Check(delta float64) error {
	if c != PaperConversion && c != ImprovedConversion {
		return fmt.Errorf("unknown conversion %v", c)
	}
	return param.ConversionDelta("delta", delta)
}

// rootLog returns the root in (0, hi] of f, which is increasing, negative
// near 0 and non-negative at hi, by bisection on log t down to adjacent
// floating-point numbers. Every caller can use any t for a valid bound, so
// the bisection only decides how tight the bound is.
func rootLog(f func(t float64) float64, hi float64) float64 {
	nonNeg := func(m float64) bool { return !(f(math.Exp(m)) < 0) }
	return math.Exp(roots.Edge(outward.Ln(math.SmallestNonzeroFloat64), outward.Ln(hi), 0, nonNeg))
}
