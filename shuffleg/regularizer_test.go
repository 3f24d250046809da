package shuffleg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestProxClosedForms(t *testing.T) {
	tests := []struct {
		name string
		reg  Regularizer
		t    float64
		in   []float64
		want []float64
	}{
		{"ball inside", Ball{Radius: 10}, 3, []float64{3, 4}, []float64{3, 4}},
		{"ball outside", Ball{Radius: 1}, 3, []float64{3, 4}, []float64{0.6, 0.8}},
		{"ball on sphere", Ball{Radius: 5}, 1, []float64{3, 4}, []float64{3, 4}},
		{"ball zero", Ball{Radius: 1}, 1, []float64{0, 0}, []float64{0, 0}},
		{"ridge", Ridge{Lambda: 0.1}, 10, []float64{2, -4}, []float64{1, -2}},
		{"ridge t=0", Ridge{Lambda: 0.1}, 0, []float64{2, -4}, []float64{2, -4}},
		{"l1 threshold", L1{Lambda: 0.5}, 2, []float64{3, -0.5, 1, -1.5, 0}, []float64{2, 0, 0, -0.5, 0}},
		{"l1 t=0", L1{Lambda: 0.5}, 0, []float64{3, -0.5}, []float64{3, -0.5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := slices.Clone(tc.in)
			tc.reg.prox(x, tc.t)
			for j := range x {
				if !closeTo(x[j], tc.want[j], 1e-15) {
					t.Fatalf("prox(%v, %v) = %v, want %v", tc.in, tc.t, x, tc.want)
				}
			}
		})
	}
}

// TestProxIsArgmin checks each operator against its definition: the result
// minimises t·ψ(z) + ||z − y||²/2, so no random perturbation improves it.
func TestProxIsArgmin(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, reg := range []Regularizer{Ball{Radius: 1.5}, Ridge{Lambda: 0.7}, L1{Lambda: 0.3}} {
		for trial := range 200 {
			y := make([]float64, 5)
			for j := range y {
				y[j] = 2 * rng.NormFloat64()
			}
			tt := rng.Float64() * 3
			z := slices.Clone(y)
			reg.prox(z, tt)
			obj := func(v []float64) float64 {
				var d2 float64
				for j := range v {
					d2 += (v[j] - y[j]) * (v[j] - y[j])
				}
				return tt*reg.value(v) + d2/2
			}
			best := obj(z)
			for range 50 {
				w := slices.Clone(z)
				for j := range w {
					w[j] += 1e-3 * rng.NormFloat64()
				}
				if b, ok := reg.(Ball); ok {
					b.prox(w, 0) // stay feasible
				}
				if obj(w) < best-1e-12 {
					t.Fatalf("%v trial %d: prox(%v, %v) = %v is not a minimiser: %v beats it (%v < %v)", reg, trial, y, tt, z, w, obj(w), best)
				}
			}
		}
	}
}

func TestBallValue(t *testing.T) {
	b := Ball{Radius: 1}
	if v := b.value([]float64{0.6, 0.8}); v != 0 {
		t.Errorf("Value on the sphere = %v, want 0", v)
	}
	if v := b.value([]float64{1, 1}); !math.IsInf(v, 1) {
		t.Errorf("Value outside = %v, want +Inf", v)
	}
}
