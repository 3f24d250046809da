package optimal

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// maxTieRounds bounds the separation rounds of the tie-break.
const maxTieRounds = 1000

// canonical returns the canonical optimum of the gamma LP (see Solve): the
// maximiser of U(x) - (rho/2)·|1 - x|² over the free values x = gamma(H..K)
// that satisfy every privacy row, lie in [0, 1] and have a utility of at
// least floor, rho = tieBreak times the largest utility coefficient; with
// its exhaustive separation, or nil when the point was scaled onto the
// budget.
//
// The objective is strictly concave, so the maximiser is unique, and it is
// the Euclidean projection of the point 1 + c/rho onto the feasible set:
// exact data (the prior's coefficients and the privacy rows) determine it,
// not the rows the cutting-plane loop happened to find or the LP solver's
// tolerances (unless the floor binds, which no tested setting reaches). It
// is computed by the projector, starting from the LP's rows, the exact
// separation adding the rows violated at its answer until none is; the
// last violations, below tieSepTol, are removed by scaling the point onto
// the budget (f is linear in gamma).
func (c *cutter) canonical(ctx context.Context, coeffs []float64, floor float64) ([]float64, *constraints.Separation, error) {
	n := len(coeffs)
	var maxC float64
	for _, v := range coeffs {
		maxC = max(maxC, v)
	}
	if !(maxC > 0) {
		return nil, nil, fmt.Errorf("tie-break: the utility has no positive coefficient")
	}
	target := make([]float64, n)
	for i, v := range coeffs {
		target[i] = 1 + v/(tieBreak*maxC)
	}
	pr := newProjector(target)
	for i := range n {
		pr.addBound(i, 1, 0)
		pr.addBound(i, -1, -1)
	}
	if err := pr.add(coeffs, floor); err != nil {
		return nil, nil, fmt.Errorf("tie-break: utility floor %g: %w", floor, err)
	}
	// Every row found is a privacy constraint; the separation below
	// skips the multisets already here.
	c.added = make(map[string]bool, len(c.rows))
	addRow := func(coeffs []float64, upper float64) error {
		return pr.add(scale(coeffs, -1), -upper)
	}
	for i, cut := range c.rows {
		if c.keys[i] == "" || c.added[c.keys[i]] {
			continue
		}
		if err := addRow(cut.Coeffs, cut.Upper); err != nil {
			return nil, nil, fmt.Errorf("tie-break: %w", err)
		}
		c.added[c.keys[i]] = true
	}
	for range maxTieRounds {
		if err := pr.solve(ctx); err != nil {
			return nil, nil, fmt.Errorf("tie-break: %w", err)
		}
		x := clamp(pr.x)
		s, err := c.sep(ctx, gamma.FromUpper(c.k, x), true)
		if err != nil {
			return nil, nil, err
		}
		if len(s.cuts) == 0 {
			// No row is violated by more than tieSepTol, or only rows
			// already held, by the projector's tolerance: scale onto the
			// budget.
			switch {
			case s.bound <= c.budget:
				return x, s.exact, nil
			case s.bound <= c.budget*(1+tieScaleTol):
				return scale(x, c.budget/s.bound), nil, nil
			default:
				return nil, nil, fmt.Errorf("tie-break: rows held are violated by %.3g of the budget", s.bound/c.budget-1)
			}
		}
		for i, cut := range s.cuts {
			if err := addRow(cut.Coeffs, cut.Upper); err != nil {
				return nil, nil, fmt.Errorf("tie-break: %w", err)
			}
			c.added[s.keys[i]] = true
		}
	}
	return nil, nil, fmt.Errorf("tie-break: still violated rows after %d separations", maxTieRounds)
}

// The tie-break maximises U(gamma) - (rho/2)·sum_{l>=H} (1 - gamma(l))²
// with rho = tieBreak·max c, subject to the utility staying within tieTol
// (relative) of phase 1's bound. A smaller tieBreak gives up less utility
// but amplifies rounding, the projector's target 1 + c/rho being
// 1/tieBreak away: at 1e-6, two paths (cuts per pass 40 and the default)
// at K = 1001, m = 3, Delta = 0 return gammas 2.9e-6 apart, against 6.4e-9
// at 1e-5. At 1e-4 the gap is 9e-7 at K = 101, m = 10, Delta = 0 (1e-10 at
// 1e-5), and at K = 501, m = 5 the floor binds, so that the answer follows
// phase 1's bound, which depends on the path (2e-4 apart). tieTol guards
// the worst case, (rho/2)·|1 - x*|² for the optimum x* closest to 1,
// which could reach 2.5e-6·(K+1)·max c.
const (
	tieBreak = 1e-5
	tieTol   = 1e-6
)

// tieSepTol is the relative violation below which the tie-break's
// separations return no row: the projector satisfies its rows to 1e-12
// (a distance, the rows scaled to unit length), and the exact pass finds
// rows violated by rounding, about 1e-13, without end (pure DP, K = 1001,
// m = 40: 440 rounds of one such row each). The scaling onto the budget
// removes what is left.
const tieSepTol = 1e-11

// tieScaleTol is the largest relative excess over the budget that the
// tie-break removes by scaling: the projector satisfies its rows to 1e-12
// (a distance, the rows scaled to unit length).
const tieScaleTol = 1e-9
