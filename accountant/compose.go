package accountant

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
)

// Method is a composition theorem: for (ε, δ)-DP mechanisms Simple
// (Theorem 3.3.2, the zero value), General (Theorem 3.3.3) or Optimal
// (Kairouz, Oh and Viswanath's exact composition); for mechanisms known
// by their description (Spend), Exact (the composition of their dominating
// pairs) or Renyi (their RDP curves, converted); for a ledger's runs,
// whose parameters may be chosen adaptively, the filters ZCDPFilter,
// RenyiFilter, AdvancedFilter and GDPFilter, and Simple (Filter).
type Method int

// The composition methods, loosest first.
const (
	// Simple is Theorem 3.3.2: k (ε, δ) steps are (kε, kδ)-DP.
	Simple Method = iota
	// General is Theorem 3.3.3 (Kairouz, Oh and Viswanath 2015, Thm 3.4),
	// with slack δ'.
	General
	// Optimal is the exact optimal composition of k identical (ε, δ)
	// mechanisms (Kairouz, Oh and Viswanath 2015, Thm 3.3), with slack δ'.
	Optimal
	// Exact is the composition of the steps' dominating pairs, for
	// parameters fixed in advance: closed-form Gaussian DP for continuous
	// Gaussian noise (Dong, Roth and Su 2022, Cor. 3.3), the exact
	// distribution of the privacy loss for discrete Gaussian noise.
	Exact
	// Renyi is the sum of the steps' RDP curves (Mironov 2017, Prop. 1)
	// with a Conversion.
	Renyi
	// ZCDPFilter is a zCDP filter over runs whose parameters may be chosen
	// adaptively: the sum of the runs' ρ, held to a budget fixed in
	// advance (Feldman and Zrnic 2021), converted with the improved
	// conversion.
	ZCDPFilter
	// RenyiFilter is a Rényi filter at one order α fixed before the first
	// step: the sum of the steps' Rényi divergences at α held to a budget
	// (Feldman and Zrnic 2021, Thm 3.1), converted with the improved
	// conversion.
	RenyiFilter
	// AdvancedFilter is the filter of approximate-DP steps that composes
	// like advanced composition (Whitehouse, Ramdas, Rogers and Wu 2023):
	// Σε_i² held to a budget, and Σδ_i to another.
	AdvancedFilter
	// GDPFilter is the Gaussian-DP filter: Σμ_i² held to a budget μ_B²
	// (Smith and Thakurta 2022).
	GDPFilter
)

var methodNames = enum.Names[Method]{What: "method", List: []string{Simple: "simple", General: "general", Optimal: "optimal", Exact: "exact", Renyi: "rdp", ZCDPFilter: "zcdp-filter", RenyiFilter: "rdp-filter", AdvancedFilter: "advanced-filter", GDPFilter: "gdp-filter"}}

// String returns the method's name.
func (m Method) String() string { return methodNames.String(m) }

// Reference names the result that m implements, for output that must say
// which theorem produced a number.
func (m Method) Reference() string {
	switch m {
	case Simple:
		return "Theorem 3.3.2 (simple composition)"
	case General:
		return "Theorem 3.3.3 (general composition, Kairouz-Oh-Viswanath 2015 Thm 3.4)"
	case Optimal:
		return "Kairouz-Oh-Viswanath 2015 Thm 3.3 (optimal composition)"
	case Exact:
		return "exact composition of the dominating pairs (Gaussian DP, Dong-Roth-Su 2022 Cor. 3.3; discrete Gaussian: exact privacy loss distribution; one-bit releases: privacy loss distribution of the pairs' envelope, discretised pessimistically, Meiser-Mohammadi 2018; fixed pairs, adaptive queries: Zhu-Dong-Wang 2022)"
	case Renyi:
		return "RDP composition (Mironov 2017 Prop. 1), converted by Canonne-Kamath-Steinke 2020 Prop. 12"
	case ZCDPFilter:
		return "zCDP filter (Feldman-Zrnic 2021; pure steps Bun-Steinke 2016 Prop. 1.4), converted by Canonne-Kamath-Steinke 2020 Prop. 12"
	case RenyiFilter:
		return "Renyi filter at a fixed order (Feldman-Zrnic 2021 Thm 3.1), converted by Canonne-Kamath-Steinke 2020 Prop. 12"
	case AdvancedFilter:
		return "advanced-composition filter (Whitehouse-Ramdas-Rogers-Wu 2023, ICML)"
	case GDPFilter:
		return "Gaussian-DP filter (Smith-Thakurta 2022; composition Dong-Roth-Su 2022)"
	}
	return m.String()
}

// Slack reports whether m adds a slack δ' to its total δ (General and
// Optimal).
func (m Method) Slack() bool { return m == General || m == Optimal }

// MarshalText returns the name of m, so that a Method reads and prints as
// text (a flag, a JSON or config value).
func (m Method) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText sets m from its name: "simple", "general", "optimal",
// "exact", "rdp", "zcdp-filter", "rdp-filter", "advanced-filter" or
// "gdp-filter".
func (m *Method) UnmarshalText(b []byte) error { return methodNames.Unmarshal(m, b) }

// Compose returns the guarantee of k adaptively composed (ε, δ)-DP steps
// under c's method; c.DeltaPrime is the slack δ' of General and Optimal,
// which add it to the total δ; Simple ignores it. MaxSteps and StepEps
// invert it.
//
// A total ε that overflows (a step's ε near the largest float64) is an
// error naming the step's ε: +Inf is no bound a caller can use, and
// StepEps, stepping down from it an ulp at a time, never ended.
func (c Composition) Compose(step Guarantee, k int) (Guarantee, error) {
	g, err := c.compose(step, k)
	if err == nil && math.IsInf(g.Eps, 1) {
		return Guarantee{}, fmt.Errorf("%v composition: %w", c.Method, &param.Error{Name: "eps", Value: step.Eps, Rule: fmt.Sprintf("too large: the total eps of %d steps overflows", k)})
	}
	return g, err
}

// compose is Compose with a total ε that overflows returned as +Inf, which
// StepEps's bracket takes for a total above its target.
func (c Composition) compose(step Guarantee, k int) (Guarantee, error) {
	switch c.Method {
	case Simple:
		return composeSimple(step, k)
	case General:
		return composeGeneral(step, k, c.DeltaPrime)
	case Optimal:
		return composeOptimal(step, k, c.DeltaPrime)
	}
	return Guarantee{}, fmt.Errorf("compose: unknown method %v", c.Method)
}

// composeSimple returns (kε, kδ), the simple composition of k (ε, δ)-DP
// steps (Theorem 3.3.2). kδ is not capped: a total δ >= 1 is vacuous.
func composeSimple(step Guarantee, k int) (Guarantee, error) {
	if err := checkSimple(step, k); err != nil {
		return Guarantee{}, fmt.Errorf("simple composition: %w", err)
	}
	n := float64(k)
	return Guarantee{Eps: outward.MulUp(n, step.Eps), Delta: outward.MulUp(n, step.Delta)}, nil
}

// composeGeneral returns the general composition of k (ε, δ)-DP steps with
// slack δ' (Theorem 3.3.3, Kairouz, Oh and Viswanath 2015, Thm 3.4):
//
//	ε' = min{kε, a + ε·sqrt(2k·log(e + sqrt(kε²)/δ')), a + ε·sqrt(2k·log(1/δ'))},
//	a  = kε·(e^ε - 1)/(e^ε + 1),   δ_total = 1 - (1-δ)^k·(1-δ').
func composeGeneral(step Guarantee, k int, deltaPrime float64) (Guarantee, error) {
	if err := checkSlack(step, k, deltaPrime); err != nil {
		return Guarantee{}, fmt.Errorf("general composition: %w", err)
	}
	n := float64(k)
	e := step.Eps
	// a and Σε² are raised by their rounding (two products and tanh, within
	// 2 ulps), kε is exact up to one rounding up. Σε² is k·f²·4^x for ε =
	// f·2^x, f in [1/2, 1): computed as kε², it fell below the normal
	// range for ε below about 1e-154 and lost its digits, or all of them
	// (one step of ε = 1e-170 at δ' = 1e-300 had a total of 0); a, below
	// kε², is then far below the 16 ulps that raise those terms.
	f, x := math.Frexp(e)
	return Guarantee{
		Eps:   generalEps(outward.MulUp(n, e), outward.Up(n*e*math.Tanh(e/2), 4), outward.Up(n*f*f, 2), x, deltaPrime),
		Delta: totalDelta(outward.Down(n*logKeepDown(step.Delta), 1), deltaPrime),
	}, nil
}

// generalEps evaluates the three-way minimum of Kairouz et al.'s Thm 3.5
// from upper bounds of Σε, a = Σε·tanh(ε/2) ((e^ε-1)/(e^ε+1) = tanh(ε/2))
// and Σε² = sq·4^x, and returns an upper bound of it: the terms increase
// in a and Σε², and each square-root term, about eight operations within
// an ulp each, is raised by 16 ulps.
//
// The products under the square roots are of sq, scaled by 2^200 (exact)
// when below 2^-900, and the roots are scaled back by 2^x: of Σε² itself,
// below the normal range, they lost their digits, down to 5.4e-323 for one
// step of ε = 1e-161 at δ' = 0.99, where the term is 1.4e-162.
func generalEps(sum, a, sq float64, x int, deltaPrime float64) float64 {
	if sq < 0x1p-900 {
		sq, x = sq*0x1p200, x-100
	}
	root := func(log float64) float64 { return outward.Up(math.Ldexp(math.Sqrt(2*sq*log), x), 16) }
	t2 := outward.AddUp(a, root(outward.Ln(math.E+math.Ldexp(math.Sqrt(sq), x)/deltaPrime)))
	t3 := outward.AddUp(a, root(-outward.Ln(deltaPrime)))
	return math.Min(sum, math.Min(t2, t3))
}

// totalDelta returns an upper bound of 1 - (1-δ')·exp(logKeep), given a
// lower bound logKeep of Σlog(1-δ_i), without cancellation when the result
// is small.
//
// A bound of 0 says every δ_i is 0, and the total is δ' itself, exactly:
// through Log1p and Expm1 it read a few ulps above δ', so pure steps at a
// budget δ equal to δ' (the default 1e-5 of both) counted by simple
// composition alone (39 steps of ε = 0.05 in (2, 1e-5), where the optimal
// composition allows 102).
func totalDelta(logKeep, deltaPrime float64) float64 {
	if logKeep == 0 {
		return deltaPrime
	}
	return deltaUp(outward.AddDown(logKeep, logKeepDown(deltaPrime)))
}

func checkSimple(step Guarantee, k int) error {
	if err := checkStep("", step); err != nil {
		return err
	}
	return param.Count("k", k, 1)
}

func checkSlack(step Guarantee, k int, deltaPrime float64) error {
	if err := checkSimple(step, k); err != nil {
		return err
	}
	return param.DeltaPrime(deltaPrime)
}

// deltaUp returns an upper bound of 1 - e^s, the total δ of a composition,
// given a lower bound s <= 0 of Σ log(1 - δ_i). Expm1 is within 1 ulp.
//
// At most 1, which bounds every δ: rounded up past it, the total of 2^31
// steps read 1.0000000000000007.
func deltaUp(s float64) float64 { return math.Min(1, outward.Up(-math.Expm1(s), 2)) }

// logKeepDown returns a lower bound of log(1 - δ), δ in [0, 1): Log1p is
// within 1 ulp.
func logKeepDown(delta float64) float64 { return outward.Down(math.Log1p(-delta), 2) }
