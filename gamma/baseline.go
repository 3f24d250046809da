package gamma

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
)

// Baseline is a noise function other than gamma_opt, with the result that
// justifies it.
type Baseline struct {
	Name  string // "sub", "dsub", "rr" or "gnmax"
	Label string // what it is and where it comes from, for people
	Gamma Gamma
	// Proof names the result that proves Gamma (m·eps, delta)-DP at the
	// problem it was built for, whatever its certificate says ("" when
	// only the certificate can). A baseline exactly at the budget in exact
	// arithmetic (gamma_Sub at Delta = 0, gamma_DSub) has a certificate
	// that is Tight: float64 cannot tell it from just over the budget,
	// and the proof can.
	Proof string
}

// SubSize returns floor(m), the number of teachers the subsampling baseline
// draws at allowance m (Section 3.7.1).
func SubSize(m float64) int { return int(math.Floor(m)) }

// Baselines returns the noise functions that gamma_opt is compared with
// at problem p (Section 3.7.1, App. B.4) that take no composition, in this
// order: gamma_Sub of subSize teachers (0 means SubSize(m); Lemma 3.4.1),
// and gamma_DSub when the teachers and the release are pure DP, Delta =
// delta = 0, the setting of Theorem 3.5.1; in the one-vote relation, GNMax
// calibrated on its released bit. Randomized response's
// constant, which a composition gives, is RRBaseline.
func Baselines(p constraints.Problem, subSize int) ([]Baseline, error) {
	// A problem out of its domain (eps NaN or +Inf, delta NaN, an unknown
	// relation) had baselines with a proof of privacy at it.
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Relation == accountant.OneVote {
		gn, err := gnmaxBaseline(p)
		if err != nil {
			return nil, err
		}
		return []Baseline{gn}, nil
	}
	if subSize == 0 {
		subSize = SubSize(p.M)
	}
	sub, err := subBaseline(p, subSize)
	if err != nil {
		return nil, err
	}
	if p.Delta != 0 || p.TargetDelta != 0 {
		return []Baseline{sub}, nil
	}
	d, err := dSubBaseline(p.K, p.M)
	if err != nil {
		return nil, err
	}
	return []Baseline{sub, d}, nil
}

// subBaseline returns gamma_Sub for s teachers subsampled out of the K of
// problem p (Lemma 3.4.1). Its proof, where one fits the target, is
// composition: the release is post-processing of s (eps, Delta)-DP
// teachers, (s·eps, 1-(1-Delta)^s)-DP together (Kairouz-Oh-Viswanath
// 2015, Thm 3.3 with i = 0), as the subsample mechanism has it
// (ensemble.NewSubsample); or, for pure-DP teachers and an odd s, Theorem
// 3.5.1's: the majority of s = 2j-1 teachers is (j·eps)-DP.
func subBaseline(p constraints.Problem, s int) (Baseline, error) {
	g, err := Sub(p.K, s)
	if err != nil {
		return Baseline{}, err
	}
	b := Baseline{Name: "sub", Label: fmt.Sprintf("gamma_Sub: majority of %d of the %d teachers, subsampled without replacement (Lemma 3.4.1)", s, p.K), Gamma: g}
	switch {
	case float64(s) <= p.M && constraints.DefaultTargetDelta(p.Delta, float64(s)) <= p.TargetDelta:
		b.Proof = "Lemma 3.4.1 and composition"
	case p.Delta == 0 && s%2 == 1 && float64(s+1)/2 <= p.M:
		b.Proof = "Theorem 3.5.1"
	}
	return b, nil
}

// dSubBaseline returns DSub(k, m), gamma_DSub (Theorem 3.5.1), labelled
// for outputs: the majority of 2·floor(m)−1 subsampled teachers, or gamma
// = 1 when floor(m) >= (K+1)/2. Its proof is the theorem, which Baselines
// uses only where it holds, Delta = delta = 0 (the theorem assumes i.i.d.
// teachers; docs/solve.md, "Certification", proves it for any).
func dSubBaseline(k int, m float64) (Baseline, error) {
	g, err := DSub(k, m)
	if err != nil {
		return Baseline{}, err
	}
	s := SubSize(m)
	label := fmt.Sprintf("gamma_DSub: majority of %d of the %d teachers, subsampled without replacement (Theorem 3.5.1)", 2*s-1, k)
	if 2*s >= k+1 {
		label = "gamma_DSub: gamma = 1, since floor(m) >= (K+1)/2 (Theorem 3.5.1)"
	}
	return Baseline{Name: "dsub", Label: label, Gamma: g, Proof: "Theorem 3.5.1"}, nil
}

// RRConst is randomized response's success probability p_const for a
// problem (Lemma B.1.1), with the (Tau·eps, Lambda)-DP guarantee of the K
// teachers' majority that it comes from.
type RRConst struct {
	Tau, Lambda float64
	// PConst is rounded down to a multiple of 2^-53, a probability that a
	// sampler of 53-bit uniforms realises exactly, so the gamma certified
	// is the gamma sampled.
	PConst float64
}

// NewRRConst returns randomized response's p_const for problem p, the
// majority of the K teachers being (tau·eps, lambda)-DP by the given
// composition with slack deltaPrime (App. B.4).
func NewRRConst(p constraints.Problem, comp accountant.Method, deltaPrime float64) (RRConst, error) {
	if err := p.Validate(); err != nil {
		return RRConst{}, err
	}
	tau, lambda, err := rrParams(accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}, p.K, comp, deltaPrime)
	if err != nil {
		return RRConst{}, fmt.Errorf("RR: %w", err)
	}
	pc, err := pConst(p.Eps, p.M, p.TargetDelta, tau, lambda)
	if err != nil {
		return RRConst{}, fmt.Errorf("RR: %w", err)
	}
	return RRConst{Tau: tau, Lambda: lambda, PConst: realised(pc)}, nil
}

// RRBaseline returns randomized response's constant noise function for
// problem p: gamma = p_const (NewRRConst), by composition comp with slack
// deltaPrime; in the one-vote relation, which composes nothing and
// ignores them, the largest constant gamma private there.
func RRBaseline(p constraints.Problem, comp accountant.Method, deltaPrime float64) (Baseline, error) {
	if p.Relation == accountant.OneVote {
		return oneVoteRRBaseline(p)
	}
	rr, err := NewRRConst(p, comp, deltaPrime)
	if err != nil {
		return Baseline{}, err
	}
	g, err := Const(p.K, rr.PConst)
	if err != nil {
		return Baseline{}, fmt.Errorf("RR: %w", err)
	}
	label := fmt.Sprintf("RR: gamma = p_const = %.6g (Lemma B.1.1; the majority is (tau·eps, lambda)-DP with tau = %.6g, lambda = %.3g by %v composition)", rr.PConst, rr.Tau, rr.Lambda, comp)
	return Baseline{Name: "rr", Label: label, Gamma: g, Proof: "Lemma B.1.1"}, nil
}

// Measurement is what a comparison measures of a noise function without
// certifying it (Gamma.Measure).
type Measurement struct {
	Utility        float64
	SurrogateError float64
	Errors         []ErrorEstimate
	// LabelOne is, for each actual distribution that fixes every p_i (in
	// their order), Pr[label = 1] (Gamma.LabelOne): the labels' accuracy when the
	// true label is 1 and p_i is teacher i's accuracy.
	LabelOne []fixedLabelOne
}

// fixedLabelOne is Pr[label = 1] under an actual distribution that fixes
// every p_i.
type fixedLabelOne struct {
	Actual string
	Value  float64
}

// Measure measures g: its utility and surrogate error under the prior's
// coefficients, its true expected error under each actual distribution
// (expectedErrors), and Pr[label = 1] under each that fixes every p_i.
// coeffs are the prior's (Prior.Coefficients) for K = g.K(); with no
// actual distributions it measures the utility and surrogate error alone,
// as optimal does for the gamma it solves. memo keeps the draws of the
// actual distributions for the next gamma measured under them
// (accountant.Memo; nil: nothing kept). The draws stop when ctx is done.
func (g Gamma) Measure(ctx context.Context, memo *accountant.Memo, coeffs []float64, actuals []Actual) (Measurement, error) {
	if err := g.checkValues(); err != nil {
		// A nil gamma measured a utility of 0, and a value outside
		// [0, 1] one of NaN or beyond what any noise function reaches.
		return Measurement{}, fmt.Errorf("measure gamma: %w", err)
	}
	if want := len(g.upper()); len(coeffs) != want {
		return Measurement{}, fmt.Errorf("measure gamma for K = %d: %d coefficients of the prior, want %d", g.K(), len(coeffs), want)
	}
	errs, err := expectedErrors(ctx, memo, g, actuals)
	if err != nil {
		return Measurement{}, err
	}
	m := Measurement{Utility: utility(g, coeffs), SurrogateError: surrogateError(g, coeffs), Errors: errs}
	for _, a := range actuals {
		if !a.Fixed() {
			continue
		}
		pi, err := a.Sample(g.K(), nil)
		if err != nil {
			return Measurement{}, err
		}
		one, err := g.LabelOne(pi)
		if err != nil {
			return Measurement{}, err
		}
		m.LabelOne = append(m.LabelOne, fixedLabelOne{Actual: a.String(), Value: one})
	}
	return m, nil
}

// expectedErrors returns the true expected error of g under each actual
// distribution (expectedTVError). Distributions that are not fixed are
// sampled with about 2·10^8/K² Poisson-binomial steps in all (between 500
// and 20,000 draws), from a fixed seed: these are evaluations, not private
// releases, and a fixed seed makes the tables reproducible.
func expectedErrors(ctx context.Context, memo *accountant.Memo, g Gamma, actuals []Actual) ([]ErrorEstimate, error) {
	k := g.K()
	samples := min(20000, max(500, 200_000_000/(k*k)))
	var out []ErrorEstimate
	for _, a := range actuals {
		est, err := expectedTVError(ctx, memo, g, a, samples, 1)
		if err != nil {
			return nil, fmt.Errorf("expected error under %v: %w", a, err)
		}
		out = append(out, est)
	}
	return out, nil
}
