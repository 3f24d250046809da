package accountant

import (
	"math"
	"sort"

	"github.com/darrm/darrm/internal/outward"
)

// positive sets start, and blockMax when the composition did not (its
// transform and its sparse direct sums set it as they write p). The
// losses of the entries are not kept: loss computes each from its index
// when it is asked, and a search asks for few of them (rawDelta sums
// only the entries that move its sum, estimate and above a few each),
// where a run's window holds up to 2^19.
func (r *bitRun) positive() {
	r.start = min(len(r.p), max(0, 1-r.first))
	if r.blockMax != nil {
		return
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

// above returns the index, counted from start, of the first entry whose
// loss is above eps: the losses from start on increase.
func (r *bitRun) above(eps float64) int {
	return sort.Search(len(r.p)-r.start, func(j int) bool { return r.lossOf(r.start+j) > eps })
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
	// Each product is rounded before it is added (the conversions, here
	// and in estimate's sums): a build that fuses multiply-adds (arm64,
	// GOAMD64=v3) rounds as written, as every other build does.
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
			sum += float64(p * -math.Expm1(eps-l))
		}
	}
	return sum
}

// lossOf returns the loss of p[i] (loss).
func (r *bitRun) lossOf(i int) float64 { return r.loss(r.first + i) }

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
// product by e^h, from math.Exp of a loss every estimateAnchor entries
// (counted from the window's last): within a relative 10^-13, where an
// exponential per entry cost more than the rest of a release's search
// for its ε.
func (r *bitRun) estimate(eps float64) float64 {
	if r.empty || eps < 0 {
		return r.delta(eps)
	}
	r.ready()
	r.tails.Do(r.suffixSums)
	p, e := r.tailSums(r.above(eps))
	return r.bound(max(0, p-float64(math.Exp(eps)*e)), eps)
}

// suffixSums sets up (e^h), and tailP and tailE: the sums of p and
// p·e^-L over the entries after each block of estimateAnchor entries
// counted down from the last (each block's product e^-L starts at the
// exponential of its last entry's loss), which tailSums completes
// within a block, in the same order of sums and products. A run's window
// is up to 2^19 entries: the sums at every entry, 8 MiB, cost more to
// allocate than a block costs to complete at each estimate.
func (r *bitRun) suffixSums() {
	n := len(r.p) - r.start
	blocks := (n + estimateAnchor - 1) / estimateAnchor
	r.up = math.Exp(r.hi / float64(r.n))
	r.tailP, r.tailE = make([]float64, blocks+1), make([]float64, blocks+1)
	for b := range blocks {
		top := n - 1 - b*estimateAnchor
		r.tailP[b+1], r.tailE[b+1] = r.blockSums(top, max(0, top-estimateAnchor+1), r.tailP[b], r.tailE[b])
	}
}

// tailSums returns the sums of p and p·e^-L over the entries from
// start + j on (0 <= j <= n, n the entries from start on).
func (r *bitRun) tailSums(j int) (float64, float64) {
	n := len(r.p) - r.start
	if j >= n {
		return r.tailP[0], r.tailE[0]
	}
	b := (n - 1 - j) / estimateAnchor
	return r.blockSums(n-1-b*estimateAnchor, j, r.tailP[b], r.tailE[b])
}

// blockSums adds to sp and se, the sums over the entries after top, those
// of entries top down to j (counted from start) of one block, top its
// last: its e^-L from the exponential of top's loss, carried down by
// products by e^h.
func (r *bitRun) blockSums(top, j int, sp, se float64) (float64, float64) {
	var e float64
	for i := top; i >= j; i-- {
		if i == top {
			e = math.Exp(-r.lossOf(r.start + i))
		} else {
			e *= r.up
		}
		p := r.p[r.start+i]
		sp += p
		se += float64(p * e)
	}
	return sp, se
}
