package main

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/decimal"
)

// The baselines solve --compare sets beside gamma_opt.

// subBaseline returns gamma_Sub for s teachers subsampled out of the K of
// problem p (Lemma 3.4.1). Its proof, where one fits the target, is
// composition: the release is post-processing of s (eps, Delta)-DP
// teachers, (s·eps, 1-(1-Delta)^s)-DP together (Kairouz-Oh-Viswanath
// 2015, Thm 3.3 with i = 0), as the subsample mechanism has it
// (ensemble.NewSubsample); or, for pure-DP teachers and an odd s, Theorem
// 3.5.1's: the majority of s = 2j-1 teachers is (j·eps)-DP.
func subBaseline(p constraints.Problem, s int) (gamma.Baseline, error) {
	g, err := gamma.Sub(p.K, s)
	if err != nil {
		return gamma.Baseline{}, err
	}
	b := gamma.Baseline{Name: "sub", Label: fmt.Sprintf("gamma_Sub: majority of %d of the %d teachers, subsampled without replacement (Lemma 3.4.1)", s, p.K), Gamma: g}
	switch {
	case float64(s) <= p.M && constraints.DefaultTargetDelta(p.Delta, float64(s)) <= p.TargetDelta:
		b.Proof = "Lemma 3.4.1 and composition"
	case p.Delta == 0 && s%2 == 1 && float64(s+1)/2 <= p.M:
		b.Proof = "Theorem 3.5.1"
	}
	return b, nil
}

// dSubBaseline returns gamma.DSub(k, m), gamma_DSub (Theorem 3.5.1),
// labelled for outputs: the majority of 2·floor(m)−1 subsampled teachers, or
// gamma = 1 when floor(m) >= (K+1)/2. Its proof is the theorem, which
// problemBaselines uses only where it holds, Delta = delta = 0 (the
// theorem assumes i.i.d. teachers; docs/solve.md, "Certification", proves
// it for any).
func dSubBaseline(k int, m float64) (gamma.Baseline, error) {
	g, err := gamma.DSub(k, m)
	if err != nil {
		return gamma.Baseline{}, err
	}
	s := gamma.SubSize(m)
	label := fmt.Sprintf("gamma_DSub: majority of %d of the %d teachers, subsampled without replacement (Theorem 3.5.1)", 2*s-1, k)
	if 2*s >= k+1 {
		label = "gamma_DSub: gamma = 1, since floor(m) >= (K+1)/2 (Theorem 3.5.1)"
	}
	return gamma.Baseline{Name: "dsub", Label: label, Gamma: g, Proof: "Theorem 3.5.1"}, nil
}

// baselineOptions choose the baselines of a problem (problemBaselines).
type baselineOptions struct {
	// SubSize is the number of teachers gamma_Sub subsamples; 0 means
	// gamma.SubSize(m).
	SubSize int
	// RR is the composition that gives randomized response's p_const, and
	// RRDeltaPrime its slack (gamma.RRBaseline).
	RR           rrMethod
	RRDeltaPrime float64
}

// baselineError says which baseline could not be built; its message is
// the baseline's error.
type baselineError struct {
	Name string // "sub", "dsub", "rr" or "gnmax", as gamma.Baseline.Name
	Err  error
}

func (e *baselineError) Error() string { return e.Err.Error() }
func (e *baselineError) Unwrap() error { return e.Err }

// omittedBaselines returns the baselines that problemBaselines leaves out at
// problem p, each with the reason: gamma_DSub unless the teachers and the
// release are pure DP (Theorem 3.5.1 is a result for pure DP); in the
// one-vote relation gamma_Sub and gamma_DSub, which are not private there
// for the deltas of interest. The reason prints delta as the problem's
// description does (decimal.FormatBound), so one output says it once.
func omittedBaselines(p constraints.Problem) []report.Omitted {
	if p.Relation == accountant.OneVote {
		return append([]report.Omitted(nil), oneVoteOmitted...)
	}
	if p.Delta == 0 && p.TargetDelta == 0 {
		return nil
	}
	return []report.Omitted{{Name: "dsub", Reason: fmt.Sprintf("Theorem 3.5.1 makes it (m·eps)-DP for pure-DP teachers only (Delta = delta = 0); here Delta = %g and delta = %s", p.Delta, decimal.FormatBound(p.TargetDelta))}}
}

// problemBaselines returns the noise functions that gamma_opt is compared with
// at problem p (Section 3.7.1, App. B.4), in this order: gamma_Sub
// (Lemma 3.4.1); gamma_DSub when the teachers and the
// release are pure DP, Delta = delta = 0, the setting of Theorem 3.5.1;
// and randomized response's constant gamma (gamma.RRBaseline). In the one-vote
// relation they are GNMax, calibrated on its released bit
// (gamma.GNMaxBaseline), and randomized response's largest constant gamma
// (gamma.OneVoteRRBaseline); o does not apply there. omittedBaselines says
// which are left out, and why. An error is a *baselineError.
func problemBaselines(p constraints.Problem, o baselineOptions) ([]gamma.Baseline, error) {
	if p.Relation == accountant.OneVote {
		gn, err := gamma.GNMaxBaseline(p)
		if err != nil {
			return nil, &baselineError{"gnmax", err}
		}
		rr, err := gamma.OneVoteRRBaseline(p)
		if err != nil {
			return nil, &baselineError{"rr", err}
		}
		return []gamma.Baseline{gn, rr}, nil
	}
	s := o.SubSize
	if s == 0 {
		s = gamma.SubSize(p.M)
	}
	sub, err := subBaseline(p, s)
	if err != nil {
		return nil, &baselineError{"sub", err}
	}
	bases := []gamma.Baseline{sub}
	if p.Delta == 0 && p.TargetDelta == 0 {
		d, err := dSubBaseline(p.K, p.M)
		if err != nil {
			return nil, &baselineError{"dsub", err}
		}
		bases = append(bases, d)
	}
	rr, err := gamma.RRBaseline(p, o.RR.For(p.Delta), o.RRDeltaPrime)
	if err != nil {
		return nil, &baselineError{"rr", err}
	}
	return append(bases, rr), nil
}

// oneVoteOmitted are the baselines of DaRRM's relation that the one-vote
// relation leaves out, and why.
var oneVoteOmitted = []report.Omitted{
	{Name: "sub", Reason: "subsampling s teachers releases 1 with probability 0 below (s+1)/2 votes for 1 and a positive one at (s+1)/2 (Lemma 3.4.1), a ratio no eps bounds: in the one-vote relation it is private only for delta at least that probability"},
	{Name: "dsub", Reason: "gamma_DSub subsamples 2m-1 teachers and fails as gamma_Sub does; Theorem 3.5.1 is a result for private teachers"},
}
