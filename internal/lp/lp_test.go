//go:build cgo

package lp

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestSolveSmallLP(t *testing.T) {
	// max x + y  s.t.  x + 2y <= 4,  3x + y <= 6,  0 <= x, y <= 10: optimum (1.6, 1.2).
	s, err := New([]float64{1, 1}, []float64{0, 0}, []float64{10, 10}, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, r := range []Cut{{[]float64{1, 2}, 4}, {[]float64{3, 1}, 6}} {
		if err := s.AddRow(r.Coeffs, r.Upper); err != nil {
			t.Fatal(err)
		}
	}
	sol, err := s.Solve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sol.X[0]-1.6) > 1e-9 || math.Abs(sol.X[1]-1.2) > 1e-9 || math.Abs(sol.Objective-2.8) > 1e-9 {
		t.Errorf("solution %v objective %v, want [1.6 1.2] 2.8", sol.X, sol.Objective)
	}
	// A new row, solved from the previous basis.
	if err := s.AddRow([]float64{1, 0}, 1); err != nil {
		t.Fatal(err)
	}
	sol, err = s.Solve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sol.X[0]-1) > 1e-9 || math.Abs(sol.X[1]-1.5) > 1e-9 {
		t.Errorf("after adding x <= 1: %v, want [1 1.5]", sol.X)
	}
	if s.NumRows() != 3 {
		t.Errorf("NumRows = %d, want 3", s.NumRows())
	}
}

func TestSetObjective(t *testing.T) {
	s, err := New([]float64{1, 1}, []float64{0, 0}, []float64{10, 10}, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AddRow([]float64{1, 1}, 4); err != nil {
		t.Fatal(err)
	}
	if err := s.SetObjective([]float64{1, 0}); err != nil {
		t.Fatal(err)
	}
	sol, err := s.Solve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sol.X[0]-4) > 1e-9 || math.Abs(sol.X[1]) > 1e-9 {
		t.Errorf("max x s.t. x + y <= 4: got %v, want [4 0]", sol.X)
	}
	if err := s.SetObjective([]float64{1}); err == nil {
		t.Error("SetObjective accepted the wrong length")
	}
}

func TestInfeasible(t *testing.T) {
	s, err := New([]float64{1}, []float64{0}, []float64{1}, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AddRow([]float64{-1}, -2); err != nil { // x >= 2
		t.Fatal(err)
	}
	if _, err := s.Solve(t.Context()); !errors.Is(err, errInfeasible) {
		t.Errorf("Solve on an infeasible LP: err = %v, want ErrInfeasible", err)
	}
}

func TestAddRowDropsTinyCoefficientsConservatively(t *testing.T) {
	// max x + y with x + 1e-14·y <= 1, y in [0, 1e6]. The coefficient of y
	// is dropped (it is below 1e-9 of the row's largest); the most it can
	// contribute, 1e-8, must move to the bound. Dropping it without that,
	// as HiGHS does with entries below its small_matrix_value, returns
	// x = 1 and violates the original row by 1e-8.
	s, err := New([]float64{1, 1}, []float64{0, 0}, []float64{2, 1e6}, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AddRow([]float64{1, 1e-14}, 1); err != nil {
		t.Fatal(err)
	}
	sol, err := s.Solve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if lhs := sol.X[0] + 1e-14*sol.X[1]; lhs > 1+2e-9 {
		t.Errorf("x = %v, y = %v violate the original row: lhs %v > 1", sol.X[0], sol.X[1], lhs)
	}
	if sol.X[1] != 1e6 {
		t.Errorf("y = %v, want 1e6", sol.X[1])
	}
}

func TestBadInput(t *testing.T) {
	if _, err := New(nil, nil, nil, true, Options{}); err == nil {
		t.Error("New accepted an empty LP")
	}
	if _, err := New([]float64{math.NaN()}, []float64{0}, []float64{1}, true, Options{}); err == nil {
		t.Error("New accepted a NaN objective")
	}
	if _, err := New([]float64{1}, []float64{1}, []float64{0}, true, Options{}); err == nil {
		t.Error("New accepted lower > upper")
	}
	s, err := New([]float64{1}, []float64{0}, []float64{1}, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AddRow([]float64{1, 2}, 1); err == nil {
		t.Error("AddRow accepted a row of the wrong length")
	}
	if err := s.AddRow([]float64{math.Inf(1)}, 1); err == nil {
		t.Error("AddRow accepted an infinite coefficient")
	}
}

// TestDropRows removes rows from a solved LP and checks that the others,
// with their order, slack and duals, are what remains.
func TestDropRows(t *testing.T) {
	// maximise x + y, x, y in [0, 1], subject to x + 2y <= 1.5 (binds),
	// 2x + y <= 1.5 (binds), x + y <= 5 (slack).
	s, err := New([]float64{1, 1}, []float64{0, 0}, []float64{1, 1}, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AddRows([]Cut{{[]float64{1, 2}, 1.5}, {[]float64{2, 1}, 1.5}, {[]float64{1, 1}, 5}}); err != nil {
		t.Fatal(err)
	}
	sol, err := s.Solve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sol.Objective-1) > 1e-9 || len(sol.Slack) != 3 || len(sol.Dual) != 3 {
		t.Fatalf("objective %v, slack %v, dual %v", sol.Objective, sol.Slack, sol.Dual)
	}
	// Rows are stored scaled to a largest coefficient of 1.
	for i, want := range []float64{0, 0, 4} {
		if math.Abs(sol.Slack[i]-want) > 1e-9 {
			t.Errorf("slack of row %d = %v, want %v", i, sol.Slack[i], want)
		}
	}
	if sol.Dual[0] == 0 || sol.Dual[1] == 0 || sol.Dual[2] != 0 {
		t.Errorf("duals %v: want the two binding rows nonzero, the slack row zero", sol.Dual)
	}
	if err := s.DropRows(func(i int) bool { return i == 0 }); err != nil {
		t.Fatal(err)
	}
	if s.NumRows() != 2 {
		t.Fatalf("%d rows after dropping one of 3", s.NumRows())
	}
	sol, err = s.Solve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Without x + 2y <= 1.5: y = 1, x = 0.25 from 2x + y <= 1.5.
	if math.Abs(sol.X[0]-0.25) > 1e-9 || math.Abs(sol.X[1]-1) > 1e-9 || math.Abs(sol.Slack[1]-3.75) > 1e-9 {
		t.Errorf("after the drop: x = %v, slack %v", sol.X, sol.Slack)
	}
}

// TestBound checks Solution.Bound: near the optimum when HiGHS's duals are
// exact, on the far side of the optimum of the rows as given (not as
// stored, tiny coefficients dropped), and a bound for any duals at all.
func TestBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, maximize := range []bool{true, false} {
		const n = 12
		c := make([]float64, n)
		lower, upper := make([]float64, n), make([]float64, n)
		for j := range c {
			c[j] = rng.Float64()
			upper[j] = 1
			if !maximize {
				c[j] = -c[j]
			}
		}
		s, err := New(c, lower, upper, maximize, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var cuts []Cut
		for range 30 {
			a := make([]float64, n)
			for j := range a {
				a[j] = rng.Float64()
			}
			cuts = append(cuts, Cut{Coeffs: a, Upper: 1 + rng.Float64()})
		}
		if err := s.AddRows(cuts); err != nil {
			t.Fatal(err)
		}
		sol, err := s.Solve(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		sign := 1.0
		if !maximize {
			sign = -1
		}
		if d := sign * (sol.Bound - sol.Objective); d < 0 || d > 1e-9 {
			t.Errorf("maximize=%v: Bound %v, Objective %v: want Bound just past Objective", maximize, sol.Bound, sol.Objective)
		}
		// Weak duality holds for every dual vector of the right sign.
		for range 20 {
			y := make([]float64, len(cuts))
			for i := range y {
				y[i] = sign * rng.ExpFloat64() * float64(rng.IntN(2))
			}
			if b := s.dualBound(y); sign*(b-sol.Objective) < -1e-12 {
				t.Errorf("maximize=%v: bound %v from duals %v is on the wrong side of the optimum %v", maximize, b, y, sol.Objective)
			}
		}
	}

	// max x0 s.t. x0 + 5e-10·x1 <= 1, x0 <= 2: the stored row drops x1's
	// coefficient and tightens to x0 <= 1 - 5e-10, but the optimum of the
	// row as given is 1 (at x1 = 0), and Bound must not fall below it.
	s, err := New([]float64{1, 0}, []float64{0, 0}, []float64{2, 1}, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AddRow([]float64{1, 5e-10}, 1); err != nil {
		t.Fatal(err)
	}
	sol, err := s.Solve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if sol.Bound < 1 {
		t.Errorf("Bound %v (Objective %v): want at least 1, the optimum of the row as given", sol.Bound, sol.Objective)
	}
}

// denseLP returns a random LP with n dense rows over n columns, which the
// simplex method takes hundreds of iterations to solve.
func denseLP(t *testing.T, n int) *Solver {
	rng := rand.New(rand.NewPCG(5, 6))
	c, lower, upper := make([]float64, n), make([]float64, n), make([]float64, n)
	for j := range c {
		c[j], upper[j] = rng.Float64(), 1
	}
	s, err := New(c, lower, upper, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	cuts := make([]Cut, n)
	for i := range cuts {
		a := make([]float64, n)
		for j := range a {
			a[j] = rng.Float64()
		}
		cuts[i] = Cut{Coeffs: a, Upper: float64(n) / 10}
	}
	if err := s.AddRows(cuts); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSolveCancelled checks that a solve stops inside HiGHS once its
// context is done, with the context's error, and that the Solver then
// goes on from where it stopped. Whether it stopped early is judged by
// iterations, not time: the cancelled run must have made fewer simplex
// iterations than a whole solve of the same LP. The context is cancelled
// as the solve starts, and a whole solve takes hundreds of iterations
// (449 at n = 600, in about 0.3 s on a loaded 2-core machine), so only a
// goroutine kept from running for all that time could let the run finish
// first.
func TestSolveCancelled(t *testing.T) {
	n := 600
	if testing.Short() {
		// Under -short the same checks at a smaller size: n = 300, whose
		// whole solve takes 214 iterations (about 0.07 s), still hundreds.
		n = 300
	}
	whole := denseLP(t, n)
	want, err := whole.Solve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	wholeIters, err := whole.h.GetIntInfo("simplex_iteration_count")
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		start func(cancel context.CancelFunc) // cancels before or as the solve starts
	}{
		{"done before", func(cancel context.CancelFunc) { cancel() }},
		{"done during", func(cancel context.CancelFunc) { go cancel() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := denseLP(t, n)
			ctx, cancel := context.WithCancel(t.Context())
			tc.start(cancel)
			if _, err := s.Solve(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("Solve of a cancelled context: error %v, want context.Canceled", err)
			}
			iters, err := s.h.GetIntInfo("simplex_iteration_count")
			if err != nil {
				t.Fatal(err)
			}
			if iters >= wholeIters {
				t.Errorf("cancelled solve made %d simplex iterations, a whole solve %d: want fewer", iters, wholeIters)
			}
			got, err := s.Solve(t.Context())
			if err != nil {
				t.Fatalf("Solve after a cancelled one: %v", err)
			}
			if math.Abs(got.Objective-want.Objective) > 1e-9*math.Abs(want.Objective) {
				t.Errorf("objective after a cancelled solve %v, want %v", got.Objective, want.Objective)
			}
			t.Logf("cancelled after %d of %d iterations", iters, wholeIters)
		})
	}
}

// TestDropRowsKeepsBasis drops the rows that do not bind at an optimum:
// the next solve starts from the basis HiGHS kept and needs no simplex
// iteration, where a rebuilt LP would start from scratch.
func TestDropRowsKeepsBasis(t *testing.T) {
	const n, m = 30, 200
	rng := rand.New(rand.NewPCG(1, 2))
	c := make([]float64, n)
	lower, upper := make([]float64, n), make([]float64, n)
	for j := range c {
		c[j], upper[j] = 1+rng.Float64(), 1
	}
	s, err := New(c, lower, upper, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cuts := make([]Cut, m)
	for i := range cuts {
		row := make([]float64, n)
		for j := range row {
			row[j] = rng.Float64()
		}
		cuts[i] = Cut{Coeffs: row, Upper: 1 + 4*rng.Float64()}
	}
	if err := s.AddRows(cuts); err != nil {
		t.Fatal(err)
	}
	before, err := s.Solve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if iters, err := s.h.GetIntInfo("simplex_iteration_count"); err != nil || iters == 0 {
		t.Fatalf("first solve: %d simplex iterations, %v", iters, err)
	}
	idle := func(i int) bool { return before.Dual[i] == 0 && before.Slack[i] > 1e-6 }
	var kept int
	for i := range m {
		if !idle(i) {
			kept++
		}
	}
	if kept == m || kept == 0 {
		t.Fatalf("%d of %d rows bind: the test needs some of each", kept, m)
	}
	if err := s.DropRows(idle); err != nil {
		t.Fatal(err)
	}
	after, err := s.Solve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if iters, err := s.h.GetIntInfo("simplex_iteration_count"); err != nil || iters != 0 {
		t.Errorf("after dropping %d idle rows: %d simplex iterations (%v), want 0 from the kept basis", m-kept, iters, err)
	}
	if s.NumRows() != kept || math.Abs(after.Objective-before.Objective) > 1e-9*math.Abs(before.Objective) {
		t.Errorf("after the drop: %d rows, objective %v; want %d rows, objective %v", s.NumRows(), after.Objective, kept, before.Objective)
	}
}

// AddRow adds the one constraint coeffs·x <= upper (AddRows).
func (s *Solver) AddRow(coeffs []float64, upper float64) error {
	return s.AddRows([]Cut{{Coeffs: coeffs, Upper: upper}})
}
