package bigmath

import (
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
