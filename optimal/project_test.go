package optimal

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// checkKKT checks that x is the projection of target onto the halfspaces
// of pr: every one satisfied, and x - target a non-negative combination
// of the normals of those that bind (the KKT conditions, sufficient for
// this convex program).
func checkKKT(t *testing.T, pr *projector, target []float64) {
	t.Helper()
	for j := range pr.cons {
		if s := pr.cons[j].slack(pr.x); s < -1e-9 {
			t.Fatalf("constraint %d violated by %g", j, -s)
		}
	}
	res := make([]float64, pr.n)
	floats.SubTo(res, pr.x, target)
	for k, j := range pr.active {
		if pr.u[k] < 0 {
			t.Fatalf("multiplier %d = %g < 0", k, pr.u[k])
		}
		if s := pr.cons[j].slack(pr.x); math.Abs(s) > 1e-9 {
			t.Fatalf("active constraint %d has slack %g", j, s)
		}
		pr.cons[j].addScaledTo(res, -pr.u[k])
	}
	if r := floats.Norm(res, math.Inf(1)); r > 1e-9 {
		t.Fatalf("x - target - sum u_j a_j has norm %g", r)
	}
}

func TestProjectorKKT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + rng.IntN(30)
		target := make([]float64, n)
		for i := range target {
			target[i] = rng.NormFloat64()
		}
		pr := newProjector(target)
		for i := range n {
			pr.addBound(i, 1, -1)
			pr.addBound(i, -1, -1)
		}
		// Halfspaces through a common point inside the box, so the
		// polyhedron is not empty; some nearly parallel to another.
		inside := make([]float64, n)
		for i := range inside {
			inside[i] = rng.Float64() - 0.5
		}
		var last []float64
		for range 1 + rng.IntN(3*n) {
			a := make([]float64, n)
			for i := range a {
				a[i] = rng.NormFloat64()
			}
			if last != nil && rng.IntN(4) == 0 {
				for i := range a {
					a[i] = last[i] + 1e-6*a[i]
				}
			}
			last = a
			if err := pr.add(a, floats.Dot(a, inside)-rng.Float64()); err != nil {
				t.Fatal(err)
			}
			// Add constraints between solves half the time, as the
			// cutting-plane loop does.
			if rng.IntN(2) == 0 {
				if err := pr.solve(context.Background()); err != nil {
					t.Fatalf("trial %d: %v", trial, err)
				}
			}
		}
		if err := pr.solve(context.Background()); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		checkKKT(t, pr, target)
	}
}

func TestProjectorInfeasible(t *testing.T) {
	pr := newProjector([]float64{0, 0})
	pr.add([]float64{1, 0}, 1)
	pr.add([]float64{-1, 0}, 0)
	if err := pr.solve(context.Background()); err != errInfeasible {
		t.Errorf("x >= 1 and x <= 0: %v, want errInfeasible", err)
	}
}

// addScaledTo adds c·a to v.
func (h *halfspace) addScaledTo(v []float64, c float64) {
	if h.a == nil {
		for j, i := range h.idx {
			v[i] += c * h.val[j]
		}
		return
	}
	floats.AddScaled(v, c, h.a)
}
