package outward

import "math"

// Interval is a closed interval [Lo, Hi] of reals that holds an exact value
// computed through a chain of floating-point operations: every operation
// rounds its lower end down and its upper end up, by the exact error of a
// product or sum (FMA, TwoSum) or by 2 ulps for a math library function
// (Go's exp, log, log1p, expm1, erfc are within 1 ulp). PATE's bounds
// pass through cancellations (1 - (q·e^ε)^t) whose error no fixed count of
// ulps bounds; an interval carries it to the end, where the upper end is
// the outward-rounded result.
type Interval struct{ Lo, Hi float64 }

// Exact returns the interval [x, x] of a value x held exactly.
func Exact(x float64) Interval { return Interval{x, x} }

// minNormal is the smallest normal float64: below it relative error
// bounds fail, so results there are widened to [0, minNormal].
const minNormal = 0x1p-1022

// Add returns a + b.
func (a Interval) Add(b Interval) Interval {
	return Interval{AddDown(a.Lo, b.Lo), AddUp(a.Hi, b.Hi)}
}

// Sub returns a - b.
func (a Interval) Sub(b Interval) Interval {
	return Interval{AddDown(a.Lo, -b.Hi), AddUp(a.Hi, -b.Lo)}
}

// Neg returns -a.
func (a Interval) Neg() Interval { return Interval{-a.Hi, -a.Lo} }

// mulBoth returns a·b rounded down and up: one product and the sign of
// its exact error (FMA) give both ends, which corners needs at every
// corner. A product that overflows is ±Inf at both; one that underflows
// to 0 is widened to minNormal on its side (relative error bounds fail
// there).
func mulBoth(a, b float64) (lo, hi float64) {
	p := a * b
	switch {
	case math.IsInf(p, 0):
		return p, p
	case p == 0 && a != 0 && b != 0:
		return underflowed((a > 0) == (b > 0))
	case math.Abs(p) < fmaBlind:
		return neighbours(p)
	}
	switch e := math.FMA(a, b, -p); {
	case e > 0:
		return p, nextUp(p)
	case e < 0:
		return nextDown(p), p
	}
	return p, p
}

// fmaBlind is where the FMA of mulBoth and divBoth stops seeing a
// rounding error. The exact error of a product p = a·b is a multiple of
// the product of the operands' last bits, above |p|·2^-106; below 2^-969
// that can be under half the least subnormal, and the FMA then rounds an
// error that is not 0 to 0. A quotient's remainder q·b - a is likewise a
// multiple of a bit above |a|·2^-106. Below it a result is bracketed by
// its neighbours (neighbours): the exact value is within half a float of
// the rounded one.
const fmaBlind = 0x1p-968

// neighbours returns the floats either side of x.
func neighbours(x float64) (lo, hi float64) { return nextDown(x), nextUp(x) }

// underflowed bounds a result that underflowed to 0, of the sign
// positive, from below and above.
func underflowed(positive bool) (lo, hi float64) {
	if positive {
		return 0, minNormal
	}
	return -minNormal, 0
}

// Mul returns a·b.
func (a Interval) Mul(b Interval) Interval { return a.corners(b, mulBoth) }

// corners returns the interval of op over a and b, for an op monotone in
// each argument on the intervals: its extremes are at their ends, each
// rounded outward (op returns its value rounded down and up). An exact
// operand has one end (-0 and +0 are two): most operands of the bounds
// built from these are exact, and corners is where they spend their time.
func (a Interval) corners(b Interval, op func(x, y float64) (lo, hi float64)) Interval {
	lo, hi := op(a.Lo, b.Lo)
	more := func(x, y float64) {
		l, h := op(x, y)
		lo, hi = minOf(lo, l), maxOf(hi, h)
	}
	if !b.exact() {
		more(a.Lo, b.Hi)
	}
	if !a.exact() {
		more(a.Hi, b.Lo)
		if !b.exact() {
			more(a.Hi, b.Hi)
		}
	}
	return Interval{lo, hi}
}

// minOf returns math.Min(x, y) in code the compiler inlines where x and y
// are ordered: math.Min is a call to assembly, and corners takes a minimum
// and a maximum at every corner.
func minOf(x, y float64) float64 {
	if x < y {
		return x
	}
	if y < x {
		return y
	}
	return math.Min(x, y) // equal, or NaN
}

// maxOf returns math.Max(x, y), as minOf.
func maxOf(x, y float64) float64 {
	if x > y {
		return x
	}
	if y > x {
		return y
	}
	return math.Max(x, y)
}

// exact reports whether a's ends are the same float64.
func (a Interval) exact() bool { return math.Float64bits(a.Lo) == math.Float64bits(a.Hi) }

// DivDirected returns a/b rounded down or up, b != 0.
func DivDirected(a, b float64, upward bool) float64 {
	lo, hi := divBoth(a, b)
	if upward {
		return hi
	}
	return lo
}

// divBoth returns a/b rounded down and up, b != 0, from one quotient and
// the sign of its exact remainder q·b - a (FMA), as mulBoth.
func divBoth(a, b float64) (lo, hi float64) {
	q := a / b
	switch {
	case math.IsInf(q, 0):
		return q, q
	case q == 0 && a != 0:
		return underflowed((a > 0) == (b > 0))
	case math.Abs(a) < fmaBlind:
		return neighbours(q)
	}
	e := math.FMA(q, b, -a)
	switch {
	case b > 0 && e < 0 || b < 0 && e > 0: // q below a/b
		return q, nextUp(q)
	case b > 0 && e > 0 || b < 0 && e < 0:
		return nextDown(q), q
	}
	return q, q
}

// Div returns a/b for an interval b that does not contain 0.
func (a Interval) Div(b Interval) Interval { return a.corners(b, divBoth) }

// LibDown and LibUp widen the result of a math library function, accurate
// to 1 ulp, by 2 ulps; results near the subnormal range are widened to it.
func LibDown(x float64) float64 {
	if math.Abs(x) < minNormal {
		return math.Min(x, 0) - minNormal
	}
	return Down(x, 2)
}

// LibUp is LibDown's upper end.
func LibUp(x float64) float64 {
	if math.Abs(x) < minNormal {
		return math.Max(x, 0) + minNormal
	}
	return Up(x, 2)
}

// monotone applies an increasing library function to a, once when a is
// exact.
func monotone(f func(float64) float64, a Interval) Interval {
	lo := f(a.Lo)
	hi := lo
	if !a.exact() {
		hi = f(a.Hi)
	}
	return Interval{LibDown(lo), LibUp(hi)}
}

// Exp returns e^a.
func Exp(a Interval) Interval {
	r := monotone(math.Exp, a)
	r.Lo = math.Max(r.Lo, 0)
	return r
}

// Log returns log a, a > 0.
func Log(a Interval) Interval { return monotone(Ln, a) }

// Ln returns the natural logarithm of x, as math.Log does, and right for
// a subnormal x, where math.Log is not on amd64 and s390x (golang/go#56600:
// its assembly returns about -709.09 for every x below 2^-1022, where
// log(5e-324) is -744.44), so that a δ of 1e-320 gave an ε below the
// bound at that δ. Such an x is scaled by 2^64 first, exactly, and 64·ln 2
// (rounded once, a constant) taken off: within 1.5 ulps of log x, inside
// LibDown's and LibUp's widening. The library calls Ln, never math.Log
// (internal/layers' TestLogOfSubnormals).
func Ln(x float64) float64 {
	if x > 0 && x < minNormal {
		return math.Log(x*0x1p64) - 64*math.Ln2
	}
	return math.Log(x)
}

// Log1p returns log(1 + a), a > -1.
func Log1p(a Interval) Interval { return monotone(math.Log1p, a) }

// Sqrt returns √a, a >= 0.
func Sqrt(a Interval) Interval {
	r := monotone(math.Sqrt, a)
	r.Lo = math.Max(r.Lo, 0)
	return r
}

// Log1mExp returns log(1 - e^x) for x < 0, a decreasing function of x:
// log1p(-e^x) below -log 2, log(-expm1 x) above, as each is accurate there.
// An exact a takes its logarithm once for both ends.
func Log1mExp(a Interval) Interval {
	v, err := log1mExp(a.Hi)
	lo := LibDown(v) - err
	if !a.exact() {
		v, err = log1mExp(a.Lo)
	}
	return Interval{lo, LibUp(v) + err}
}

// log1mExp returns log(1 - e^x) as computed, and what to add to LibUp's
// widening of it (and take from LibDown's) for the error of the
// exponential it passed through.
func log1mExp(x float64) (v, err float64) {
	if x < -math.Ln2 {
		// exp then log1p: the relative error of e^x (2 ulps) moves
		// log1p(-e^x) by at most 2 ulps of e^x/(1-e^x) <= 1.
		e := math.Exp(x)
		return math.Log1p(-e), 4 * ULP * e
	}
	// -expm1 x in (0, 1/2], relative error 1 ulp; log: 1 ulp of v plus
	// 2 ulps of e (absolute 2 ulps).
	return Ln(-math.Expm1(x)), 4 * ULP
}

// LogAddExp returns log(e^a + e^b), increasing in both. Its ends are
// m + log1p(e^(n-m)) at the ends of a and b, m the larger, n the smaller;
// at exact a and b both ends share that tail, evaluated once, and
// otherwise each end evaluates its own end of it alone.
func LogAddExp(a, b Interval) Interval {
	if a.exact() && b.exact() {
		lo, hi := logAddExpEnds(a.Lo, b.Lo)
		return Interval{lo, hi}
	}
	return Interval{logAddExpDown(a.Lo, b.Lo), LogAddExpUp(a.Hi, b.Hi)}
}

// logAddExpEnds returns log(e^x + e^y) rounded down and up.
func logAddExpEnds(x, y float64) (lo, hi float64) {
	m, n := math.Max(x, y), math.Min(x, y)
	if math.IsInf(n, -1) {
		return m, m
	}
	// m + log1p(e^(n-m)): evaluate the tail as an interval.
	t := Log1p(Exp(Exact(n).Sub(Exact(m))))
	return AddDown(m, t.Lo), AddUp(m, t.Hi)
}

// LogAddExpUp returns LogAddExp(Exact(x), Exact(y)).Hi, log(e^x + e^y)
// rounded up, without the lower end: the upper end of the tail's
// interval alone (Sub, Exp and Log1p take each end of their result from
// the same end of their argument).
func LogAddExpUp(x, y float64) float64 {
	m, n := math.Max(x, y), math.Min(x, y)
	if math.IsInf(n, -1) {
		return m
	}
	return AddUp(m, LibUp(math.Log1p(LibUp(math.Exp(AddUp(n, -m))))))
}

// logAddExpDown is LogAddExpUp's lower end.
func logAddExpDown(x, y float64) float64 {
	m, n := math.Max(x, y), math.Min(x, y)
	if math.IsInf(n, -1) {
		return m
	}
	return AddDown(m, LibDown(math.Log1p(math.Max(LibDown(math.Exp(AddDown(n, -m))), 0))))
}
