package shuffleg

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// TestOptimumKKT checks x* against the optimality conditions of G: a zero
// gradient for ridge, the subgradient conditions |∇F_j + λ·sign(x_j)| = 0
// (x_j ≠ 0) and |∇F_j| <= λ (x_j = 0) for the lasso, and x* = proj(mean)
// for mean estimation.
func TestOptimumKKT(t *testing.T) {
	for _, tc := range []struct {
		task Task
		n, d int
	}{
		{ridgeRegression(0.1), 80, 6},
		{ridgeRegression(0.1), 20, 40}, // dual solve: n < d
		{lassoLogistic(0.02), 120, 8},
		{lassoLogistic(0.1), 120, 8},
		{Task{Loss: SquaredError, Reg: L1{Lambda: 0.05}}, 60, 5},
		{Task{Loss: Logistic, Reg: Ridge{Lambda: 0.1}}, 60, 5},
	} {
		p := newTestProblem(t, tc.task, tc.n, 10, tc.d, 7)
		opt := p.Optimum()
		g := make([]float64, tc.d)
		p.gradF(opt.X, g)
		for j, xj := range opt.X {
			var r float64
			switch reg := tc.task.Reg.(type) {
			case Ridge:
				r = math.Abs(g[j] + reg.Lambda*xj)
			case L1:
				if xj != 0 {
					r = math.Abs(g[j] + reg.Lambda*math.Copysign(1, xj))
				} else {
					r = math.Max(0, math.Abs(g[j])-reg.Lambda)
				}
			}
			if r > 1e-9 {
				t.Errorf("%v n=%d d=%d (%s): optimality residual %v at coordinate %d", tc.task, tc.n, tc.d, opt.Method, r, j)
			}
		}
		if math.Abs(opt.Value-p.objective(opt.X)) > 1e-15 {
			t.Errorf("%v: Optimum.Value %v != G(x*) %v", tc.task, opt.Value, p.objective(opt.X))
		}
	}
}

func TestOptimumMeanEstimation(t *testing.T) {
	s := &Dataset{D: 2, X: []float64{2, 0, 4, 0, 6, 0}} // mean (4, 0)
	for _, tc := range []struct {
		reg  Regularizer
		want []float64
	}{
		{Ball{Radius: 10}, []float64{4, 0}},
		{Ball{Radius: 1}, []float64{1, 0}},
		{Ridge{Lambda: 1}, []float64{2, 0}},
		{L1{Lambda: 1}, []float64{3, 0}},
	} {
		p, err := NewProblem(context.Background(), Task{Loss: SquaredDistance, Reg: tc.reg}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.Optimum().X, tc.want) {
			t.Errorf("%v: x* = %v, want %v", tc.reg, p.Optimum().X, tc.want)
		}
	}
}

// TestNewProblemCancelled: the iterative solve of the optimum stops when
// its context is done (up to 200,000 passes over the data otherwise).
func TestNewProblemCancelled(t *testing.T) {
	priv, pub := synthetic(t, Logistic, 60, 10, 7, 5)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewProblem(ctx, lassoLogistic(0.01), priv, pub); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v, want context.Canceled", err)
	}
}

// TestRidgeCholeskyMatchesFISTA cross-checks the two solvers.
func TestRidgeCholeskyMatchesFISTA(t *testing.T) {
	p := newTestProblem(t, ridgeRegression(0.1), 60, 10, 7, 5)
	opt, err := p.solveFISTA(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Optimum().Method, "Cholesky") {
		t.Fatalf("ridge solved by %q, want Cholesky", p.Optimum().Method)
	}
	if d := floats.Distance(opt.X, p.Optimum().X, math.Inf(1)); d > 1e-9 {
		t.Fatalf("FISTA and Cholesky differ by %v", d)
	}
}

// TestExcessNoCancellation puts x within 1e-7 of x* and compares excess
// with the exact quadratic form it must equal: for ridge, G(x) − G(x*) =
// (1/n)||A(x − x*)||² + (λ/2)||x − x*||²; for mean estimation with x* inside
// the ball, ½||x − x*||². The difference G(x) − G(x*) of the two objective
// values would lose all digits here.
func TestExcessNoCancellation(t *testing.T) {
	const h = 1e-7
	p := newTestProblem(t, ridgeRegression(0.1), 50, 10, 5, 8)
	x := slices.Clone(p.Optimum().X)
	v := []float64{1, -2, 0.5, 3, -1}
	floats.AddScaled(x, h, v)
	var want float64
	for i := range p.N() {
		a := floats.Dot(p.Private.Row(i), v) * h
		want += a * a
	}
	want = want/float64(p.N()) + 0.1/2*h*h*floats.Dot(v, v)
	if got := p.excess(x); !closeTo(got, want, 1e-6*want) || math.Abs(got-want) > 1e-6*want {
		t.Errorf("ridge Excess = %v, want %v", got, want)
	}

	pm := newTestProblem(t, meanEstimation(100), 50, 10, 5, 8)
	xm := slices.Clone(pm.Optimum().X)
	floats.AddScaled(xm, h, v)
	wantM := h * h * floats.Dot(v, v) / 2
	if got := pm.excess(xm); math.Abs(got-wantM) > 1e-6*wantM {
		t.Errorf("mean Excess = %v, want %v", got, wantM)
	}
}

// TestLogisticDiff compares the stable difference of logistic losses with
// its second-order Taylor expansion for close margins and with the plain
// difference for far ones.
func TestLogisticDiff(t *testing.T) {
	for _, z := range []float64{-30, -3, 0, 0.7, 25} {
		for _, y := range []float64{0, 1} {
			for _, d := range []float64{1e-9, -1e-9, 1e-6} {
				s := sigmoid(z)
				slope := s - y // σ(z) − y, with 1 − σ(z) = σ(−z) to keep its digits
				if y == 1 {
					slope = -sigmoid(-z)
				}
				want := d*slope + d*d*s*sigmoid(-z)/2
				got := Logistic.glmValueDiff(z+d, z, d, y)
				if math.Abs(got-want) > 1e-6*math.Abs(want)+1e-300 {
					t.Errorf("diff(z=%v, d=%v, y=%v) = %v, Taylor %v", z, d, y, got, want)
				}
			}
			for _, d := range []float64{-5, 3, 800} {
				got := Logistic.glmValueDiff(z+d, z, d, y)
				want := Logistic.glmValue(z+d, y) - Logistic.glmValue(z, y)
				if !closeTo(got, want, 1e-12) {
					t.Errorf("diff(z=%v, d=%v, y=%v) = %v, plain %v", z, d, y, got, want)
				}
			}
		}
	}
	if v := Logistic.glmValue(800, 0); !closeTo(v, 800, 1e-15) {
		t.Errorf("logistic loss at margin 800, y=0: %v, want 800", v)
	}
}

func TestNewProblemRejectsBadData(t *testing.T) {
	good := func() (*Dataset, *Dataset) {
		return &Dataset{D: 2, X: []float64{1, 2, 3, 4}, Y: []float64{0, 1}}, &Dataset{D: 2, X: []float64{1, 2}, Y: []float64{1}}
	}
	tests := map[string]struct {
		task   Task
		mod    func(priv, pub *Dataset) (*Dataset, *Dataset)
		substr string
	}{
		"dimension mismatch": {lassoLogistic(0.1), func(priv, pub *Dataset) (*Dataset, *Dataset) {
			return priv, &Dataset{D: 1, X: []float64{1, 2}, Y: []float64{0, 1}}
		}, "public dataset dimension d = 1, private d = 2"},
		"NaN feature": {lassoLogistic(0.1), func(priv, pub *Dataset) (*Dataset, *Dataset) {
			priv.X[3] = math.NaN()
			return priv, pub
		}, "sample 1 feature 1 = NaN"},
		"label 2": {lassoLogistic(0.1), func(priv, pub *Dataset) (*Dataset, *Dataset) {
			priv.Y[1] = 2
			return priv, pub
		}, "label 1 = 2"},
		"ragged": {lassoLogistic(0.1), func(priv, pub *Dataset) (*Dataset, *Dataset) {
			priv.X = priv.X[:3]
			return priv, pub
		}, "multiple of D"},
		"missing responses": {ridgeRegression(0.1), func(priv, pub *Dataset) (*Dataset, *Dataset) {
			priv.Y = nil
			return priv, pub
		}, "needs a response"},
		"negative lambda": {ridgeRegression(-1), func(priv, pub *Dataset) (*Dataset, *Dataset) { return priv, pub }, "lambda = -1"},
		"radius 0":        {meanEstimation(0), func(priv, pub *Dataset) (*Dataset, *Dataset) { return priv, pub }, "C = 0"},
	}
	for name, tc := range tests {
		priv, pub := tc.mod(good())
		_, err := NewProblem(context.Background(), tc.task, priv, pub)
		if err == nil || !strings.Contains(err.Error(), tc.substr) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.substr)
		}
	}
}
