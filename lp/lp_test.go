package lp

import (
	"context"
	"errors"
	"math"
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
	sol, err := s.Solve()
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
	sol, err = s.Solve()
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
	sol, err := s.Solve()
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
	if _, err := s.Solve(); !errors.Is(err, ErrInfeasible) {
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
	sol, err := s.Solve()
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

// TestCuttingPlanesDisk maximises x + y over the unit disk, whose
// infinitely many tangent rows are known only to a separator.
func TestCuttingPlanesDisk(t *testing.T) {
	s, err := New([]float64{1, 1}, []float64{-2, -2}, []float64{2, 2}, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sep := func(_ context.Context, x []float64) ([]Cut, float64, error) {
		r := math.Hypot(x[0], x[1])
		viol := r - 1 // violation of the tangent row at x/|x|
		if viol <= 0 {
			return nil, viol, nil
		}
		return []Cut{{[]float64{x[0] / r, x[1] / r}, 1}}, viol, nil
	}
	var iters []int
	res, err := CuttingPlanes(context.Background(), s, sep, CuttingPlaneOptions{
		Tol:      1e-8,
		Progress: func(it, rows int, v float64) { iters = append(iters, it) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := math.Sqrt2
	if math.Abs(res.Objective-want) > 1e-7 {
		t.Errorf("objective %v, want %v", res.Objective, want)
	}
	if res.MaxViolation > 1e-8 {
		t.Errorf("max violation %v above tolerance", res.MaxViolation)
	}
	if len(iters) != res.Iterations || res.Rows != s.NumRows() {
		t.Errorf("progress saw %d iterations, result says %d", len(iters), res.Iterations)
	}
}

func TestCuttingPlanesStalls(t *testing.T) {
	s, err := New([]float64{1}, []float64{0}, []float64{1}, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sep := func(context.Context, []float64) ([]Cut, float64, error) { return nil, 0.5, nil }
	res, err := CuttingPlanes(context.Background(), s, sep, CuttingPlaneOptions{Tol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stalled {
		t.Error("a separator returning violations but no cuts did not stall the loop")
	}
}
