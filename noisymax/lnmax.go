package noisymax

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
)

// LNMax is PATE's Laplace noisy max (Papernot, Abadi, Erlingsson,
// Goodfellow and Talwar, "Semi-supervised Knowledge Transfer for Deep
// Learning from Private Training Data", ICLR 2017, Section 2.1): the class
// whose vote count plus Laplace noise of scale b is largest (the paper
// writes the scale as 1/γ). darrm draws the noise from the discrete
// Laplace distribution, Pr[Y = y] ∝ e^{-|y|/b} on the integers; the
// mechanism with its scale is ensemble.LNMax, and its analyses here are
// functions of the scale.
//
// Under the one-vote relation one changed vote moves two counts by one
// each, an L1 change of 2, so adding independent (discrete) Laplace noise
// of scale b to every count is (2/b, 0)-DP, and the label, the argmax with
// ties broken at random, is post-processing: each query is (2/b, 0)-DP,
// the paper's (2γ, 0). Only this data-independent guarantee is offered:
// the paper's data-dependent moments bound (its Theorem 2) is not
// implemented.

// MaxLNMaxEps is the largest per-query ε = 2/b of LNMax: a label
// whose output probabilities may differ by e^100 (about 10^43) between
// neighbours protects nothing, and below b = 2/MaxLNMaxEps = 0.02 the
// guarantee only grows towards +Inf (2/b overflows below about
// 1e-308), which no release may state.
const MaxLNMaxEps = 100.0

// lnmaxEps returns LNMax's per-query pure-DP ε = 2/b at scale b, rounded
// up, or LNMaxSpend's error on the scale.
func lnmaxEps(b float64) (float64, error) {
	if !(b > 0 && b <= discrete.MaxScale) || !(outward.Exact(2).Div(outward.Exact(b)).Hi <= MaxLNMaxEps) {
		return 0, &param.Error{Name: "laplace-scale", Value: b, Rule: fmt.Sprintf("must be in [%v, %v] (discrete Laplace noise; below %v its per-query eps 2/b is above %v, a guarantee that says nothing)",
			2/MaxLNMaxEps, discrete.MaxScale, 2/MaxLNMaxEps, MaxLNMaxEps)}
	}
	return outward.Exact(2).Div(outward.Exact(b)).Hi, nil
}

// LNMaxSpend returns the description of one query of LNMax at scale b:
// discrete Laplace noise of scale b on the two counts a changed vote
// moves, with its guarantee (2/b, 0), ε rounded up. The scale must be at
// most discrete.MaxScale, and large enough that ε is at most MaxLNMaxEps:
// one rule, said in the same words whichever end it breaks, a
// parameter error that names the laplace-scale (its flag).
func LNMaxSpend(b float64) (accountant.Spend, error) {
	eps, err := lnmaxEps(b)
	if err != nil {
		return accountant.Spend{}, err
	}
	return accountant.Spend{Kind: accountant.LaplaceSpend, Guarantee: accountant.Guarantee{Eps: eps}, Laplace: &accountant.LaplacePart{Scale: b, Coords: 2}}, nil
}
