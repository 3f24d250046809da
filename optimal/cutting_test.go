package optimal

import (
	"context"
	"fmt"
	"testing"

	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/lp"
)

// TestRunStalls runs the cutting-plane loop against a separation that
// never proves a point feasible and never cuts anything off: each call
// bounds the cost at 1.001 times the budget and returns a row that does
// not bind. The gap then settles where scaling by the bound leaves it,
// and the loop must stop, say that it stalled, and keep in feasible (as
// scaled), instead of solving until a cap ends it with an error.
func TestRunStalls(t *testing.T) {
	const n = 5
	obj := []float64{1, 1, 1, 1, 1}
	lower, upper := make([]float64, n), []float64{1, 1, 1, 1, 1}
	solver, err := lp.New(obj, lower, upper, true, lp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer solver.Close()
	const budget = 1.0
	c := newCutter(2*n-1, solver, budget, 1e-9)
	c.settle = false
	calls := 0
	c.sep = func(_ context.Context, g gamma.Gamma, _ bool) (separation, error) {
		calls++
		row := make([]float64, n)
		row[calls%n] = 1e-3 // x_i <= 1000: never binds
		return separation{
			cuts:  []lp.Cut{{Coeffs: row, Upper: budget}},
			keys:  []string{fmt.Sprint(calls)},
			bound: 1.001 * budget,
		}, nil
	}
	ub, err := c.run(context.Background(), obj)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !c.stalled {
		t.Fatalf("run returned without stalling after %d LP solves", c.lpSolve)
	}
	// The gap halves while in climbs towards out during the first
	// solves; the stall is stallSolves after the last halving.
	if c.lpSolve < stallSolves || c.lpSolve > 2*stallSolves {
		t.Errorf("run stalled after %d LP solves, want %d to %d", c.lpSolve, stallSolves, 2*stallSolves)
	}
	var in float64
	for _, v := range c.in {
		in += v
	}
	if gap := (ub - in) / ub; !(gap > 0 && gap < 0.01) {
		t.Errorf("stalled with in's gap %g, want in (0, 0.01): in is out scaled by the bound", gap)
	}
}

// TestSolveDropsIdleRowsOnFailure makes the LP fail (an infeasible row
// stands in for the nearly parallel rows on which HiGHS fails with every
// strategy) and checks what solve does then: it drops the rows that did
// not bind at the last solve and solves again, but keeps the rows just
// added and the rows never dropped, and reports the failure when nothing
// is left to drop or the LP still fails.
func TestSolveDropsIdleRowsOnFailure(t *testing.T) {
	const n = 3
	obj := []float64{1, 1, 1}
	half := lp.Cut{Coeffs: []float64{1, 0, 0}, Upper: 0.5} // x0 <= 0.5
	bad := lp.Cut{Coeffs: []float64{-1, 0, 0}, Upper: -2}  // x0 >= 2: infeasible
	for _, tc := range []struct {
		name     string
		badKey   string // "" marks a row that is never dropped
		badIdle  int
		wantErr  bool
		wantKeys []string
	}{
		{"an idle row is dropped", "bad", 1, false, []string{"half"}},
		{"a row just added stays", "bad", 0, true, []string{"bad", "half"}},
		{"a row never dropped stays", "", 5, true, []string{"", "half"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			solver, err := lp.New(obj, make([]float64, n), []float64{1, 1, 1}, true, lp.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer solver.Close()
			c := newCutter(2*n-1, solver, 1, 1e-9)
			if err := c.addRows([]lp.Cut{bad, half}, []string{tc.badKey, "half"}); err != nil {
				t.Fatal(err)
			}
			c.idle[0] = tc.badIdle
			sol, err := c.solve(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("solve: error %v, want an error: %v", err, tc.wantErr)
			}
			if fmt.Sprint(c.keys) != fmt.Sprint(tc.wantKeys) || solver.NumRows() != len(tc.wantKeys) {
				t.Errorf("rows %q (%d in the LP), want %q", c.keys, solver.NumRows(), tc.wantKeys)
			}
			if tc.wantErr {
				return
			}
			if sol.Objective != 2.5 || c.added["bad"] || c.dropped["bad"] != 1 {
				t.Errorf("objective %g, bad row added %v, dropped %d times; want 2.5, false, 1",
					sol.Objective, c.added["bad"], c.dropped["bad"])
			}
		})
	}
}

// TestAgeDropsWhenRetried checks when age drops a row idle for maxIdle LP
// solves from an LP below its size threshold: only when HiGHS needed a
// fallback strategy to solve it.
func TestAgeDropsWhenRetried(t *testing.T) {
	const n = 3
	for _, tc := range []struct {
		retried  bool
		wantKeys []string
	}{
		{false, []string{"idle", "binding"}},
		{true, []string{"binding"}},
	} {
		t.Run(fmt.Sprint("retried=", tc.retried), func(t *testing.T) {
			obj := []float64{1, 1, 1}
			solver, err := lp.New(obj, make([]float64, n), []float64{1, 1, 1}, true, lp.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer solver.Close()
			c := newCutter(2*n-1, solver, 1, 1e-9)
			rows := []lp.Cut{{Coeffs: []float64{0, 1, 0}, Upper: 2}, {Coeffs: []float64{1, 0, 0}, Upper: 0.5}}
			if err := c.addRows(rows, []string{"idle", "binding"}); err != nil {
				t.Fatal(err)
			}
			c.idle[0] = maxIdle - 1
			sol := lp.Solution{Slack: []float64{1, 0}, Dual: []float64{0, 1}, Retried: tc.retried}
			if err := c.age(sol); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(c.keys) != fmt.Sprint(tc.wantKeys) || solver.NumRows() != len(tc.wantKeys) {
				t.Errorf("rows %q (%d in the LP), want %q", c.keys, solver.NumRows(), tc.wantKeys)
			}
		})
	}
}
