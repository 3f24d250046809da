// Package lp solves the linear programs of darrm with HiGHS: a dense LP to
// which rows can be added and re-solved from the previous basis, and a
// cutting-plane loop for LPs with too many rows to write down (the gamma LP
// of thesis Section 3.6 has C(K+7, 7) of them).
//
// Every HiGHS call in darrm goes through this package, so replacing the
// binding touches one file.
//
// Reference: Shuli Jiang, "Communication Efficient and Differentially
// Private Optimization", PhD thesis, Carnegie Mellon University,
// CMU-RI-TR-25-46, 2025 ("the thesis": lemma, section, table and figure
// numbers are its own). Its Chapter 3 and Appendix B are based
// on Jiang, Zhang and Joshi, "Optimized Tradeoffs for Private Prediction
// with Majority Ensembling", TMLR 2024.
package lp

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/bartolsthoorn/gohighs/highs"
)

// Options configure the solver.
type Options struct {
	// Verbose lets HiGHS print its log to stdout; darrm keeps it quiet by default.
	Verbose bool
	// FeasibilityTol is HiGHS's primal and dual feasibility tolerance; 0
	// means 1e-9, tighter than HiGHS's 1e-7 default because every unit of
	// infeasibility is later paid for by scaling gamma down.
	FeasibilityTol float64
	// TimeLimit bounds each solve; 0 means no limit.
	TimeLimit time.Duration
}

// Solver is the LP
//
//	maximise (or minimise) c·x  subject to  A·x <= b,  lower <= x <= upper
//
// with dense rows that can be added between solves.
type Solver struct {
	h            *highs.Solver
	lower, upper []float64
	rows         int
}

// Solution is an optimal solution.
type Solution struct {
	X         []float64
	Objective float64
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
	h, err := highs.NewSolver()
	if err != nil {
		return nil, fmt.Errorf("lp: %w", err)
	}
	s := &Solver{h: h, lower: append([]float64(nil), lower...), upper: append([]float64(nil), upper...)}
	tol := opts.FeasibilityTol
	if tol == 0 {
		tol = 1e-9
	}
	setup := []error{
		h.SetBoolOption("output_flag", opts.Verbose),
		h.SetFloatOption("primal_feasibility_tolerance", tol),
		h.SetFloatOption("dual_feasibility_tolerance", tol),
		h.AddVars(lower, upper),
		h.SetColCosts(c),
		h.SetMaximize(maximize),
	}
	if opts.TimeLimit > 0 {
		setup = append(setup, h.SetFloatOption("time_limit", opts.TimeLimit.Seconds()))
	}
	if err := errors.Join(setup...); err != nil {
		h.Close()
		return nil, fmt.Errorf("lp: set up HiGHS: %w", err)
	}
	return s, nil
}

// Close releases the HiGHS instance.
func (s *Solver) Close() { s.h.Close() }

// NumRows returns the number of rows added so far.
func (s *Solver) NumRows() int { return s.rows }

// dropRel is the size, relative to a row's largest coefficient, below which
// a coefficient is dropped from the row. Rows of Poisson-binomial
// probabilities span hundreds of orders of magnitude, and HiGHS itself
// silently drops matrix entries below its small_matrix_value (1e-9) without
// compensating for them, which can make the LP looser than the true
// constraint. Dropping them here first, conservatively, prevents that.
const dropRel = 1e-9

// AddRow adds the constraint coeffs·x <= upper. The row is scaled so that
// its largest coefficient has magnitude 1, and coefficients below 1e-9 of
// that are dropped conservatively: the most they can contribute within the
// column bounds is subtracted from the right-hand side, so the stored row
// is never looser than the given one.
func (s *Solver) AddRow(coeffs []float64, upper float64) error {
	if len(coeffs) != len(s.lower) {
		return fmt.Errorf("lp: row has %d coefficients, want %d", len(coeffs), len(s.lower))
	}
	if math.IsNaN(upper) {
		return fmt.Errorf("lp: row bound is NaN")
	}
	var maxAbs float64
	for j, v := range coeffs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("lp: row coefficient %d = %v: must be finite", j, v)
		}
		maxAbs = math.Max(maxAbs, math.Abs(v))
	}
	if maxAbs == 0 {
		if upper < 0 {
			return fmt.Errorf("lp: row 0·x <= %v is infeasible", upper)
		}
		return nil
	}
	idx := make([]int, 0, len(coeffs))
	val := make([]float64, 0, len(coeffs))
	ub := upper / maxAbs
	for j, v := range coeffs {
		v /= maxAbs
		if math.Abs(v) < dropRel {
			ub -= math.Max(v*s.lower[j], v*s.upper[j])
			continue
		}
		idx = append(idx, j)
		val = append(val, v)
	}
	if err := s.h.AddRow(math.Inf(-1), ub, idx, val); err != nil {
		return fmt.Errorf("lp: add row %d: %w", s.rows, err)
	}
	s.rows++
	return nil
}

func (s *Solver) run() (*highs.Solution, error) {
	return s.h.Run()
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
	if err := s.h.SetColCosts(c); err != nil {
		return fmt.Errorf("lp: set objective: %w", err)
	}
	return nil
}

func describeFailure(sol *highs.Solution, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("status %v", sol.Status)
}

func (s *Solver) setOption(k string, v any) error {
	var err error
	switch v := v.(type) {
	case int:
		err = s.h.SetIntOption(k, v)
	case string:
		err = s.h.SetStringOption(k, v)
	}
	if err != nil {
		return fmt.Errorf("lp: set option %s = %v: %w", k, v, err)
	}
	return nil
}

func (s *Solver) setOptions(set map[string]any) error {
	for k, v := range set {
		if err := s.setOption(k, v); err != nil {
			return err
		}
	}
	return nil
}

func (s *Solver) resetOptions(set map[string]any) error {
	for k := range set {
		if err := s.setOption(k, defaults[k]); err != nil {
			return err
		}
	}
	return nil
}

// ErrInfeasible is returned by Solve when no x satisfies the rows and bounds.
var ErrInfeasible = errors.New("lp: infeasible")

// strategy is a set of HiGHS options Solve falls back on.
type strategy struct {
	name string
	set  map[string]any // string or int options; defaults has their default values
}

// fallbacks are tried in order when the warm-started simplex method fails;
// each starts from scratch. Their options are reset afterwards.
var fallbacks = []strategy{
	{"simplex from scratch", nil},
	{"dual simplex without presolve, equilibration scaling", map[string]any{"presolve": "off", "simplex_strategy": 1, "simplex_scale_strategy": 3}},
	{"interior point with crossover", map[string]any{"solver": "ipm", "run_crossover": "on"}},
	{"primal simplex without presolve", map[string]any{"presolve": "off", "simplex_strategy": 4}},
}

// defaults are HiGHS's values of the options the fallbacks change.
var defaults = map[string]any{"presolve": "choose", "simplex_strategy": 1, "simplex_scale_strategy": 1, "solver": "choose", "run_crossover": "on"}

// Solve solves the LP, starting from the basis of the previous solve. If
// the warm-started simplex method fails numerically, which HiGHS reports as
// an error or an unknown status when many nearly parallel rows accumulate,
// Solve retries from scratch with each fallback strategy in turn (another
// simplex variant, the interior-point method) before it reports a failure,
// which then names every strategy tried.
func (s *Solver) Solve() (Solution, error) {
	sol, err := s.run()
	var tried []string
	for _, f := range fallbacks {
		if err == nil && (sol.IsOptimal() || sol.IsInfeasible()) {
			break
		}
		tried = append(tried, fmt.Sprintf("%s: %v", f.name, describeFailure(sol, err)))
		if cerr := s.h.ClearSolver(); cerr != nil {
			return Solution{}, fmt.Errorf("lp: clear solver after a failed solve: %w", cerr)
		}
		if err := s.setOptions(f.set); err != nil {
			return Solution{}, err
		}
		sol, err = s.run()
		if rerr := s.resetOptions(f.set); rerr != nil {
			return Solution{}, rerr
		}
	}
	if err != nil || !(sol.IsOptimal() || sol.IsInfeasible()) {
		tried = append(tried, "last: "+describeFailure(sol, err))
		return Solution{}, fmt.Errorf("lp: solve: HiGHS failed with every strategy (warm-started simplex; %s)", strings.Join(tried, "; "))
	}
	switch {
	case sol.IsOptimal():
		return Solution{X: sol.ColValues, Objective: sol.Objective}, nil
	case sol.IsInfeasible():
		return Solution{}, ErrInfeasible
	default:
		return Solution{}, fmt.Errorf("lp: HiGHS stopped with status %v", sol.Status)
	}
}
