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

// Pi returns π to prec bits by Machin's formula,
// π = 16·atan(1/5) - 4·atan(1/239).
func Pi(prec uint) *big.Float {
	w := prec + 16
	atanInv := func(k int64) *big.Float {
		// atan(1/k) = Σ (-1)^n / ((2n+1)·k^(2n+1)).
		sum := new(big.Float).SetPrec(w)
		pow := new(big.Float).SetPrec(w).Quo(big.NewFloat(1), new(big.Float).SetInt64(k))
		k2 := new(big.Float).SetPrec(w).SetInt64(k * k)
		eps := new(big.Float).SetMantExp(big.NewFloat(1), -int(w))
		for n := int64(0); ; n++ {
			term := new(big.Float).SetPrec(w).Quo(pow, new(big.Float).SetInt64(2*n+1))
			if n%2 == 0 {
				sum.Add(sum, term)
			} else {
				sum.Sub(sum, term)
			}
			if term.Cmp(eps) < 0 {
				return sum
			}
			pow.Quo(pow, k2)
		}
	}
	pi := new(big.Float).SetPrec(w).Mul(big.NewFloat(16), atanInv(5))
	pi.Sub(pi, new(big.Float).SetPrec(w).Mul(big.NewFloat(4), atanInv(239)))
	return pi.SetPrec(prec)
}

// Erfc returns the complementary error function of x to prec bits,
// for |x| <= 40: 1 - erf(x) with
// erf(x) = (2/√π)·e^(-x²)·Σ 2^n·x^(2n+1)/(1·3···(2n+1)), a series of
// positive terms. The final subtraction cancels about x²·log2(e) bits
// (erfc(x) is near e^(-x²)), so the work is done with that many more.
func Erfc(x *big.Float, prec uint) *big.Float {
	xf, _ := x.Float64()
	x2f := xf * xf
	w := prec + 32 + uint(math.Ceil(x2f*math.Log2E))
	ax := new(big.Float).SetPrec(w).Abs(x)
	x2 := new(big.Float).SetPrec(w).Mul(ax, ax)
	twoX2 := new(big.Float).SetPrec(w).Mul(x2, big.NewFloat(2))
	term := new(big.Float).SetPrec(w).Set(ax)
	sum := new(big.Float).SetPrec(w).Set(ax)
	// Past n = x² the terms fall by a factor 2x²/(2n+1) < 1 each, at
	// most 1/2 once n >= 2x²: stop when they are below 2^-w of the sum.
	limit := new(big.Float).SetPrec(w)
	for n := int64(1); ; n++ {
		term.Mul(term, twoX2)
		term.Quo(term, new(big.Float).SetInt64(2*n+1))
		sum.Add(sum, term)
		if float64(n) > 2*x2f && term.Cmp(limit.SetMantExp(sum, -int(w))) <= 0 {
			break
		}
	}
	erf := sum.Mul(sum, Exp(new(big.Float).SetPrec(w).Neg(x2), w))
	erf.Mul(erf, big.NewFloat(2))
	erf.Quo(erf, new(big.Float).SetPrec(w).Sqrt(Pi(w)))
	if x.Sign() < 0 {
		erf.Neg(erf)
	}
	return new(big.Float).SetPrec(w).Sub(big.NewFloat(1), erf).SetPrec(prec)
}
