// Package bigmath computes e^x and log y in math/big at a given precision,
// as exact references for the tests of darrm's floating-point bounds.
package bigmath

import (
	"math"
	"math/big"
	"sync"
)

// ln2s and pis hold the constants already computed, by precision.
var ln2s, pis sync.Map

// memo returns a copy of the value of f at prec, computed at the first
// call for prec and kept in m.
func memo(m *sync.Map, prec uint, f func(uint) *big.Float) *big.Float {
	v, ok := m.Load(prec)
	if !ok {
		v, _ = m.LoadOrStore(prec, f(prec))
	}
	return new(big.Float).Set(v.(*big.Float))
}

// Exp returns e^x to prec bits, for every x: +Inf and 0 where e^x is
// beyond big.Float's exponent range. It reduces x = k·log 2 + r with
// |r| <= log(2)/2, sums the Taylor series of e^r after halving r below
// 2^-8, squares back, and scales by 2^k, all at prec plus enough guard
// bits for the cancellation in r and the squarings.
func Exp(x *big.Float, prec uint) *big.Float {
	if x.IsInf() {
		if x.Sign() > 0 {
			return new(big.Float).SetPrec(prec).SetInf(false)
		}
		return new(big.Float).SetPrec(prec)
	}
	if x.Sign() == 0 {
		return new(big.Float).SetPrec(prec).SetInt64(1)
	}
	// e^x for |x| >= 2^32 is beyond the exponent range (|k| > 2^31).
	if x.MantExp(nil) > 32 {
		if x.Sign() > 0 {
			return new(big.Float).SetPrec(prec).SetInf(false)
		}
		return new(big.Float).SetPrec(prec)
	}
	w := prec + 64 + 40 // |k| < 2^40 here: r loses at most 40 bits to cancellation
	ln2 := Ln2(w)
	kf := new(big.Float).SetPrec(w).Quo(x, ln2)
	kf.Add(kf, big.NewFloat(0.5*float64(kf.Sign())))
	k, _ := kf.Int64() // truncated: the nearest integer to x/log 2
	r := new(big.Float).SetPrec(w).Mul(ln2, new(big.Float).SetPrec(w).SetInt64(k))
	r.Sub(x, r).SetPrec(w)
	s := 0
	for r.Sign() != 0 && r.MantExp(nil) > -8 {
		r.Quo(r, big.NewFloat(2))
		s++
	}
	sum := new(big.Float).SetPrec(w).SetInt64(1)
	term := new(big.Float).SetPrec(w).SetInt64(1)
	nf := new(big.Float).SetPrec(w)
	// Each term is below 2^-8 times the last: w/8 + 2 terms suffice. The
	// sum stays within 2^-7 of 1, where w-bit numbers are at least 2^-w
	// apart: once a term is below 2^-(w+2), under half that, adding it
	// leaves the sum as it is, and so does adding every later one,
	// smaller still (each rounding is monotone), so the sum is already
	// what the terms up to w/8 + 2 would give, and the rest are not
	// computed.
	for n := int64(1); n <= int64(w/8)+2; n++ {
		term.Mul(term, r)
		term.Quo(term, nf.SetInt64(n))
		if term.Sign() == 0 || term.MantExp(nil) <= -int(w)-2 {
			break
		}
		sum.Add(sum, term)
	}
	for range s {
		sum.Mul(sum, sum)
	}
	if k > big.MaxExp || k < big.MinExp-int64(w) {
		if k > 0 {
			return new(big.Float).SetPrec(prec).SetInf(false)
		}
		return new(big.Float).SetPrec(prec)
	}
	return new(big.Float).SetPrec(prec).SetMantExp(sum, int(k))
}

// Ln2 returns log 2 to prec bits: 2·atanh(1/3) = 2·Σ 3^-(2n+1)/(2n+1).
// Each precision's value is summed once (Exp and Erfc ask for it at every
// call) and returned as a copy.
func Ln2(prec uint) *big.Float { return memo(&ln2s, prec, ln2) }

func ln2(prec uint) *big.Float {
	w := prec + 16
	sum := new(big.Float).SetPrec(w)
	pow := new(big.Float).SetPrec(w).Quo(big.NewFloat(1), big.NewFloat(3))
	eps := new(big.Float).SetMantExp(big.NewFloat(1), -int(w))
	for n := int64(0); ; n++ {
		term := new(big.Float).SetPrec(w).Quo(pow, new(big.Float).SetInt64(2*n+1))
		sum.Add(sum, term)
		if term.Cmp(eps) < 0 {
			break
		}
		pow.Quo(pow, big.NewFloat(9))
	}
	return sum.Mul(sum, big.NewFloat(2)).SetPrec(prec)
}

// Log returns log y to prec bits, for every y > 0 (and +Inf at +Inf, -Inf
// at 0); it panics for y < 0. With y = m·2^e, m in [0.5, 1),
// log y = e·log 2 + 2·atanh(t), t = (m-1)/(m+1) in (-1/3, 0]: the series
// 2·Σ t^(2n+1)/(2n+1) gains over 3 bits a term and keeps the relative
// precision of a small log m (y just below a power of 2).
func Log(y *big.Float, prec uint) *big.Float {
	switch {
	case y.Sign() < 0:
		panic("bigmath: Log of a negative number")
	case y.Sign() == 0:
		return new(big.Float).SetPrec(prec).SetInf(true)
	case y.IsInf():
		return new(big.Float).SetPrec(prec).SetInf(false)
	}
	w := prec + 64
	m := new(big.Float).SetPrec(w)
	e := y.MantExp(m)
	one := big.NewFloat(1)
	num := new(big.Float).SetPrec(w+2).Sub(m, one) // exact
	t := num.Quo(num, new(big.Float).SetPrec(w+2).Add(m, one))
	t2 := new(big.Float).SetPrec(w).Mul(t, t)
	sum := new(big.Float).SetPrec(w)
	pow := new(big.Float).SetPrec(w).Set(t)
	for n := int64(0); pow.Sign() != 0; n++ {
		term := new(big.Float).SetPrec(w).Quo(pow, new(big.Float).SetInt64(2*n+1))
		sum.Add(sum, term)
		if term.MantExp(nil) < sum.MantExp(nil)-int(w) {
			break
		}
		pow.Mul(pow, t2)
	}
	sum.Mul(sum, big.NewFloat(2))
	if e != 0 {
		sum.Add(sum, new(big.Float).SetPrec(w).Mul(Ln2(w+64), new(big.Float).SetPrec(w+64).SetInt64(int64(e))))
	}
	return sum.SetPrec(prec)
}

// Pi returns π to prec bits by Machin's formula,
// π = 16·atan(1/5) - 4·atan(1/239), summed once for each precision.
func Pi(prec uint) *big.Float { return memo(&pis, prec, pi) }

func pi(prec uint) *big.Float {
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

// PoissonBinomial returns the law of the number of ones among independent
// bits, counts[j] of them 1 with probability ps[j], at precision prec: a
// bit of probability 0 or 1 adds an exact 0 below or above the law, one
// of another probability a step of the convolution.
func PoissonBinomial(ps []*big.Float, counts []int, prec uint) []*big.Float {
	zero := func() *big.Float { return new(big.Float).SetPrec(prec) }
	a := []*big.Float{zero().SetInt64(1)}
	for j, n := range counts {
		x := ps[j]
		switch {
		case x.Sign() == 0:
			for range n {
				a = append(a, zero())
			}
		case x.Cmp(big.NewFloat(1)) == 0:
			a = append(make([]*big.Float, n), a...)
			for l := range n {
				a[l] = zero()
			}
		default:
			notX := zero().Sub(zero().SetInt64(1), x)
			for range n {
				next := make([]*big.Float, len(a)+1)
				for l := range next {
					next[l] = zero()
					if l < len(a) {
						next[l].Add(next[l], zero().Mul(a[l], notX))
					}
					if l > 0 {
						next[l].Add(next[l], zero().Mul(a[l-1], x))
					}
				}
				a = next
			}
		}
	}
	return a
}
