package shuffleg

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveRun is Algorithm 3 written the direct way, allocating the gradient,
// the clipped gradient, the noise vector and the new iterate at every step.
// It draws its randomness in the same order as the engine, so the two must
// agree to rounding; BenchmarkEngine measures the engine against it.
func naiveRun(p *Problem, cfg Config, src *stream) []float64 {
	rng := rand.New(src)
	plan, err := NewPlan(cfg.Algorithm, p.N(), p.Public.Len(), cfg.Epochs, cfg.Fraction)
	if err != nil {
		panic(err)
	}
	n := p.N()
	x := make([]float64, p.Dim())
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	shuffle := func() { rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] }) }
	if cfg.Order == SO {
		shuffle()
	}
	step := func(s *Dataset, i int, sigma float64) {
		g := naiveGrad(p, s, i, x)
		var norm2 float64
		for _, v := range g {
			norm2 += v * v
		}
		scale := 1.0
		if norm := math.Sqrt(norm2); norm > cfg.Clip {
			scale = cfg.Clip / norm
		}
		clipped := make([]float64, len(g))
		for j, v := range g {
			clipped[j] = scale * v
		}
		noise := make([]float64, len(g))
		if sigma > 0 {
			for j := range noise {
				noise[j] = sigma * src.NormFloat64()
			}
		}
		next := make([]float64, len(x))
		for j := range x {
			next[j] = x[j] - cfg.LR*(clipped[j]+noise[j])
		}
		x = next
	}
	for k := range cfg.Epochs {
		spec := plan.epoch(k)
		if spec.priv > 0 && cfg.Order == RR {
			shuffle()
		}
		sigma := 0.0
		if spec.noisy {
			sigma = cfg.Sigma
		}
		for i := range spec.priv {
			step(p.Private, perm[i], sigma)
		}
		for j := range spec.pub {
			step(p.Public, j, sigma)
		}
		p.Task.Reg.prox(x, float64(spec.priv+spec.pub)*cfg.LR)
		_, _ = p.objective(x), p.excess(x)
	}
	return x
}

// TestEngineMatchesNaive checks the fused, allocation-free engine against
// the direct implementation, noise included, for every algorithm and task.
func TestEngineMatchesNaive(t *testing.T) {
	for _, task := range []Task{meanEstimation(2), ridgeRegression(0.1), lassoLogistic(0.05)} {
		p := newTestProblem(t, task, 40, 45, 6, 13)
		for _, a := range allAlgorithms() {
			for _, order := range []Order{IG, SO, RR} {
				cfg := Config{Algorithm: a, Order: order, Epochs: 4, Fraction: 0.5, LR: 0.02, Clip: 0.8, Sigma: 0.7}
				tr, err := Run(context.Background(), p, withKey(cfg, 3, 4))
				if err != nil {
					t.Fatal(err)
				}
				want := naiveRun(p, cfg, testStream(3, 4))
				for j := range want {
					if !closeTo(tr.X[j], want[j], 1e-12) {
						t.Fatalf("%v %v %v: x[%d] = %v, naive %v", task, a, order, j, tr.X[j], want[j])
					}
				}
			}
		}
	}
}

// benchProblem is the shape of the thesis' MNIST-69 panel: mean estimation
// with n = 1000 private and 1000 public samples of dimension 784.
func benchProblem(b *testing.B) *Problem {
	priv, pub := synthetic(b, SquaredDistance, 1000, 1000, 784, 1)
	p, err := NewProblem(context.Background(), meanEstimation(10), priv, pub)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkEngine times one epoch of each algorithm (5 epochs in all, the
// per-epoch cost of a panel) with the engine and with naiveRun in the same
// run; the ratio of their ns/op is the gain of the fused loop.
func BenchmarkEngine(b *testing.B) {
	p := benchProblem(b)
	cfgs := make([]Config, 0, 5)
	for _, a := range allAlgorithms() {
		cfgs = append(cfgs, Config{Algorithm: a, Order: RR, Epochs: 1, Fraction: 0.5, LR: 0.001, Clip: 10, Sigma: 5})
	}
	b.Run("fused", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, cfg := range cfgs {
				if _, err := Run(context.Background(), p, withKey(cfg, 1, 0)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("naive", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, cfg := range cfgs {
				naiveRun(p, cfg, newStream([32]byte{1}))
			}
		}
	})
}

// BenchmarkNormal times the Gaussian draws that dominate a noisy step:
// Stream's against math/rand/v2's NormFloat64 on ChaCha8.
func BenchmarkNormal(b *testing.B) {
	b.Run("stream", func(b *testing.B) {
		s := newStream([32]byte{1})
		var sum float64
		for b.Loop() {
			sum += s.NormFloat64()
		}
		_ = sum
	})
	b.Run("chacha8", func(b *testing.B) {
		r := rand.New(rand.NewChaCha8([32]byte{1}))
		var sum float64
		for b.Loop() {
			sum += r.NormFloat64()
		}
		_ = sum
	})
}

// BenchmarkPanel times one full panel of the thesis' shape (5 algorithms ×
// 10 runs × 50 epochs, mean estimation, n = 1000, d = 784, one learning
// rate) on one goroutine, with the engine and with naiveRun in the same run.
// One iteration takes tens of seconds: run it with -benchtime 1x.
func BenchmarkPanel(b *testing.B) {
	p := benchProblem(b)
	for _, impl := range []string{"fused", "naive"} {
		b.Run(impl, func(b *testing.B) {
			for b.Loop() {
				for _, a := range allAlgorithms() {
					cfg := Config{Algorithm: a, Order: RR, Epochs: 50, Fraction: 0.5, LR: 1e-4, Clip: 10, Sigma: 100}
					for r := range 10 {
						src := newStream([32]byte{byte(a), byte(r)})
						if impl == "fused" {
							if _, err := Run(context.Background(), p, withKey(cfg, byte(a), byte(r))); err != nil {
								b.Fatal(err)
							}
						} else {
							naiveRun(p, cfg, src)
						}
					}
				}
			}
		})
	}
}
