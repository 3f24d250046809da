package optimal

import (
	"context"
	"fmt"
	"time"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/lp"
)

// solveOneVote is Solve in the one-vote relation for a utility whose
// coefficients are all nonnegative, as every prior's are. The greatest
// private gamma (gamma.OneVoteOpt) maximises every such utility and is the
// canonical optimum: the tie-break's objective, U(gamma) minus a multiple
// of |1 - gamma|², increases in each value of gamma below 1, so no other
// private gamma can beat the greatest one. The LP, with every one of its
// 2K rows, is solved once for its weak-duality bound, which bounds the
// utility of every private gamma (as for DaRRM's relation, it holds
// whatever the solver's tolerances). The gamma is certified as sampled,
// scaled into the budget if rounding left it above (gamma.Certify).
func solveOneVote(ctx context.Context, p constraints.Problem, coeffs []float64, opts Options) (Result, error) {
	start := time.Now()
	opt, err := gamma.OneVoteOpt(p)
	if err != nil {
		return Result{}, fmt.Errorf("solve K=%d one-vote: %w", p.K, err)
	}
	g, cert, err := gamma.Certify(ctx, p, opt, gamma.VerifyOptions{Workers: opts.Workers})
	if err != nil {
		return Result{}, fmt.Errorf("solve K=%d one-vote: %w", p.K, err)
	}
	ub, rows, err := oneVoteBound(ctx, p, coeffs, opts.highs())
	if err != nil {
		return Result{}, fmt.Errorf("solve K=%d one-vote: %w", p.K, err)
	}
	out := Result{Gamma: g, Certificate: cert, LPSolves: 1, Rows: rows, Passes: 1, TieBroken: true}
	if err := out.measure(ctx, opt, coeffs, ub, start); err != nil {
		return Result{}, fmt.Errorf("solve K=%d one-vote: %w", p.K, err)
	}
	return out, nil
}

// oneVoteBound solves the one-vote LP with all its rows and returns its
// weak-duality bound (lp.Solution.Bound) and the number of rows.
func oneVoteBound(ctx context.Context, p constraints.Problem, coeffs []float64, o lp.Options) (float64, int, error) {
	n := len(coeffs)
	lower, upper := make([]float64, n), make([]float64, n)
	for i := range upper {
		upper[i] = 1
	}
	solver, err := lp.New(coeffs, lower, upper, true, o)
	if err != nil {
		return 0, 0, err
	}
	defer solver.Close()
	if err := allRows(p, func(cuts []lp.Cut, _ []string) error { return solver.AddRows(cuts) }); err != nil {
		return 0, 0, err
	}
	sol, err := solver.Solve(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("the LP's bound: %w", err)
	}
	return sol.Bound, solver.NumRows(), nil
}
