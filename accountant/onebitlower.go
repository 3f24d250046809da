package accountant

import (
	"math"
	"math/big"

	"github.com/darrm/darrm/internal/outward"
)

// lowerBitWindow bounds the points of the composition that bounds a
// one-bit release's profile from below (lowerBitDelta): an eighth of the
// exact composition's cost.
const lowerBitWindow = 1 << 16

// lowerBitTail is the exponent of the mass that lowerBitDelta's window
// leaves out on each side, e^-lowerBitTail of the sum composed: where
// the largest loss is rare, that sum is the rest of the steps, whose
// expectation decides δ to a few percent, so e^-20 leaves the bound
// within a relative 10^-7 of what the grid allows.
const lowerBitTail = 20

// lowerBitDelta returns a lower bound of δ(ε) of k steps of the pair
// whose privacy loss is b, on a window of at most window points (a power
// of two), where the exact composition (newBitRun) gives an upper bound:
// a δ it returns above a budget's proves that k steps do not fit without
// the exact composition's transform of 2^19 points.
//
// δ(ε) = E[(1 - e^(ε-S))+] over the k independent losses of the steps (S
// infinite when one is), a sum of nonnegative terms over the sequences of
// atoms. Of them it keeps two kinds, which do not meet, and leaves out the
// others (dropping terms lowers the sum): those with an infinite loss,
// 1 - (1-ι)^k in all, and those in which the largest loss ℓ_t (of mass
// m_t) comes exactly once and the other k-1 losses are any of the other
// finite atoms but the rarest, k·m_t·E[(1 - e^(ε - ℓ_t - Σ))+] with Σ the
// sum of k-1 of those (a measure of total mass below 1). Where ℓ_t is a rare large
// loss (a private-teacher label's: 7.5 of mass 8·10^-10 beside losses
// within ±0.16), these are nearly all of δ, and Σ spans only a few units,
// so that a grid fine enough to lose little lies in a small window. Each
// of those losses is rounded down to the grid of step h, which lowers
// every term (the integrand increases in the loss), and the (k-1)-fold
// sum is composed by the transform on the window that holds all but
// e^-lowerBitTail of it on each side (tailEdgeAt): the cyclic
// convolution folds what lies beyond onto the window, and the transform
// rounds (transformErr), which r.err bounds in l1 together. Each weight
// (1 - e^(ε - ℓ_t - Σ))+ is at most 1, so the sum less that error is
// below the exact one. Every other rounding is directed down.
func lowerBitDelta(b bitLoss, k int, eps float64, window int) float64 {
	return newLowerBitRun(b, k, window).delta(eps)
}

// lowerBitRun is what lowerBitDelta composes of k steps, none of which
// depends on ε: the bound at several ε (TestLowerBitDelta asks ten)
// needs the transform once.
type lowerBitRun struct {
	// inf is 1 - (1-ι)^k and mt k·m_t, both from below, and topLo the
	// lower bound of ℓ_t.
	inf, mt, topLo float64
	// one: k = 1, the largest loss alone.
	one bool
	// r is the (k-1)-fold sum of the other losses on the grid of step
	// h; nil when the bound is inf alone.
	r *bitRun
	h float64
}

// newLowerBitRun composes lowerBitDelta's k steps of b on a window of at
// most window points.
func newLowerBitRun(b bitLoss, k int, window int) lowerBitRun {
	var l lowerBitRun
	if k < 1 {
		return l
	}
	// 1 - (1-ι)^k from below: k·log(1-ι) rounded up.
	if b.infLo > 0 {
		l.inf = math.Max(0, outward.Down(-math.Expm1(outward.Up(float64(k)*outward.Up(math.Log1p(-b.infLo), 2), 1)), 2))
	}
	t := -1
	for i, a := range b.atoms {
		if t < 0 || a.hi > b.atoms[t].hi {
			t = i
		}
	}
	if t < 0 {
		return l
	}
	top := b.atoms[t]
	// The other atoms, but those whose k-1 steps hold less than 2^-30 of
	// the mass (the mirror of a rare large loss), which would stretch the
	// grid over their range: leaving out their sequences lowers δ by a
	// relative 2^-30 at most.
	var rest []bitAtom
	for i, a := range b.atoms {
		if i != t && float64(k-1)*a.mass >= 0x1p-30 {
			rest = append(rest, a)
		}
	}
	l.topLo = top.lo
	l.mt = outward.MulDown(float64(k), massDown(top.n, b.scale))
	if k == 1 || len(rest) == 0 {
		l.one = k == 1
		return l
	}
	m := k - 1
	if m > 1<<32 {
		// Index sums of so many steps could overflow the window's ends
		// (below too: m times an index of at most span/h + 2).
		return l
	}
	// The grid: its step h from the width of the window a provisional
	// grid of 2^10 steps of the largest |loss| needs, then the window on
	// it.
	span := 0.0
	for _, a := range rest {
		span = math.Max(span, math.Max(math.Abs(a.lo), math.Abs(a.hi)))
	}
	if span == 0 {
		span = 1
	}
	// Each grid rounds differently: a window a little too wide for
	// window points asks a grid a little coarser.
	h := span / 1024
	c := lowerComp(rest, b.scale, h, m)
	lo, hi := lowerWindow(c)
	fits := false
	for range 4 {
		h = (float64(hi-lo) + float64(m)) * h / float64(window-4)
		if !(h > 0 && float64(m)*(span/h+2) < 0x1p60) {
			return l
		}
		c = lowerComp(rest, b.scale, h, m)
		if lo, hi = lowerWindow(c); hi < lo {
			return l
		}
		if fits = hi-lo+1 <= window; fits {
			break
		}
	}
	if !fits {
		return l
	}
	l.r, l.h = &bitRun{k: m}, h
	l.r.transform([]bitComp{c}, lo, hi, 2*math.Exp(1-lowerBitTail))
	return l
}

// delta returns lowerBitDelta at eps of the run's steps.
func (l lowerBitRun) delta(eps float64) float64 {
	weight := func(x float64) float64 {
		// 1 - e^(ε-x), x a lower bound of the loss: e^(ε-x) rounded up.
		if !(x > eps) {
			return 0
		}
		return math.Max(0, -outward.Up(math.Expm1(outward.AddUp(eps, -x)), 2))
	}
	if l.one {
		return outward.AddDown(l.inf, outward.MulDown(l.mt, weight(l.topLo)))
	}
	if l.r == nil {
		return l.inf
	}
	var sum float64
	for j, p := range l.r.p {
		if p == 0 {
			continue
		}
		// A lower bound of s·h + ℓ_t, s the index sum.
		s := float64(l.r.first + j)
		x := s * l.h
		if math.FMA(s, l.h, -x) < 0 {
			x = math.Nextafter(x, math.Inf(-1))
		}
		sum += p * weight(outward.AddDown(x, l.topLo))
	}
	// Nonnegative terms: the sum is within a relative n ulps of its
	// value, each product within one.
	inner := outward.AddDown(outward.Down(sum, float64(len(l.r.p)+2)), -l.r.err)
	if !(inner > 0) {
		return l.inf
	}
	return outward.AddDown(l.inf, outward.MulDown(l.mt, inner))
}

// lowerWindow returns the window of index sums of c's k-fold sum that
// holds all but e^-lowerBitTail of it on each side (tailEdgeAt), within
// the sums there are: hi < lo when the whole sum, of less mass than the
// tail (a few atoms of a fraction of the mass), holds none.
func lowerWindow(c bitComp) (lo, hi int) {
	imax := math.MinInt
	for _, i := range c.idx {
		imax = max(imax, i)
	}
	lo = max(c.k*c.imin, -tailEdgeAt([]bitComp{c}, -1, lowerBitTail))
	hi = min(c.k*imax, tailEdgeAt([]bitComp{c}, 1, lowerBitTail))
	return lo, hi
}

// lowerComp lays atoms on the grid of step h for m steps, each loss
// rounded down to it (index i with i·h <= the atom's lower bound, exactly)
// and each mass down (massDown).
func lowerComp(atoms []bitAtom, scale int, h float64, m int) bitComp {
	c := bitComp{k: m, imin: math.MaxInt}
	for _, a := range atoms {
		i := math.Floor(a.lo / h)
		for math.FMA(i, h, -a.lo) > 0 {
			i--
		}
		c.mass = append(c.mass, massDown(a.n, scale))
		c.idx = append(c.idx, int(i))
		c.imin = min(c.imin, int(i))
	}
	return c
}

// massDown returns v·2^-s rounded down to a float64: an atom's mass from
// below (scaleDownUp's other side).
func massDown(v *big.Int, s int) float64 {
	x := new(big.Float).SetMode(big.ToNegativeInf).SetInt(v)
	f, _ := x.SetMantExp(x, -s).Float64()
	return f
}
