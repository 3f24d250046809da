package decimal

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestMul: the product of the decimals, nearest float64: the user's
// parameters multiply as written, and the result is within a few ulps of
// the float64 product, checked against math/big on random operands.
func TestMul(t *testing.T) {
	for _, tc := range []struct {
		a, b float64
		want string
	}{
		{3, 0.1, "0.3"}, {0.1, 3, "0.3"}, {3, 0.7, "2.1"}, {10, 0.03, "0.3"}, {6.4521, 0.1, "0.64521"},
		{1, 0.30000000000000004, "0.30000000000000004"}, {1, 0.1, "0.1"}, {2.5, 1e-5, "2.5e-05"}, {3, 1e-5, "3e-05"},
		{1e200, 1e200, "+Inf"}, {1e-200, 1e-200, "0"}, {0, 5, "0"}, {-2, 0.1, "-0.2"},
	} {
		if got := strconv.FormatFloat(Mul(tc.a, tc.b), 'g', -1, 64); got != tc.want {
			t.Errorf("Mul(%v, %v) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
	if !math.IsNaN(Mul(math.NaN(), 1)) || !math.IsInf(Mul(math.Inf(1), 2), 1) {
		t.Error("NaN or infinity not passed on")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		a, b := math.Exp(r.Float64()*40-20), math.Exp(r.Float64()*40-20)
		exact := new(big.Float).SetPrec(256).Mul(big.NewFloat(a).SetPrec(256), big.NewFloat(b).SetPrec(256))
		got := new(big.Float).SetPrec(256).SetFloat64(Mul(a, b))
		diff, _ := new(big.Float).Quo(new(big.Float).Sub(got, exact), exact).Float64()
		if math.Abs(diff) > 4*0x1p-52 {
			t.Fatalf("Mul(%v, %v) = %v, %.3g relative from the float64 product", a, b, Mul(a, b), diff)
		}
	}
}

// TestMulExact: Mul's product in 64 bits is mulRat's, the exact product
// of the decimals rounded by big.Rat, bit for bit: short decimals as users
// write them (the fast path), floats of 17 digits (big.Rat's), signs and
// the ends of the range.
func TestMulExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	short := func() float64 {
		v, _ := strconv.ParseFloat(strconv.Itoa(r.IntN(100000))+"e"+strconv.Itoa(r.IntN(80)-40), 64)
		if r.IntN(4) == 0 {
			v = -v
		}
		return v
	}
	for range 4_000 {
		for _, ab := range [][2]float64{{short(), short()}, {short(), r.Float64()}, {math.Exp(r.Float64()*1400 - 700), short()}} {
			a, b := ab[0], ab[1]
			if a == 0 || b == 0 {
				continue
			}
			if got, want := Mul(a, b), mulRat(a, b); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("Mul(%v, %v) = %v, big.Rat's %v", a, b, got, want)
			}
		}
	}
}

func TestFormatBound(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{3 * 0.1, "0.3"}, // 0.30000000000000004: float64 noise of the inputs
		{0.3, "0.3"},
		{1e-5, "1e-05"},
		{2.9999700001e-05, "2.99998e-05"}, // 1-(1-1e-5)^3, never understated
		{0.1234564, "0.123457"},
		{0.1234566, "0.123457"},
		{9.9999991, "10"},
		{1.000001, "1.00001"},
		{0.9999995, "1"},
		{12.5, "12.5"},
		{0, "0"},
		{math.Inf(1), "+Inf"},
	} {
		if got := FormatBound(tc.x); got != tc.want {
			t.Errorf("FormatBound(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}

// TestFormat: a setting rounded toward more noise reads back on that side
// of the value: a noise scale up, a target eps down, with no slack.
func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		x      float64
		digits int
		up     bool
		want   string
	}{
		{48.7427, 4, true, "48.75"}, // the nearest, 48.74, is less noise
		{48.7427, 4, false, "48.74"},
		{8.0 / 7, 6, false, "1.14285"}, // the nearest, 1.14286, is more eps
		{8.0 / 7, 6, true, "1.14286"},
		{0.013199999999999998, 6, false, "0.0131999"}, // an ulp below 0.0132
		{28, 4, true, "28"},
		{0.1799, 4, false, "0.1799"},
		{0.17988599, 4, false, "0.1798"},
		{0.99999999, 4, true, "1"},
		{0.99999999, 4, false, "0.9999"}, // 1.000 down: 0.9999, not 0.999
		{0.99999999, 6, false, "0.999999"},
		{100.0001, 4, false, "100"},
		{0, 4, true, "0"},
	} {
		got := Format(tc.x, tc.digits, tc.up, 0)
		if got != tc.want {
			t.Errorf("Format(%v, %d, up %v) = %q, want %q", tc.x, tc.digits, tc.up, got, tc.want)
		}
		if v, _ := strconv.ParseFloat(got, 64); tc.up && v < tc.x || !tc.up && v > tc.x {
			t.Errorf("Format(%v, %d, up %v) = %q: on the other side", tc.x, tc.digits, tc.up, got)
		}
	}
}

// TestFormatBoundNeverBelow checks that the text of a bound is never less
// than the bound, beyond the noise FormatBound allows, over many values.
func TestFormatBoundNeverBelow(t *testing.T) {
	for i := range 100000 {
		x := math.Exp(float64(i%2000)/40-40) * (1 + float64(i)/1e5)
		s := FormatBound(x)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < x-8*(math.Nextafter(x, math.Inf(1))-x) {
			t.Fatalf("FormatBound(%v) = %q, below it", x, s)
		}
		if len(strconv.FormatFloat(v, 'g', -1, 64)) > 12 {
			t.Fatalf("FormatBound(%v) = %q: more than six significant digits", x, s)
		}
		if v > x*(1+1e-5) {
			t.Fatalf("FormatBound(%v) = %q: raised by more than one unit in the sixth digit", x, s)
		}
	}
}
