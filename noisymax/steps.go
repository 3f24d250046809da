package noisymax

import (
	"fmt"
	"github.com/darrm/darrm/accountant"
	"math"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
)

// Steps are the steps of PATE's Gaussian noisy max on vote counts as
// plain numbers, which its analyses take: with Sigma1 > 0 a threshold
// step, the largest count plus noise of deviation Sigma1 compared with
// Threshold (Confident-GNMax, Papernot et al. 2018, Algorithm 1), then the
// label step, the argmax of the counts plus noise of deviation Sigma2
// (GNMax); Sigma1 = 0 is no threshold step. Noise is the noise of both.
// Its JSON is the object of the four settings that a declared use of a
// ledger records (a threshold and sigma1 of 0 without the step).
type Steps struct {
	Threshold float64 `json:"threshold"`
	Sigma1    float64 `json:"sigma1"`
	Sigma2    float64 `json:"sigma2"`
	Noise     Noise   `json:"noise,omitempty"`
}

// Confident reports whether s has the threshold step (Sigma1 != 0).
func (s Steps) Confident() bool { return s.Sigma1 != 0 }

// Drawn returns s as a release draws it: its noise, when unset, the
// discrete Gaussian. It is the one place of that default, which a label
// file's header, a PTR test and an account all state.
func (s Steps) Drawn() Steps {
	if s.Noise == UnsetNoise {
		s.Noise = DiscreteNoise
	}
	return s
}

// Check checks the noise and σ of each step, and a finite threshold;
// without a threshold step (Sigma1 = 0) the threshold must be 0.
func (s Steps) Check() error {
	if err := s.Noise.Check("sigma2", s.Sigma2); err != nil {
		return err
	}
	if s.Sigma1 == 0 {
		if s.Threshold != 0 {
			return &param.Error{Name: "threshold", Value: s.Threshold, Rule: "needs sigma1 > 0 (the threshold step's noise)"}
		}
		return nil
	}
	if err := s.Noise.Check("sigma1", s.Sigma1); err != nil {
		return err
	}
	if math.IsNaN(s.Threshold) || math.IsInf(s.Threshold, 0) {
		return &param.Error{Name: "threshold", Value: s.Threshold, Rule: "must be a finite number"}
	}
	return nil
}

// thresholdReach is how many σ1 above K a threshold may lie: beyond it the
// step answers no query (Pr[N(0, 1) >= 10] < 10^-23), yet every query is
// charged for it.
const thresholdReach = 10

// CheckFor checks the steps of s (Check) and its threshold for K teachers
// (CheckThreshold). Teachers = 0 (K not known yet) checks the steps
// alone.
func (s Steps) CheckFor(teachers int) error {
	if err := s.Check(); err != nil {
		return err
	}
	return s.CheckThreshold(teachers)
}

// CheckThreshold checks the threshold of a threshold step for K teachers:
// a step must be able to both answer and withhold, so its threshold is in
// [0, K + 10·σ1]. Below 0 it is the threshold 0 (no count is negative);
// beyond, no query is ever answered. A setting that does nothing is
// refused rather than charged. Without a threshold step, or with teachers
// = 0 (K not known yet), there is nothing to check.
func (s Steps) CheckThreshold(teachers int) error {
	if hi := float64(teachers) + thresholdReach*s.Sigma1; teachers > 0 && s.Confident() && !(s.Threshold >= 0 && s.Threshold <= hi) {
		return &param.Error{Name: "threshold", Value: s.Threshold, Rule: fmt.Sprintf("must be in [0, K + %d·sigma1] = [0, %v]: below 0 it is the threshold 0, and beyond no query is ever answered (yet each is charged)", thresholdReach, hi)}
	}
	return nil
}

// RunSlope returns the slope ρ of the data-independent Rényi curve ρ·λ of
// queries threshold steps and labels label steps of s, rounded up: the
// curve of a run that asks at most queries and labels at most labels of
// them, whichever they are. The label is λ/σ2²-RDP (a changed vote moves
// two counts by one), the threshold step λ/(2σ1²).
func (s Steps) RunSlope(queries, labels int) (float64, error) {
	if err := s.Check(); err != nil {
		return 0, fmt.Errorf("PATE: %w", err)
	}
	if queries < 0 || labels < 0 {
		return 0, fmt.Errorf("PATE: %d queries, %d labels: must be >= 0", queries, labels)
	}
	one := outward.Exact(1)
	square := func(x float64) outward.Interval { return outward.Exact(x).Mul(outward.Exact(x)) }
	r := one.Div(square(s.Sigma2)).Mul(outward.Exact(float64(labels)))
	if s.Confident() {
		r = r.Add(one.Div(outward.Exact(2).Mul(square(s.Sigma1))).Mul(outward.Exact(float64(queries))))
	}
	return r.Hi, nil
}

// Spend returns one query of s, every query charged as answered, as the
// accountant composes it at the per-query δ delta: its data-independent
// Rényi curve (RunSlope) as (ε, δ) under the paper's conversion, at the
// order it also returns, and its Gaussian parts: the label's two counts
// that a changed vote moves (σ2), and the threshold step's largest count
// (σ1).
func (s Steps) Spend(delta float64) (accountant.Spend, float64, error) {
	rho, err := s.RunSlope(1, 1)
	if err != nil {
		return accountant.Spend{}, 0, err
	}
	eps, order, err := accountant.PaperConversion.RhoToDP(rho, delta)
	if err != nil {
		return accountant.Spend{}, 0, err
	}
	parts := []accountant.GaussianPart{{Sigma: s.Sigma2, Coords: 2}}
	if s.Confident() {
		parts = append(parts, accountant.GaussianPart{Sigma: s.Sigma1, Coords: 1})
	}
	return accountant.Spend{Kind: accountant.GaussianSpend, Guarantee: accountant.Guarantee{Eps: eps, Delta: delta}, Discrete: s.Noise == DiscreteNoise, Gaussian: parts}, order, nil
}
