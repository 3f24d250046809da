package accountant

import (
	"math"
	"math/big"
	"testing"

	"github.com/darrm/darrm/internal/outward"
)

func relErr(got, want float64) float64 {
	return math.Abs(got-want) / math.Max(math.Abs(want), 1e-300)
}

// TestCompositionOrder checks ε_optimal <= ε_general <= ε_simple on a grid of
// (ε, δ, k, δ'), and that General and Optimal report the same total δ. At
// large ε the optimum is within optimalMargin of kε, and the margin raised
// it above simple composition's.
func TestCompositionOrder(t *testing.T) {
	for _, eps := range []float64{1e-3, 0.01, 0.1, 0.5, 1, 3, 2e7, 1e300} {
		for _, delta := range []float64{0, 1e-6, 1e-3} {
			for _, k := range []int{1, 2, 3, 7, 10, 35, 100, 1000, 10000} {
				for _, dp := range []float64{1e-9, 1e-5, 1e-2, 0.5} {
					step := Guarantee{eps, delta}
					s, err := composeSimple(step, k)
					if err != nil {
						t.Fatal(err)
					}
					g, err := composeGeneral(step, k, dp)
					if err != nil {
						t.Fatal(err)
					}
					o, err := composeOptimal(step, k, dp)
					if err != nil {
						t.Fatal(err)
					}
					if !(o.Eps <= g.Eps && g.Eps <= s.Eps) || o.Eps < 0 {
						t.Errorf("eps=%v delta=%v k=%d delta'=%v: optimal %v, general %v, simple %v", eps, delta, k, dp, o.Eps, g.Eps, s.Eps)
					}
					if o.Delta != g.Delta {
						t.Errorf("eps=%v delta=%v k=%d delta'=%v: optimal delta %v != general delta %v", eps, delta, k, dp, o.Delta, g.Delta)
					}
				}
			}
		}
	}
}

// bigDeltaTilde evaluates δ̃(u) = Σ_{l: (k-2l)ε > u} C(k,l)(x^{k-l} - e^u·x^l)/(1+x)^k
// with x = e^ε (the float64 value, taken as exact) in 512-bit arithmetic.
func bigDeltaTilde(eps float64, k int, u float64) *big.Float {
	const prec = 512
	nf := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	x := nf(math.Exp(eps))
	y := nf(math.Exp(u))
	pow := func(b *big.Float, n int) *big.Float {
		r := nf(1)
		for range n {
			r.Mul(r, b)
		}
		return r
	}
	// powers x^0..x^k
	xs := make([]*big.Float, k+1)
	xs[0] = nf(1)
	for i := 1; i <= k; i++ {
		xs[i] = new(big.Float).SetPrec(prec).Mul(xs[i-1], x)
	}
	sum := nf(0)
	binom := big.NewInt(1) // C(k, l)
	for l := 0; l <= k; l++ {
		if l > 0 {
			binom.Mul(binom, big.NewInt(int64(k-l+1)))
			binom.Quo(binom, big.NewInt(int64(l)))
		}
		if !(float64(k-2*l)*eps > u) {
			continue
		}
		c := new(big.Float).SetPrec(prec).SetInt(binom)
		term := new(big.Float).SetPrec(prec).Mul(y, xs[l])
		term.Sub(xs[k-l], term)
		term.Mul(term, c)
		sum.Add(sum, term)
	}
	return sum.Quo(sum, pow(new(big.Float).SetPrec(prec).Add(nf(1), x), k))
}

// bigOptimalEps solves δ̃(u) = δ' by bisection on u over direct 512-bit
// evaluations: an independent check of the closed-form segment solution.
func bigOptimalEps(eps float64, k int, deltaPrime float64) float64 {
	target := big.NewFloat(deltaPrime)
	if bigDeltaTilde(eps, k, 0).Cmp(target) <= 0 {
		return 0
	}
	lo, hi := 0.0, float64(k)*eps // δ̃(lo) > δ' >= δ̃(hi) = 0
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if bigDeltaTilde(eps, k, mid).Cmp(target) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// TestOptimalAgainstBig compares composeOptimal with a bisection over direct
// 512-bit evaluations of Kairouz et al.'s sum, for small k.
func TestOptimalAgainstBig(t *testing.T) {
	worst := 0.0
	defer func() { t.Logf("largest |optimal - big| / max(1, big) = %.2g", worst) }()
	for _, eps := range []float64{0.01, 0.1, 0.7, 2} {
		for _, k := range []int{1, 2, 3, 4, 5, 10, 17, 40} {
			for _, dp := range []float64{1e-8, 1e-4, 0.05, 0.3} {
				got, err := composeOptimal(Guarantee{eps, 0}, k, dp)
				if err != nil {
					t.Fatal(err)
				}
				want := bigOptimalEps(eps, k, dp)
				worst = math.Max(worst, math.Abs(got.Eps-want)/math.Max(1, want))
				if math.Abs(got.Eps-want) > 1e-12*math.Max(1, want) {
					t.Errorf("eps=%v k=%d delta'=%v: optimal %.17g, big reference %.17g", eps, k, dp, got.Eps, want)
				}
			}
		}
	}
}

func TestComposeSeq(t *testing.T) {
	step := Guarantee{0.3, 1e-6}
	steps := []Guarantee{step, step, step, step, step, step, step}
	hom, err := composeGeneral(step, len(steps), 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := generalSeq(steps, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	if relErr(seq.Eps, hom.Eps) > 1e-14 || relErr(seq.Delta, hom.Delta) > 1e-14 {
		t.Errorf("identical sequence %v != homogeneous %v", seq, hom)
	}
	one, err := Sequence{}.Add(step, len(steps))
	if run := one.general(1e-3); err != nil || run != hom {
		t.Errorf("one run of %d steps %v (%v) != homogeneous %v", len(steps), run, err, hom)
	}

	mixed := []Guarantee{{0.1, 1e-6}, {0.5, 0}, {0.05, 1e-5}, {1, 1e-7}}
	s, err := simpleSeq(mixed)
	if err != nil {
		t.Fatal(err)
	}
	if relErr(s.Eps, 1.65) > 1e-15 || relErr(s.Delta, 1.11e-5) > 1e-12 {
		t.Errorf("simple sequence = %v, want (1.65, 1.11e-5)", s)
	}
	g, err := generalSeq(mixed, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	wantDelta := 1 - (1-1e-6)*(1-0)*(1-1e-5)*(1-1e-7)*(1-1e-6) // steps, then delta'
	if g.Eps > s.Eps || relErr(g.Delta, wantDelta) > 1e-9 {
		t.Errorf("general sequence = %v, simple %v, want delta %v", g, s, wantDelta)
	}
}

func TestComposeDispatch(t *testing.T) {
	step := Guarantee{0.2, 1e-5}
	for _, m := range []Method{Simple, General, Optimal} {
		got, err := Composition{Method: m, DeltaPrime: 1e-4}.Compose(step, 12)
		if err != nil {
			t.Fatal(err)
		}
		var want Guarantee
		switch m {
		case Simple:
			want, _ = composeSimple(step, 12)
		case General:
			want, _ = composeGeneral(step, 12, 1e-4)
		case Optimal:
			want, _ = composeOptimal(step, 12, 1e-4)
		}
		if got != want {
			t.Errorf("Compose(%v) = %v, want %v", m, got, want)
		}
	}
	if _, err := (Composition{Method: Method(7), DeltaPrime: 1e-4}).Compose(step, 12); err == nil {
		t.Error("Compose with an unknown method: no error")
	}
}

// TestLargeKStability checks that optimal composition stays finite, ordered
// and monotone in ε at k = 10,000 and beyond, where direct sums over-/underflow.
func TestLargeKStability(t *testing.T) {
	for _, k := range []int{10000, 1 << 20, maxOptimalSteps} {
		prev := 0.0
		for _, eps := range []float64{1e-4, 1e-3, 0.01, 0.1, 1, 5} {
			o, err := composeOptimal(Guarantee{eps, 0}, k, 1e-6)
			if err != nil {
				t.Fatal(err)
			}
			g, _ := composeGeneral(Guarantee{eps, 0}, k, 1e-6)
			if math.IsNaN(o.Eps) || math.IsInf(o.Eps, 0) || o.Eps > g.Eps || o.Eps <= prev {
				t.Errorf("k=%d eps=%v: optimal %v (general %v, previous %v)", k, eps, o.Eps, g.Eps, prev)
			}
			prev = o.Eps
		}
	}
}

// TestComposeGeneralTinyEps checks that general composition bounds the
// optimal one where kε² underflows (ε below about 1e-154): Σε² was taken
// as 0, so the total ε was 0 and StepEps returned a step ε far above its
// total (1.57e-162 for a total of 1e-170 over one step at δ' = 1e-300).
func TestComposeGeneralTinyEps(t *testing.T) {
	for _, c := range []struct {
		eps float64
		k   int
		dp  float64
	}{
		{1e-170, 1, 1e-300},
		{1e-300, 1, 1e-300},
		{1e-162, 1, 1e-300},
		{1e-160, 1, 1e-300},
		{1e-170, 1000, 1e-300},
		{1e-200, 1, 1e-5},
	} {
		step := Guarantee{Eps: c.eps}
		g, err := composeGeneral(step, c.k, c.dp)
		if err != nil {
			t.Fatal(err)
		}
		o, err := composeOptimal(step, c.k, c.dp)
		if err != nil {
			t.Fatal(err)
		}
		// optimal is raised by its margin (optimalMargin ulps) above kε
		// where the bound is kε, as at k = 1.
		if !(g.Eps > 0) || g.Eps < o.Eps*(1-0x1p-38) || g.Eps > outward.MulUp(float64(c.k), c.eps) {
			t.Errorf("eps=%g k=%d delta'=%g: general %g, optimal %g: want general in (0, k·eps] and not below optimal", c.eps, c.k, c.dp, g.Eps, o.Eps)
		}
		comp := Composition{Method: General, DeltaPrime: c.dp}
		s, err := comp.StepEps(c.eps, 0, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if tot, err := comp.Compose(Guarantee{Eps: s}, c.k); err != nil || tot.Eps > c.eps || s > c.eps {
			t.Errorf("eps=%g k=%d delta'=%g: StepEps = %g, whose total is %g (%v): want both <= %g", c.eps, c.k, c.dp, s, tot.Eps, err, c.eps)
		}
	}
}

// TestGeneralEpsSubnormal: general composition's square-root terms of
// tiny steps are at least the theorem's, computed in 200-bit arithmetic:
// below the normal range the products under the root lost their digits
// (5.4e-323 for one step of 1e-161 at delta' = 0.99, where the term is
// 1.4e-162), below the formula, and no longer an upper bound of it.
func TestGeneralEpsSubnormal(t *testing.T) {
	for _, c := range []struct {
		eps   float64
		k     int
		dp    float64
		tight bool // within 1e-6 of the theorem: Σε² keeps its digits
	}{{1e-161, 1, 0.99, true}, {1e-161, 1, 0.9, true}, {1e-158, 3, 0.5, true}, {1e-100, 1, 0.99, true},
		// kε² = 1e-337 is rounded up to the least subnormal: the total is
		// kε, an upper bound, far above the theorem's.
		{1e-170, 1000, 0.999, false}} {
		g, err := composeGeneral(Guarantee{Eps: c.eps}, c.k, c.dp)
		if err != nil {
			t.Fatal(err)
		}
		// a + ε·sqrt(2k·log(1/δ')), the third term, above which the
		// minimum may not be, and the second, at most it.
		prec := uint(200)
		bf := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
		eps, k := bf(c.eps), bf(float64(c.k))
		root := func(log float64) *big.Float {
			r := new(big.Float).SetPrec(prec).Mul(bf(2), k)
			r.Mul(r, bf(log))
			r.Sqrt(r)
			return r.Mul(r, eps)
		}
		ke := new(big.Float).SetPrec(prec).Mul(k, eps)
		// a = kε·tanh(ε/2) is below kε² and far below the root here.
		t3, _ := root(-math.Log(c.dp)).Float64()
		t2, _ := root(math.Log(math.E + math.Sqrt(float64(c.k))*c.eps/c.dp)).Float64()
		sum, _ := ke.Float64()
		want := math.Min(sum, math.Min(t2, t3))
		if !(g.Eps >= want) || g.Eps > sum || c.tight && g.Eps > want*(1+1e-6) {
			t.Errorf("eps=%g k=%d delta'=%g: general %g, the theorem's %g", c.eps, c.k, c.dp, g.Eps, want)
		}
	}
}

// TestGeneralMixedTinySteps: general composition of a mixed sequence of
// steps whose squares fall below the normal range is at least the
// theorem's, min(Σε, sqrt(2·Σε²·log(1/δ'))) with Σε² in 200-bit
// arithmetic: their sum of squares was 0, and the total about 0.
func TestGeneralMixedTinySteps(t *testing.T) {
	var s Sequence
	var err error
	steps := []float64{1e-170, 2e-170, 3e-170}
	sq := new(big.Float).SetPrec(200)
	for _, e := range steps {
		if s, err = s.Add(Guarantee{Eps: e}, 1); err != nil {
			t.Fatal(err)
		}
		b := new(big.Float).SetPrec(200).SetFloat64(e)
		sq.Add(sq, b.Mul(b, b))
	}
	const dp = 1e-5
	root := new(big.Float).SetPrec(200).Mul(sq, big.NewFloat(-2*math.Log(dp)))
	r, _ := root.Sqrt(root).Float64()
	want := math.Min(6e-170, r) * (1 - 1e-12)
	if g := s.general(dp); !(g.Eps >= want) {
		t.Errorf("general composition of %v at delta' %g: eps %g, want at least %g", steps, dp, g.Eps, want)
	}
}
