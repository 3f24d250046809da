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
