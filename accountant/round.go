package accountant

import "math"

// Outward rounding. Every ε and δ the accountant reports is an upper bound
// of the exact value of its formula at the float64 inputs, so that rounding
// can only overstate privacy loss. Sums and products of two floats are
// rounded up exactly (error-free transformations); a value that passes
// through the math library is raised by a relative bound on its error,
// counted in units of 2^-52 (one ulp of a number in [1, 2)).

const ulp = 0x1p-52

// mulUp returns the least float64 >= a·b for finite a, b >= 0.
func mulUp(a, b float64) float64 {
	p := a * b
	if !math.IsInf(p, 0) && math.FMA(a, b, -p) > 0 {
		p = math.Nextafter(p, math.Inf(1))
	}
	return p
}

// addUp returns the least float64 >= a + b (Knuth's TwoSum gives the
// rounding error exactly).
func addUp(a, b float64) float64 {
	s := a + b
	if math.IsInf(s, 0) {
		return s
	}
	bb := s - a
	if (a-(s-bb))+(b-bb) > 0 {
		s = math.Nextafter(s, math.Inf(1))
	}
	return s
}

// addDown returns the greatest float64 <= a + b.
func addDown(a, b float64) float64 { return -addUp(-a, -b) }

// up returns a float64 >= y for every y within relative error n ulps of x:
// an upper bound of a quantity that was computed as x with that error.
func up(x, n float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return math.Nextafter(x+math.Abs(x)*n*ulp, math.Inf(1))
}

// down is up's mirror: a float64 <= y for every y within n ulps of x.
func down(x, n float64) float64 { return -up(-x, n) }

// deltaUp returns an upper bound of 1 - e^s, the total δ of a composition,
// given a lower bound s <= 0 of Σ log(1 - δ_i). Expm1 is within 1 ulp.
func deltaUp(s float64) float64 { return up(-math.Expm1(s), 2) }

// logKeepDown returns a lower bound of log(1 - δ), δ in [0, 1): Log1p is
// within 1 ulp.
func logKeepDown(delta float64) float64 { return down(math.Log1p(-delta), 2) }
