package constraints

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
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
	e          float64 // e^{m·eps}
	margin     float64 // roundingMargin's constant part
	mErr       float64 // bound on the rounding error of one difference
}

// familyOrder is the number of flips familyBound bounds term by term: the
// rest is of order C(t, 4)·Delta^4, 3e-9 at t = 1000 and Delta = 1e-5.
const familyOrder = 3

func newFamilyBound(p Problem, order int, remainder bool) *familyBound {
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

// Candidates returns, for Delta > 0, up to n multisets likely to be among
// the costliest under gamma: in each family (see familyBound) the split
// that the first-order term of its flip expansion favours (every teacher of
// a group at one corner), for the n families whose cost so estimated is
// largest. It is a cheap search for violated rows, at about half the cost
// of Separate's first pass, and proves nothing; the costs it ranks by are
// estimates, so callers score the multisets (Cost) before using them.
func (p Problem) Candidates(ctx context.Context, gamma []float64, n, workers int) ([]Config, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Delta == 0 {
		return nil, fmt.Errorf("candidates: Delta = 0 has no near-deterministic corners; use Separate")
	}
	w, err := p.weights(gamma)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	hi, lo := epsCorner(p.Eps, p.Delta)
	e, d := p.E(), p.Delta
	x6s, y6s := p.chains(w, p.K+1)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		mu   sync.Mutex
		all  []Scored
	)
	for range min(workers, p.K+1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h scoredHeap
			x, y := make([]float64, p.K+1), make([]float64, p.K+1)
			for {
				n6 := int(next.Add(1) - 1)
				if n6 > p.K || ctx.Err() != nil {
					break
				}
				x, y = append(x[:0], x6s[n6]...), append(y[:0], y6s[n6]...)
				last := 0 // the reduced pairs (see Separate)
				if n6 == 0 {
					last = p.K
				}
				for n7 := 0; n7 <= last; n7++ {
					if n7 > 0 {
						x, y = step(x, lo), step(y, hi)
					}
					t := p.K - n6 - n7
					for s := 0; s <= t; s++ {
						a, b := t-s, s
						f := cost(x[s], y[s], e)
						ca, cb := 0, 1 // the corners groups A and B go to
						if a > 0 {
							dp, dq := x[s+1]-x[s], e*(y[s]-y[s+1])
							if dp > 0 && dp >= dq {
								f, ca = f+float64(a)*d*dp, 3
							} else if dq > 0 {
								f, ca = f+float64(a)*d*dq, 2
							}
						}
						if b > 0 {
							dp, dq := x[s-1]-x[s], e*(y[s]-y[s-1])
							if dp > 0 && dp >= dq {
								f, cb = f+float64(b)*d*dp, 4
							} else if dq > 0 {
								f, cb = f+float64(b)*d*dq, 5
							}
						}
						if len(h) == n && f < h[0].F {
							continue
						}
						c := make(Config, 8)
						c[ca] += a
						c[cb] += b
						c[6], c[7] = n6, n7
						if len(h) < n {
							heap.Push(&h, Scored{Config: c, F: f})
						} else if better(Scored{Config: c, F: f}, h[0]) {
							h[0] = Scored{Config: c, F: f}
							heap.Fix(&h, 0)
						}
					}
				}
			}
			mu.Lock()
			all = append(all, h...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sort.Slice(all, func(i, j int) bool { return better(all[i], all[j]) })
	out := make([]Config, 0, min(n, len(all)))
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.Config)
	}
	return out, nil
}
