package accountant

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/darrm/darrm/internal/bigmath"
)

// TestDiscreteLaplaceIsRR: the hockey-stick divergence of discrete
// Laplace noise of scale b on two inputs that differ by 1, summed over
// the integers, is randomized response's with ε = 1/b, at every ε tested
// (the fact laplaceRun rests on).
func TestDiscreteLaplaceIsRR(t *testing.T) {
	for _, b := range []float64{0.5, 3, 20} {
		p := math.Exp(-1 / b)
		pmf := func(y int) float64 { return (1 - p) / (1 + p) * math.Pow(p, math.Abs(float64(y))) }
		for _, eps := range []float64{0, 0.2 / b, 0.7 / b, 1 / b} {
			var lap float64
			for y := -int(200 * b); y <= int(200*b); y++ {
				lap += math.Max(0, pmf(y)-math.Exp(eps)*pmf(y-1))
			}
			q := 1 / (1 + math.Exp(-1/b))
			rr := math.Max(0, q-math.Exp(eps)*(1-q)) + math.Max(0, (1-q)-math.Exp(eps)*q)
			if math.Abs(lap-rr) > 1e-12 {
				t.Errorf("b = %g, eps = %g: discrete Laplace %.15g, randomized response %.15g", b, eps, lap, rr)
			}
		}
	}
}

// bigRRDelta is the profile at eps of n composed randomized responses of
// parameter e1, in 512 bits: Σ_j C(n,j) p^(n-j) q^j (1 - e^(eps-(n-2j)e1))+.
func bigRRDelta(e1 float64, n int, eps float64) *big.Float {
	one := bf512(1)
	ee := bigmath.Exp(bf512(e1), bigPrec)
	p := new(big.Float).SetPrec(bigPrec).Quo(ee, new(big.Float).SetPrec(bigPrec).Add(ee, one))
	q := new(big.Float).SetPrec(bigPrec).Sub(one, p)
	total := new(big.Float).SetPrec(bigPrec)
	for j := 0; j <= n; j++ {
		l := new(big.Float).SetPrec(bigPrec).Mul(bf512(e1), bf512(float64(n-2*j)))
		d := new(big.Float).SetPrec(bigPrec).Sub(bf512(eps), l)
		if d.Sign() >= 0 {
			continue
		}
		term := new(big.Float).SetPrec(bigPrec).SetInt(new(big.Int).Binomial(int64(n), int64(j)))
		for range n - j {
			term.Mul(term, p)
		}
		for range j {
			term.Mul(term, q)
		}
		term.Mul(term, new(big.Float).SetPrec(bigPrec).Sub(one, bigmath.Exp(d, bigPrec)))
		total.Add(total, term)
	}
	return total
}

// TestLNMaxExactAgainstBig: the exact total of k LNMax queries (two
// coordinates of discrete Laplace noise each) meets its δ by a 512-bit
// evaluation of 2k composed randomized responses, and 1e-9 less ε does
// not; it is below the pure composition of the per-query 2/b.
func TestLNMaxExactAgainstBig(t *testing.T) {
	for _, c := range []struct {
		b     float64
		k     int
		delta float64
	}{{20, 10, 1e-5}, {20, 100, 1e-5}, {5, 50, 1e-6}, {50, 300, 1e-5}} {
		s := Spend{Kind: LaplaceSpend, Guarantee: Guarantee{Eps: 2 / c.b}, Laplace: &LaplacePart{Scale: c.b, Coords: 2}}
		tot, err := ComposeRun(testMemo, s, c.k, c.delta, 1e-5, ImprovedConversion)
		if err != nil {
			t.Fatal(err)
		}
		var exact Total
		for _, x := range tot {
			if x.Method == Exact {
				exact = x
			}
		}
		if exact.Method != Exact {
			t.Fatalf("%+v: no exact total in %v", c, tot)
		}
		e := exact.Guarantee.Eps
		name := fmt.Sprintf("b=%g k=%d delta=%g", c.b, c.k, c.delta)
		if d, _ := bigRRDelta(1/c.b, 2*c.k, e).Float64(); d > c.delta {
			t.Errorf("%s: exact eps %.12g, but the profile there is %g", name, e, d)
		}
		if d, _ := bigRRDelta(1/c.b, 2*c.k, e*(1-1e-9)).Float64(); d <= c.delta {
			t.Errorf("%s: exact eps %.12g, and 1e-9 less meets delta too (%g)", name, e, d)
		}
		if e >= float64(c.k)*2/c.b {
			t.Errorf("%s: exact eps %g, not below the pure total %g", name, e, float64(c.k)*2/c.b)
		}
		t.Logf("%s: exact %.6g, pure %.6g, totals %v", name, e, float64(c.k)*2/c.b, tot)
	}
}
