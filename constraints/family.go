package constraints

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/darrm/darrm/internal/param"
)

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
	// excess[a] = the sum over u = 1..order of coef[a*(order+1)+u]: the
	// weights of the terms with u + v flips sum to at most
	// (1+excess[a])(1+excess[b]) - 1 (see flipCeil).
	excess []float64
	e      float64 // e^{m·eps}
	margin float64 // roundingMargin's constant part
	mErr   float64 // bound on the rounding error of one difference
}

// familyOrder is the number of flips familyBound bounds term by term: the
// rest is of order C(t, 4)·Delta^4, 3e-9 at t = 1000 and Delta = 1e-5.
const familyOrder = 3

func newFamilyBound(p Problem, order int, remainder bool) *familyBound {
	fb := &familyBound{order: order, remainder: remainder, e: p.E()}
	r := order + 1
	fb.coef = make([]float64, (p.K+1)*r)
	fb.tail = make([]float64, p.K+1)
	fb.excess = make([]float64, p.K+1)
	for a := 0; a <= p.K; a++ {
		c := 1.0 // C(a, u)·Delta^u
		for u := 0; u <= order; u++ {
			fb.coef[a*r+u] = c
			if u > 0 {
				fb.excess[a] += c
			}
			c *= float64(a-u) / float64(u+1) * p.Delta
			if c < 0 {
				c = 0
			}
		}
		fb.tail[a] = c
	}
	me := p.MEps()
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

// ranges returns the least and the largest entries of x and of y.
func ranges(x, y []float64) (minX, maxX, minY, maxY float64) {
	minX, maxX, minY, maxY = x[0], x[0], y[0], y[0]
	y = y[:len(x)]
	for s, v := range x {
		if v < minX {
			minX = v
		}
		if v > maxX {
			maxX = v
		}
		if w := y[s]; w < minY {
			minY = w
		} else if w > maxY {
			maxY = w
		}
	}
	return minX, maxX, minY, maxY
}

// family returns the bound on the cost, as computed, of every multiset of
// the family of shift s; maxX and minY are the largest x and the smallest
// y.
func (fb *familyBound) family(x, y []float64, s int, maxX, minY float64) float64 {
	if fb.order == 3 && fb.remainder && s >= 3 && len(x)-1-s >= 3 {
		return fb.family3(x, y, s, maxX, minY)
	}
	return fb.familyN(x, y, s, maxX, minY)
}

// flipCeil returns a number above the flip terms of family (all but the
// cost without flips) for every family of a pair whose vectors have t+1
// entries and the ranges given: each difference family weighs is at most
// max(maxX - minX, E·(maxY - minY)), as computed (rounding is monotone),
// and its weights sum to at most (1+excess[t-s])(1+excess[s]) - 1 +
// tail[t] <= 2·excess[t] + excess[t]² + tail[t] (excess grows with its
// index), summed without cancellation; the slack of 2^-30 relative covers
// the roundings of both sums.
func (fb *familyBound) flipCeil(t int, minX, maxX, minY, maxY float64) float64 {
	r := math.Max(maxX-minX, fb.e*(maxY-minY))
	ex := fb.excess[t]
	csum := (2*ex + ex*ex + fb.tail[t]) * (1 + 0x1p-30)
	return csum*r*(1+0x1p-30)*(1+64*unitRoundoff) + csum*fb.mErr
}

// ceil returns a number above family's bound of a family whose cost
// without flips is f0, with flips a flipCeil of its pair: a few operations
// where the bound takes tens. Beyond family's own margins, 2^-40 covers
// the rounding of the sum of f0 and flips, which family sums in other
// parts, and of the last line for negative costs, where it is not
// monotone: a few units in the last place of numbers below 3 in
// magnitude. The search skips a family whose ceil cannot matter
// (docs/solve.md, "Less CPU a round").
func (fb *familyBound) ceil(f0, flips float64) float64 {
	f := f0 + flips
	f += fb.margin + 4*unitRoundoff*math.Abs(f)
	return f + 0x1p-40*(1+math.Abs(f))
}

// familyN is family for any order.
func (fb *familyBound) familyN(x, y []float64, s int, maxX, minY float64) float64 {
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

// family3 is family for order 3 with the remainder, of a family with at
// least 3 teachers in each group: every term is there, so the loops and
// their bounds go, and each difference is computed once (C[s±1] enters
// two terms, C[s] one whose difference is 0). It adds the same terms in
// the same order as family, so the bound is the same bit for bit; the
// search computes it for each of the K² families of every round, and it
// was most of the search's time (docs/solve.md, "Less CPU a round").
func (fb *familyBound) family3(x, y []float64, s int, maxX, minY float64) float64 {
	t := len(x) - 1
	e := fb.e
	ca, cb := fb.coef[(t-s)*4:(t-s)*4+4], fb.coef[s*4:s*4+4]
	xw, yw := x[s-3:s+4], y[s-3:s+4]
	xs, ys := xw[3], yw[3]
	// d(j) = max(C_p[j] - C_p[s], E·(C_q[s] - C_q[j]), 0) for j = s-3..s+3.
	// (Comparisons, not max, which spends branches on NaN and signed
	// zeros that these differences never are.)
	d := func(i int) float64 {
		d := xw[i] - xs
		if dq := e * (ys - yw[i]); dq > d {
			d = dq
		}
		if d < 0 {
			return 0
		}
		return d
	}
	dm3, dm2, dm1, dp1, dp2, dp3 := d(0), d(1), d(2), d(4), d(5), d(6)
	// The terms (u, v) in family's order: (0,1), (0,2), (0,3), (1,0),
	// (1,1), (1,2), (2,0), (2,1), (3,0), at j = s+u-v; (1,1) has d = 0.
	c01, c02, c03 := ca[0]*cb[1], ca[0]*cb[2], ca[0]*cb[3]
	c10, c11, c12 := ca[1]*cb[0], ca[1]*cb[1], ca[1]*cb[2]
	c20, c21, c30 := ca[2]*cb[0], ca[2]*cb[1], ca[3]*cb[0]
	sum := c01*dm1 + c02*dm2 + c03*dm3 + c10*dp1 + c12*dm1 + c20*dp2 + c21*dp1 + c30*dp3
	csum := c01 + c02 + c03 + c10 + c11 + c12 + c20 + c21 + c30
	c := fb.tail[t]
	csum += c
	sum += c * math.Max(maxX-xs, e*(ys-minY))
	f := cost(xs, ys, e) + sum*(1+64*unitRoundoff) + csum*fb.mErr
	return f + fb.margin + 4*unitRoundoff*math.Abs(f)
}

// Candidates searches, for Delta > 0, for the costliest multisets under
// gamma without scoring them exactly. It returns up to n multisets,
// costliest first, with their costs estimated. In each family (see
// familyBound) of the reduced pairs (see Separate) it takes the split that
// maximises the family's cost to second order in Delta (bestSplit) and
// estimates that multiset's cost by its flip expansion, summed in full
// but for binomial tails below 2^-60 (flipWeights.estimate, within about
// 1e-13 of the cost). Let r be the n-th largest of these estimates, each
// capped at its family's bound: the n costliest families, by the cost of
// their costliest split, all have a bound of at least r. Every family
// whose bound reaches r then has its split moved to the costliest that a
// local search by the estimate reaches from it (refineSplit), and the n
// costliest of those are returned, ties broken by the multiset
// (candidate.before, better): the same whatever the number of workers and
// their timing. It also returns an upper bound on the cost of every
// multiset, exact or as computed: the largest family bound plus ErrBound,
// Separate's first pass, which the same walk over the families computes.
// gamma scaled by Budget()/bound is private (f is linear in gamma). The
// search takes O(K^2) steps and a local search for each family whose bound
// reaches r, proves nothing by its estimates, and callers use them to
// choose rows, never to certify; the bound exceeds the maximum by the
// family bound's second-order terms, about 1e-5 of it at K = 1001,
// Delta = 1e-5 (docs/solve.md, "The family bound").
func (p Problem) Candidates(ctx context.Context, gamma []float64, n, workers int) ([]Scored, float64, error) {
	if err := p.Validate(); err != nil {
		return nil, 0, err
	}
	// As Separate checks its workers: a negative count was all cores.
	if err := param.Workers(workers); err != nil {
		return nil, 0, fmt.Errorf("candidates: %w", err)
	}
	if p.Delta == 0 {
		return nil, 0, fmt.Errorf("candidates: Delta = 0 has no near-deterministic corners; use Separate")
	}
	w, err := p.weights(gamma)
	if err != nil {
		return nil, 0, err
	}
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	n = max(n, 0)
	fb := newFamilyBound(p, familyOrder, true)
	hi, lo := epsCorner(p.Eps, p.Delta)
	e, d := p.E(), p.Delta
	x6s, y6s := p.chains(w, p.K+1)
	deal := newDealer(p.K + 1)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		all   []candidate
		near  []nearFamily
		bound = math.Inf(-1)
	)
	for range min(workers, p.K+1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h candHeap
			var mine []nearFamily
			flips := newFlipWeights(p.K, d)
			myBound := math.Inf(-1)
			x, y := make([]float64, p.K+1), make([]float64, p.K+1)
			for {
				n6, ok := deal.take()
				if !ok || ctx.Err() != nil {
					break
				}
				x, y = append(x[:0], x6s[n6]...), append(y[:0], y6s[n6]...)
				last := 0 // the reduced pairs (see Separate)
				if n6 == 0 {
					last = p.K
				}
				// Item 0 holds K+1 pairs (O(K²) work, 50-80 ms at K =
				// 2001): ctx is checked at each pair.
				for n7 := 0; n7 <= last && ctx.Err() == nil; n7++ {
					if n7 > 0 {
						x, y = step(x, lo), step(y, hi)
					}
					t := p.K - n6 - n7
					minX, maxX, minY, maxY := ranges(x, y)
					ceilFlips := fb.flipCeil(t, minX, maxX, minY, maxY)
					for s := 0; s <= t; s++ {
						// This worker's n-th rank is at most r, so a
						// family whose bound is below it is neither kept
						// nor refined; and a family whose ceil is below
						// that and below the largest bound so far changes
						// nothing: most families do not reach either, and
						// the bound costs several times the ceil.
						if n == 0 || len(h) == n {
							thr := myBound
							if n > 0 && h[0].rank < thr {
								thr = h[0].rank
							}
							if fb.ceil(cost(x[s], y[s], e), ceilFlips) < thr {
								continue
							}
						}
						b := fb.family(x, y, s, maxX, minY)
						if b > myBound {
							myBound = b
						}
						if n == 0 || len(h) == n && b < h[0].rank {
							continue
						}
						split := bestSplit(x, y, s, e, d)
						n2, n3, n4, n5 := split[0], split[1], split[2], split[3]
						cand := candidate{Scored: Scored{Config: Config{t - s - n2 - n3, s - n4 - n5, n2, n3, n4, n5, n6, n7}}}
						cand.F = flips.estimate(x, y, s, cand.Config, e)
						// The rank is capped at the bound, so that the
						// tests above skip only families ranked after the
						// list's last, whatever it holds when.
						cand.rank = min(cand.F, b)
						mine = append(mine, nearFamily{cand.Scored, b})
						if len(h) < n {
							heap.Push(&h, cand)
						} else if cand.before(h[0]) {
							h[0] = cand
							heap.Fix(&h, 0)
						}
					}
				}
			}
			mu.Lock()
			all = append(all, h...)
			near = append(near, mine...)
			bound = max(bound, myBound)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	// Each worker kept its n first families in the order of
	// candidate.before, so the n-th of their union is the n-th of all
	// families, whichever worker walked which; and each kept every family
	// whose bound reached its own n-th rank, at most r.
	r := math.Inf(-1)
	if len(all) >= n && n > 0 {
		sort.Slice(all, func(i, j int) bool { return all[i].before(all[j]) })
		r = all[n-1].rank
	}
	var out []Scored
	for _, f := range near {
		if f.bound >= r {
			out = append(out, f.Scored)
		}
	}
	if err := p.refineSplits(ctx, out, x6s, y6s, workers); err != nil {
		return nil, 0, err
	}
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out[:min(n, len(out))], bound + p.ErrBound(), nil
}

// nearFamily is a family of Candidates that may be among its n costliest:
// a multiset of it with its estimated cost, and the family's bound.
type nearFamily struct {
	Scored
	bound float64
}

// refineSplits moves each multiset of cs within its family to the split
// of highest estimated cost (refineSplit), in place. bestSplit's choice is
// right to second order in Delta, but near the budget the cost over a
// family's splits is flat to 1e-6 of it, and the third-order terms move
// its maximum: at K = 1001, m = 8, Delta = 1e-4 the search put all 456
// teachers of a group at a corner, with a cost 1e-11 below the budget,
// where the exact pass found 227 of them there 1.35e-6 above it, and each
// row the search misses costs an exact pass. x6s and y6s are the pairs'
// vectors by n6 (Problem.chains); a family with n6 = 0 and n7 > 0 steps
// them n7 times, as Candidates does, once for each n7.
func (p Problem) refineSplits(ctx context.Context, cs []Scored, x6s, y6s [][]float64, workers int) error {
	hi, lo := epsCorner(p.Eps, p.Delta)
	e := p.E()
	// The pairs (0, n7), in order of n7, are stepped once each.
	var byN7 []int
	for i, c := range cs {
		if c.Config[6] == 0 && c.Config[7] > 0 {
			byN7 = append(byN7, i)
		}
	}
	sort.Slice(byN7, func(a, b int) bool { return cs[byN7[a]].Config[7] < cs[byN7[b]].Config[7] })
	pairs := make([][2][]float64, len(cs))
	x, y := slices.Clone(x6s[0]), slices.Clone(y6s[0]) // stepped in place
	var px, py []float64
	n7 := 0
	for _, i := range byN7 {
		if n7 < cs[i].Config[7] {
			for ; n7 < cs[i].Config[7]; n7++ {
				x, y = step(x, lo), step(y, hi)
			}
			px, py = slices.Clone(x), slices.Clone(y)
		}
		pairs[i] = [2][]float64{px, py}
	}
	for i, c := range cs {
		if pairs[i][0] == nil {
			pairs[i] = [2][]float64{x6s[c.Config[6]], y6s[c.Config[6]]}
		}
	}
	deal := newDealer(len(cs))
	var wg sync.WaitGroup
	for range min(workers, len(cs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			flips := newFlipWeights(p.K, p.Delta)
			for {
				i, ok := deal.take()
				if !ok || ctx.Err() != nil {
					return
				}
				cs[i] = refineSplit(pairs[i][0], pairs[i][1], cs[i], e, flips)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// refineSplit returns the multiset of c's family of highest estimated
// cost (flipWeights.estimate) that a compass search from c reaches, and
// its cost, c itself when none is higher. The search moves two counts, as
// bestSplit does: a in [-A, A] for group A's A teachers, at (Delta, 0)
// when positive and (0, Delta) when negative, and b in [-B, B] for group
// B's, at (1-Delta, 1) when positive and (1, 1-Delta) when negative; it
// tries steps of ±h in each, moves while one gains, and halves h down to
// one teacher. The cost moves only on strict gains, so the search ends,
// and what it returns depends on c alone.
func refineSplit(x, y []float64, c Scored, e float64, flips *flipWeights) Scored {
	cfg := c.Config
	A, B := cfg[0]+cfg[2]+cfg[3], cfg[1]+cfg[4]+cfg[5]
	s := B
	a, b := cfg[3]-cfg[2], cfg[4]-cfg[5]
	at := func(a, b int) Config {
		out := Config{A, B, 0, 0, 0, 0, cfg[6], cfg[7]}
		if a > 0 {
			out[3] = a
		} else {
			out[2] = -a
		}
		if b > 0 {
			out[4] = b
		} else {
			out[5] = -b
		}
		out[0] -= out[2] + out[3]
		out[1] -= out[4] + out[5]
		return out
	}
	best := flips.estimate(x, y, s, cfg, e)
	h := 1
	for h*2 <= max(A, B) {
		h *= 2
	}
	for ; h >= 1; h /= 2 {
		for moved := true; moved; {
			moved = false
			for _, d := range [4][2]int{{h, 0}, {-h, 0}, {0, h}, {0, -h}} {
				na, nb := a+d[0], b+d[1]
				if na < -A || na > A || nb < -B || nb > B {
					continue
				}
				next := at(na, nb)
				if f := flips.estimate(x, y, s, next, e); f > best {
					best, a, b, moved = f, na, nb, true
				}
			}
		}
	}
	return Scored{Config: at(a, b), F: best}
}

// bestSplit returns the split (n2, n3, n4, n5) of the family of shift s,
// of the pair with vectors x and y (length t+1), that maximises its cost
// to second order in Delta. Of each group
// one corner takes some teachers, the others staying at (0, 0) or (1, 1),
// since a teacher at a corner and another at its mirror image cost no more
// than two sure teachers (see Separate); the cost is then quadratic in the
// two counts. For a side's vector C and U, V the flips up and down of n
// and m teachers, E[C[s+U-V]] - C[s] is to second order
//
//	n·Delta·d+ + m·Delta·d- + C(n,2)·Delta²·D++ + C(m,2)·Delta²·D-- - n·m·Delta²·(d+ + d-),
//
// with d± = C[s±1] - C[s] and D++, D-- the second differences at s.
// Group A (t - s teachers) flips up, at (Delta, 0) (P side) or (0, Delta)
// (Q side); group B (s teachers) flips down, at (1-Delta, 1) (P) or
// (1, 1-Delta) (Q). A group's count alone is maximised exactly; two
// counts on one side by alternating between them.
func bestSplit(x, y []float64, s int, e, d float64) [4]int {
	t := len(x) - 1
	a, b := t-s, s
	p, q := sideModel(x, s, d, 1), sideModel(y, s, d, -e)
	best, split := math.Inf(-1), [4]int{}
	if v, n, m := p.maxTwo(a, b); v > best { // (n3, n4)
		best, split = v, [4]int{0, n, m, 0}
	}
	if v, n, m := q.maxTwo(a, b); v > best { // (n2, n5)
		best, split = v, [4]int{n, 0, 0, m}
	}
	va, na := maxOne(p.up1, p.up2, a)
	vb, nb := maxOne(q.dn1, q.dn2, b)
	if va+vb > best { // (n3, n5)
		best, split = va+vb, [4]int{0, na, 0, nb}
	}
	va, na = maxOne(q.up1, q.up2, a)
	vb, nb = maxOne(p.dn1, p.dn2, b)
	if va+vb > best { // (n2, n4)
		split = [4]int{na, 0, nb, 0}
	}
	return split
}

// flipModel holds the first- and second-order coefficients of one side's
// cost in the counts of teachers that flip up (group A) and down (group
// B), and the mixed one (see bestSplit).
type flipModel struct{ up1, up2, dn1, dn2, mix float64 }

// sideModel returns the flip model at s of a side's vector c, whose cost
// is sign·c.
func sideModel(c []float64, s int, d, sign float64) flipModel {
	var k flipModel
	t := len(c) - 1
	d1, d2 := d*sign, d*d*sign
	if s < t {
		k.up1 = d1 * (c[s+1] - c[s])
		if s+2 <= t {
			k.up2 = d2 * (c[s+2] - 2*c[s+1] + c[s])
		}
	}
	if s > 0 {
		k.dn1 = d1 * (c[s-1] - c[s])
		if s >= 2 {
			k.dn2 = d2 * (c[s-2] - 2*c[s-1] + c[s])
		}
	}
	if s > 0 && s < t {
		k.mix = -d2 * (c[s+1] + c[s-1] - 2*c[s])
	}
	return k
}

// maxTwo maximises the side's cost over n teachers of group A (at most a)
// and m of group B (at most b) flipping on it, alternating between the
// two counts.
func (k flipModel) maxTwo(a, b int) (v float64, n, m int) {
	for range 3 {
		_, n = maxOne(k.up1+float64(m)*k.mix, k.up2, a)
		v, m = maxOne(k.dn1+float64(n)*k.mix, k.dn2, b)
	}
	return v + float64(n)*k.up1 + float64(n)*float64(n-1)/2*k.up2, n, m
}

// maxOne maximises n·g1 + C(n, 2)·g2 over the integers 0 <= n <= top.
func maxOne(g1, g2 float64, top int) (float64, int) {
	val := func(n int) float64 { return float64(n)*g1 + float64(n)*float64(n-1)/2*g2 }
	best, arg := 0.0, 0
	if v := val(top); v > best {
		best, arg = v, top
	}
	// The increments g1 + n·g2 fall when g2 < 0: the maximum is where
	// they change sign.
	if r := -g1 / g2; g2 < 0 && r >= 0 && r < float64(top) {
		for _, n := range [2]int{int(r), int(r) + 1} {
			if v := val(n); v > best {
				best, arg = v, n
			}
		}
	}
	return best, arg
}

// candidate is a multiset of Candidates with its estimated cost and its
// rank: that cost capped at its family's bound.
type candidate struct {
	Scored
	rank float64
}

// before is the total order in which Candidates keeps families: higher
// rank first, ties broken by the multiset's tieKey, whose first three
// counts (n6, n7, s) name its family, so that which families are kept
// does not depend on the order in which a worker meets them.
func (a candidate) before(b candidate) bool {
	if a.rank != b.rank {
		return a.rank > b.rank
	}
	return keyLess(tieKey(a.Config), tieKey(b.Config))
}

// candHeap is a min-heap of candidates in the order of candidate.before:
// its root is the one kept last.
type candHeap []candidate

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return h[j].before(h[i]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// flipWeights holds the pmfs of Binomial(n, Delta), the number of flips
// among n teachers within Delta of a deterministic vote, each as the
// weights from its first index on, with tails below 2^-60 of the mode's
// weight dropped; computed on first use.
type flipWeights struct {
	delta float64
	first []int
	w     [][]float64
}

func newFlipWeights(k int, delta float64) *flipWeights {
	return &flipWeights{delta: delta, first: make([]int, k+1), w: make([][]float64, k+1)}
}

// of returns the first index and the weights of Binomial(n, Delta).
func (fw *flipWeights) of(n int) (int, []float64) {
	if fw.w[n] == nil {
		fw.first[n], fw.w[n] = binomialWeights(n, fw.delta)
	}
	return fw.first[n], fw.w[n]
}

// binomialWeights returns the pmf of Binomial(n, q) from its first index
// on, dropping the tails where the weight falls below 2^-60 of the mode's.
// The weights are computed from the mode outwards by the ratio of
// successive binomial probabilities, so that none underflows, and then
// normalised to sum to 1 (the tails dropped weigh less than 2^-50).
func binomialWeights(n int, q float64) (int, []float64) {
	mode := min(max(int(math.Floor(float64(n+1)*q)), 0), n)
	const cut = 0x1p-60
	var down []float64 // mode-1, mode-2, ...
	for k, v := mode, 1.0; k > 0; k-- {
		v *= float64(k) / float64(n-k+1) * (1 - q) / q
		if v < cut {
			break
		}
		down = append(down, v)
	}
	w := make([]float64, 0, len(down)+1)
	for i := len(down) - 1; i >= 0; i-- {
		w = append(w, down[i])
	}
	w = append(w, 1)
	for k, v := mode, 1.0; k < n; k++ {
		v *= float64(n-k) / float64(k+1) * q / (1 - q)
		if v < cut {
			break
		}
		w = append(w, v)
	}
	var sum float64
	for _, v := range w {
		sum += v
	}
	for i := range w {
		w[i] /= sum
	}
	return mode - len(down), w
}

// estimate returns the cost of the multiset c of the family of shift s
// whose pair has the vectors x (P side) and y (Q side), by its flip
// expansion (see familyBound): on each side the flips up of the teachers
// at (0, Delta) or (Delta, 0) and down of those at (1-Delta, 1) or
// (1, 1-Delta) shift the vector's index.
func (fw *flipWeights) estimate(x, y []float64, s int, c Config, e float64) float64 {
	side := func(v []float64, up, down int) float64 {
		u0, wu := fw.of(up)
		v0, wv := fw.of(down)
		var sum float64
		for i, pu := range wu {
			var inner float64
			for j, pv := range wv {
				inner += pv * v[s+u0+i-v0-j]
			}
			sum += pu * inner
		}
		return sum
	}
	return side(x, c[3], c[4]) - e*side(y, c[2], c[5])
}
