package constraints

import "math"

// familyBound bounds the privacy cost of every multiset of one pair (n6,
// n7) at once, for Delta > 0 (docs/solve.md, "The family bound").
//
// Four corners are within Delta of a deterministic teacher: (0, Delta) and
// (Delta, 0) vote 0 on both sides but for one flip of probability Delta,
// (1-Delta, 1) and (1, 1-Delta) vote 1 but for one. The family of shift s
// is every multiset with n6, n7 fixed whose t - s other teachers vote 0 on
// both sides but for flips, and whose s others vote 1: n0+n2+n3 = t - s
// and n1+n4+n5 = s. Given a teacher's flips, its side is a shift of the
// correlation vector (see Separate), so with U, V the flips up and down on
// one side,
//
//	E[C[s+U-V]] - C[s] = sum over (u, v) != 0 of P(U=u)·P(V=v)·(C[s+u-v] - C[s]),
//
// where U is Binomial(i, Delta) over the i teachers that can flip up on
// that side and V Binomial(j, Delta). P(U=u)·P(V=v) <= C(i,u)·C(j,v)·
// Delta^(u+v), the P side's i plus the Q side's i' is at most t - s, and
// C(i,u) + C(i',u) <= C(t-s,u) for u >= 1 (likewise j with s): so the
// terms with u + v <= order add at most C(t-s,u)·C(s,v)·Delta^(u+v) times
// the larger of the two sides' differences, if positive. Every other term
// has at least order+1 flips among at most t teachers, of probability at
// most C(t, order+1)·Delta^(order+1), and moves a side by at most its
// range. The bound of the family is the cost of its multiset without flips
// plus these, and the pair's is the largest over its families, raised by
// what rounding can hide (roundingMargin).
type familyBound struct {
	order     int  // the largest number of flips bounded term by term
	remainder bool // add the bound on the terms with more flips
	// coef[a*(order+1)+u] = C(a, u)·Delta^u for a = 0..K, and tail[t] =
	// C(t, order+1)·Delta^(order+1).
	coef, tail []float64
	e          float64 // e^{m·eps}
	margin     float64 // roundingMargin's constant part
	mErr       float64 // bound on the rounding error of one difference
}

// familyOrder is the number of flips familyBound bounds term by term: the
// rest is of order C(t, 4)·Delta^4, 3e-9 at t = 1000 and Delta = 1e-5.
const familyOrder = 3

func newFamilyBound(p Params, order int, remainder bool) *familyBound {
	fb := &familyBound{order: order, remainder: remainder, e: p.E()}
	r := order + 1
	fb.coef = make([]float64, (p.K+1)*r)
	fb.tail = make([]float64, p.K+1)
	for a := 0; a <= p.K; a++ {
		c := 1.0 // C(a, u)·Delta^u
		for u := 0; u <= order; u++ {
			fb.coef[a*r+u] = c
			c *= float64(a-u) / float64(u+1) * p.Delta
			if c < 0 {
				c = 0
			}
		}
		fb.tail[a] = c
	}
	me := p.M * p.Eps
	k := float64(p.K)
	// A difference C[j] - C[s] of one side is within 2·17Ku + 2u of its
	// exact value (ErrBound's step 2), and the Q side's is multiplied by Ê,
	// within (m·eps + 1)u relative, and rounded once more.
	fb.mErr = (1 + fb.e) * (34*k + me + 8) * unitRoundoff
	fb.margin = 2 * p.ErrBound()
	return fb
}

// pair returns the bound on the cost, as Separate computes it, of every
// multiset of the pair whose correlation vectors after the e^eps corners
// are x (P side) and y (Q side), each of length t+1.
func (fb *familyBound) pair(x, y []float64) float64 {
	maxX, minY := vecRange(x, y)
	best := math.Inf(-1)
	for s := range x {
		if f := fb.family(x, y, s, maxX, minY); f > best {
			best = f
		}
	}
	return best
}

// families appends to dst the shifts s of the families of the pair whose
// bound reaches thr, in increasing order.
func (fb *familyBound) families(x, y []float64, thr float64, dst []int) []int {
	maxX, minY := vecRange(x, y)
	for s := range x {
		if fb.family(x, y, s, maxX, minY) >= thr {
			dst = append(dst, s)
		}
	}
	return dst
}

func vecRange(x, y []float64) (maxX, minY float64) {
	maxX, minY = x[0], y[0]
	for s := range x {
		if x[s] > maxX {
			maxX = x[s]
		}
		if y[s] < minY {
			minY = y[s]
		}
	}
	return maxX, minY
}

// family returns the bound on the cost, as computed, of every multiset of
// the family of shift s; maxX and minY are the largest x and the smallest
// y.
func (fb *familyBound) family(x, y []float64, s int, maxX, minY float64) float64 {
	t := len(x) - 1
	r := fb.order + 1
	e := fb.e
	a, b := t-s, s
	ca, cb := fb.coef[a*r:a*r+r], fb.coef[b*r:b*r+r]
	xs, ys := x[s], y[s]
	var sum, csum float64
	for u := 0; u <= min(fb.order, a); u++ {
		for v := 0; v <= min(fb.order-u, b); v++ {
			if u+v == 0 {
				continue
			}
			j := s + u - v
			d := x[j] - xs
			if dq := e * (ys - y[j]); dq > d {
				d = dq
			}
			c := ca[u] * cb[v]
			csum += c
			if d > 0 {
				sum += c * d
			}
		}
	}
	if fb.remainder {
		c := fb.tail[t]
		csum += c
		sum += c * math.Max(maxX-xs, e*(ys-minY))
	}
	// Rounding: every difference within mErr; the coefficients (at most
	// 3·order roundings each), their products and the sum of at most
	// (order+1)^2 terms within 64u relative for order <= 4.
	f := cost(xs, ys, e) + sum*(1+64*unitRoundoff) + csum*fb.mErr
	return f + fb.margin + 4*unitRoundoff*math.Abs(f)
}
