package noisymax

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/outward"
)

// LNMax is PATE's Laplace noisy max (Papernot, Abadi, Erlingsson,
// Goodfellow and Talwar, "Semi-supervised Knowledge Transfer for Deep
// Learning from Private Training Data", ICLR 2017, Section 2.1): the class
// whose vote count plus Laplace noise of scale Scale is largest (the paper
// writes the scale as 1/γ). darrm draws the noise from the discrete
// Laplace distribution, Pr[Y = y] ∝ e^{-|y|/Scale} on the integers.
//
// Under the one-vote relation one changed vote moves two counts by one
// each, an L1 change of 2, so adding independent (discrete) Laplace noise
// of scale b to every count is (2/b, 0)-DP, and the label, the argmax with
// ties broken at random, is post-processing: each query is (2/b, 0)-DP,
// the paper's (2γ, 0). Only this data-independent guarantee is offered:
// the paper's data-dependent moments bound (its Theorem 2) is not
// implemented. A label file's header states the scale by its JSON key.
type LNMax struct {
	Scale float64 `json:"laplace_scale"`
}

// MaxLNMaxEps is the largest per-query ε = 2/Scale of LNMax: a label
// whose output probabilities may differ by e^100 (about 10^43) between
// neighbours protects nothing, and below Scale = 2/MaxLNMaxEps = 0.02 the
// guarantee only grows towards +Inf (2/Scale overflows below about
// 1e-308), which no release may state.
const MaxLNMaxEps = 100.0

// Validate checks the scale: at most discrete.MaxScale, and large enough that
// the per-query ε = 2/Scale (rounded up) is at most MaxLNMaxEps; one rule,
// said in the same words whichever end it breaks.
func (m LNMax) Validate() error {
	if !(m.Scale > 0 && m.Scale <= discrete.MaxScale) || !(outward.Exact(2).Div(outward.Exact(m.Scale)).Hi <= MaxLNMaxEps) {
		return &accountant.ParamError{Name: "laplace scale", Value: m.Scale, Rule: fmt.Sprintf("must be in [%v, %v] (discrete Laplace noise; below %v its per-query eps 2/b is above %v, a guarantee that says nothing)",
			2/MaxLNMaxEps, discrete.MaxScale, 2/MaxLNMaxEps, MaxLNMaxEps)}
	}
	return nil
}

// Eps returns the per-query pure-DP ε = 2/Scale, rounded up; it is at most
// MaxLNMaxEps.
func (m LNMax) Eps() (float64, error) {
	if err := m.Validate(); err != nil {
		return 0, fmt.Errorf("LNMax: %w", err)
	}
	return outward.Exact(2).Div(outward.Exact(m.Scale)).Hi, nil
}

// Spend returns the description of one query: discrete Laplace noise of
// scale Scale on the two counts a changed vote moves, with its guarantee
// (2/Scale, 0).
func (m LNMax) Spend() (accountant.Spend, error) {
	eps, err := m.Eps()
	if err != nil {
		return accountant.Spend{}, err
	}
	return accountant.Spend{Kind: accountant.LaplaceSpend, Guarantee: accountant.Guarantee{Eps: eps}, Laplace: &accountant.LaplacePart{Scale: m.Scale, Coords: 2}}, nil
}
