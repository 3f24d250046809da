package accountant

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/outward"
)

// Sequence is a sequence of adaptively composed steps, each (ε_i, δ_i)-DP,
// kept as the sums its compositions need: it grows by a run of equal
// steps at a time (Add), its totals (Totals) cost the same at any length,
// and it can be stored (a ledger line carries the Sequence of the spends
// before it). Its zero value is the empty sequence.
type Sequence struct {
	// Steps is the number of steps. While they all have one guarantee,
	// Mixed is false and Step is that guarantee.
	Steps int       `json:"steps"`
	Step  Guarantee `json:"step"`
	Mixed bool      `json:"mixed"`
	// Upper bounds of Σε_i, Σδ_i, Σε_i·tanh(ε_i/2) and Σε_i², and a lower
	// bound of Σlog(1-δ_i): the terms of simple composition (Theorem
	// 3.3.2) and of general composition (Kairouz, Oh and Viswanath 2015,
	// Thm 3.5), each run's rounded outward as in composeGeneral.
	SumEps     float64 `json:"sum_eps"`
	SumDelta   float64 `json:"sum_delta"`
	SumTanh    float64 `json:"sum_eps_tanh"`
	SumSq      float64 `json:"sum_eps_sq"`
	SumLogKeep float64 `json:"sum_log_keep"`
	// Rho is an upper bound of Σρ_i over the steps added by AddSpend
	// whose description has a zCDP slope (Spend.Rho), the sum a zCDP
	// filter holds to its budget.
	Rho float64 `json:"rho,omitempty"`
	// Curveless counts the steps added by AddSpend without a zCDP slope.
	Curveless int `json:"curveless,omitempty"`

	// The sums of the filters a Filter of several parts holds the steps
	// to (Filter.Add), each an upper bound, omitted while zero, so that
	// the sequences of a ledger of version 4, which has none of them,
	// read and write as before. A Filter's zCDP part sums Rho and
	// Curveless above, from its own charges.
	//
	// PointEps and PointDelta sum the points of the steps' privacy
	// profiles that the simple part charged (Charge.Point).
	PointEps   float64 `json:"point_eps,omitempty"`
	PointDelta float64 `json:"point_delta,omitempty"`
	// Point is the point every step was charged while they were all
	// charged one (PointMixed false), so that the simple part's total is
	// n·ε of it, rounded once, as Step's simple composition is: the sums
	// above, rounded up at each run, would lose the last label that
	// fits a budget of exactly n·ε.
	Point      Guarantee `json:"point,omitzero"`
	PointMixed bool      `json:"point_mixed,omitempty"`
	// AdvancedSq and AdvancedDelta sum ε_i² and δ_i of the points the
	// advanced part charged (Charge.Advanced).
	AdvancedSq    float64 `json:"advanced_eps_sq,omitempty"`
	AdvancedDelta float64 `json:"advanced_delta,omitempty"`
	// Mu2 sums the Gaussian-DP part's μ_i², MuDelta the δ_i it allows
	// beside them (discrete Gaussian noise, Charge.MuDelta); Muless
	// counts the steps it could not charge (no μ).
	Mu2     float64 `json:"gdp_mu2,omitempty"`
	MuDelta float64 `json:"gdp_delta,omitempty"`
	Muless  int     `json:"gdp_less,omitempty"`
	// Renyi sums the Rényi part's divergences at its order, Renyiless
	// counts the steps it could not charge (no Rényi curve at that order).
	Renyi     float64 `json:"rdp,omitempty"`
	Renyiless int     `json:"rdp_less,omitempty"`
}

// maxSequenceSteps bounds Sequence.Steps: every count up to it is an
// exact float64.
const maxSequenceSteps = 1 << 53

// Add returns s followed by k steps of guarantee step (k = 0: s itself).
func (s Sequence) Add(step Guarantee, k int) (Sequence, error) {
	if k == 0 {
		return s, nil
	}
	if err := checkSimple(step, k); err != nil {
		return s, fmt.Errorf("sequence: %w", err)
	}
	if k > maxSequenceSteps-s.Steps {
		return s, fmt.Errorf("sequence: %d steps after %d: more than %d", k, s.Steps, maxSequenceSteps)
	}
	switch {
	case s.Steps == 0:
		s.Step = step
	case step != s.Step:
		s.Mixed = true
	}
	if s.Mixed {
		s.Step = Guarantee{}
	}
	s.Steps += k
	n, e := float64(k), step.Eps
	s.SumEps = outward.AddUp(s.SumEps, outward.MulUp(n, e))
	s.SumDelta = outward.AddUp(s.SumDelta, outward.MulUp(n, step.Delta))
	s.SumTanh = outward.AddUp(s.SumTanh, outward.Up(n*e*math.Tanh(e/2), 4))
	// kε² below the normal range is rounded up, never to 0 (a sum of 0
	// made general composition's total of tiny steps about 0).
	sq := outward.Up(n*e*e, 2)
	if sq < 0x1p-1022 {
		sq = outward.MulUp(outward.MulUp(n, e), e)
	}
	s.SumSq = outward.AddUp(s.SumSq, sq)
	s.SumLogKeep = outward.AddDown(s.SumLogKeep, outward.Down(n*logKeepDown(step.Delta), 1))
	return s, nil
}

// AddSpend returns s followed by k steps that step describes: Add of its
// guarantee, and its zCDP slope added to Rho when it has one.
func (s Sequence) AddSpend(step Spend, k int) (Sequence, error) {
	if err := step.Check(); err != nil {
		return s, fmt.Errorf("sequence: %w", err)
	}
	next, err := s.Add(step.Guarantee, k)
	if err != nil || k == 0 {
		return next, err
	}
	if rho, ok := step.rho(); ok {
		next.Rho = outward.AddUp(next.Rho, outward.MulUp(float64(k), rho))
	} else {
		next.Curveless += k
	}
	return next, nil
}

// Check reports whether s is a sequence that Add can have built: a count
// in range, a valid common step, and sums that are finite and of the
// right sign. A Sequence read from a file is checked before it is used.
func (s Sequence) Check() error {
	sums := []float64{s.SumEps, s.SumDelta, s.SumTanh, s.SumSq, s.Rho, s.PointEps, s.PointDelta, s.AdvancedSq, s.AdvancedDelta, s.Mu2, s.MuDelta, s.Renyi, -s.SumLogKeep}
	for _, x := range sums {
		if !(x >= 0) || math.IsInf(x, 0) {
			return fmt.Errorf("sequence: sums %v: must be finite, and >= 0 (the last <= 0)", sums)
		}
	}
	for _, c := range [...]struct {
		n    int
		what string
	}{{s.Curveless, "without a zCDP curve"}, {s.Muless, "without a Gaussian-DP mu"}, {s.Renyiless, "without a Renyi curve"}} {
		if c.n < 0 || c.n > s.Steps {
			return fmt.Errorf("sequence: %d steps %s: must be in [0, %d]", c.n, c.what, s.Steps)
		}
	}
	switch {
	case s.Steps < 0 || s.Steps > maxSequenceSteps:
		return fmt.Errorf("sequence: %d steps: must be in [0, %d]", s.Steps, maxSequenceSteps)
	case s.Steps == 0 && s != Sequence{}:
		return fmt.Errorf("sequence: no steps, but sums or a step")
	case s.Mixed && s.Step != Guarantee{}:
		return fmt.Errorf("sequence: mixed steps, but a common step %v", s.Step)
	case s.Steps > 0 && !s.Mixed:
		if err := checkStep("", s.Step); err != nil {
			return fmt.Errorf("sequence: step: %w", err)
		}
	}
	return nil
}

// simple returns the simple composition of s (Theorem 3.3.2); of equal
// steps exactly composeSimple's.
func (s Sequence) simple() Guarantee {
	if !s.Mixed {
		n := float64(s.Steps)
		return Guarantee{Eps: outward.MulUp(n, s.Step.Eps), Delta: outward.MulUp(n, s.Step.Delta)}
	}
	return Guarantee{Eps: s.SumEps, Delta: s.SumDelta}
}

// general returns the general composition of s with slack deltaPrime
// (Kairouz, Oh and Viswanath 2015, Thm 3.5); of equal steps exactly
// composeGeneral's.
func (s Sequence) general(deltaPrime float64) Guarantee {
	if !s.Mixed {
		g, _ := composeGeneral(s.Step, s.Steps, deltaPrime)
		return g
	}
	return Guarantee{Eps: generalEps(s.SumEps, s.SumTanh, s.SumSq, 0, deltaPrime), Delta: totalDelta(s.SumLogKeep, deltaPrime)}
}
