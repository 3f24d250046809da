package noisymax

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noise"
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
// implemented.
type LNMax struct {
	Scale float64
}

// MaxLNMaxEps is the largest per-query ε = 2/Scale of LNMax: a label
// whose output probabilities may differ by e^100 (about 10^43) between
// neighbours protects nothing, and below Scale = 2/MaxLNMaxEps = 0.02 the
// guarantee only grows towards +Inf (2/Scale overflows below about
// 1e-308), which no release may state.
const MaxLNMaxEps = 100.0

// Validate checks the scale: at most noise.MaxScale, and large enough that
// the per-query ε = 2/Scale (rounded up) is at most MaxLNMaxEps; one rule,
// said in the same words whichever end it breaks.
func (m LNMax) Validate() error {
	if !(m.Scale > 0 && m.Scale <= noise.MaxScale) || !(outward.Exact(2).Div(outward.Exact(m.Scale)).Hi <= MaxLNMaxEps) {
		return &accountant.ParamError{Name: "laplace scale", Value: m.Scale, Rule: fmt.Sprintf("must be in [%v, %v] (discrete Laplace noise; below %v its per-query eps 2/b is above %v, a guarantee that says nothing)",
			2/MaxLNMaxEps, noise.MaxScale, 2/MaxLNMaxEps, MaxLNMaxEps)}
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

// RDP returns the data-independent Rényi DP of one query at order λ > 1:
// min(ε, λε²/2) with ε = 2/Scale. An ε-DP mechanism is (λ, ε)-RDP, and
// ε²/2-zCDP (Bun and Steinke, "Concentrated Differential Privacy", TCC
// 2016, Proposition 3.3), i.e. (λ, λε²/2)-RDP for every λ > 1. Rounded up.
func (m LNMax) rdp(order float64) (float64, error) {
	eps, err := m.Eps()
	if err != nil {
		return 0, err
	}
	if err := param.Alpha(order); err != nil {
		return 0, fmt.Errorf("LNMax: %w", err)
	}
	z := outward.Exact(order).Mul(outward.Exact(eps)).Mul(outward.Exact(eps)).Div(outward.Exact(2))
	return math.Min(eps, z.Hi), nil
}

// LNMaxResult is the data-independent privacy of Q queries of LNMax.
type LNMaxResult struct {
	Queries int
	// PerQuery is each query's (2/Scale, 0).
	PerQuery accountant.Guarantee
	// RDP is the best of the Rényi curve Q·min(ε, λε²/2) over the orders,
	// converted at δ.
	RDP OrderEps
	// Eps is the smallest of RDP.Eps, the pure composition Q·ε (at δ =
	// 0, which also holds at any δ; Pure says it is the smallest) and the
	// exact composition of the noise at δ (accountant.ComposeRun; Exact says it is).
	Eps   float64
	Pure  bool
	Exact bool
}

// LNMaxAccount returns the data-independent privacy of queries queries of
// m at δ over the given Rényi orders (DefaultOrders when nil), under
// conversion c: the best of the Rényi composition, Q·ε and the exact
// composition of its noise (accountant.ComposeRun of Spend).
func LNMaxAccount(m LNMax, queries int, delta float64, orders []float64, c accountant.Conversion) (LNMaxResult, error) {
	eps, err := m.Eps()
	if err != nil {
		return LNMaxResult{}, err
	}
	if err := param.Count("queries", queries, 0); err != nil {
		return LNMaxResult{}, fmt.Errorf("LNMax: %w", err)
	}
	if err := accountant.CheckConversion(delta, c); err != nil {
		return LNMaxResult{}, fmt.Errorf("LNMax: %w", err)
	}
	if orders == nil {
		orders = DefaultOrders()
	}
	if len(orders) == 0 {
		return LNMaxResult{}, fmt.Errorf("LNMax: no orders")
	}
	rdp := make([]float64, len(orders))
	for j, o := range orders {
		r, err := m.rdp(o)
		if err != nil {
			return LNMaxResult{}, err
		}
		rdp[j] = outward.MulUp(r, float64(queries))
	}
	best, err := bestOrder(orders, rdp, delta, c)
	if err != nil {
		return LNMaxResult{}, err
	}
	r := LNMaxResult{Queries: queries, PerQuery: accountant.Guarantee{Eps: eps}, RDP: best, Eps: best.Eps}
	if pure := outward.MulUp(eps, float64(queries)); pure <= best.Eps {
		r.Eps, r.Pure = pure, true
	}
	if queries == 0 || delta == 0 {
		return r, nil
	}
	s, _ := m.Spend()
	all, err := accountant.ComposeRun(s, queries, delta, accountant.DefaultDeltaPrime, c)
	if err != nil {
		return LNMaxResult{}, fmt.Errorf("LNMax: %w", err)
	}
	for _, t := range all {
		if t.Method == accountant.Exact && t.Guarantee.Eps < r.Eps {
			r.Eps, r.Pure, r.Exact = t.Guarantee.Eps, false, true
		}
	}
	return r, nil
}
