package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func image(r *rand.Rand) []float64 {
	x := make([]float64, Side*Side)
	for i := range x {
		x[i] = r.Float64()
	}
	return x
}

// TestGradFiniteDifferences compares every 7th parameter's gradient with
// a central difference of the loss.
func TestGradFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n, err := New(3, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n.Params {
		n.Params[i] += 0.05 * r.NormFloat64() // biases off zero, so ReLUs vary
	}
	ws := n.NewWorkspace()
	g := make([]float64, len(n.Params))
	for _, y := range []float64{0, 1} {
		x := image(r)
		n.Grad(x, y, g, ws)
		loss := func() float64 {
			l := n.Logit(x, ws)
			return softplus(l) - y*l
		}
		checkGradient(t, fmt.Sprintf("y=%v", y), n.Params, g, 7, loss)
	}
}

func TestNewRejectsNoFilters(t *testing.T) {
	if _, err := New(0, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("0 filters accepted")
	}
}

// BenchmarkGrad measures per-example gradients (forward and backward) of
// the network with 8 filters.
func BenchmarkGrad(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	n, _ := New(8, r)
	x := image(r)
	ws := n.NewWorkspace()
	g := make([]float64, len(n.Params))
	for b.Loop() {
		n.Grad(x, 1, g, ws)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "examples/s")
}

// TestGradClassesFiniteDifferences compares every 5th parameter's
// gradient of the cross-entropy with a central difference, for every
// label of a 4-class network.
func TestGradClassesFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n, err := NewClasses(3, 4, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n.Params {
		n.Params[i] += 0.05 * r.NormFloat64()
	}
	ws := n.NewWorkspace()
	g := make([]float64, len(n.Params))
	for y := range 4 {
		x := image(r)
		loss := n.Grad(x, float64(y), g, ws)
		ce := func() float64 {
			l := n.Logits(x, ws)
			var s float64
			for _, v := range l {
				s += math.Exp(v)
			}
			return math.Log(s) - l[y]
		}
		if want := ce(); math.Abs(loss-want) > 1e-12*(1+want) {
			t.Errorf("y=%d: loss %v, cross-entropy %v", y, loss, want)
		}
		checkGradient(t, fmt.Sprintf("y=%d", y), n.Params, g, 5, ce)
	}
}

// A 3-class network learns which third of the image is bright, and
// Predict returns the largest logit's class.
func TestClassesLearn(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sample := func() ([]float64, int) {
		c := r.IntN(3)
		x := make([]float64, Side*Side)
		for i := range x {
			x[i] = 0.2 * r.Float64()
			if (i%Side)*3/Side == c {
				x[i] += 0.8
			}
		}
		return x, c
	}
	n, _ := NewClasses(2, 3, r)
	ws := n.NewWorkspace()
	g := make([]float64, len(n.Params))
	for range 600 {
		x, y := sample()
		n.Grad(x, float64(y), g, ws)
		for i := range g {
			n.Params[i] -= 0.05 * g[i]
		}
	}
	right := 0
	for range 300 {
		x, y := sample()
		l := n.Logits(x, ws)
		best := 0
		for k := range l {
			if l[k] > l[best] {
				best = k
			}
		}
		if p := n.Predict(x, ws); int(p) != best {
			t.Fatalf("Predict %d, largest logit %d", p, best)
		}
		if best == y {
			right++
		}
	}
	if right < 285 {
		t.Errorf("%d of 300 right", right)
	}
	if _, err := NewClasses(2, 1, r); err == nil {
		t.Error("1 class accepted")
	}
	if NumParamsClasses(2, 3) != len(n.Params) {
		t.Error("NumParamsClasses")
	}
}

// BenchmarkGradClasses is a per-example gradient of the 10-class network
// with 8 filters.
func BenchmarkGradClasses(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	n, _ := NewClasses(8, 10, r)
	x := image(r)
	ws := n.NewWorkspace()
	g := make([]float64, len(n.Params))
	for b.Loop() {
		n.Grad(x, 3, g, ws)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "examples/s")
}

// checkGradient compares every step-th entry of the gradient g of loss
// at params with a central finite difference.
func checkGradient(t *testing.T, what string, params, g []float64, step int, loss func() float64) {
	t.Helper()
	const h = 1e-6
	for i := 0; i < len(params); i += step {
		p := params[i]
		params[i] = p + h
		up := loss()
		params[i] = p - h
		down := loss()
		params[i] = p
		fd := (up - down) / (2 * h)
		if math.Abs(fd-g[i]) > 1e-6*(1+math.Abs(fd)) {
			t.Errorf("%s param %d: gradient %v, finite difference %v", what, i, g[i], fd)
		}
	}
}
