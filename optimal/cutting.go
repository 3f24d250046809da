package optimal

import (
	"context"
	"errors"
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
// once it holds dropAt rows, or once HiGHS needed a fallback to solve it:
// HiGHS's dual simplex needs thousands of iterations per solve once
// thousands of nearly parallel rows accumulate, and then fails.
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
	// bound and the anchor's value of the objective (see xs).
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
	// dropped counts how often each multiset's row was dropped: a row
	// dropped n times is dropped again only after maxIdle·2^n idle solves.
	dropped map[string]int

	// in satisfies every privacy row; inSep is its exhaustive separation,
	// nil when in was obtained by scaling (f is linear in gamma) or proved
	// feasible by the bound of Problem.Candidates.
	in    []float64
	inSep *constraints.Separation
	// xs is the point of highest objective at which a search found no
	// row violated by more than the separation's tolerance, nil when
	// none is above in. Separating from xs instead of in keeps the gap
	// closing where in cannot follow: the family bound that proves a
	// point feasible without an exact pass has a slack (1e-5 of the
	// budget at K = 2001) that in, scaled by it, never gets within tol
	// of the LP's bound, and out, a vertex of a face of nearly equal
	// objectives, keeps violating rows dropped earlier. A settled loop
	// proves xs by an exact pass before it ends.
	xs []float64
	// stalled reports that a run stopped before its gap closed.
	stalled bool
}

const (
	// inOut is how far from in towards out the loop separates. Measured
	// on pure DP at K = 1001, m = 3: 0.1, 0.2, 0.3, 0.5, 0.75 take 388,
	// 337, 332, 465, 685 LP solves.
	inOut = 0.3
	// maxIdle is how many LP solves a row may go without binding before
	// it is dropped; a row dropped n times before, maxIdle·2^n: the rows
	// a loop keeps dropping and finding again are those it needs (at K =
	// 2001, m = 3, Delta = 1e-5, 40-75% of the rows found late in the
	// loop had been dropped before, and its gap stopped closing at 5e-6).
	maxIdle = 3
	// stallSolves is how many LP solves run waits for the gap to halve
	// before it gives up: at K = 2001 the gap halved every 40 solves or
	// fewer until it closed.
	stallSolves = 100
	// slackTol is the slack, in units of a row scaled to a largest
	// coefficient of 1, up to which a row counts as binding.
	slackTol = 1e-6
)

func newCutter(k int, solver *lp.Solver, budget, tol float64) *cutter {
	n := (k + 1) / 2
	return &cutter{k: k, solver: solver, budget: budget, tol: tol, settle: true, added: make(map[string]bool), dropped: make(map[string]int), dropAt: 4 * n, in: make([]float64, n)}
}

// run maximises obj over the LP of c.solver and the privacy rows, from the
// feasible point c.in, and returns the LP's last optimum, an upper bound
// of obj over the feasible set. It stops early, and sets c.stalled, when
// the gap between the anchor and the LP's bound has not halved in
// stallSolves LP solves: in is then feasible, and its gap what the loop
// reached.
func (c *cutter) run(ctx context.Context, obj []float64) (float64, error) {
	if err := c.solver.SetObjective(obj); err != nil {
		return 0, err
	}
	// mark is the gap when it last fell to half the mark before, at LP
	// solve markSolve. The gap halves at most about log2(1/tol) times
	// before the anchor is within tol, so the loop ends.
	var mark float64
	marked, markSolve := false, c.lpSolve
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		sol, err := c.solve(ctx)
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
			x, _ := c.anchor(obj)
			c.progress(ub, floats.Dot(obj, x))
		}
		x, _ := c.anchor(obj)
		switch gap := (ub - floats.Dot(obj, x)) / math.Abs(ub); {
		case !marked || gap <= mark/2:
			mark, marked, markSolve = gap, true, c.lpSolve
		case c.lpSolve-markSolve >= stallSolves:
			c.stalled = true
			return ub, nil
		}
		a := inOut
		for {
			anchor, proven := c.anchor(obj)
			if floats.Dot(obj, anchor) >= ub-c.tol*math.Abs(ub) {
				if !c.settle || proven {
					return ub, nil
				}
				// The anchor is within tol of the LP's optimum, and no
				// search has found a row it violates: prove it exactly.
				s, err := c.sep(ctx, gamma.FromUpper(c.k, anchor), true)
				if err != nil {
					return 0, err
				}
				c.xs = nil
				if s.bound <= c.budget {
					c.in, c.inSep = anchor, s.exact
					return ub, nil
				}
				c.raise(obj, anchor, s)
				if len(s.cuts) == 0 {
					// Only rows the LP holds are violated, within its
					// tolerance: in is feasible, and its gap reported.
					return ub, nil
				}
				if err := c.addRows(s.cuts, s.keys); err != nil {
					return 0, err
				}
				break
			}
			x := mix(anchor, out, a)
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
			c.raise(obj, x, s)
			if len(s.cuts) > 0 {
				if err := c.addRows(s.cuts, s.keys); err != nil {
					return 0, err
				}
				break
			}
			// The search finds no row violated at x by more than the
			// separation's tolerance: x anchors the next separations.
			// (Rows violated there are violated at out too, so the loop
			// closes the gap between the anchor and the LP's bound, as
			// with a feasible in.) After an exact pass, in is x scaled
			// by its exact cost, within that tolerance of x.
			if s.exact == nil && floats.Dot(obj, x) > floats.Dot(obj, anchor) {
				c.xs = x
			}
			if a == 1 {
				// Settled, the exact pass found no row beyond those the
				// LP holds, within its feasibility tolerance: no progress
				// is possible, in is feasible and its gap reported.
				// Unsettled, the search found none at out: the stage is
				// done.
				return ub, nil
			}
			a = 1
		}
	}
}

// anchor returns the point the loop separates from towards out: in, or xs
// when its objective is higher (proven false).
func (c *cutter) anchor(obj []float64) (x []float64, proven bool) {
	if c.xs != nil && floats.Dot(obj, c.xs) > floats.Dot(obj, c.in) {
		return c.xs, false
	}
	return c.in, true
}

// raise moves in to x scaled onto the budget when that has a higher
// objective: f is linear in gamma, and s bounds it at x.
func (c *cutter) raise(obj, x []float64, s separation) {
	if y := scale(x, c.budget/s.bound); floats.Dot(obj, y) > floats.Dot(obj, c.in) {
		c.in, c.inSep = y, nil
	}
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
func (c *cutter) bound(ctx context.Context, obj []float64) (opt, bound float64, err error) {
	if err := c.solver.SetObjective(obj); err != nil {
		return 0, 0, err
	}
	sol, err := c.solve(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("bound, LP solve %d: %w", c.lpSolve+1, err)
	}
	c.lpSolve++
	return sol.Objective, sol.Bound, nil
}

// solve solves the LP. When HiGHS fails with every strategy, which it can
// on thousands of nearly parallel rows (K = 2001, m = 2, Delta = 1e-5: an
// LP of 4,054 rows, 50 of them just added), solve drops the rows that did
// not bind at the last solve, as age would later, and solves once more:
// fewer rows only loosen the LP, so its optimum still bounds the feasible
// set, and the rows just added, which the loop needs next, stay.
func (c *cutter) solve(ctx context.Context) (lp.Solution, error) {
	sol, err := c.solver.Solve(ctx)
	if err == nil || ctx.Err() != nil {
		return sol, err
	}
	n := len(c.keys)
	if derr := c.drop(func(i int) bool { return c.keys[i] != "" && c.idle[i] > 0 }); derr != nil {
		return lp.Solution{}, errors.Join(err, derr)
	}
	if len(c.keys) == n {
		return sol, err
	}
	sol, err2 := c.solver.Solve(ctx)
	if err2 != nil {
		return sol, fmt.Errorf("%w; again without the %d rows that did not bind: %w", err, n-len(c.keys), err2)
	}
	return sol, nil
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
// rows idle for maxIdle solves once the LP holds dropAt rows, or as soon
// as HiGHS needed a fallback strategy to solve it (sol.Retried): nearly
// parallel rows have accumulated, and at K = 2001, m = 2 an LP that kept
// them failed with every strategy a few solves later (4,054 rows, 60 s
// of failed strategies before solve dropped rows). A dropped row may be
// found and added again later.
func (c *cutter) age(sol lp.Solution) error {
	for i := range c.keys {
		if sol.Dual[i] != 0 || sol.Slack[i] <= slackTol {
			c.idle[i] = 0
		} else {
			c.idle[i]++
		}
	}
	if len(c.keys) < c.dropAt && !sol.Retried {
		return nil
	}
	if err := c.drop(func(i int) bool {
		key := c.keys[i]
		return key != "" && c.idle[i] >= maxIdle<<min(c.dropped[key], 20)
	}); err != nil {
		return err
	}
	c.dropAt = max(c.dropAt, 2*len(c.keys))
	return nil
}

// drop removes the rows i for which drop(i) is true from the LP and
// counts each as dropped once more.
func (c *cutter) drop(drop func(i int) bool) error {
	if err := c.solver.DropRows(drop); err != nil {
		return err
	}
	var keys []string
	var rows []lp.Cut
	var idle []int
	for i, key := range c.keys {
		if drop(i) {
			delete(c.added, key)
			c.dropped[key]++
		} else {
			keys, rows, idle = append(keys, key), append(rows, c.rows[i]), append(idle, c.idle[i])
		}
	}
	c.keys, c.rows, c.idle = keys, rows, idle
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
