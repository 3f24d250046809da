package bigmath

import (
	"fmt"
	"math"
	"math/big"
	"testing"
)

func TestExpLog(t *testing.T) {
	for _, x := range []float64{-30, -1, -1e-9, 0, 0.5, 1, 7.25, 40} {
		e := Exp(big.NewFloat(x), 200)
		if f, _ := e.Float64(); math.Abs(f-math.Exp(x)) > 2e-16*math.Exp(x) {
			t.Errorf("Exp(%v) = %v, math.Exp %v", x, f, math.Exp(x))
		}
		back, _ := Log(e, 200).Float64()
		if math.Abs(back-x) > 1e-15*(1+math.Abs(x)) {
			t.Errorf("Log(Exp(%v)) = %v", x, back)
		}
	}
	// e itself, to 30 digits.
	if s := Exp(big.NewFloat(1), 200).Text('g', 30); s != "2.71828182845904523536028747135" {
		t.Errorf("e = %s", s)
	}
	if s := Ln2(200).Text('g', 30); s != "0.693147180559945309417232121458" {
		t.Errorf("log 2 = %s", s)
	}
}

// relErr returns |a/b - 1| as a float64.
func relErr(a, b *big.Float) float64 {
	q := new(big.Float).SetPrec(300).Quo(a, b)
	f, _ := q.Sub(q, big.NewFloat(1)).Float64()
	return math.Abs(f)
}

// Values beyond float64's range, and next to its edges, come back to 200
// bits (they once made Log loop for ever: the float64 starting point was
// an infinity).
func TestExpLogBeyondFloat64(t *testing.T) {
	const prec = 200
	tiny := new(big.Float).SetMantExp(big.NewFloat(0.75), -5000) // 0.75·2^-5000
	huge := new(big.Float).SetMantExp(big.NewFloat(0.6), 40000)  // 0.6·2^40000
	for _, y := range []*big.Float{tiny, huge, big.NewFloat(math.SmallestNonzeroFloat64), big.NewFloat(math.MaxFloat64)} {
		l := Log(y, prec)
		if back := Exp(l, prec); relErr(back, y) > 1e-55 {
			t.Errorf("Exp(Log(%s)) = %s", y.Text('g', 10), back.Text('g', 20))
		}
	}
	// log(m·2^e) = log m + e·log 2, exactly so for a power of two.
	want := new(big.Float).SetPrec(prec).Mul(Ln2(prec), big.NewFloat(-5000))
	if got := Log(new(big.Float).SetMantExp(big.NewFloat(1), -5000), prec); relErr(got, want) > 1e-58 {
		t.Errorf("log 2^-5000 = %s, want %s", got.Text('g', 30), want.Text('g', 30))
	}
	// Just below 1: log(1 - u) = -u - u²/2 - ..., to full relative precision.
	u := new(big.Float).SetMantExp(big.NewFloat(1), -200)
	y := new(big.Float).SetPrec(400).Sub(big.NewFloat(1), u)
	wantSmall := new(big.Float).SetPrec(prec).Neg(u)
	wantSmall.Sub(wantSmall, new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).Mul(u, u), big.NewFloat(2)))
	if got := Log(y, prec); relErr(got, wantSmall) > 1e-58 {
		t.Errorf("log(1 - 2^-200) = %s", got.Text('g', 30))
	}
	// Exp far out: e^1000·e^-1000 = 1; e^(±2^40) beyond big.Float's range.
	p := new(big.Float).SetPrec(prec).Mul(Exp(big.NewFloat(1000), prec), Exp(big.NewFloat(-1000), prec))
	if relErr(p, big.NewFloat(1)) > 1e-58 {
		t.Errorf("e^1000·e^-1000 = %s", p.Text('g', 30))
	}
	if e := Exp(big.NewFloat(1e6), prec); relErr(Log(e, prec), big.NewFloat(1e6)) > 1e-55 {
		t.Errorf("Log(Exp(1e6)) = %s", Log(e, prec).Text('g', 20))
	}
	if e := Exp(big.NewFloat(0x1p40), prec); !e.IsInf() {
		t.Errorf("Exp(2^40) = %s, want +Inf", e.Text('g', 5))
	}
	if e := Exp(big.NewFloat(-0x1p40), prec); e.Sign() != 0 {
		t.Errorf("Exp(-2^40) = %s, want 0", e.Text('g', 5))
	}
	if e := Exp(new(big.Float).SetInf(true), prec); e.Sign() != 0 {
		t.Error("Exp(-Inf) != 0")
	}
	if l := Log(new(big.Float), prec); !l.IsInf() || l.Sign() > 0 {
		t.Error("Log(0) != -Inf")
	}
	if l := Log(new(big.Float).SetInf(false), prec); !l.IsInf() || l.Sign() < 0 {
		t.Error("Log(+Inf) != +Inf")
	}
}

// TestPiErfc checks π and erfc against published digits and math.Erfc.
func TestPiErfc(t *testing.T) {
	if s := Pi(200).Text('g', 40); s != "3.141592653589793238462643383279502884197" {
		t.Errorf("pi = %s", s)
	}
	for _, c := range []struct {
		x    float64
		want string // erfc(x), 25 significant digits (mpmath at 40 digits)
	}{
		{0, "1"},
		{0.5, "0.4795001221869534623172533"},
		{1, "0.1572992070502851306587794"},
		{-1, "1.842700792949714869341221"},
		{3, "2.209049699858544137277613e-05"},
		{10, "2.088487583762544757000786e-45"},
	} {
		if s := Erfc(big.NewFloat(c.x), 200).Text('g', 25); s != c.want {
			t.Errorf("erfc(%v) = %s, want %s", c.x, s, c.want)
		}
	}
	for _, x := range []float64{-5, -0.3, 0.1, 0.9, 1.7, 4.2, 9.5, 26} {
		got, _ := Erfc(big.NewFloat(x), 200).Float64()
		if math.Abs(got-math.Erfc(x)) > 1e-15*got {
			t.Errorf("erfc(%v) = %v, math.Erfc %v", x, got, math.Erfc(x))
		}
	}
}

// BenchmarkExp: e^x at the precisions of the tests' references (200,
// 256 and 512 bits), over arguments of both signs and several scales.
func BenchmarkExp(b *testing.B) {
	xs := []float64{-700, -30, -1.5, -0.3, -1e-6, 1e-9, 0.02, 0.7, 3, 40}
	for _, prec := range []uint{200, 256, 512} {
		b.Run(fmt.Sprint(prec), func(b *testing.B) {
			for b.Loop() {
				for _, x := range xs {
					Exp(big.NewFloat(x), prec)
				}
			}
		})
	}
}
