package optimal

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/lp"
	"gonum.org/v1/gonum/floats"
)

// separation is what one separation call learns about a candidate gamma.
type separation struct {
	cuts []lp.Cut
	keys []string // the multiset of each cut
	// exact is the exhaustive separation of the candidate, nil when the
	// rows came from the search (Problem.Candidates).
	exact *constraints.Separation
	// bound bounds the privacy cost of every multiset at the candidate:
	// exact.MaxF, or the bound of Problem.Candidates when exact is nil.
	bound float64
}

// cutter runs the cutting-plane loop with in-out separation (Ben-Ameur and
// Neto, "Acceleration of cutting-plane and column generation algorithms",
// Networks 49, 2007): besides the restricted LP's solution out, it keeps a
// point in that satisfies every privacy row, and separates at a point
// between them. Rows violated there are violated at out too, and lie
// nearer the optimum than the rows most violated at out, which Kelley's
// plain loop adds; the loop ends when in is within a relative tol of the
// LP's optimum, an upper bound of the true one.
//
// Rows that have not bound for maxIdle LP solves are dropped from the LP
// once it holds dropAt rows: HiGHS's dual simplex needs thousands of
// iterations per solve once thousands of nearly parallel rows accumulate.
// Separating between in and out keeps the loop from cycling through
// dropped rows, which Kelley's loop does.
type cutter struct {
	k      int
	solver *lp.Solver
	budget float64
	tol    float64
	// sep separates at g. With final false it may leave the question
	// open (no rows, and a bound above the budget) rather than run an
	// exact pass: the loop then separates at the LP's solution itself.
	sep func(ctx context.Context, g gamma.Gamma, final bool) (separation, error)
	// settle makes run separate at the LP's solution with final set; when
	// it is false, run ends once the cheap separation finds no row there,
	// leaving in as the bound made it (see phase1).
	settle  bool
	out     []float64 // the last LP solution, clamped to [0, 1]
	lpSolve int
	// progress, if set, is called after each LP solve with the LP's
	// bound and in's value of the objective.
	progress func(ub, in float64)

	// added holds the multisets whose rows are in the LP, keys the
	// multiset of each LP row ("" for a row that is never dropped), idle
	// the LP solves since each row last bound.
	added map[string]bool
	keys  []string
	// rows holds the coefficients of each LP row (the tie-break starts
	// from them).
	rows   []lp.Cut
	idle   []int
	dropAt int

	// in satisfies every privacy row; inSep is its exhaustive separation,
	// nil when in was obtained by scaling (f is linear in gamma) or proved
	// feasible by the bound of Problem.Candidates.
	in    []float64
	inSep *constraints.Separation
}

const (
	// inOut is how far from in towards out the loop separates. Measured
	// on pure DP at K = 1001, m = 3: 0.1, 0.2, 0.3, 0.5, 0.75 take 388,
	// 337, 332, 465, 685 LP solves.
	inOut = 0.3
	// maxIdle is how many LP solves a row may go without binding before
	// it is dropped.
	maxIdle = 3
	// slackTol is the slack, in units of a row scaled to a largest
	// coefficient of 1, up to which a row counts as binding.
	slackTol = 1e-6
)

func newCutter(k int, solver *lp.Solver, budget, tol float64) *cutter {
	n := (k + 1) / 2
	return &cutter{k: k, solver: solver, budget: budget, tol: tol, settle: true, added: make(map[string]bool), dropAt: 4 * n, in: make([]float64, n)}
}

// run maximises obj over the LP of c.solver and the privacy rows, from the
// feasible point c.in, and returns the LP's last optimum, an upper bound
// of obj over the feasible set.
func (c *cutter) run(ctx context.Context, obj []float64) (float64, error) {
	const maxIter = 5000
	if err := c.solver.SetObjective(obj); err != nil {
		return 0, err
	}
	for iter := 0; iter < maxIter; iter++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		sol, err := c.solver.Solve()
		if err != nil {
			return 0, fmt.Errorf("cutting planes, LP solve %d: %w", c.lpSolve+1, err)
		}
		c.lpSolve++
		if err := c.age(sol); err != nil {
			return 0, err
		}
		out := clamp(sol.X)
		c.out = out
		ub := sol.Objective
		if c.progress != nil {
			c.progress(ub, floats.Dot(obj, c.in))
		}
		a := inOut
		for {
			if floats.Dot(obj, c.in) >= ub-c.tol*math.Abs(ub) {
				return ub, nil
			}
			x := mix(c.in, out, a)
			s, err := c.sep(ctx, gamma.FromUpper(c.k, x), a == 1 && c.settle)
			if err != nil {
				return 0, err
			}
			if s.bound <= c.budget {
				// x satisfies every privacy row: move in there, and try
				// out itself next.
				c.in, c.inSep = x, s.exact
				if a == 1 {
					return ub, nil
				}
				a = 1
				continue
			}
			// f is linear in gamma: x scaled to the budget is feasible.
			if y := scale(x, c.budget/s.bound); floats.Dot(obj, y) > floats.Dot(obj, c.in) {
				c.in, c.inSep = y, nil
			}
			if len(s.cuts) > 0 {
				if err := c.addRows(s.cuts, s.keys); err != nil {
					return 0, err
				}
				break
			}
			if a == 1 {
				// The violated rows are all in the LP, which admits them
				// within its feasibility tolerance: no progress is
				// possible. in is feasible; its gap is reported.
				return ub, nil
			}
			a = 1
		}
	}
	return 0, fmt.Errorf("cutting planes: no convergence after %d LP solves", maxIter)
}

// start separates at g, adds the rows found, and, when the separation was
// exact, takes g as the feasible point in (scaled onto the budget if it
// exceeds it; f is linear in gamma). It runs before the first LP solve.
func (c *cutter) start(ctx context.Context, p constraints.Problem, g gamma.Gamma) error {
	if err := g.CheckFor(p.K); err != nil {
		return err
	}
	s, err := c.sep(ctx, g, true)
	if err != nil {
		return err
	}
	if len(s.cuts) > 0 {
		if err := c.addRows(s.cuts, s.keys); err != nil {
			return err
		}
	}
	x := append([]float64(nil), g[p.H():]...)
	switch {
	case s.bound <= c.budget:
		c.in, c.inSep = x, s.exact
	default:
		c.in, c.inSep = scale(x, c.budget/s.bound), nil
	}
	return nil
}

// addAll adds the row of every corner multiset of p (allRows), for
// problems with few of them.
func (c *cutter) addAll(p constraints.Problem) error {
	return allRows(p, c.addRows)
}

// allRows passes add the privacy row of every corner multiset of p
// (Problem.AllConfigs) and the multisets' keys, a batch at a time, so that
// no more than a batch of dense rows is held at once (the one-vote LP at
// K = 10001 has 20,002 rows of 5,001 coefficients).
func allRows(p constraints.Problem, add func([]lp.Cut, []string) error) error {
	const batch = 512
	var cuts []lp.Cut
	var keys []string
	var err error
	budget := p.Budget()
	flush := func() bool {
		if len(cuts) > 0 {
			err = add(cuts, keys)
		}
		cuts, keys = nil, nil
		return err == nil
	}
	p.AllConfigs(func(cfg constraints.Config) bool {
		var row []float64
		if row, err = p.Row(cfg); err != nil {
			return false
		}
		cuts, keys = append(cuts, lp.Cut{Coeffs: row, Upper: budget}), append(keys, fmt.Sprint(cfg))
		return len(cuts) < batch || flush()
	})
	if err != nil {
		return err
	}
	flush()
	return err
}

// bound solves the LP for obj over the rows found so far, without cutting,
// and returns the solver's optimum and the LP's weak-duality bound
// (lp.Solution.Bound). The bound holds for obj over the feasible set
// however inexact the solver's optimum is; the two differ by the
// solver's tolerances, or more when it is in numerical trouble.
func (c *cutter) bound(obj []float64) (opt, bound float64, err error) {
	if err := c.solver.SetObjective(obj); err != nil {
		return 0, 0, err
	}
	sol, err := c.solver.Solve()
	if err != nil {
		return 0, 0, fmt.Errorf("bound, LP solve %d: %w", c.lpSolve+1, err)
	}
	c.lpSolve++
	return sol.Objective, sol.Bound, nil
}

// addRows adds rows to the LP; keys name their multisets, "" for a row
// that is never dropped.
func (c *cutter) addRows(cuts []lp.Cut, keys []string) error {
	if err := c.solver.AddRows(cuts); err != nil {
		return err
	}
	for i, key := range keys {
		c.keys = append(c.keys, key)
		c.rows = append(c.rows, cuts[i])
		c.idle = append(c.idle, 0)
		if key != "" {
			c.added[key] = true
		}
	}
	return nil
}

// age counts the LP solves since each row last bound at sol, and drops the
// rows idle for maxIdle solves once the LP holds dropAt rows. A dropped
// row may be found and added again later.
func (c *cutter) age(sol lp.Solution) error {
	for i := range c.keys {
		if sol.Dual[i] != 0 || sol.Slack[i] <= slackTol {
			c.idle[i] = 0
		} else {
			c.idle[i]++
		}
	}
	if len(c.keys) < c.dropAt {
		return nil
	}
	drop := func(i int) bool { return c.keys[i] != "" && c.idle[i] >= maxIdle }
	if err := c.solver.DropRows(drop); err != nil {
		return err
	}
	var keys []string
	var rows []lp.Cut
	var idle []int
	for i, key := range c.keys {
		if drop(i) {
			delete(c.added, key)
		} else {
			keys, rows, idle = append(keys, key), append(rows, c.rows[i]), append(idle, c.idle[i])
		}
	}
	c.keys, c.rows, c.idle = keys, rows, idle
	c.dropAt = max(c.dropAt, 2*len(keys))
	return nil
}

func clamp(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Min(math.Max(v, 0), 1)
	}
	return out
}

// mix returns in + a·(out - in), exactly out when a = 1.
func mix(in, out []float64, a float64) []float64 {
	if a == 1 {
		return append([]float64(nil), out...)
	}
	x := make([]float64, len(in))
	for i := range x {
		x[i] = math.Min(math.Max(in[i]+a*(out[i]-in[i]), 0), 1)
	}
	return x
}

func scale(x []float64, c float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = v * c
	}
	return y
}
