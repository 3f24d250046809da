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
