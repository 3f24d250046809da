package gamma

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/param"
)

// pConst returns the largest probability p_const in [0, 1] with which
// randomized response on the majority of K (ε, Δ)-DP teachers is
// (mε, δ)-DP, when the majority itself is (τε, λ)-DP (Lemma B.1.1):
//
//	p_const <= (e^{mε} - 1 + 2δ) / (2(e^{τε} - e^{mε} + (1+e^{mε})λ)/(e^{τε}+1) + e^{mε} - 1).
//
// The denominator simplifies to (1+e^{mε})(e^{τε} - 1 + 2λ)/(e^{τε}+1), so
// the bound is f(mε, δ)/f(τε, λ) with f(x, d) = (1 - e^{-x} + 2d·e^{-x})/(1 + e^{-x}),
// which is evaluated without overflow. A bound above 1 (m >= τ and δ >= λ)
// means RR may always answer with the true majority: p_const = 1.
// rrParams gives τ and λ. mε is the product of the decimals m and ε are
// written as (decimal.Mul), the per-query ε the release is held to.
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
	f := func(x, d float64) float64 {
		e := math.Exp(-x)
		return (-math.Expm1(-x) + 2*d*e) / (1 + e)
	}
	return math.Min(1, f(decimal.Mul(m, eps), delta)/f(tau*eps, lambda)), nil
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
