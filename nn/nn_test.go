package nn

import (
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
		const h = 1e-6
		for i := 0; i < len(n.Params); i += 7 {
			p := n.Params[i]
			n.Params[i] = p + h
			up := loss()
			n.Params[i] = p - h
			down := loss()
			n.Params[i] = p
			fd := (up - down) / (2 * h)
			if math.Abs(fd-g[i]) > 1e-6*(1+math.Abs(fd)) {
				t.Errorf("y=%v param %d: gradient %v, finite difference %v", y, i, g[i], fd)
			}
		}
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
