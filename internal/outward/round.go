// Package outward rounds floating-point results in the safe direction:
// sums and products rounded up or down exactly, library functions widened
// by a bound on their error, and intervals that carry an exact value
// through a chain of such operations, so that every ε and δ darrm reports
// is an upper bound of the exact value of its formula at the float64
// inputs.
//
// Sums and products of two floats are rounded exactly (error-free
// transformations: FMA, Knuth's TwoSum); a value that passes through the
// math library is raised by a relative bound on its error, counted in
// units of 2^-52 (one ulp of a number in [1, 2)).
package outward

import "math"

// ULP is 2^-52, one ulp of a number in [1, 2): the unit of the relative
// error bounds.
const ULP = 0x1p-52

// MulUp returns the least float64 >= a·b for finite a, b >= 0, or, below
// fmaBlind, where the FMA cannot see the rounding error, the float above
// the rounded product.
func MulUp(a, b float64) float64 {
	p := a * b
	switch {
	case math.IsInf(p, 0):
	case p < fmaBlind && a != 0 && b != 0:
		p = nextUp(p)
	case math.FMA(a, b, -p) > 0:
		p = nextUp(p)
	}
	return p
}

// AddUp returns the least float64 >= a + b (Knuth's TwoSum gives the
// rounding error exactly).
func AddUp(a, b float64) float64 {
	s := a + b
	if math.IsInf(s, 0) {
		return s
	}
	bb := s - a
	if (a-(s-bb))+(b-bb) > 0 {
		s = nextUp(s)
	}
	return s
}

// AddDown returns the greatest float64 <= a + b.
func AddDown(a, b float64) float64 { return -AddUp(-a, -b) }

// Up returns a float64 >= y for every y within relative error n ulps of x:
// an upper bound of a quantity that was computed as x with that error.
func Up(x, n float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return nextUp(x + math.Abs(x)*(n*ULP))
}

// Down is up's mirror: a float64 <= y for every y within n ulps of x.
func Down(x, n float64) float64 { return -Up(-x, n) }

// MulDown returns the greatest float64 <= a·b for finite a, b >= 0, or,
// below fmaBlind, the float below the rounded product (as MulUp).
func MulDown(a, b float64) float64 {
	p := a * b
	switch {
	case p > 0 && p < fmaBlind:
		p = nextDown(p)
	case math.FMA(a, b, -p) < 0:
		p = nextDown(p)
	}
	return p
}

// nextUp returns the least float64 above x, as math.Nextafter(x, +Inf)
// does, from x's bits: every directed result takes a step, and
// Nextafter's general case (two arguments, either direction) is a
// measurable share of PATE's PTR bound, when profiled.
func nextUp(x float64) float64 {
	switch {
	case x > 0 && x <= math.MaxFloat64:
		return math.Float64frombits(math.Float64bits(x) + 1)
	case x < 0: // -Inf steps to -MaxFloat64, -2^-1074 to -0
		return math.Float64frombits(math.Float64bits(x) - 1)
	case x == 0:
		return math.SmallestNonzeroFloat64
	}
	return x // +Inf, NaN
}

// nextDown returns the greatest float64 below x, as
// math.Nextafter(x, -Inf) does.
func nextDown(x float64) float64 { return -nextUp(-x) }

// ErfcULPs bounds the relative error of math.Erfc in ulps (FreeBSD's
// erfc, whose rational approximations are within 2^-57 and whose exp is
// within an ulp; TestGNMaxBitReference measures it against a
// 256-bit computation).
const ErfcULPs = 8
