// Package lp solves the linear programs of darrm with HiGHS: an LP to which
// rows can be added and re-solved from the previous basis, and from which
// rows can be dropped, as a cutting-plane loop needs for an LP with too
// many rows to write down (the gamma LP of thesis Section 3.6 has
// C(K+7, 7) of them; package optimal runs the loop).
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

import "errors"

// Options configure the solver.
type Options struct {
	// Verbose lets HiGHS print its log to stdout; darrm keeps it quiet by default.
	Verbose bool
	// FeasibilityTol is HiGHS's primal and dual feasibility tolerance; 0
	// means 1e-9, tighter than HiGHS's 1e-7 default because every unit of
	// infeasibility is later paid for by scaling gamma down.
	FeasibilityTol float64
}

// Cut is a constraint Coeffs·x <= Upper.
type Cut struct {
	Coeffs []float64
	Upper  float64
}

// Solution is an optimal solution.
type Solution struct {
	X         []float64
	Objective float64
	// Slack[i] is how far row i is from its bound at X, in the units of
	// the row as stored (scaled to a largest coefficient of 1).
	Slack []float64
	// Dual[i] is the dual value of row i; zero for rows that do not bind.
	Dual []float64
	// Bound bounds the objective over the LP as given (each row as passed
	// to AddRows, before scaling and dropping): no x within the bounds
	// that satisfies every row has a larger objective when maximising, or
	// a smaller one when minimising. It is derived from Dual by weak
	// duality with a rounding margin, so it holds however inexact HiGHS's
	// solution is; it is near Objective when the duals are accurate.
	Bound float64
	// Retried reports that the warm-started simplex method failed and a
	// fallback strategy solved the LP (see Solver.Solve): a sign that its
	// rows are nearly parallel.
	Retried bool
}

// errInfeasible is returned by Solve when no x satisfies the rows and bounds.
var errInfeasible = errors.New("lp: infeasible")
