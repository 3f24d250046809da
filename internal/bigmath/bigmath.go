// Package bigmath computes e^x and log y in math/big at a given precision,
// as exact references for the tests of darrm's floating-point bounds.
package bigmath

import (
	"math"
	"math/big"
)

// Exp returns e^x to prec bits: the Taylor series after halving x below
// 2^-8, then squaring back.
func Exp(x *big.Float, prec uint) *big.Float {
	r := new(big.Float).SetPrec(prec).Set(x)
	s := 0
	for r.Sign() != 0 && r.MantExp(nil) > -8 {
		r.Quo(r, big.NewFloat(2))
		s++
	}
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	// Each term is below 2^-8 times the last: prec/8 + 2 terms suffice.
	for n := int64(1); n <= int64(prec/8)+2; n++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(n))
		sum.Add(sum, term)
	}
	for range s {
		sum.Mul(sum, sum)
	}
	return sum
}

// Log returns log y, y > 0, to prec bits, by Halley's iteration
// z += 2(y - e^z)/(y + e^z) from the float64 logarithm.
func Log(y *big.Float, prec uint) *big.Float {
	f, _ := y.Float64()
	z := new(big.Float).SetPrec(prec).SetFloat64(math.Log(f))
	for range 6 {
		e := Exp(z, prec)
		num := new(big.Float).SetPrec(prec).Sub(y, e)
		den := new(big.Float).SetPrec(prec).Add(y, e)
		num.Quo(num, den)
		z.Add(z, num.Mul(num, big.NewFloat(2)))
	}
	return z
}
