package noisymax

import (
	"math"
	"math/big"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/bigmath"
)

// exactBitDelta is GNMaxBitDelta's curve computed independently, in
// 256-bit arithmetic: p_l = Φ((2l-K)/(√2σ)) from bigmath.Erfc, both
// directions of every pair of neighbouring vote counts.
func exactBitDelta(eps, sigma float64, k int) *big.Float {
	e := bigExp(bf(eps))
	s := new(big.Float).SetPrec(refPrec).Mul(bigSqrt(bf(2)), bf(sigma))
	p := func(l int) (*big.Float, *big.Float) {
		x := new(big.Float).SetPrec(refPrec).Quo(bf(float64(2*l-k)), s)
		x.Quo(x, bigSqrt(bf(2))) // Φ(z) = erfc(-z/√2)/2
		one := bigmath.Erfc(new(big.Float).Neg(x), refPrec)
		zero := bigmath.Erfc(x, refPrec)
		return one.Quo(one, bf(2)), zero.Quo(zero, bf(2))
	}
	hinge := func(a, b *big.Float) *big.Float {
		d := new(big.Float).SetPrec(refPrec).Mul(e, b)
		d.Sub(a, d)
		if d.Sign() < 0 {
			d.SetFloat64(0)
		}
		return d
	}
	worst := bf(0)
	for l := range k {
		a, ac := p(l)
		b, bc := p(l + 1)
		for _, h := range []*big.Float{
			new(big.Float).Add(hinge(a, b), hinge(ac, bc)),
			new(big.Float).Add(hinge(b, a), hinge(bc, ac)),
		} {
			if h.Cmp(worst) > 0 {
				worst = h
			}
		}
	}
	return worst
}

// gaussianDelta is the exact curve of the Gaussian mechanism on n1 - n0,
// sensitivity 2 and noise √2·σ (Balle and Wang 2018, Theorem 8):
// Φ(μ/2 - ε/μ) - e^ε·Φ(-μ/2 - ε/μ), μ = √2/σ.
func gaussianDelta(eps, sigma float64) float64 {
	phi := func(z float64) float64 { return math.Erfc(-z/math.Sqrt2) / 2 }
	mu := math.Sqrt2 / sigma
	return phi(mu/2-eps/mu) - math.Exp(eps)*phi(-mu/2-eps/mu)
}

// TestGNMaxBitReference: GNMaxBitDelta is an upper bound of the exact
// curve and within 1e-14 of it (the outward rounding of a difference of
// probabilities), on cases from a single teacher to K = 1001, small and
// large σ.
func TestGNMaxBitReference(t *testing.T) {
	for _, c := range []struct {
		eps, sigma float64
		k          int
	}{
		{0.2654, 7.7257, 11}, {0.2654, 21.46, 11}, {0.05, 21.46, 11}, {0.2, 8, 11},
		{1, 3.4323, 11}, {0.5, 2.27, 1}, {0.1, 34.2, 101}, {0.05, 42.44, 1001},
		{2, 0.8, 5}, {0.01, 1.5, 3},
	} {
		got, err := GNMaxBitDelta(c.eps, c.sigma, c.k)
		if err != nil {
			t.Fatal(err)
		}
		exact := exactBitDelta(c.eps, c.sigma, c.k)
		if below(got, exact) {
			t.Errorf("%+v: %v is below the exact %s", c, got, exact.Text('g', 20))
		}
		ex, _ := exact.Float64()
		if got > ex+1e-14 {
			t.Errorf("%+v: %v, exact %v: not tight", c, got, ex)
		}
		// The bit is post-processing of the Gaussian mechanism on n1 - n0.
		if g := gaussianDelta(c.eps, c.sigma); got > g+1e-15 {
			t.Errorf("%+v: bit %v above the Gaussian's %v", c, got, g)
		}
	}
	// Fixed values from an independent computation (mpmath at 50 digits).
	for _, c := range []struct {
		eps, sigma float64
		k          int
		want       float64
	}{
		{0.2, 8, 11, 0.011072318957982654674},
		{0.05, 21.46, 11, 0.0065160521058307744415},
	} {
		if got, _ := GNMaxBitDelta(c.eps, c.sigma, c.k); got-c.want > 1e-14 || got < c.want {
			t.Errorf("delta(%v) at sigma %v, K %d = %.17g, mpmath %.17g", c.eps, c.sigma, c.k, got, c.want)
		}
	}
}

// TestGNMaxSigmaTight: the calibrated σ meets the target by the exact
// curve, and 1e-9 less noise does not; the thesis' targets and others
// agree with an independent calibration (mpmath, 50 digits, bisection)
// to 1e-10; δ(ε) decreases with σ for ε <= 0.7 (above, it does not
// everywhere: at K = 3, ε = 0.85 it rises near σ = 1); and the bit needs less noise than the
// Gaussian mechanism's curve, by far at K = 11 and not at K = 1001.
// -short walks σ in steps of 5% instead of 1%.
func TestGNMaxSigmaTight(t *testing.T) {
	step := 1.01
	if testing.Short() {
		step = 1.05
	}
	for _, c := range []struct {
		target        accountant.Guarantee
		k             int
		want, gaussan float64
	}{
		{accountant.Guarantee{Eps: 0.2654, Delta: 3e-4}, 11, 7.72577548582901, 12.9964436763208},
		{accountant.Guarantee{Eps: 0.2556, Delta: 3e-4}, 11, 7.92273016641359, 13.4267143260635},
		{accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, 101, 34.2243319935045, 43.4864534609309},
		{accountant.Guarantee{Eps: 1, Delta: 0}, 11, 3.43230222170108, math.Inf(1)},
		{accountant.Guarantee{Eps: 0.5, Delta: 1e-6}, 1, 2.26675084153583, 11.3951933358695},
		{accountant.Guarantee{Eps: 0.05, Delta: 1e-3}, 1001, 42.4409913882823, 42.4410139726919},
	} {
		sigma, err := GNMaxSigmaTight(c.target, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(sigma-c.want) > 1e-10*c.want {
			t.Errorf("%v, K = %d: sigma %.15g, mpmath %.15g", c.target, c.k, sigma, c.want)
		}
		if exact := exactBitDelta(c.target.Eps, sigma, c.k); exact.Cmp(bf(c.target.Delta)) > 0 {
			t.Errorf("%v, K = %d: sigma %v does not meet the target (delta %s)", c.target, c.k, sigma, exact.Text('g', 10))
		}
		if exact := exactBitDelta(c.target.Eps, sigma*(1-1e-9), c.k); exact.Cmp(bf(c.target.Delta)) <= 0 {
			t.Errorf("%v, K = %d: sigma*(1-1e-9) still meets the target", c.target, c.k)
		}
		if c.target.Delta > 0 {
			if d := gaussianDelta(c.target.Eps, c.gaussan); math.Abs(d-c.target.Delta) > 1e-9*c.target.Delta {
				t.Errorf("%v: the Gaussian's delta at sigma %v is %v", c.target, c.gaussan, d)
			}
		}
	}
	for _, k := range []int{1, 3, 11, 51, 101} {
		for _, eps := range []float64{0.01, 0.05, 0.3, 0.6, 0.7} {
			prev := math.Inf(1)
			for sigma := 0.05; sigma < 200; sigma *= step {
				d, err := GNMaxBitDelta(eps, sigma, k)
				if err != nil {
					t.Fatal(err)
				}
				if d > prev+1e-15 {
					t.Fatalf("K = %d, eps = %v: delta rises from %v to %v at sigma %v", k, eps, prev, d, sigma)
				}
				prev = d
			}
		}
	}
}
