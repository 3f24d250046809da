package accountant

import "math"

// ival is a closed interval [lo, hi] of reals that holds an exact value
// computed through a chain of floating-point operations: every operation
// rounds its lower end down and its upper end up, by the exact error of a
// product or sum (FMA, TwoSum) or by 2 ulps for a math library function
// (Go's exp, log, log1p, expm1, erfc are within 1 ulp). PATE's bounds
// pass through cancellations (1 - (q·e^ε)^t) whose error no fixed count of
// ulps bounds; an interval carries it to the end, where the upper end is
// the outward-rounded result.
type ival struct{ lo, hi float64 }

func exact(x float64) ival { return ival{x, x} }

// minNormal is the smallest normal float64: below it relative error
// bounds fail, so results there are widened to [0, minNormal].
const minNormal = 0x1p-1022

func (a ival) add(b ival) ival { return ival{addDown(a.lo, b.lo), addUp(a.hi, b.hi)} }

func (a ival) sub(b ival) ival { return ival{addDown(a.lo, -b.hi), addUp(a.hi, -b.lo)} }

func (a ival) neg() ival { return ival{-a.hi, -a.lo} }

// mulExact returns the float64 product p and whether the exact product is
// above it (+1), below (-1) or equal (0).
func mulExact(a, b float64) (float64, int) {
	p := a * b
	if math.IsInf(p, 0) || p == 0 && a != 0 && b != 0 {
		return p, 0 // overflow or underflow: handled by the callers' guards
	}
	e := math.FMA(a, b, -p)
	switch {
	case e > 0:
		return p, 1
	case e < 0:
		return p, -1
	}
	return p, 0
}

// underflowed bounds a result that underflowed to 0, of the sign
// positive, from above or below.
func underflowed(positive, upward bool) float64 {
	switch {
	case positive && upward:
		return minNormal
	case !positive && !upward:
		return -minNormal
	}
	return 0
}

func mulDirected(a, b float64, upward bool) float64 {
	p, s := mulExact(a, b)
	if p == 0 && a != 0 && b != 0 { // underflow
		return underflowed((a > 0) == (b > 0), upward)
	}
	switch {
	case upward && s > 0:
		return math.Nextafter(p, math.Inf(1))
	case !upward && s < 0:
		return math.Nextafter(p, math.Inf(-1))
	}
	return p
}

func (a ival) mul(b ival) ival { return a.corners(b, mulDirected) }

// corners returns the interval of op over a and b, for an op monotone in
// each argument on the intervals: its extremes are at their ends, each
// rounded outward.
func (a ival) corners(b ival, op func(x, y float64, upward bool) float64) ival {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range [2]float64{a.lo, a.hi} {
		for _, y := range [2]float64{b.lo, b.hi} {
			lo = math.Min(lo, op(x, y, false))
			hi = math.Max(hi, op(x, y, true))
		}
	}
	return ival{lo, hi}
}

// divDirected returns a/b rounded down or up, b != 0.
func divDirected(a, b float64, upward bool) float64 {
	q := a / b
	if math.IsInf(q, 0) {
		return q
	}
	if q == 0 && a != 0 {
		return underflowed((a > 0) == (b > 0), upward)
	}
	e := math.FMA(q, b, -a) // q·b - a, exact
	above := (b > 0 && e < 0) || (b < 0 && e > 0)
	below := (b > 0 && e > 0) || (b < 0 && e < 0)
	switch {
	case upward && above:
		return math.Nextafter(q, math.Inf(1))
	case !upward && below:
		return math.Nextafter(q, math.Inf(-1))
	}
	return q
}

// div returns a/b for an interval b that does not contain 0.
func (a ival) div(b ival) ival { return a.corners(b, divDirected) }

// libDown and libUp widen the result of a math library function, accurate
// to 1 ulp, by 2 ulps; results near the subnormal range are widened to it.
func libDown(x float64) float64 {
	if math.Abs(x) < minNormal {
		return math.Min(x, 0) - minNormal
	}
	return down(x, 2)
}

func libUp(x float64) float64 {
	if math.Abs(x) < minNormal {
		return math.Max(x, 0) + minNormal
	}
	return up(x, 2)
}

// monotone applies an increasing library function to a.
func monotone(f func(float64) float64, a ival) ival {
	return ival{libDown(f(a.lo)), libUp(f(a.hi))}
}

func iexp(a ival) ival {
	r := monotone(math.Exp, a)
	r.lo = math.Max(r.lo, 0)
	return r
}

func ilog(a ival) ival   { return monotone(math.Log, a) }
func ilog1p(a ival) ival { return monotone(math.Log1p, a) }
func isqrt(a ival) ival {
	r := monotone(math.Sqrt, a)
	r.lo = math.Max(r.lo, 0)
	return r
}

// ilog1mexp returns log(1 - e^x) for x < 0, a decreasing function of x:
// log1p(-e^x) below -log 2, log(-expm1 x) above, as each is accurate there.
func ilog1mexp(a ival) ival {
	f := func(x float64, upward bool) float64 {
		var v float64
		if x < -math.Ln2 {
			v = math.Log1p(-math.Exp(x))
			// exp then log1p: the relative error of e^x (2 ulps) moves
			// log1p(-e^x) by at most 2 ulps of e^x/(1-e^x) <= 1.
			if upward {
				return libUp(v) + 4*ulp*math.Exp(x)
			}
			return libDown(v) - 4*ulp*math.Exp(x)
		}
		e := -math.Expm1(x) // in (0, 1/2], relative error 1 ulp
		v = math.Log(e)     // error: 1 ulp of v plus 2 ulps of e (absolute 2 ulps)
		if upward {
			return libUp(v) + 4*ulp
		}
		return libDown(v) - 4*ulp
	}
	return ival{f(a.hi, false), f(a.lo, true)}
}

// ilogaddexp returns log(e^a + e^b), increasing in both.
func ilogaddexp(a, b ival) ival {
	end := func(x, y float64, upward bool) float64 {
		m, n := math.Max(x, y), math.Min(x, y)
		if math.IsInf(n, -1) {
			return m
		}
		// m + log1p(e^(n-m)): evaluate the tail as an interval.
		d := exact(n).sub(exact(m))
		t := ilog1p(iexp(d))
		if upward {
			return addUp(m, t.hi)
		}
		return addDown(m, t.lo)
	}
	return ival{end(a.lo, b.lo, false), end(a.hi, b.hi, true)}
}
