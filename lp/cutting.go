package lp

import (
	"context"
	"fmt"
)

// Cut is a constraint Coeffs·x <= Upper.
type Cut struct {
	Coeffs []float64
	Upper  float64
}

// Separator inspects a candidate solution x and returns constraints it
// violates, and the largest violation (Coeffs·x - Upper) over all
// constraints of the full problem, including those it does not return.
type Separator func(ctx context.Context, x []float64) (cuts []Cut, maxViolation float64, err error)

// CuttingPlaneOptions configure CuttingPlanes.
type CuttingPlaneOptions struct {
	// Tol is the largest violation accepted as feasible.
	Tol float64
	// MaxIter bounds the number of LP solves; 0 means 1000.
	MaxIter int
	// Progress, if set, is called after each separation.
	Progress func(iter, rows int, maxViolation float64)
}

// Result is the outcome of CuttingPlanes.
type Result struct {
	Solution
	Iterations   int     // LP solves
	Rows         int     // rows in the final LP
	MaxViolation float64 // largest violation of the returned X over all rows
	// Stalled reports that the loop stopped because the separator found
	// violations above Tol but returned no cut, typically because the
	// violated rows are already in the LP and HiGHS's tolerance admits them.
	Stalled bool
}

// CuttingPlanes solves an LP whose rows are known only through sep: it
// solves s, asks sep for violated rows, adds them and repeats until the
// largest violation is at most opts.Tol. s may hold initial rows.
//
// The returned X is feasible only to within MaxViolation; callers that need
// exact feasibility must restore it themselves (darrm scales gamma).
func CuttingPlanes(ctx context.Context, s *Solver, sep Separator, opts CuttingPlaneOptions) (Result, error) {
	maxIter := opts.MaxIter
	if maxIter <= 0 {
		maxIter = 1000
	}
	var res Result
	for res.Iterations < maxIter {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		sol, err := s.Solve()
		if err != nil {
			return res, fmt.Errorf("cutting planes, iteration %d: %w", res.Iterations+1, err)
		}
		res.Iterations++
		cuts, viol, err := sep(ctx, sol.X)
		if err != nil {
			return res, fmt.Errorf("cutting planes, iteration %d: separation: %w", res.Iterations, err)
		}
		res.Solution, res.MaxViolation, res.Rows = sol, viol, s.NumRows()
		if opts.Progress != nil {
			opts.Progress(res.Iterations, s.NumRows(), viol)
		}
		if viol <= opts.Tol {
			return res, nil
		}
		if len(cuts) == 0 {
			res.Stalled = true
			return res, nil
		}
		for _, c := range cuts {
			if err := s.AddRow(c.Coeffs, c.Upper); err != nil {
				return res, err
			}
		}
	}
	return res, fmt.Errorf("cutting planes: no convergence after %d LP solves (violation %.3g > tolerance %.3g)", maxIter, res.MaxViolation, opts.Tol)
}
