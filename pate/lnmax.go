package pate

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
)

// RDP returns the data-independent Rényi DP of one query at order λ > 1:
// min(ε, λε²/2) with ε = 2/Scale. An ε-DP mechanism is (λ, ε)-RDP, and
// ε²/2-zCDP (Bun and Steinke, "Concentrated Differential Privacy", TCC
// 2016, Proposition 3.3), i.e. (λ, λε²/2)-RDP for every λ > 1, at scale
// b. Rounded up.
func lnmaxRDP(b, order float64) (float64, error) {
	s, err := noisymax.LNMaxSpend(b)
	if err != nil {
		return 0, fmt.Errorf("LNMax: %w", err)
	}
	eps := s.Eps
	if err := param.Alpha(order); err != nil {
		return 0, fmt.Errorf("LNMax: %w", err)
	}
	z := outward.Exact(order).Mul(outward.Exact(eps)).Mul(outward.Exact(eps)).Div(outward.Exact(2))
	return math.Min(eps, z.Hi), nil
}

// lnmaxResult is the data-independent privacy of Q queries of LNMax
// (ensemble.LNMax).
type lnmaxResult struct {
	Queries int
	// PerQuery is each query's (2/Scale, 0).
	PerQuery accountant.Guarantee
	// RDP is the best of the Rényi curve Q·min(ε, λε²/2) over the orders,
	// converted at δ.
	RDP orderEps
	// Eps is the smallest of RDP.Eps, the pure composition Q·ε (at δ =
	// 0, which also holds at any δ; Pure says it is the smallest) and the
	// exact composition of the noise at δ (accountant.ComposeRun; Exact says it is).
	Eps   float64
	Pure  bool
	Exact bool
}

// lnmaxAccount returns the data-independent privacy of queries queries of
// LNMax at scale b at δ over the given Rényi orders (defaultOrders when nil), under
// conversion c: the best of the Rényi composition, Q·ε and the exact
// composition of its noise (accountant.ComposeRun of Spend).
func lnmaxAccount(b float64, queries int, delta float64, orders []float64, c accountant.Conversion) (lnmaxResult, error) {
	s, err := noisymax.LNMaxSpend(b)
	if err != nil {
		return lnmaxResult{}, fmt.Errorf("LNMax: %w", err)
	}
	eps := s.Eps
	if err := param.Count("queries", queries, 0); err != nil {
		return lnmaxResult{}, fmt.Errorf("LNMax: %w", err)
	}
	if err := c.Check(delta); err != nil {
		return lnmaxResult{}, fmt.Errorf("LNMax: %w", err)
	}
	if orders == nil {
		orders = defaultOrders()
	}
	if len(orders) == 0 {
		return lnmaxResult{}, fmt.Errorf("LNMax: no orders")
	}
	rdp := make([]float64, len(orders))
	for j, o := range orders {
		r, err := lnmaxRDP(b, o)
		if err != nil {
			return lnmaxResult{}, err
		}
		rdp[j] = outward.MulUp(r, float64(queries))
	}
	best, err := bestOrder(orders, rdp, delta, c)
	if err != nil {
		return lnmaxResult{}, err
	}
	r := lnmaxResult{Queries: queries, PerQuery: accountant.Guarantee{Eps: eps}, RDP: best, Eps: best.Eps}
	if pure := outward.MulUp(eps, float64(queries)); pure <= best.Eps {
		r.Eps, r.Pure = pure, true
	}
	if queries == 0 || delta == 0 {
		return r, nil
	}
	all, err := accountant.ComposeRun(nil, s, queries, delta, accountant.DefaultDeltaPrime, c)
	if err != nil {
		return lnmaxResult{}, fmt.Errorf("LNMax: %w", err)
	}
	for _, t := range all {
		if t.Method == accountant.Exact && t.Guarantee.Eps < r.Eps {
			r.Eps, r.Pure, r.Exact = t.Guarantee.Eps, false, true
		}
	}
	return r, nil
}
