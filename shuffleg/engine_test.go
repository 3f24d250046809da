package shuffleg

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// TestClipBound checks that a noiseless step moves x by η·min(||∇f||, G):
// clipping bounds the step and leaves small gradients alone.
func TestClipBound(t *testing.T) {
	for _, task := range []Task{meanEstimation(100), ridgeRegression(0.1), lassoLogistic(0.1)} {
		p := newTestProblem(t, task, 40, 40, 6, 3)
		for _, clip := range []float64{0.01, 0.5, 1e6} {
			cfg := Config{Algorithm: DPShuffleG, Order: IG, Epochs: 1, Fraction: 1, LR: 0.05, Clip: clip}
			plan, err := NewPlan(DPShuffleG, p.N(), p.Public.Len(), 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			e := newEngine(p, plan, cfg, testStream(1, 1))
			rng := rand.New(rand.NewPCG(5, 5))
			for i := range p.N() {
				for j := range e.x {
					e.x[j] = 3 * rng.NormFloat64()
				}
				before := slices.Clone(e.x)
				grad := naiveGrad(p, p.Private, i, before)
				e.step(p.Private, p.privSq, i, 0)
				moved := floats.Distance(e.x, before, 2) / cfg.LR
				want := math.Min(floats.Norm(grad, 2), clip)
				if !closeTo(moved, want, 1e-12) {
					t.Fatalf("%v clip %v sample %d: step/η = %v, want min(||∇f|| = %v, G) = %v", task, clip, i, moved, floats.Norm(grad, 2), want)
				}
			}
		}
	}
}

// TestSigmaZeroIsShuffledGD checks that DP-ShuffleG with σ = 0 and no
// clipping is plain shuffled gradient descent (Algorithm 2) with the
// regulariser's prox at the end of each epoch, written here directly.
func TestSigmaZeroIsShuffledGD(t *testing.T) {
	for _, task := range []Task{meanEstimation(1.5), ridgeRegression(0.1), lassoLogistic(0.05)} {
		for _, order := range []Order{IG, SO, RR} {
			p := newTestProblem(t, task, 30, 30, 5, 9)
			const K, eta = 7, 0.03
			cfg := Config{Algorithm: DPShuffleG, Order: order, Epochs: K, Fraction: 1, LR: eta, Clip: math.Inf(1)}
			tr, err := Run(context.Background(), p, withKey(cfg, 11, 12))
			if err != nil {
				t.Fatal(err)
			}

			rng := rand.New(testStream(11, 12))
			n := p.N()
			x := make([]float64, p.Dim())
			pi := make([]int, n)
			for i := range pi {
				pi[i] = i
			}
			shuffle := func() { rng.Shuffle(n, func(i, j int) { pi[i], pi[j] = pi[j], pi[i] }) }
			if order == SO {
				shuffle()
			}
			for k := range K {
				if order == RR {
					shuffle()
				}
				for _, i := range pi {
					g := naiveGrad(p, p.Private, i, x)
					for j := range x {
						x[j] -= eta * g[j]
					}
				}
				task.Reg.prox(x, float64(n)*eta)
				if got, want := tr.Loss[k+1], p.objective(x); !closeTo(got, want, 1e-12) {
					t.Fatalf("%v %v epoch %d: loss %v, plain shuffled GD %v", task, order, k+1, got, want)
				}
			}
			for j := range x {
				if !closeTo(tr.X[j], x[j], 1e-12) {
					t.Fatalf("%v %v: final x[%d] = %v, plain shuffled GD %v", task, order, j, tr.X[j], x[j])
				}
			}
		}
	}
}

// naiveGrad returns ∇f(x; s_i) computed from the loss definitions.
func naiveGrad(p *Problem, s *Dataset, i int, x []float64) []float64 {
	q := s.Row(i)
	g := make([]float64, len(x))
	switch p.Task.Loss {
	case SquaredDistance:
		floats.SubTo(g, x, q)
	case SquaredError:
		floats.AddScaled(g, 2*(floats.Dot(x, q)-s.Y[i]), q)
	case Logistic:
		floats.AddScaled(g, 1/(1+math.Exp(-floats.Dot(x, q)))-s.Y[i], q)
	}
	return g
}

// TestOrdersVisitEverySampleOnce checks the sample orders of Algorithm 2
// and the schedules of Table 4.1: every private epoch visits each private
// sample exactly once (n_d distinct ones for Interleaved), IG in stored
// order, SO in one fixed permutation, RR in a fresh one; public steps visit
// public samples 0, 1, ... in order.
func TestOrdersVisitEverySampleOnce(t *testing.T) {
	const n, m, K = 50, 60, 6
	p := newTestProblem(t, meanEstimation(10), n, m, 3, 4)
	for _, a := range allAlgorithms() {
		for _, order := range []Order{IG, SO, RR} {
			cfg := Config{Algorithm: a, Order: order, Epochs: K, Fraction: 0.5, LR: 0.1, Clip: 10, Sigma: 0.1}
			plan, err := NewPlan(a, n, m, K, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			e := newEngine(p, plan, cfg, testStream(2, 3))
			priv, pub := make([][]int, K), make([][]int, K)
			e.visit = func(k int, private bool, i int) {
				if private {
					priv[k] = append(priv[k], i)
				} else {
					pub[k] = append(pub[k], i)
				}
			}
			e.run(context.Background())
			var first []int
			var privEpochs int
			for k := range K {
				spec := plan.epoch(k)
				if len(priv[k]) != spec.priv || len(pub[k]) != spec.pub {
					t.Fatalf("%v %v epoch %d: %d private and %d public steps, want %d and %d", a, order, k, len(priv[k]), len(pub[k]), spec.priv, spec.pub)
				}
				for j, i := range pub[k] {
					if i != j {
						t.Fatalf("%v %v epoch %d: public step %d used sample %d, want %d", a, order, k, j, i, j)
					}
				}
				if spec.priv == 0 {
					continue
				}
				privEpochs++
				seen := map[int]bool{}
				for _, i := range priv[k] {
					if seen[i] || i < 0 || i >= n {
						t.Fatalf("%v %v epoch %d: private sample %d visited twice or out of range", a, order, k, i)
					}
					seen[i] = true
				}
				switch order {
				case IG:
					for j, i := range priv[k] {
						if i != j {
							t.Fatalf("%v IG epoch %d: step %d used sample %d, want %d", a, k, j, i, j)
						}
					}
				case SO:
					if first != nil && !slices.Equal(first, priv[k]) {
						t.Fatalf("%v SO epoch %d: order changed", a, k)
					}
				case RR:
					if first != nil && slices.Equal(first, priv[k]) {
						t.Fatalf("%v RR epoch %d: same order as the first private epoch", a, k)
					}
				}
				if first == nil {
					first = priv[k]
				}
			}
			if privEpochs != plan.PrivEpochs {
				t.Fatalf("%v: %d private epochs, plan says %d", a, privEpochs, plan.PrivEpochs)
			}
		}
	}
}

// TestStepArithmeticRevealsOrder runs one noiseless IG epoch of mean
// estimation on the unit vectors q_i = e_i: x ← (1−η)x + ηq_i leaves
// x_i = η(1−η)^{n−1−pos(i)}, so the result shows that each sample entered
// the arithmetic exactly once, at its IG position.
func TestStepArithmeticRevealsOrder(t *testing.T) {
	const n, eta = 8, 0.5
	s := &Dataset{D: n, X: make([]float64, n*n)}
	for i := range n {
		s.X[i*n+i] = 1
	}
	p, err := NewProblem(context.Background(), meanEstimation(100), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Run(context.Background(), p, withKey(Config{Algorithm: DPShuffleG, Order: IG, Epochs: 1, Fraction: 1, LR: eta, Clip: math.Inf(1)}, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range tr.X {
		if want := eta * math.Pow(1-eta, float64(n-1-i)); v != want {
			t.Fatalf("x[%d] = %v, want η(1−η)^%d = %v", i, v, n-1-i, want)
		}
	}
}

func TestPlan(t *testing.T) {
	tests := []struct {
		a              Algorithm
		n, m, K        int
		p              float64
		privEpochs, nd int
		amp            int
		wantErr        bool
	}{
		{DPShuffleG, 1000, 1000, 50, 0.5, 50, 1000, 1, false},
		{PrivPub, 1000, 1000, 50, 0.5, 25, 1000, 1, false},
		{PubPriv, 1000, 1000, 50, 0.5, 25, 1000, 1, false},
		{Interleaved, 1000, 1000, 50, 0.5, 50, 500, 501, false},
		{Interleaved, 1000, 978, 50, 0.25, 50, 250, 751, false},
		{PublicOnly, 1000, 978, 50, 0.5, 0, 0, 1, false},
		{PrivPub, 1000, 1000, 50, 1, 50, 1000, 1, false},
		{Interleaved, 10, 10, 5, 1, 5, 10, 1, false},
		{PrivPub, 10, 10, 50, 0.005, 0, 0, 0, true},
		{Interleaved, 1000, 100, 50, 0.5, 0, 0, 0, true},
		{PublicOnly, 1000, 0, 50, 0.5, 0, 0, 0, true},
		{DPShuffleG, 10, 0, 5, 0, 0, 0, 0, true},
		{DPShuffleG, 10, 0, 5, 1.5, 0, 0, 0, true},
		{DPShuffleG, 10, 0, 5, math.NaN(), 0, 0, 0, true},
		{DPShuffleG, 10, 0, 0, 0.5, 0, 0, 0, true},
	}
	for _, tc := range tests {
		pl, err := NewPlan(tc.a, tc.n, tc.m, tc.K, tc.p)
		if tc.wantErr {
			if err == nil {
				t.Errorf("NewPlan(%v, n=%d, m=%d, K=%d, p=%v): no error", tc.a, tc.n, tc.m, tc.K, tc.p)
			}
			continue
		}
		if err != nil {
			t.Errorf("NewPlan(%v, n=%d, m=%d, K=%d, p=%v): %v", tc.a, tc.n, tc.m, tc.K, tc.p, err)
			continue
		}
		if pl.PrivEpochs != tc.privEpochs || pl.ND != tc.nd || pl.amplification() != tc.amp {
			t.Errorf("NewPlan(%v, p=%v): private epochs %d, n_d %d, amplification %d; want %d, %d, %d", tc.a, tc.p, pl.PrivEpochs, pl.ND, pl.amplification(), tc.privEpochs, tc.nd, tc.amp)
		}
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	p := newTestProblem(t, meanEstimation(10), 10, 10, 2, 1)
	good := Config{Algorithm: DPShuffleG, Order: RR, Epochs: 2, Fraction: 0.5, LR: 0.1, Clip: 10, Sigma: 1}
	for name, mod := range map[string]func(*Config){
		"lr NaN":    func(c *Config) { c.LR = math.NaN() },
		"lr 0":      func(c *Config) { c.LR = 0 },
		"lr Inf":    func(c *Config) { c.LR = math.Inf(1) },
		"clip 0":    func(c *Config) { c.Clip = 0 },
		"sigma -1":  func(c *Config) { c.Sigma = -1 },
		"sigma Inf": func(c *Config) { c.Sigma = math.Inf(1) },
		"order":     func(c *Config) { c.Order = 0 },
		"algorithm": func(c *Config) { c.Algorithm = 0 },
		"epochs":    func(c *Config) { c.Epochs = 0 },
	} {
		cfg := good
		mod(&cfg)
		if _, err := Run(context.Background(), p, withKey(cfg, 1, 1)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Run(context.Background(), p, withKey(good, 1, 1)); err != nil {
		t.Errorf("good config: %v", err)
	}
}

// TestDivergenceIsMarked runs ridge regression with a learning rate far
// above 2/L: the iterate overflows and the trace records +Inf from then on.
func TestDivergenceIsMarked(t *testing.T) {
	p := newTestProblem(t, ridgeRegression(0.1), 20, 20, 4, 2)
	tr, err := Run(context.Background(), p, withKey(Config{Algorithm: DPShuffleG, Order: IG, Epochs: 200, Fraction: 1, LR: 1e3, Clip: math.Inf(1)}, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Diverged() {
		t.Fatalf("run with η = 1000 did not diverge: final loss %v", tr.Loss[len(tr.Loss)-1])
	}
}

// TestZeroTraceNotDiverged checks that the zero Trace, of no run, did not
// diverge, where Diverged indexed its last loss.
func TestZeroTraceNotDiverged(t *testing.T) {
	if (&Trace{}).Diverged() {
		t.Error("the zero Trace diverged")
	}
}

// TestOrderText: each sample order reads back from its text.
func TestOrderText(t *testing.T) {
	for _, o := range []Order{RR, SO, IG} {
		b, _ := o.MarshalText()
		var got Order
		if err := got.UnmarshalText(b); err != nil || got != o {
			t.Errorf("%v: %q reads back as %v (%v)", o, b, got, err)
		}
	}
	var o Order
	if err := o.UnmarshalText([]byte("xx")); err == nil || o != 0 {
		t.Errorf("xx: %v, order %v", err, o)
	}
	if err := o.UnmarshalText([]byte("So")); err != nil || o != SO {
		t.Errorf("So: %v, order %v", err, o)
	}
	if err := o.UnmarshalText([]byte("xx")); err == nil || err.Error() != `order "xx": must be one of rr, so, ig` || o != SO {
		t.Errorf("xx: %v, order %v (want so kept)", err, o)
	}
}

// TestAlgorithmText: each algorithm reads back from its text, in any case,
// and "dp" is DP-ShuffleG.
func TestAlgorithmText(t *testing.T) {
	for _, a := range []Algorithm{DPShuffleG, PrivPub, PubPriv, Interleaved, PublicOnly} {
		b, _ := a.MarshalText()
		var got Algorithm
		if err := got.UnmarshalText(b); err != nil || got != a {
			t.Errorf("%v: %q reads back as %v (%v)", a, b, got, err)
		}
		if err := got.UnmarshalText([]byte(strings.ToUpper(string(b)))); err != nil || got != a {
			t.Errorf("%v: %q in capitals reads as %v (%v)", a, b, got, err)
		}
	}
	var a Algorithm
	if err := a.UnmarshalText([]byte("DP")); err != nil || a != DPShuffleG {
		t.Errorf("DP: %v, %v", a, err)
	}
	if err := a.UnmarshalText([]byte("adam")); err == nil || err.Error() != `algorithm "adam": must be one of dp-shuffleg, priv-pub, pub-priv, interleaved, public-only` {
		t.Errorf("adam: %v", err)
	}
	if Algorithm(0).String() != "Algorithm(0)" || Order(0).String() != "Order(0)" {
		t.Errorf("zero values print as %v and %v", Algorithm(0), Order(0))
	}
}
