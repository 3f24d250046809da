package gamma

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
)

// pConst returns the largest probability p_const in [0, 1] with which
// randomized response on the majority of K (ε, Δ)-DP teachers is
// (mε, δ)-DP, when the majority itself is (τε, λ)-DP (Lemma B.1.1),
// rounded down.
//
// The release answers 1 with probability (1-p)/2 + p·M, M the
// majority's, and the pairs (M, M') of a (τε, λ)-DP bit fill a polygon
// whose vertices are (0, 0), (1, 1), (λ, 0), (1, 1-λ) and
// V = ((e^{τε}+λ)/(e^{τε}+1), (1-λ)/(e^{τε}+1)), with their mirror
// images (RRBits). The hockey-stick divergence at mε is affine in p and
// convex in (M, M'), so the release is (mε, δ)-DP exactly when it is at
// every vertex. At V this is Lemma B.1.1's bound
//
//	p_const <= (e^{mε} - 1 + 2δ) / (2(e^{τε} - e^{mε} + (1+e^{mε})λ)/(e^{τε}+1) + e^{mε} - 1)
//	         = f(mε, δ)/f(τε, λ),  f(x, d) = (1 - e^{-x} + 2d·e^{-x})/(1 + e^{-x});
//
// at (λ, 0), when λ > δ, also p_const <= (δ + c)/(λ + c), c = (e^{mε}-1)/2:
// a majority that answers 1 with probability λ on one input and never on
// the other has hockey-stick divergence λ at every ε, which no m covers
// (K (ε, Δ)-DP teachers reach such a pair: (K-1)/2 of them always vote 1
// and the others vote 1 with probability Δ on one input, never on the
// other). The other vertices bind no more than these two.
//
// Both bounds are computed in outward interval arithmetic and rounded
// down, each also as 1 - (its distance to 1), in closed form
// (1 - f(mε, δ)/f(τε, λ) = 2(a(1-δ) - b(1-λ) + ab(λ-δ))/((1+a)(1 - b(1-2λ)))
// with a = e^{-mε}, b = e^{-τε}; 1 - (δ+c)/(λ+c) = 2a(λ-δ)/(1 - a + 2aλ)),
// so that a bound within 2^-53 of 1, where the quotients round to 1, is
// still below 1: p_const is 1 only when both bounds are at least 1.
// mε is the product of the decimals m and ε are written as
// (decimal.Mul), the per-query ε the release is held to; rrParams gives
// τ and λ.
func pConst(eps, m, delta, tau, lambda float64) (float64, error) {
	if err := param.Positive("eps", eps); err != nil {
		return 0, fmt.Errorf("p_const: %w", err)
	}
	if err := param.Positive("m", m); err != nil {
		return 0, fmt.Errorf("p_const: %w", err)
	}
	if err := param.Delta("delta", delta); err != nil {
		return 0, fmt.Errorf("p_const: %w", err)
	}
	if err := param.Positive("tau", tau); err != nil {
		return 0, fmt.Errorf("p_const: %w", err)
	}
	if err := param.Delta("lambda", lambda); err != nil {
		return 0, fmt.Errorf("p_const: %w", err)
	}
	one, two := outward.Exact(1), outward.Exact(2)
	d, l := outward.Exact(delta), outward.Exact(lambda)
	a := outward.Exp(outward.Exact(decimal.Mul(m, eps)).Neg())
	b := outward.Exp(outward.Exact(tau).Mul(outward.Exact(eps)).Neg())
	// f(x, d) with e = e^{-x}, 1 - e as -expm1(-x) (x >= 0: no
	// cancellation).
	expm1 := func(x outward.Interval) outward.Interval { // e^{-x} - 1
		return outward.Interval{Lo: outward.LibDown(math.Expm1(-x.Hi)), Hi: outward.LibUp(math.Expm1(-x.Lo))}
	}
	mx := outward.Exact(decimal.Mul(m, eps))
	tx := outward.Exact(tau).Mul(outward.Exact(eps))
	f := func(x, e, d outward.Interval) outward.Interval {
		return expm1(x).Neg().Add(two.Mul(d).Mul(e)).Div(one.Add(e))
	}
	// The bound at V, and its distance to 1.
	ratio := f(mx, a, d).Div(f(tx, b, l))
	gap := two.Mul(a.Mul(one.Sub(d)).Sub(b.Mul(one.Sub(l))).Add(a.Mul(b).Mul(l.Sub(d)))).
		Div(one.Add(a).Mul(one.Sub(b.Mul(one.Sub(two.Mul(l))))))
	p := atMost(ratio, gap)
	if lambda > delta {
		// The bound at (λ, 0): its distance to 1 alone, which is at most
		// 1 (so 1 minus it loses no more than 2^-53 absolute).
		gapV := two.Mul(a).Mul(l.Sub(d)).Div(one.Sub(a).Add(two.Mul(a).Mul(l)))
		p = math.Min(p, atMost(outward.Interval{Lo: math.Inf(1), Hi: math.Inf(1)}, gapV))
	}
	return math.Max(0, math.Min(1, p)), nil
}

// atMost returns a lower bound of a bound known both as an interval
// (bound) and as 1 minus an interval (gap): the larger of bound's lower
// end and 1 - gap's upper end, rounded down; at least 1 only when gap is
// at most 0.
func atMost(bound, gap outward.Interval) float64 {
	if !(gap.Hi > 0) {
		return 1
	}
	below := outward.AddDown(1, -gap.Hi)
	if bound.Lo < below || math.IsInf(bound.Lo, 1) {
		return math.Min(below, math.Nextafter(1, 0))
	}
	return math.Min(bound.Lo, math.Nextafter(1, 0))
}

// rrParams returns τ and λ of Lemma B.1.1: the majority of K (ε, Δ)-DP
// teachers is (τε, λ)-DP by composition method m with slack δ' (App. B.4):
// τ = ε_total/ε and λ = δ_total of the K teachers so composed
// (accountant.Composition.Compose). Simple
// composition gives τ = K, λ = KΔ; Table B.1 (K = 35, ε = 0.1, Δ = 1e-5,
// δ' = 0.1, general) gives τ = 14.0328, λ = 0.1003.
func rrParams(teacher accountant.Guarantee, K int, m accountant.Method, deltaPrime float64) (tau, lambda float64, err error) {
	total, err := accountant.Composition{Method: m, DeltaPrime: deltaPrime}.Compose(teacher, K)
	if err != nil {
		return 0, 0, fmt.Errorf("RR parameters: %w", err)
	}
	tau = total.Eps / teacher.Eps
	if !(tau > 0) || math.IsInf(tau, 1) {
		// The teachers' ε, not τ, which no caller set, is out of what
		// floating point composes.
		return 0, 0, fmt.Errorf("RR parameters: %w", &param.Error{Name: "eps", Value: teacher.Eps, Rule: fmt.Sprintf("the majority's composition gives tau = %v: the teachers' eps must be large enough that it is a finite number > 0", tau)})
	}
	if !(total.Delta < 1) {
		return 0, 0, fmt.Errorf("RR parameters: %w", &param.Error{Name: "Delta", Value: teacher.Delta, Rule: fmt.Sprintf("the majority of K = %d teachers composes to lambda = %v: the teachers' Delta must be small enough that it is < 1", K, total.Delta)})
	}
	return tau, total.Delta, nil
}
