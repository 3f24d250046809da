// Package optimal computes gamma_opt, the DaRRM noise function of maximal
// utility under a prior subject to (m·eps, delta)-DP (thesis Section 3.6),
// by cutting planes over the reduced constraint set of Lemma 3.6.1, and
// certifies it exhaustively (gamma.Certify). It is the one package besides
// lp that links the HiGHS solver through cgo.
//
// Reference: Shuli Jiang, "Communication Efficient and Differentially
// Private Optimization", PhD thesis, Carnegie Mellon University,
// CMU-RI-TR-25-46, 2025 ("the thesis": lemma, section, table and figure
// numbers are its own). Its Chapter 3 and Appendix B are based
// on Jiang, Zhang and Joshi, "Optimized Tradeoffs for Private Prediction
// with Majority Ensembling", TMLR 2024.
package optimal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/lp"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/poissonbinom"
	"gonum.org/v1/gonum/floats"
)

// Options tune Solve. The zero value is ready to use.
type Options struct {
	// Workers is the number of goroutines of each separation; 0 means GOMAXPROCS.
	Workers int
	// Tol is the relative optimality gap at which the cutting-plane loop
	// stops: the returned gamma's utility is within Tol of the solver's
	// optimum of the restricted LP, before the tie-break (which may give
	// up Tol more) and certification (which may scale gamma by a
	// rounding-sized factor); 0 means DefaultTol. Result.Gap reports the gap
	// reached against Result.UpperBound, a rigorous bound.
	Tol float64
	// CutsPerPass is how many violated rows each separation adds to the
	// LP at most: the most violated, leaving out rows nearly parallel to
	// one added (see parallelCos); 0 means a quarter of
	// the (K+1)/2 free values, at least 8: fewer rows per pass keep each
	// LP solve cheap, which matters more than the extra passes.
	CutsPerPass int
	// MaxCoefficients bounds the size of the LP, rows × (K+1)/2; 0 means
	// 8e6 (16,000 rows at K = 1001, about 800 MiB inside HiGHS). Rows that
	// stop binding are dropped, so the LP stays far below it; Solve fails
	// with ErrTooLarge rather than grow beyond it.
	MaxCoefficients int
	// Start, if set, is a gamma to start from, such as the gamma of a
	// nearby problem or an earlier solver's: the rows of its costliest
	// corner multisets enter the LP before the first solve, and it is the
	// first feasible point when it is private (scaled onto the budget when
	// not). It changes the path of the loop, not the answer.
	Start gamma.Gamma
	// Progress, if set, receives the state of the solve.
	Progress func(Progress)
	// HiGHSLog lets HiGHS print its log to standard output; darrm keeps
	// it quiet by default.
	HiGHSLog bool
}

// maxCutsPerPass bounds Options.CutsPerPass: a pass adds at most about
// (K+1)/2 rows that are not nearly parallel, and a separation keeps the
// rows it returns in memory.
const maxCutsPerPass = 1 << 20

// check checks o's fields against their domains, naming the field (a
// CutsPerPass of MaxInt overflowed a separation's count of rows).
func (o Options) check() error {
	if err := param.Workers(o.Workers); err != nil {
		return err
	}
	switch {
	case !(o.Tol >= 0 && o.Tol < 1):
		return &param.Error{Name: "Tol", Value: o.Tol, Rule: "must be in [0, 1) (0: DefaultTol)"}
	case o.CutsPerPass < 0 || o.CutsPerPass > maxCutsPerPass:
		return &param.Error{Name: "CutsPerPass", Value: o.CutsPerPass, Rule: fmt.Sprintf("must be in [0, %d] (0: a quarter of the free values, at least 8)", maxCutsPerPass)}
	case o.MaxCoefficients < 0:
		return &param.Error{Name: "MaxCoefficients", Value: o.MaxCoefficients, Rule: "must be >= 0 (0: 8e6)"}
	}
	return nil
}

// highs returns the options of HiGHS that o sets.
func (o Options) highs() lp.Options { return lp.Options{Verbose: o.HiGHSLog} }

// DefaultTol is the relative gap at which the cutting-plane loop stops
// when Options.Tol is 0: a progress line estimates the time left from it.
// The tie-break then gives up 2e-7 to 3e-7 of the utility at K = 1001
// (at most tieTol = 1e-6), so a tighter loop buys digits the answer does
// not keep: at 1e-9, solves at K = 1001 took 15 to 28% more time, and
// K = 2001, m = 2, Delta = 1e-4 had not ended after 40 minutes, where at
// 1e-7 it ends in 11 (docs/solve.md, "Approximate DP at K = 2001").
const DefaultTol = 1e-7

// ErrTooLarge is returned by Solve when the cutting-plane LP outgrows
// Options.MaxCoefficients before converging. Since rows that stop binding
// are dropped, no problem up to K = 1001 reaches the default limit; a
// small limit set by the caller can.
var ErrTooLarge = errors.New("the gamma LP outgrew its size limit before converging")

// Progress describes a running Solve.
type Progress struct {
	Pass      int     // exhaustive separations started
	LPSolves  int     // LP solves so far
	Rows      int     // rows in the LP
	Violation float64 // relative violation of the last candidate separated, (max f - budget)/budget
	Gap       float64 // relative gap below the LP's bound of the point the loop closes in from (docs/solve.md, "The anchor")
	Fraction  float64 // progress of the current separation, in [0, 1]
}

// Result is an optimal noise function with its certificate.
type Result struct {
	Gamma          gamma.Gamma
	Certificate    gamma.Certificate
	Utility        float64 // the objective U(gamma) under the prior (gamma.Measurement.Utility)
	SurrogateError float64
	// Scale is the factor certification applied to the LP solution (1 if
	// it was certified as solved).
	Scale float64
	// UpperBound bounds the optimum of the restricted LP, whose rows are
	// a subset of all privacy constraints, by weak duality from the LP
	// solver's duals (lp.Solution.Bound), so it holds whatever the
	// solver's tolerances: no gamma has a higher utility. Gap is the
	// relative distance of Utility below it, (UpperBound - Utility) /
	// UpperBound: the returned gamma is optimal to within Gap.
	UpperBound float64
	Gap        float64
	LPSolves   int
	Rows       int
	Passes     int // exhaustive separations, including the certificate's
	// TieBroken reports that Gamma is the canonical gamma_opt (see
	// Solve), the same for every run. When the tie-break fails,
	// TieBreakError says
	// why, and Gamma is the optimum the cutting-plane loop reached: just
	// as optimal and certified, but which of the optimal gammas it is
	// depends on the loop's path (worker count, cuts per pass, cached
	// rows), so another run may return another.
	TieBroken     bool
	TieBreakError error
	// Stalled reports that the cutting-plane loop stopped closing its gap
	// before it reached Tol: Gamma is certified and within Gap of the
	// optimum, no closer. Such a result is not stored in a cache.
	Stalled bool
	Elapsed time.Duration
}

// Solve computes the optimal noise function gamma_opt for the problem p and
// prior (the LP of Section 3.6, objective (3.2) in closed form) and
// certifies it. The LP has (K+1)/2 columns and one row per corner
// multiset; rows are generated by exact separation (cutting planes), so
// only the few hundred that bind are ever built. The returned gamma passed
// the exhaustive certificate.
//
// The LP's optimum is often not unique, or unique only to within the
// solver's tolerances: at large K most values of gamma hardly count in the
// utility. Solve returns one canonical gamma_opt, the same whatever the
// worker count or the path of the cutting-plane loop: the private gamma
// that maximises
//
//	U(gamma) - (rho/2)·sum_{l=H..K} (1 - gamma(l))²,   rho = 1e-5·max_l c_l,
//
// with c the utility's coefficients, subject to U staying within 1e-6
// (relative) of the LP's bound. The objective is strictly concave, so
// this gamma is unique: among gammas whose utilities differ by less than
// about rho, it is the one closest to releasing the exact majority
// (gamma = 1). docs/solve.md states the tolerances.
//
// At m = 1 with δ = Δ, Solve returns γ_Sub (one teacher subsampled),
// certified, where the LP's bound shows it within the tie-break's
// tolerance of the optimum, as at the thesis' ε = 0.1 under the uniform
// prior (Lemma 3.4.2, whose proof needs ε small); otherwise the LP's
// gamma_opt (solveM1).
func Solve(ctx context.Context, p constraints.Problem, prior gamma.Prior, opts Options) (Result, error) {
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	if err := opts.check(); err != nil {
		return Result{}, fmt.Errorf("solve: %w", err)
	}
	coeffs, err := prior.Coefficients(p.K)
	if err != nil {
		return Result{}, err
	}
	if p.Relation == accountant.PrivateTeachers && p.M == 1 && p.TargetDelta == p.Delta {
		return solveM1(ctx, p, coeffs, opts)
	}
	if p.Relation == accountant.OneVote && !slices.ContainsFunc(coeffs, func(c float64) bool { return c < 0 }) {
		return solveOneVote(ctx, p, coeffs, opts)
	}
	return solveLP(ctx, p, coeffs, opts)
}

// solveM1 returns γ_Sub with one teacher, certified, with the LP's
// bound, where that bound is within tieTol of γ_Sub's utility; otherwise
// the LP's result. Lemma 3.4.2 makes γ_Sub optimal only for ε below a
// constant (its proof chains datasets from p = 1/2 in steps of e^ε), so
// its utility is no bound: at K = 11, ε = 2 a certified γ has utility
// 0.7227 where γ_Sub has 0.5 (randomized response 0.709), and under the
// prior 0.55 at ε = 0.3 0.1038 where γ_Sub has 0.1.
func solveM1(ctx context.Context, p constraints.Problem, coeffs []float64, opts Options) (Result, error) {
	start := time.Now()
	r, err := solveLP(ctx, p, coeffs, opts)
	if err != nil {
		return Result{}, err
	}
	sub, err := gamma.Sub(p.K, 1)
	if err != nil {
		return Result{}, fmt.Errorf("solve K=%d m=1: %w", p.K, err)
	}
	m, err := sub.Measure(ctx, nil, coeffs, nil)
	if err != nil {
		return Result{}, fmt.Errorf("solve K=%d m=1: %w", p.K, err)
	}
	if m.Utility < (1-tieTol)*r.UpperBound {
		return r, nil
	}
	g, cert, err := gamma.Certify(ctx, p, sub, gamma.VerifyOptions{Workers: opts.Workers})
	if err != nil {
		return Result{}, fmt.Errorf("solve K=%d m=1: %w", p.K, err)
	}
	out := Result{Gamma: g, Certificate: cert, LPSolves: r.LPSolves, Rows: r.Rows, Passes: r.Passes + 1, TieBroken: true}
	if err := out.measure(ctx, sub, coeffs, r.UpperBound, start); err != nil {
		return Result{}, fmt.Errorf("solve K=%d m=1: %w", p.K, err)
	}
	return out, nil
}

// solveLP is Solve by cutting planes (see cutter), in two phases.
//
// Phase 1 maximises the utility. Under the uniform prior its coefficients
// are about 0.75^K in the tails, so most values of gamma hardly count: the
// LP's optimum is a large face, and the solver moves gamma's tails across
// it from one solve to the next. Rows cut off there never bind, and
// Kelley's loop takes hundreds of passes at K = 501. Phase 1 therefore
// maximises the utility plus eta times the accuracy weights (which are
// not small in the tails), with eta = 1e-5 relative to the utility's
// largest coefficient, then a tenth of that, and so on: each stage starts
// from the rows and the feasible point of the one before, and phase 1 ends
// when the utility is within a relative Tol of its own bound, the optimum
// of the LP with the utility alone over the rows found.
//
// The tie-break then computes the canonical optimum (see Solve and
// canonical) from phase 1's rows; the utility stays within tieTol of
// phase 1's bound.
func solveLP(ctx context.Context, p constraints.Problem, coeffs []float64, opts Options) (Result, error) {
	start := time.Now()
	tol := opts.Tol
	if tol == 0 {
		tol = DefaultTol
	}
	nFree := len(coeffs)
	cuts := opts.CutsPerPass
	if cuts <= 0 {
		cuts = max(nFree/4, 8)
	}
	maxCoef := opts.MaxCoefficients
	if maxCoef <= 0 {
		maxCoef = 8_000_000
	}
	lower, upper := make([]float64, nFree), make([]float64, nFree)
	for i := range upper {
		upper[i] = 1
	}
	solver, err := lp.New(coeffs, lower, upper, true, opts.highs())
	if err != nil {
		return Result{}, fmt.Errorf("solve K=%d m=%g: %w", p.K, p.M, err)
	}
	defer solver.Close()

	budget := p.Budget()
	c := newCutter(p.K, solver, budget, tol)
	state := Progress{}
	report := func() {
		if opts.Progress != nil {
			state.Rows, state.LPSolves = solver.NumRows(), c.lpSolve
			opts.Progress(state)
		}
	}
	c.progress = func(ub, in float64) {
		if ub > 0 {
			state.Gap = math.Max((ub-in)/ub, 0)
		}
		report()
	}
	// Rows violated by less than sepTol relative are not cut: the LP
	// solver's feasibility tolerance is about as large. The tie-break,
	// which projects exactly, cuts every row violated by more than
	// rounding (tieSepTol).
	sepTol := tol
	top := cuts
	if p.Delta == 0 {
		top *= candidates
	}
	// toCuts turns the multisets found, costliest first, into at most
	// cuts new rows, skipping rows nearly parallel to one taken already
	// (see parallelCos). A row costs O(K) to O(K²) (its pmfs): the rows
	// are computed on all cores, as many at a time as are still wanted,
	// so that the rows taken are those of taking them one by one.
	toCuts := func(ctx context.Context, found []constraints.Scored) (separation, error) {
		var out separation
		var dirs [][]float64
		for len(found) > 0 && len(out.cuts) < cuts {
			var cfgs []constraints.Config
			var keys []string
			for len(found) > 0 && len(cfgs) < cuts-len(out.cuts) {
				cfg := found[0].Config
				found = found[1:]
				if key := fmt.Sprint(cfg); !c.added[key] {
					cfgs, keys = append(cfgs, cfg), append(keys, key)
				}
			}
			rows, err := rowsOf(ctx, p, cfgs, opts.Workers)
			if err != nil {
				return separation{}, err
			}
			for i, row := range rows {
				dir := direction(row)
				if slices.ContainsFunc(dirs, func(d []float64) bool { return floats.Dot(d, dir) > parallelCos }) {
					continue
				}
				dirs = append(dirs, dir)
				out.cuts = append(out.cuts, lp.Cut{Coeffs: row, Upper: budget})
				out.keys = append(out.keys, keys[i])
			}
		}
		return out, nil
	}
	c.sep = func(ctx context.Context, g gamma.Gamma, final bool) (separation, error) {
		// With Delta > 0 an exact pass scores every family whose bound
		// reaches the threshold, O(t^3) steps for a pair, and near the
		// budget those can be many. The search (Candidates, O(K^2))
		// usually names the next violated rows, and the family bound it
		// computes on the way (Separate's first pass) gives a feasible
		// point by scaling, or proves the point feasible; only when neither
		// settles it, and only at the LP's solution (final), does the
		// exact pass run.
		if p.Delta > 0 {
			found, maxF, bound, err := violated(ctx, p, g, candidates*top, budget*(1+sepTol), opts.Workers)
			if err != nil {
				return separation{}, err
			}
			out, err := toCuts(ctx, found)
			if err != nil {
				return separation{}, err
			}
			out.bound = bound
			if len(out.cuts) > 0 || out.bound <= budget || !final {
				state.Violation = (maxF - budget) / budget
				report()
				if solver.NumRows()*nFree > maxCoef {
					return separation{}, fmt.Errorf("%w: %d rows of %d coefficients after %d passes, relative violation still %.2g (try a larger m or a smaller K)",
						ErrTooLarge, solver.NumRows(), nFree, state.Pass, state.Violation)
				}
				return out, nil
			}
		}
		state.Pass++
		state.Fraction = 0
		report()
		sep, err := p.Separate(ctx, g, constraints.SeparateOptions{
			Top: top, Floor: budget * (1 + sepTol), Workers: opts.Workers,
			Progress: func(f float64) { state.Fraction = f; report() },
		})
		if err != nil {
			return separation{}, err
		}
		state.Violation = (sep.MaxF - budget) / budget
		if sep.MaxF > budget*(1+sepTol) && solver.NumRows()*nFree > maxCoef {
			return separation{}, fmt.Errorf("%w: %d rows of %d coefficients after %d passes, relative violation still %.2g (try a larger m or a smaller K)",
				ErrTooLarge, solver.NumRows(), nFree, state.Pass, state.Violation)
		}
		out, err := toCuts(ctx, sep.Top)
		out.exact, out.bound = &sep, sep.MaxF
		return out, err
	}

	if p.Relation == accountant.OneVote {
		// The one-vote LP has one row per pair of neighbouring vote
		// vectors, 2K in all: they enter at once, and the exact passes
		// only confirm (cutting them one pass at a time took 522 passes
		// at K = 1001, eps = 0.05, pure DP).
		if err := c.addAll(p); err != nil {
			return Result{}, fmt.Errorf("solve K=%d one-vote: %w", p.K, err)
		}
	}
	if opts.Start != nil {
		if err := c.start(ctx, p, opts.Start); err != nil {
			return Result{}, fmt.Errorf("solve K=%d m=%g: start: %w", p.K, p.M, err)
		}
	}
	acc, err := accuracyWeights(p.K)
	if err != nil {
		return Result{}, fmt.Errorf("solve K=%d m=%g: %w", p.K, p.M, err)
	}
	ub1, err := phase1(ctx, c, coeffs, acc, p.Delta == 0)
	if err != nil {
		return Result{}, fmt.Errorf("solve K=%d m=%g: %w", p.K, p.M, err)
	}

	// The tie-break (see Solve and canonical). If it fails, phase 1's
	// gamma stands: just as optimal, and certified the same way, but
	// which of the optimal gammas it is depends on the loop's path.
	sepTol = tieSepTol
	floor := math.Min((1-tieTol)*ub1, floats.Dot(coeffs, c.in))
	var tieErr error
	if x, xSep, err := c.canonical(ctx, coeffs, floor); err != nil {
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("solve K=%d m=%g: %w", p.K, p.M, err)
		}
		tieErr = err
	} else {
		c.in, c.inSep = x, xSep
	}

	// in satisfies every privacy row as computed; the certificate adds
	// the rounding margin, scaling if needed, from in's own exhaustive
	// separation (one more pass when in was obtained by scaling).
	before := gamma.FromUpper(p.K, c.in)
	if c.inSep == nil {
		state.Pass++
	}
	g, cert, err := gamma.Certify(ctx, p, before, gamma.VerifyOptions{Workers: opts.Workers, Separation: c.inSep})
	if err != nil {
		return Result{}, fmt.Errorf("solve K=%d m=%g: %w", p.K, p.M, err)
	}
	out := Result{Gamma: g, Certificate: cert, LPSolves: c.lpSolve, Rows: solver.NumRows(), Passes: state.Pass, TieBroken: tieErr == nil, TieBreakError: tieErr, Stalled: c.stalled}
	if err := out.measure(ctx, before, coeffs, ub1, start); err != nil {
		return Result{}, fmt.Errorf("solve K=%d m=%g: %w", p.K, p.M, err)
	}
	return out, nil
}

// measure completes r, whose Gamma is before as certification left it:
// the factor certification applied (Scale) and the exhaustive pass it
// cost when it changed gamma, the utility and the surrogate error
// (gamma.Gamma.Measure), the upper bound ub (at least the utility) and the gap,
// and the time since start.
func (r *Result) measure(ctx context.Context, before gamma.Gamma, coeffs []float64, ub float64, start time.Time) error {
	r.Scale = scaleOf(before, r.Gamma)
	if !slices.Equal(before, r.Gamma) {
		r.Passes++
	}
	m, err := r.Gamma.Measure(ctx, nil, coeffs, nil)
	if err != nil {
		return err
	}
	r.Utility, r.SurrogateError = m.Utility, m.SurrogateError
	r.UpperBound = math.Max(ub, r.Utility)
	if r.UpperBound > 0 {
		r.Gap = (r.UpperBound - r.Utility) / r.UpperBound
	}
	r.Elapsed = time.Since(start)
	return nil
}

// The rows one separation adds. The costliest multisets come in clusters
// of neighbours (one teacher moved) whose rows are nearly parallel, and a
// batch of them cuts little more than one of them does. Each separation
// returns candidates times CutsPerPass multisets (an exact pass with
// Delta = 0, the search with Delta > 0), and the loop takes them
// costliest first, skipping a row whose cosine with one taken already
// exceeds parallelCos. Pure DP at K = 1001 (passes, against the costliest
// rows alone): m = 2 289 (494), m = 3 236 (349), m = 5 181 (264), m = 10
// 143 (155). With Delta = 1e-5 at K = 1001, m = 2: 176 LP solves against
// 324 (a cosine of 0.95: 190; 0.999: 244), and a quarter less CPU time;
// at K = 101 and 151 the passes had not changed (docs/solve.md, "Less
// CPU a round").
const (
	candidates  = 4
	parallelCos = 0.99
)

// direction returns row scaled to unit Euclidean length (row itself if
// it is zero).
func direction(row []float64) []float64 {
	n := floats.Norm(row, 2)
	if n == 0 {
		return row
	}
	return scale(row, 1/n)
}

// Phase 1's perturbation of the utility by the accuracy weights: the
// first eta, relative to the utility's largest coefficient, and the
// smallest.
const (
	eta0   = 1e-5
	etaMin = 1e-12
)

// phase1 runs phase 1 of solveLP and returns the least of the utility's
// bounds found on the way: each bounds the utility over the feasible set,
// since every row is a privacy constraint, whichever rows the LP held then.
//
// With Delta > 0 the stages do not settle (cutter.settle): an exact pass
// at an LP vertex scores hundreds of families (10 s of CPU at K = 1001,
// m = 3), where the search finds no row left, and the stages need only
// their rows and bounds. A stage then ends when the search finds no row
// at the LP's solution, is judged by that solution's utility, and only the
// last is run again settled, so that in is exactly feasible and within
// tol of the LP's optimum.
func phase1(ctx context.Context, c *cutter, coeffs, acc []float64, settle bool) (float64, error) {
	var maxC, maxA float64
	for i := range coeffs {
		maxC, maxA = math.Max(maxC, coeffs[i]), math.Max(maxA, acc[i])
	}
	obj := make([]float64, len(coeffs))
	best := math.Inf(1)
	c.settle = settle
	for eta := eta0; ; eta /= 10 {
		for i := range obj {
			obj[i] = coeffs[i] + eta*maxC/maxA*acc[i]
		}
		if _, err := c.run(ctx, obj); err != nil {
			return 0, err
		}
		opt, bound, err := c.bound(ctx, coeffs)
		if err != nil {
			return 0, err
		}
		best = math.Min(best, bound)
		// The stages end on the solver's own optimum: its bound lies above
		// it by the solver's tolerances, which no stage can close.
		x := c.in
		if !c.settle {
			x, _ = c.anchor(obj)
		}
		// A stage that stalled is not followed by another: the next
		// would stall too, and the settled run needs only the rows.
		if u := floats.Dot(coeffs, x); u < opt-c.tol*math.Abs(opt) && eta >= etaMin && !c.stalled {
			continue
		}
		if c.settle {
			return best, nil
		}
		c.settle = true
		if _, err := c.run(ctx, obj); err != nil {
			return 0, err
		}
		_, bound, err = c.bound(ctx, coeffs)
		if err != nil {
			return 0, err
		}
		return math.Min(best, bound), nil
	}
}

// rowsOf returns the privacy rows of cfgs (Problem.Row), computed by
// workers goroutines (0: GOMAXPROCS), or ctx's error once it is done.
func rowsOf(ctx context.Context, p constraints.Problem, cfgs []constraints.Config, workers int) ([][]float64, error) {
	rows := make([][]float64, len(cfgs))
	errs := make([]error, len(cfgs))
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(cfgs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(cfgs) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				rows[i], errs[i] = p.Row(cfgs[i])
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rows, errors.Join(errs...)
}

// violated returns the multisets of Candidates whose estimated cost
// exceeds floor, costliest first, the largest estimate, and Candidates'
// bound on every cost.
func violated(ctx context.Context, p constraints.Problem, g gamma.Gamma, n int, floor float64, workers int) (found []constraints.Scored, maxF, bound float64, err error) {
	cands, bound, err := p.Candidates(ctx, g, n, workers)
	if err != nil {
		return nil, 0, 0, err
	}
	maxF = math.Inf(-1)
	for _, s := range cands {
		maxF = math.Max(maxF, s.F)
		if s.F > floor {
			found = append(found, s)
		}
	}
	return found, maxF, bound, nil
}

// accuracyWeights returns w[i] = integral over mu in [0.5, 1] of
// (b_l(mu) - b_{K-l}(mu)) dmu, l = H+i, with b(mu) the Binomial(K, mu) pmf:
// the utility averaged over a common teacher accuracy. By
// integral_0^x C(K,l) t^l (1-t)^(K-l) dt = Pr[Binomial(K+1, x) > l]/(K+1),
// w[i] = (F(l) - F(K-l))/(K+1) with F the cdf of Binomial(K+1, 1/2). Unlike
// the prior's coefficients, these are not tiny in the tails (w -> 1/(K+1)).
func accuracyWeights(k int) ([]float64, error) {
	b, err := poissonbinom.Binomial(k+1, 0.5)
	if err != nil {
		return nil, err
	}
	cdf := make([]float64, len(b))
	var s float64
	for l, v := range b {
		s += v
		cdf[l] = s
	}
	h := (k + 1) / 2
	w := make([]float64, k-h+1)
	for i := range w {
		l := h + i
		w[i] = (cdf[l] - cdf[k-l]) / float64(k+1)
	}
	return w, nil
}

// scaleOf returns c with after = c·before (1 if before is zero).
func scaleOf(before, after gamma.Gamma) float64 {
	for l, v := range before {
		if v != 0 {
			return after[l] / v
		}
	}
	return 1
}
