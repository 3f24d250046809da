//go:build cgo

package lp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/bartolsthoorn/gohighs/highs"
	"gonum.org/v1/gonum/floats"
)

// Solver is the LP
//
//	maximise (or minimise) c·x  subject to  A·x <= b,  lower <= x <= upper
//
// with dense rows that can be added between solves.
type Solver struct {
	h               *highs.Solver
	c, lower, upper []float64
	maximize        bool
	opts            Options
	rows            []row  // as given to HiGHS, for rebuilding
	stop            *int32 // set while a solve's context is done (see run)
}

// row is a stored constraint idx·val <= ub. loose is the right-hand side
// of the same coefficients as a relaxation of the given row: where ub
// subtracts the most a dropped coefficient can contribute, loose subtracts
// the least (see prepare), so ub <= loose.
type row struct {
	idx   []int
	val   []float64
	ub    float64
	loose float64
}

// New returns an LP with objective c and bounds, and no rows. Close it when done.
func New(c, lower, upper []float64, maximize bool, opts Options) (*Solver, error) {
	n := len(c)
	if n == 0 || len(lower) != n || len(upper) != n {
		return nil, fmt.Errorf("lp: %d objective coefficients, %d lower and %d upper bounds: need the same positive number", n, len(lower), len(upper))
	}
	for j := range c {
		if math.IsNaN(c[j]) || math.IsInf(c[j], 0) {
			return nil, fmt.Errorf("lp: objective coefficient %d = %v: must be finite", j, c[j])
		}
		if !(lower[j] <= upper[j]) || math.IsInf(lower[j], 0) || math.IsInf(upper[j], 0) {
			return nil, fmt.Errorf("lp: bounds of column %d = [%v, %v]: must be finite with lower <= upper", j, lower[j], upper[j])
		}
	}
	s := &Solver{c: append([]float64(nil), c...), lower: append([]float64(nil), lower...), upper: append([]float64(nil), upper...), maximize: maximize, opts: opts, stop: newFlag()}
	h, err := s.newHighs()
	if err != nil {
		freeFlag(s.stop)
		return nil, err
	}
	s.h = h
	return s, nil
}

// newHighs returns a HiGHS instance with the options, columns and
// objective of s and no rows.
func (s *Solver) newHighs() (*highs.Solver, error) {
	h, err := highs.NewSolver()
	if err != nil {
		return nil, fmt.Errorf("lp: %w", err)
	}
	tol := s.opts.FeasibilityTol
	if tol == 0 {
		tol = 1e-9
	}
	setup := []error{
		h.SetBoolOption("output_flag", s.opts.Verbose),
		h.SetFloatOption("primal_feasibility_tolerance", tol),
		h.SetFloatOption("dual_feasibility_tolerance", tol),
		h.AddVars(s.lower, s.upper),
		h.SetColCosts(normalized(s.c)),
		h.SetMaximize(s.maximize),
		watch(h, s.stop),
	}
	if err := errors.Join(setup...); err == nil {
		setup = append(setup, setOptions(h, base))
	}
	if err := errors.Join(setup...); err != nil {
		h.Close()
		return nil, fmt.Errorf("lp: set up HiGHS: %w", err)
	}
	return h, nil
}

// Close releases the HiGHS instance.
func (s *Solver) Close() {
	s.h.Close()
	if s.stop != nil {
		freeFlag(s.stop)
		s.stop = nil
	}
}

// NumRows returns the number of rows added so far.
func (s *Solver) NumRows() int { return len(s.rows) }

// DropRows removes the rows i for which drop(i) is true; the others keep
// their order. HiGHS keeps the basis of the rows that stay, so the next
// Solve starts from it when the rows dropped were not binding (their
// slacks basic). A cutting-plane loop drops rows that no longer bind, so
// that its LP stays small.
func (s *Solver) DropRows(drop func(i int) bool) error {
	del := make([]bool, len(s.rows))
	kept := s.rows[:0:0]
	for i, r := range s.rows {
		if del[i] = drop(i); !del[i] {
			kept = append(kept, r)
		}
	}
	if len(kept) == len(s.rows) {
		return nil
	}
	if err := deleteRows(s.h, del); err != nil {
		return err
	}
	s.rows = kept
	return nil
}

// dropRel is the size, relative to a row's largest coefficient, below which
// a coefficient is dropped from the row. Rows of Poisson-binomial
// probabilities span hundreds of orders of magnitude, and HiGHS itself
// silently drops matrix entries below its small_matrix_value (1e-9) without
// compensating for them, which can make the LP looser than the true
// constraint. Dropping them here first, conservatively, prevents that.
const dropRel = 1e-9

// AddRows adds the constraints coeffs·x <= upper of cuts in order, in one
// call to HiGHS. Each row is scaled so that its largest coefficient has
// magnitude 1, and coefficients below 1e-9 of that are dropped
// conservatively: the most they can contribute within the column bounds
// is subtracted from the right-hand side, so the stored row is never
// looser than the given one. Every cut becomes a row, so that row i of the
// LP is the i-th cut added, even a cut with no coefficient left.
func (s *Solver) AddRows(cuts []Cut) error {
	rows := make([]row, 0, len(cuts))
	for _, c := range cuts {
		r, err := s.prepare(c.Coeffs, c.Upper)
		if err != nil {
			return fmt.Errorf("lp: row %d: %w", len(s.rows)+len(rows), err)
		}
		rows = append(rows, r)
	}
	if err := addRows(s.h, rows); err != nil {
		return fmt.Errorf("lp: add rows %d to %d: %w", len(s.rows), len(s.rows)+len(rows)-1, err)
	}
	s.rows = append(s.rows, rows...)
	return nil
}

// prepare scales a row and drops its tiny coefficients conservatively (see
// AddRows).
func (s *Solver) prepare(coeffs []float64, upper float64) (row, error) {
	if len(coeffs) != len(s.lower) {
		return row{}, fmt.Errorf("%d coefficients, want %d", len(coeffs), len(s.lower))
	}
	if math.IsNaN(upper) {
		return row{}, fmt.Errorf("bound is NaN")
	}
	var maxAbs float64
	for j, v := range coeffs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return row{}, fmt.Errorf("coefficient %d = %v: must be finite", j, v)
		}
		maxAbs = math.Max(maxAbs, math.Abs(v))
	}
	if maxAbs == 0 {
		if upper < 0 {
			return row{}, fmt.Errorf("0·x <= %v is infeasible", upper)
		}
		return row{ub: math.Inf(1), loose: math.Inf(1)}, nil
	}
	r := row{ub: upper / maxAbs, loose: upper / maxAbs}
	for j, v := range coeffs {
		if v == 0 {
			continue // contributes nothing (rows of sparse LPs are mostly zeros)
		}
		v /= maxAbs
		if math.Abs(v) < dropRel {
			r.ub -= math.Max(v*s.lower[j], v*s.upper[j])
			r.loose -= math.Min(v*s.lower[j], v*s.upper[j])
			continue
		}
		r.idx = append(r.idx, j)
		r.val = append(r.val, v)
	}
	return r, nil
}

// addRows passes rows to HiGHS in compressed sparse row form.
func addRows(h *highs.Solver, rows []row) error {
	if len(rows) == 0 {
		return nil
	}
	lower, upper := make([]float64, len(rows)), make([]float64, len(rows))
	starts := make([]int, len(rows))
	var idx []int
	var val []float64
	for i, r := range rows {
		lower[i], upper[i], starts[i] = math.Inf(-1), r.ub, len(idx)
		idx = append(idx, r.idx...)
		val = append(val, r.val...)
	}
	return h.AddRows(lower, upper, starts, idx, val)
}

// SetObjective replaces the objective coefficients.
func (s *Solver) SetObjective(c []float64) error {
	if len(c) != len(s.lower) {
		return fmt.Errorf("lp: objective has %d coefficients, want %d", len(c), len(s.lower))
	}
	for j, v := range c {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("lp: objective coefficient %d = %v: must be finite", j, v)
		}
	}
	if err := s.h.SetColCosts(normalized(c)); err != nil {
		return fmt.Errorf("lp: set objective: %w", err)
	}
	s.c = append(s.c[:0], c...)
	return nil
}

func describeFailure(sol *highs.Solution, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("status %v", sol.Status)
}

// setOptions sets string or int options of HiGHS.
func setOptions(h *highs.Solver, set map[string]any) error {
	for k, v := range set {
		var err error
		switch v := v.(type) {
		case int:
			err = h.SetIntOption(k, v)
		case string:
			err = h.SetStringOption(k, v)
		}
		if err != nil {
			return fmt.Errorf("lp: set option %s = %v: %w", k, v, err)
		}
	}
	return nil
}

// strategy is a set of HiGHS options Solve falls back on.
type strategy struct {
	name string
	set  map[string]any
}

// fallbacks are tried in order, each on a new HiGHS instance, when the
// simplex method fails; the options they set are reset to defaults after
// the solve, so that later solves start from their basis as usual. They
// are ordered by what they cost where the warm simplex failed late in
// three solves of K = 2001, m = 2, Delta = 1e-5 (on 1,200 to 4,000 nearly
// parallel rows, 124 times): from scratch, the dual simplex solved 64 of
// the 124 in about a second each; the primal simplex without presolve 46
// of the 52 it was then given, in under 2 s each; the interior-point
// method 4 of 10, in 1 to 4 s; HiGHS's scaling 6 of 16, in 5 to 130 s a
// try; the equilibrated dual simplex none of 9, in 5 to 38 s a try.
// Ordered as before, with the scaled two second and third, they took 234 s
// of the first solve's 730; the primal simplex first took 11% less CPU
// time than the dual simplex first over a whole solve.
var fallbacks = []strategy{
	{"primal simplex without presolve", map[string]any{"presolve": "off", "simplex_strategy": 4}},
	{"simplex from scratch", nil},
	{"interior point with crossover", map[string]any{"solver": "ipm", "run_crossover": "on"}},
	{"simplex from scratch, HiGHS's scaling", map[string]any{"simplex_scale_strategy": 1}},
	{"dual simplex without presolve, equilibration scaling", map[string]any{"presolve": "off", "simplex_strategy": 1, "simplex_scale_strategy": 3}},
}

// base are the options every solve starts from. HiGHS's own scaling is
// off: prepare scales each row to a largest coefficient of 1 and the
// objective is normalized the same way, while HiGHS's equilibration scales
// up the columns of gamma's tails, whose coefficients are tiny, and the
// dual simplex then needs thousands of iterations per re-solve (pure DP,
// K = 1001, m = 3: 19 s in 284 warm solves unscaled, 50 s in 287 scaled).
// The dual simplex prices by Devex weights, not HiGHS's choice of dual
// steepest edge: a cutting-plane re-solve takes about as many iterations
// either way (K = 1001, m = 2, Delta = 1e-5: 142,000 against 137,000 in
// about 320 solves), and each costs less without steepest edge's extra
// solve with the basis and its weights for every row, most of them rows
// just added: that solve took 44 s of CPU where it took 54 s, side by side.
var base = map[string]any{"simplex_scale_strategy": 0, "simplex_dual_edge_weight_strategy": 1}

// defaults are the values of the options the fallbacks set outside them:
// base's, or HiGHS's own.
var defaults = map[string]any{"presolve": "choose", "simplex_strategy": 1, "simplex_scale_strategy": base["simplex_scale_strategy"], "solver": "choose", "run_crossover": "on"}

// Solve solves the LP, starting from the basis of the previous solve. If
// the simplex method fails numerically, which HiGHS reports as an error or
// an unknown status when many nearly parallel rows accumulate, Solve
// retries from scratch with each fallback strategy in turn (another simplex
// variant, the interior-point method) before it reports a failure, which
// then names every strategy tried.
//
// Once ctx is done, Solve returns its error, stopping HiGHS within one
// iteration (of the simplex or interior-point method; presolve and
// crossover run to their end). The Solver stays usable: a later Solve
// continues from the basis reached.
func (s *Solver) Solve(ctx context.Context) (Solution, error) {
	sol, err := s.run(ctx)
	var tried []string
	for _, f := range fallbacks {
		if ctx.Err() != nil || err == nil && (sol.IsOptimal() || sol.IsInfeasible()) {
			break
		}
		tried = append(tried, describeFailure(sol, err))
		if err = s.rebuild(f.set); err == nil {
			sol, err = s.run(ctx)
			reset := make(map[string]any)
			for k := range f.set {
				reset[k] = defaults[k]
			}
			if rerr := setOptions(s.h, reset); rerr != nil {
				return Solution{}, rerr
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return Solution{}, fmt.Errorf("lp: solve: %w", err)
	}
	if err != nil || !(sol.IsOptimal() || sol.IsInfeasible()) {
		tried = append(tried, describeFailure(sol, err))
		names := []string{"simplex"}
		for _, f := range fallbacks {
			names = append(names, f.name)
		}
		for i := range tried {
			tried[i] = names[i] + ": " + tried[i]
		}
		return Solution{}, fmt.Errorf("lp: solve: HiGHS failed with every strategy (%s)", strings.Join(tried, "; "))
	}
	if sol.IsInfeasible() {
		return Solution{}, errInfeasible
	}
	slack := make([]float64, len(s.rows))
	for i, r := range s.rows {
		slack[i] = r.ub - sol.RowValues[i]
	}
	// HiGHS solved the normalized objective: scale its duals back.
	cs := maxAbs(s.c)
	dual := make([]float64, len(sol.RowDuals))
	for i, d := range sol.RowDuals {
		dual[i] = d * cs
	}
	return Solution{X: sol.ColValues, Objective: floats.Dot(s.c, sol.ColValues), Slack: slack, Dual: dual, Bound: s.dualBound(dual), Retried: len(tried) > 0}, nil
}

// rebuild replaces the HiGHS instance by a new one with the same model and
// the options set, so that the next run starts from scratch.
func (s *Solver) rebuild(set map[string]any) error {
	h, err := s.newHighs()
	if err != nil {
		return err
	}
	if err := errors.Join(setOptions(h, set), addRows(h, s.rows)); err != nil {
		h.Close()
		return fmt.Errorf("lp: rebuild: %w", err)
	}
	s.h.Close()
	s.h = h
	return nil
}

// maxAbs returns the largest magnitude in c, or 1 if c is zero.
func maxAbs(c []float64) float64 {
	var m float64
	for _, v := range c {
		m = math.Max(m, math.Abs(v))
	}
	if m == 0 {
		return 1
	}
	return m
}

// normalized returns c scaled to a largest magnitude of 1. HiGHS's
// tolerances are absolute: this makes its dual feasibility tolerance
// relative to the objective, as prepare makes the primal one relative to
// each row. Without it, the optimum of an objective with coefficients of
// 1e-2 may be off by 1e-7 relative, and its bound with it.
func normalized(c []float64) []float64 {
	m := maxAbs(c)
	out := make([]float64, len(c))
	for j, v := range c {
		out[j] = v / m
	}
	return out
}

// dualBound returns the weak-duality bound of the objective from the row
// duals y (Solution.Bound). Maximising c·x subject to A·x <= b and l <= x
// <= u, every y >= 0 gives
//
//	c·x <= y·b + sum_j max(d_j·l_j, d_j·u_j),  d = c - A'y,
//
// with b the loose right-hand sides, which every x satisfying the given rows
// satisfies. Minimising, y <= 0 and the minimum over [l_j, u_j] give a lower
// bound. Duals of the wrong sign are taken as 0; each is still a bound. The
// floating-point sums are widened by (rows + columns + 2)·2^-52 times the
// sum of the magnitudes of their terms, more than their rounding error.
func (s *Solver) dualBound(dual []float64) float64 {
	sign := 1.0
	if !s.maximize {
		sign = -1
	}
	d := append([]float64(nil), s.c...)
	dAbs := make([]float64, len(d))
	for j, v := range d {
		dAbs[j] = math.Abs(v)
	}
	var bound, mag float64
	for i, r := range s.rows {
		y := dual[i] * sign
		if !(y > 0) || math.IsInf(r.loose, 1) {
			continue
		}
		y *= sign
		bound += y * r.loose
		mag += math.Abs(y * r.loose)
		for k, j := range r.idx {
			t := y * r.val[k]
			d[j] -= t
			dAbs[j] += math.Abs(t)
		}
	}
	for j, v := range d {
		lo, hi := v*s.lower[j], v*s.upper[j]
		if s.maximize {
			bound += math.Max(lo, hi)
		} else {
			bound += math.Min(lo, hi)
		}
		mag += dAbs[j] * math.Max(math.Abs(s.lower[j]), math.Abs(s.upper[j]))
	}
	margin := float64(len(s.rows)+len(d)+2) * 0x1p-52 * mag
	return bound + sign*margin
}
