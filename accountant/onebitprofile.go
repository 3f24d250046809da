package accountant

import (
	"math"
	"sort"

	"github.com/darrm/darrm/internal/outward"
)

// positive sets start, losses and blockMax.
func (r *bitRun) positive() {
	r.start = min(len(r.p), max(0, 1-r.first))
	r.losses = make([]float64, len(r.p)-r.start)
	for j := range r.losses {
		r.losses[j] = r.loss(r.first + r.start + j)
	}
	r.blockMax = make([]float64, (len(r.p)+rawBlock-1)/rawBlock)
	for i, p := range r.p {
		if b := i / rawBlock; p > r.blockMax[b] {
			r.blockMax[b] = p
		}
	}
}

// rawBlock is the length of the blocks of p whose largest entry
// blockMax keeps: rawDelta passes over a block of terms too small to
// move its sum at once.
const rawBlock = 256

// above returns the index in losses of the first loss above eps.
func (r *bitRun) above(eps float64) int {
	return sort.Search(len(r.losses), func(j int) bool { return r.losses[j] > eps })
}

// loss returns an upper bound of the loss of index sum s.
func (r *bitRun) loss(s int) float64 {
	h := r.hi
	if s < 0 {
		h = r.lo
	}
	return outward.Up(float64(s)*h/float64(r.n), 4)
}

// delta returns an upper bound of the composed profile at eps >= 0.
func (r *bitRun) delta(eps float64) float64 {
	if r.empty {
		return r.inf
	}
	r.ready()
	return r.bound(r.rawDelta(eps), eps)
}

// bound returns the profile's upper bound at eps from its sum as
// computed: the sum's rounding, the error of p above eps (tailErr) and
// the infinite loss added.
func (r *bitRun) bound(sum, eps float64) float64 {
	n := float64(len(r.p))
	return math.Min(1, r.inf+outward.Up(sum, 4)+r.tailErr(eps)+(n*outward.ULP+r.rel)*sum)
}

// tailErr bounds the error, at eps, of the sum over the entries whose
// loss is above eps. Untilted, it is err. Tilted, an entry s's error is
// its tilted error times e^(C - λs), so the entries from s_ε on (s_ε the
// least index of a loss above eps) err at most err·e^(C - λs_ε); and
// when s_ε is below the window, the entries between them, which the
// window does not hold, have at most Pr[Σ >= s_ε] <= e^(C - λs_ε)
// (Chernoff's bound with the same λ).
func (r *bitRun) tailErr(eps float64) float64 {
	if r.lambda == 0 {
		return r.err
	}
	s := r.leastAbove(eps)
	e := r.err
	if s < r.first {
		e++
	}
	return math.Min(1, outward.Up(e*math.Exp(r.cgf-r.lambda*float64(s)), 4+r.rel/outward.ULP))
}

// leastAbove returns the least index whose loss is above eps, within
// [first - 2^40, first + len(p)] (below, the Chernoff bound is 1 anyway;
// above, nothing is summed).
func (r *bitRun) leastAbove(eps float64) int {
	end := r.first + len(r.p)
	if len(r.p) > 0 && r.loss(end-1) <= eps {
		return end
	}
	if r.loss(r.first) <= eps {
		if eps >= 0 {
			return r.first + r.start + r.above(eps)
		}
		return r.first + sort.Search(len(r.p), func(i int) bool { return r.loss(r.first+i) > eps })
	}
	// Below the window (tilted runs centre it on their tail): invert
	// the loss, then step to the least index above eps.
	step := r.hi
	if eps < 0 {
		step = r.lo
	}
	x := math.Floor(eps/step*float64(r.n)) - 2
	floor := float64(r.first) - 0x1p40
	if !(x > floor) {
		return int(floor)
	}
	s := int(math.Min(x, float64(r.first)))
	for s < r.first && r.loss(s) <= eps {
		s++
	}
	return s
}

// rawDelta is E[(1 - e^(ε-L))+ ; L finite] as computed, without the
// bounds of its error: the sum over the losses above ε in increasing
// order (at ε >= 0, only those from start on can be).
//
// A term p·(1 - e^(ε-L)) is at most p (rounding is monotone), and a p
// below sum·2^-54 is below half the ulp of the sum (exactly scaled above
// 2^-900), so that term would leave the sum as it is: its exponential is
// not computed, nor are the terms of a block of p whose largest entry is
// below it looked at. The right tail of the window, past the bulk that
// makes the sum, is often most of the terms (up to nine tenths of them
// in the tests' compositions of 20 to 3,000 steps), each an Expm1.
func (r *bitRun) rawDelta(eps float64) float64 {
	from := 0
	if eps >= 0 {
		from = r.start + r.above(eps)
	}
	var sum float64
	for i := from; i < len(r.p); i++ {
		if i%rawBlock == 0 && sum > 0x1p-900 && r.blockMax[i/rawBlock] < sum*0x1p-54 {
			i += rawBlock - 1
			continue
		}
		p := r.p[i]
		if !(p > 0) || sum > 0x1p-900 && p < sum*0x1p-54 {
			continue
		}
		if l := r.lossOf(i); l > eps {
			sum += p * -math.Expm1(eps-l)
		}
	}
	return sum
}

// lossOf returns the loss of p[i] (loss).
func (r *bitRun) lossOf(i int) float64 {
	if i >= r.start {
		return r.losses[i-r.start]
	}
	return r.loss(r.first + i)
}

// estimateAnchor is how many entries of the window estimate's e^-L is
// carried by products between two exponentials.
const estimateAnchor = 64

// estimate returns delta(eps) but for rounding, in O(log n): the sum
// over the losses above ε of p·(1 - e^(ε-L)) as Σp - e^ε·Σp·e^-L, from
// suffix sums. It only guides the search of the profile's inverse
// (roots.EdgeGuided), which confirms its answer by delta.
//
// Consecutive losses from start on are a grid step h apart but for
// their rounding up (loss), so e^-L is carried down the window as a
// product by e^h, from math.Exp of a loss every estimateAnchor entries:
// within a relative 10^-13, where an exponential per entry cost more
// than the rest of a release's search for its ε.
func (r *bitRun) estimate(eps float64) float64 {
	if r.empty || eps < 0 {
		return r.delta(eps)
	}
	r.ready()
	r.tails.Do(func() {
		n := len(r.losses)
		r.tailP, r.tailE = make([]float64, n+1), make([]float64, n+1)
		up := math.Exp(r.hi / float64(r.n))
		var e float64
		for j := n - 1; j >= 0; j-- {
			if (n-1-j)%estimateAnchor == 0 {
				e = math.Exp(-r.losses[j])
			} else {
				e *= up
			}
			p := r.p[r.start+j]
			r.tailP[j] = r.tailP[j+1] + p
			r.tailE[j] = r.tailE[j+1] + p*e
		}
	})
	j := r.above(eps)
	return r.bound(max(0, r.tailP[j]-math.Exp(eps)*r.tailE[j]), eps)
}
