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
