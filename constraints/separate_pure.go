package constraints

import (
	"context"
	"math"
)

// Separation in pure DP (Delta = 0): four corners, so a multiset is a pair
// (n6, n7) and a shift n1 of both sides, and a pair's costs are bounded
// from its correlation vector alone.

// itemPure processes, for Delta = 0, the pairs (n6, n7) = (a, b) and (b,
// a) for every b >= a, from one chain of correlation vectors. The e^eps
// corners are (hi, lo) and (lo, hi) with lo = 1 - hi, so the p' side of
// the pair (n6, n7) is the p side of the pair (n7, n6): with P(x, y) the
// correlation vector after x teachers at hi and y at lo, pair (a, b) costs
// P(a, b)[n1] - E·P(b, a)[n1]. Relabelling every vote maps the multiset
// (n0, n1, a, b) to (n1, n0, b, a) and L to K - L, and w(K - l) = -w(l)
// for a symmetric gamma and an odd K, so P(b, a)[s] = -P(a, b)[t - s] with
// t = K - a - b: one chain stepping lo from P(a, a) gives both sides of
// both pairs, and the cost of (b, a) at s is minus that of (a, b) at t - s.
// The mirrored side carries the same rounding bound as the chain, since
// it is the chain's values negated. It stops once ctx is done.
func (sw *sepWorker) itemPure(ctx context.Context, a int) {
	k := sw.p.K
	ab := append(sw.p67[:0], sw.p6s[a]...) // P(a, b)
	for b := a; b <= k-a && ctx.Err() == nil; b++ {
		var hi, lo float64
		if b > a {
			ab, hi, lo = stepCostRange(ab, sw.lo, sw.e)
		} else {
			hi, lo = costRange(ab, sw.e)
		}
		thr := sw.threshold()
		if hi >= thr && sw.mine(a, b) {
			sw.pairPure(a, b, ab, sw.mirror(ab))
			thr = sw.threshold()
		}
		if b > a && -lo >= thr && sw.mine(b, a) {
			ba := sw.mirror(ab)
			sw.pairPure(b, a, ba, ab)
		}
	}
}

// mirror returns P(b, a) from x = P(a, b): the reverse of x, negated, in
// the worker's scratch vector.
func (sw *sepWorker) mirror(x []float64) []float64 {
	y := sw.q67[:len(x)]
	for s, v := range x {
		y[len(x)-1-s] = -v
	}
	return y
}

// cost is the privacy cost c_p - e·c_q of a pure-DP multiset; the
// conversion keeps the product rounded on its own (no fused multiply-add),
// so that costRange's bound and pairPure agree bit for bit.
func cost(cp, cq, e float64) float64 { return cp - float64(e*cq) }

// costRange returns the largest and the smallest cost(x[s], y[s], e) over
// s, where y is the mirror of x (see itemPure): y[s] = -x[t-s]. The cost of
// the mirrored pair at t - s, cost(y[t-s], x[t-s], e), is exactly minus
// that at s, since rounding is symmetric about 0.
func costRange(x []float64, e float64) (hi, lo float64) {
	hi, lo = math.Inf(-1), math.Inf(1)
	// s and t - s together: each load serves two costs.
	for i, j := 0, len(x)-1; i <= j; i, j = i+1, j-1 {
		u, v := x[i], x[j]
		f, g := cost(u, -v, e), cost(v, -u, e)
		if f > hi {
			hi = f
		}
		if g > hi {
			hi = g
		}
		if f < lo {
			lo = f
		}
		if g < lo {
			lo = g
		}
	}
	return hi, lo
}

// stepCostRange is step(x, a) followed by costRange, in one sweep: the
// new values at s and t - s are computed together, from both ends, so each
// cost is taken while both are in registers. The values are those of step,
// bit for bit.
func stepCostRange(x []float64, a, e float64) ([]float64, float64, float64) {
	n := len(x) - 1
	x = x[:n+1]
	hi, lo := math.Inf(-1), math.Inf(1)
	// The upper end steps downwards, so it keeps the old value of its
	// right neighbour, which it has already overwritten.
	right := x[n]
	i, j := 0, n-1
	for ; i < j; i, j = i+1, j-1 {
		xi := x[i] + a*(x[i+1]-x[i])
		old := x[j]
		xj := old + a*(right-old)
		x[i], x[j], right = xi, xj, old
		f, g := cost(xi, -xj, e), cost(xj, -xi, e)
		if f < g {
			f, g = g, f
		}
		if f > hi {
			hi = f
		}
		if g < lo {
			lo = g
		}
	}
	if i == j {
		xi := x[i] + a*(right-x[i])
		x[i] = xi
		f := cost(xi, -xi, e)
		hi, lo = math.Max(hi, f), math.Min(lo, f)
	}
	return x[:n], hi, lo
}

// pairPure handles Delta = 0: the corners are (0,0), (1,1) and the two
// e^eps corners, so the only free count is n1, a shift of both sides.
func (sw *sepWorker) pairPure(n6, n7 int, p67, q67 []float64) {
	t := sw.p.K - n6 - n7
	thr := sw.threshold()
	for n1 := 0; n1 <= t; n1++ {
		f := cost(p67[n1], q67[n1], sw.e)
		if f >= thr {
			sw.offer(f, func() Config { return Config{t - n1, n1, n6, n7} })
			thr = sw.threshold()
		}
	}
}
