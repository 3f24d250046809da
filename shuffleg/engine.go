package shuffleg

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"math"
	"math/rand/v2"
)

// Config holds the parameters of one run of Algorithm 3.
type Config struct {
	Algorithm Algorithm
	Order     Order
	Epochs    int     // K
	Fraction  float64 // p, the fraction of steps on private samples (Section 4.6.6)
	LR        float64 // η
	// Clip is the per-sample gradient norm bound G: every gradient is
	// scaled to norm at most Clip before the step (Section 4.7.4 uses 10).
	// +Inf disables clipping.
	Clip float64
	// Sigma is the noise standard deviation σ of the noisy steps: a step is
	// x ← x − η(∇f + ρ) with ρ ~ N(0, σ²I_d) (line 7 of Algorithm 3).
	Sigma float64
	// Key, when set, keys the run's randomness (the permutations and the
	// noise, from AES-256 in counter mode): the same key gives the same
	// run, for experiments. Unset, the key comes from crypto/rand, as a
	// private model needs.
	Key *[32]byte
}

// Trace is the result of one run: the objective G(·; D) on the private data
// at the start and after each epoch, its excess over G(x*; D), and the
// final iterate. After a divergence (a non-finite iterate), the remaining
// entries are +Inf.
type Trace struct {
	Loss   []float64 // K+1 values; Loss[k] is G(x_1^{(k+1)}; D)
	Excess []float64 // Loss − G(x*; D), computed without cancellation
	X      []float64 // x_1^{(K+1)}
}

// Diverged reports whether the run stopped on a non-finite iterate; the
// zero Trace, of no run, did not.
func (t *Trace) Diverged() bool { return len(t.Loss) > 0 && math.IsInf(t.Loss[len(t.Loss)-1], 1) }

// check validates the numeric parameters of cfg.
func (cfg Config) check() error {
	if !(cfg.LR > 0) || math.IsInf(cfg.LR, 0) {
		return fmt.Errorf("learning rate = %v: must be a finite number > 0", cfg.LR)
	}
	if !(cfg.Clip > 0) {
		return fmt.Errorf("clip = %v: must be > 0 (+Inf disables clipping)", cfg.Clip)
	}
	if !(cfg.Sigma >= 0) || math.IsInf(cfg.Sigma, 0) {
		return fmt.Errorf("sigma = %v: must be a finite number >= 0", cfg.Sigma)
	}
	if !orderNames.Named(cfg.Order) {
		return fmt.Errorf("order %v: must be rr, so or ig", cfg.Order)
	}
	return nil
}

// Run executes Algorithm 3 for cfg.Algorithm on p from x = 0, drawing the
// permutations and the Gaussian noise from the stream keyed by cfg.Key.
// It does not check the learning rate against the contraction bound: that
// is the caller's policy (see Plan.ContractionBound). It ends with ctx's
// error, at the end of an epoch, once ctx is done.
func Run(ctx context.Context, p *Problem, cfg Config) (*Trace, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	plan, err := NewPlan(cfg.Algorithm, p.N(), p.Public.Len(), cfg.Epochs, cfg.Fraction)
	if err != nil {
		return nil, err
	}
	var key [32]byte
	if cfg.Key != nil {
		key = *cfg.Key
	} else if _, err := crand.Read(key[:]); err != nil {
		return nil, fmt.Errorf("crypto/rand: %w", err)
	}
	e := newEngine(p, plan, cfg, newStream(key))
	return e.run(ctx)
}

// engine holds the state of one run; its buffers are allocated once so
// that the gradient steps allocate nothing.
type engine struct {
	p    *Problem
	plan Plan
	cfg  Config
	src  *stream    // the Gaussian noise
	rng  *rand.Rand // the permutations, drawn from src
	x    []float64
	perm []int
	// visit, when set (by tests), sees every sample index the run steps on.
	visit func(epoch int, private bool, i int)
}

func newEngine(p *Problem, plan Plan, cfg Config, src *stream) *engine {
	perm := make([]int, p.N())
	for i := range perm {
		perm[i] = i
	}
	return &engine{p: p, plan: plan, cfg: cfg, src: src, rng: rand.New(src), x: make([]float64, p.Dim()), perm: perm}
}

func (e *engine) run(ctx context.Context) (*Trace, error) {
	K := e.plan.Epochs
	tr := &Trace{Loss: make([]float64, K+1), Excess: make([]float64, K+1)}
	e.p.Task.Reg.prox(e.x, 0) // x_1^{(1)} = 0 projected on ψ's domain (a no-op for the thesis' ψ)
	tr.Loss[0], tr.Excess[0] = e.p.objective(e.x), e.p.excess(e.x)
	if e.cfg.Order == SO {
		e.shuffle()
	}
	for k := range K {
		// An epoch is n steps of d coordinates: a second at a million
		// samples of MNIST's dimension; its steps check too.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		spec := e.plan.epoch(k)
		if spec.priv > 0 && e.cfg.Order == RR {
			e.shuffle()
		}
		sigma := 0.0
		if spec.noisy {
			sigma = e.cfg.Sigma
		}
		for i := range spec.priv {
			// A step draws d Gaussians: at n·d = 6·10^7 an epoch is a
			// second or more, longer than SIGTERM may wait.
			if i%1024 == 1023 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			if e.visit != nil {
				e.visit(k, true, e.perm[i])
			}
			e.step(e.p.Private, e.p.privSq, e.perm[i], sigma)
		}
		for j := range spec.pub {
			if j%1024 == 1023 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			if e.visit != nil {
				e.visit(k, false, j)
			}
			e.step(e.p.Public, e.p.pubSq, j, sigma)
		}
		// Line 12 of Algorithm 3, with the epoch's number of steps in place
		// of n so that an epoch over a public set of another size weighs ψ
		// as the thesis does for n steps.
		e.p.Task.Reg.prox(e.x, float64(spec.priv+spec.pub)*e.cfg.LR)
		tr.Loss[k+1], tr.Excess[k+1] = e.p.objective(e.x), e.p.excess(e.x)
		if math.IsNaN(tr.Loss[k+1]) || math.IsInf(tr.Loss[k+1], 0) {
			for j := k + 1; j <= K; j++ {
				tr.Loss[j], tr.Excess[j] = math.Inf(1), math.Inf(1)
			}
			break
		}
	}
	tr.X = e.x
	return tr, nil
}

// shuffle draws a uniform permutation of the private samples in place.
func (e *engine) shuffle() {
	e.rng.Shuffle(len(e.perm), func(i, j int) { e.perm[i], e.perm[j] = e.perm[j], e.perm[i] })
}

// step takes one clipped, noisy gradient step x ← x − η(clip(∇f(x; q_i)) + ρ)
// on sample i of s (sq holds its squared feature norms), fusing gradient,
// clipping, noise and update into passes over x without allocation.
func (e *engine) step(s *Dataset, sq []float64, i int, sigma float64) {
	x, q := e.x, s.Row(i)
	eta, c := e.cfg.LR, e.cfg.Clip
	noise := eta * sigma
	if e.p.Task.Loss == SquaredDistance {
		// ∇f = x − q.
		var norm2 float64
		for j, qj := range q {
			d := x[j] - qj
			norm2 += d * d
		}
		scale := eta
		if norm2 > c*c {
			scale = eta * c / math.Sqrt(norm2)
		}
		if noise == 0 {
			for j, qj := range q {
				x[j] -= scale * (x[j] - qj)
			}
			return
		}
		for j, qj := range q {
			x[j] -= scale*(x[j]-qj) + noise*e.src.NormFloat64()
		}
		return
	}
	// GLM: ∇f = f'(⟨x, a⟩)·a, whose norm is |f'|·||a||.
	var z float64
	for j, aj := range q {
		z += x[j] * aj
	}
	slope := e.p.Task.Loss.glmSlope(z, s.Y[i])
	coef := eta * slope
	if g := math.Abs(slope) * math.Sqrt(sq[i]); g > c {
		coef *= c / g
	}
	if noise == 0 {
		for j, aj := range q {
			x[j] -= coef * aj
		}
		return
	}
	for j, aj := range q {
		x[j] -= coef*aj + noise*e.src.NormFloat64()
	}
}
