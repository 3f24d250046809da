package outward

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/darrm/darrm/internal/bigmath"
)

const prec = 256

func bf(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }

// holds reports whether [lo, hi] contains the exact value x.
func holds(lo, hi float64, x *big.Float) bool { return bf(lo).Cmp(x) <= 0 && x.Cmp(bf(hi)) <= 0 }

// randFloat returns a float64 of either sign over many magnitudes.
func randFloat(r *rand.Rand) float64 {
	x := math.Exp(r.Float64()*80 - 40)
	if r.IntN(2) == 0 {
		return -x
	}
	return x
}

// TestDirectedAgainstBig: the directed sums, products and quotients, and
// the interval operations built on them, bracket the exact result of
// their float64 inputs, in 256-bit arithmetic, and are within one float of
// it.
func TestDirectedAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		a, b := randFloat(r), randFloat(r)
		sum := new(big.Float).SetPrec(prec).Add(bf(a), bf(b))
		if !holds(AddDown(a, b), AddUp(a, b), sum) {
			t.Fatalf("%v + %v: [%v, %v] misses the sum", a, b, AddDown(a, b), AddUp(a, b))
		}
		prod := new(big.Float).SetPrec(prec).Mul(bf(a), bf(b))
		x := Exact(a).Mul(Exact(b))
		if !holds(x.Lo, x.Hi, prod) || x.Hi > math.Nextafter(x.Lo, math.Inf(1)) {
			t.Fatalf("%v * %v: %v misses the product or is wider than one float", a, b, x)
		}
		if a > 0 && b > 0 && !holds(MulDown(a, b), MulUp(a, b), prod) {
			t.Fatalf("%v * %v: [%v, %v] misses the product", a, b, MulDown(a, b), MulUp(a, b))
		}
		quo := new(big.Float).SetPrec(prec).Quo(bf(a), bf(b))
		if q := Exact(a).Div(Exact(b)); !holds(q.Lo, q.Hi, quo) {
			t.Fatalf("%v / %v: %v misses the quotient", a, b, q)
		}
		d := Exact(a).Sub(Exact(b))
		if diff := new(big.Float).SetPrec(prec).Sub(bf(a), bf(b)); !holds(d.Lo, d.Hi, diff) {
			t.Fatalf("%v - %v: %v misses the difference", a, b, d)
		}
	}
}

// TestSubnormalAgainstBig: products and quotients that land among the
// subnormal floats, or underflow to 0, are bracketed too. There the exact
// error of a product is below the least subnormal, so FMA rounds it to 0
// and cannot tell an exact product from a rounded one.
func TestSubnormalAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		a := math.Ldexp(1+r.Float64(), -500-r.IntN(40))
		b := math.Ldexp(1+r.Float64(), -500-r.IntN(90))
		if r.IntN(2) == 0 {
			a = -a
		}
		prod := new(big.Float).SetPrec(prec).Mul(bf(a), bf(b))
		if x := Exact(a).Mul(Exact(b)); !holds(x.Lo, x.Hi, prod) {
			t.Fatalf("%v * %v: %v misses the product %v", a, b, x, prod)
		}
		if pa := math.Abs(a); !holds(MulDown(pa, b), MulUp(pa, b), new(big.Float).Abs(prod)) {
			t.Fatalf("%v * %v: [%v, %v] misses the product", pa, b, MulDown(pa, b), MulUp(pa, b))
		}
		c := math.Ldexp(1+r.Float64(), 20+r.IntN(560))
		quo := new(big.Float).SetPrec(prec).Quo(bf(a), bf(c))
		if q := Exact(a).Div(Exact(c)); !holds(q.Lo, q.Hi, quo) {
			t.Fatalf("%v / %v: %v misses the quotient %v", a, c, q, quo)
		}
		tiny, d := math.Ldexp(1+r.Float64(), -960-r.IntN(110)), math.Ldexp(1+r.Float64(), r.IntN(121)-60)
		quo = new(big.Float).SetPrec(prec).Quo(bf(tiny), bf(d))
		if q := Exact(tiny).Div(Exact(d)); !holds(q.Lo, q.Hi, quo) {
			t.Fatalf("%v / %v: %v misses the quotient %v", tiny, d, q, quo)
		}
	}
}

// TestLibraryAgainstBig: the intervals of exp and log hold the exact
// value of the function at an interval's ends.
func TestLibraryAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		x := r.Float64()*1400 - 700
		e := Exp(Exact(x))
		if !holds(e.Lo, e.Hi, bigmath.Exp(bf(x), prec)) {
			t.Fatalf("exp %v: %v misses it", x, e)
		}
		y := math.Exp(r.Float64()*1400 - 700)
		l := Log(Exact(y))
		if !holds(l.Lo, l.Hi, bigmath.Log(bf(y), prec)) {
			t.Fatalf("log %v: %v misses it", y, l)
		}
	}
}

// TestUpDown: Up and Down move away from x by at least n ulps of it, and
// leave 0, infinities and NaN as they are.
func TestUpDown(t *testing.T) {
	for _, x := range []float64{1, -1, 3.5e-300, 1e300, 0.1} {
		if u := Up(x, 2); !(u >= x+math.Abs(x)*2*ULP) {
			t.Errorf("Up(%v, 2) = %v", x, u)
		}
		if d := Down(x, 2); !(d <= x-math.Abs(x)*2*ULP) {
			t.Errorf("Down(%v, 2) = %v", x, d)
		}
	}
	for _, x := range []float64{0, math.Inf(1), math.Inf(-1)} {
		if Up(x, 2) != x || Down(x, 2) != x {
			t.Errorf("Up/Down moved %v", x)
		}
	}
	if !math.IsNaN(Up(math.NaN(), 1)) {
		t.Error("Up(NaN) is not NaN")
	}
}

// TestUpDownLarge: a finite bound is finite however large x is: |x|·n
// overflowed first, for |x| above MaxFloat64/n, and Up read +Inf where
// x + |x|·n ulps is a float (a bound of 10^308 raised by 4,096 ulps).
func TestUpDownLarge(t *testing.T) {
	for _, x := range []float64{1e308, math.MaxFloat64 / 2, 0x1p1000} {
		for _, n := range []float64{2, 1 << 12, 1 << 20} {
			bound, _ := new(big.Float).Mul(big.NewFloat(x), big.NewFloat(1+n*ULP)).Float64()
			if math.IsInf(bound, 0) {
				continue
			}
			if u := Up(x, n); !(u >= bound) || math.IsInf(u, 0) {
				t.Errorf("Up(%v, %v) = %v, want finite, >= %v", x, n, u, bound)
			}
			if d := Down(-x, n); !(d <= -bound) || math.IsInf(d, 0) {
				t.Errorf("Down(%v, %v) = %v, want finite, <= %v", -x, n, d, -bound)
			}
		}
	}
}

// TestNextUpDown: nextUp and nextDown step as math.Nextafter does toward
// ±Inf, at zeros of either sign, subnormals, the largest finite floats,
// the infinities and random bit patterns.
func TestNextUpDown(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
		0x1p-1022, -0x1p-1022, 1, -1, math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN()}
	r := rand.New(rand.NewPCG(7, 8))
	for range 10000 {
		xs = append(xs, math.Float64frombits(r.Uint64()))
	}
	same := func(x, y float64) bool {
		return math.Float64bits(x) == math.Float64bits(y) || math.IsNaN(x) && math.IsNaN(y)
	}
	for _, x := range xs {
		if got, want := nextUp(x), math.Nextafter(x, math.Inf(1)); !same(got, want) {
			t.Errorf("nextUp(%v) = %v, want %v", x, got, want)
		}
		if got, want := nextDown(x), math.Nextafter(x, math.Inf(-1)); !same(got, want) {
			t.Errorf("nextDown(%v) = %v, want %v", x, got, want)
		}
	}
}

// TestLnSubnormal: Ln is within 1.5 ulps of the logarithm, 256-bit, over
// subnormal and normal x; math.Log is off by up to 35 there on amd64
// (golang/go#56600), and Log's interval holds the exact value.
func TestLnSubnormal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := []float64{math.SmallestNonzeroFloat64, 1e-320, 1.7047e-314, 1e-310, 2e-308, minNormal, math.Nextafter(minNormal, 0), 1e-300, 0.5, 1, 3, math.MaxFloat64}
	for range 2000 {
		xs = append(xs, math.Float64frombits(r.Uint64N(0x7ff0000000000000-1)+1))
	}
	for _, x := range xs {
		ref := bigmath.Log(bf(x), prec)
		exact, _ := ref.Float64()
		// (The reference's own error, some 2^-300 absolute, counts at x = 1.)
		if err := math.Abs(Ln(x) - exact); err > 1.5*ulpOf(exact) && err > 0x1p-250 {
			t.Errorf("Ln(%g) = %.17g, exact %.17g: off by %.3g ulps", x, Ln(x), exact, err/ulpOf(exact))
		}
		if iv := Log(Exact(x)); x != 1 && !holds(iv.Lo, iv.Hi, ref) {
			t.Errorf("Log(%g) = [%.17g, %.17g] misses %.17g", x, iv.Lo, iv.Hi, exact)
		}
	}
}

// ulpOf is the spacing of float64s at x.
func ulpOf(x float64) float64 {
	x = math.Abs(x)
	return math.Nextafter(x, math.Inf(1)) - x
}
