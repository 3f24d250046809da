package constraints

import (
	"context"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// sepWorker holds one goroutine's scratch space and partial results.
type sepWorker struct {
	p      Problem
	w      []float64
	e      float64
	hi, lo float64 // e^eps corner coordinates
	k      int     // Top
	floor  float64

	p6s, q6s  [][]float64 // correlation vectors after n6 teachers at the first e^eps corner
	p67, q67  []float64   // correlation vectors after the e^eps corners
	base, cur []float64   // scratch vectors for filling the tables
	xt, yt    []float64   // tables of the Delta > 0 case; see scoreFamily
	yr, ym    []float64   // running maxima of yt
	xb, yb    []float64   // running maxima of the sides' column bounds
	sides     [2]familySide

	best       float64
	bestConfig Config
	top        scoredHeap
	global     *sharedBest // the best cost of all workers

	window int // entries a side's vector keeps beyond those read (see scoreFamily)

	bounds []float64    // familyBound of each reduced pair, by reducedIndex (Delta > 0)
	fb     *familyBound // nil when Delta = 0
	fams   []int        // the families of one pair that reach the threshold

	shard, shards int
}

// sharedBest is the largest cost any worker has scored: a multiset below it
// cannot be the worst, whichever worker meets it.
type sharedBest struct{ bits atomic.Uint64 }

func (b *sharedBest) load() float64 { return math.Float64frombits(b.bits.Load()) }

func (b *sharedBest) set(f float64) { b.bits.Store(math.Float64bits(f)) }

// raise makes the shared best at least f.
func (b *sharedBest) raise(f float64) {
	for {
		old := b.bits.Load()
		if math.Float64frombits(old) >= f || b.bits.CompareAndSwap(old, math.Float64bits(f)) {
			return
		}
	}
}

// threshold is the cost a multiset must reach to matter: the best cost so
// far, of any worker, or the entry to this worker's top list.
func (sw *sepWorker) threshold() float64 {
	return math.Min(math.Max(sw.best, sw.global.load()), sw.heapThreshold())
}

func newSepWorker(p Problem, w []float64, opts SeparateOptions) *sepWorker {
	hi, lo := epsCorner(p.Eps, p.Delta)
	n := p.K + 1
	sw := &sepWorker{
		p: p, w: w, e: p.E(), hi: hi, lo: lo, k: opts.Top, floor: opts.Floor,
		p67: make([]float64, n), q67: make([]float64, n),
		base: make([]float64, n), cur: make([]float64, n),
		best: math.Inf(-1), window: p.window(),
	}
	return sw
}

// window returns how many entries beyond the last one read scoreFamily
// keeps of a side's vector while teachers at Delta step it: the least w
// with 2(1+E)·C(K, w)·Delta^w <= 2^-40 of the rounding bound, K+1 (the
// whole vector) when there is none. A vector cut there and stepped with its
// last entry held fixed gives each entry read the value the whole vector
// gives but on the paths of w or more flips up among at most K teachers,
// of probability at most C(K, w)·Delta^w, on which a side's values differ
// by at most 2 (E times on the p' side): a cost within 2^-40 of ErrBound,
// which the bound's raise of 2^-20 covers (docs/solve.md, "The rounding
// bound"). At K = 2001, Delta = 1e-4 it keeps 16 entries where the whole
// vector has up to 2,000, and an exact pass scores a family in O(s·(t-s))
// steps instead of O(s·(t-s)²).
func (p Problem) window() int {
	tol := 0x1p-40 * p.roundingSum()
	c := 2 * (1 + p.E()) // times C(K, w)·Delta^w
	for w := 1; w <= p.K; w++ {
		c *= float64(p.K-w+1) / float64(w) * p.Delta
		if c <= tol {
			return w
		}
	}
	return p.K + 1
}

// step applies one Bernoulli(a) factor to the correlation vector c in
// place; c loses its last entry.
func step(c []float64, a float64) []float64 {
	n := len(c) - 1
	for s := 0; s < n; s++ {
		c[s] += a * (c[s+1] - c[s])
	}
	return c[:n]
}

// item bounds the cost of every multiset of the reduced pairs with n6
// teachers at the corner ((e+Delta)/(e+1), (1-Delta)/(e+1)), for Delta >
// 0: the pair (n6, 0), and for n6 = 0 every pair (0, n7).
func (sw *sepWorker) item(ctx context.Context, n6 int) {
	k := sw.p.K
	p67 := append(sw.p67[:0], sw.p6s[n6]...)
	q67 := append(sw.q67[:0], sw.q6s[n6]...)
	last := 0
	if n6 == 0 {
		last = k
	}
	for n7 := 0; n7 <= last && ctx.Err() == nil; n7++ {
		if n7 > 0 {
			p67 = step(p67, sw.lo)
			q67 = step(q67, sw.hi)
		}
		if sw.mine(n6, n7) {
			b := math.Inf(1)
			if sw.fb != nil {
				b = sw.fb.pair(p67, q67)
			}
			sw.bounds[reducedIndex(k, n6, n7)] = b
		}
	}
}

// scorePair scores every multiset of the pair (n6, n7), with vectors p67
// and q67, whose family bound reaches the threshold (every multiset when
// the worker has no family bound). The family of the largest bound comes
// first, alone: its costliest multisets raise the threshold, which the
// others must then reach. Scored first, a pair met with no cost known yet
// would have every family scored (at K = 501, a tenth of a second each).
// The threshold only rises, so a family below it now stays below it.
// It stops once ctx is done.
func (sw *sepWorker) scorePair(ctx context.Context, n6, n7 int, p67, q67 []float64) {
	if sw.fb == nil {
		sw.fams = sw.fams[:0]
		for s := range p67 {
			sw.fams = append(sw.fams, s)
		}
		sw.pairFamilies(ctx, n6, n7, p67, q67, sw.fams)
		return
	}
	top, best := -1, math.Inf(-1)
	maxX, minY := vecRange(p67, q67)
	for s := range p67 {
		if b := sw.fb.family(p67, q67, s, maxX, minY); b > best {
			top, best = s, b
		}
	}
	if best < sw.threshold() {
		return
	}
	sw.pairFamilies(ctx, n6, n7, p67, q67, []int{top})
	sw.fams = sw.fb.families(p67, q67, sw.threshold(), sw.fams[:0])
	sw.fams = slices.DeleteFunc(sw.fams, func(s int) bool { return s == top })
	sw.pairFamilies(ctx, n6, n7, p67, q67, sw.fams)
}

// scorePairs scores, for Delta > 0, every multiset of the reduced pairs
// (n6, n7) of this shard whose family bound reaches the threshold,
// costliest bound first: a pair whose bound is below the best cost found
// so far (and below the entry to the top list) holds no multiset that
// matters, since the bound exceeds every cost of the pair as computed.
func scorePairs(ctx context.Context, p Problem, workers []*sepWorker, bounds []float64, shards, shard int, progress func(float64)) error {
	type pair struct {
		n6, n7 int
		bound  float64
	}
	var pairs []pair
	forReducedPairs(p.K, func(n6, n7 int) {
		if i := reducedIndex(p.K, n6, n7); shards <= 1 || i%shards == shard {
			pairs = append(pairs, pair{n6, n7, bounds[i]})
		}
	})
	// Pairs of equal bounds stay in the order of reducedIndex: the order
	// is fixed by the data alone.
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].bound > pairs[j].bound })
	deal := newDealer(len(pairs))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		done     int
		canceled atomic.Bool
	)
	for _, sw := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, ok := deal.take()
				if !ok || canceled.Load() {
					return
				}
				if ctx.Err() != nil {
					canceled.Store(true)
					return
				}
				pr := pairs[i]
				if pr.bound >= sw.threshold() {
					p67 := append(sw.p67[:0], sw.p6s[pr.n6]...)
					q67 := append(sw.q67[:0], sw.q6s[pr.n6]...)
					for range pr.n7 {
						p67, q67 = step(p67, sw.lo), step(q67, sw.hi)
					}
					sw.scorePair(ctx, pr.n6, pr.n7, p67, q67)
				}
				mu.Lock()
				done++
				progress(0.5 + 0.5*float64(done)/float64(len(pairs)))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// pairFamilies scores, for Delta > 0 and fixed (n6, n7), every multiset of
// the families (see familyBound) whose shift s is in fams, one family at a
// time; it stops between families, and between a family's columns, once
// ctx is done, leaving the pass to report ctx's error.
func (sw *sepWorker) pairFamilies(ctx context.Context, n6, n7 int, p67, q67 []float64, fams []int) {
	for _, s := range fams {
		if ctx.Err() != nil {
			return
		}
		sw.scoreFamily(ctx, n6, n7, p67, q67, s)
	}
}

// scoreFamily scores every multiset of the family of shift s.
//
// In the family of shift s the cost of (n0, ..., n5) is x + y with
// x = (T_Delta^n3 T_{1-Delta}^n4 C_p)[s - n4] and y = -E·(T_Delta^n2
// T_{1-Delta}^n5 C_q)[s - n5], where T_a is one Bernoulli(a) teacher, and
// n2 + n3 <= t - s, n4 + n5 <= s. One sweep over (n4, n3) of the vectors
// T_Delta^n3 T_{1-Delta}^n4 C fills x for every multiset of the family,
// and the same for y; the values are those the steps give for the whole
// vector, bit for bit, since a step at an index reads only that index and
// the next, but for the window's cut (Problem.window), which moves none by
// more than 2^-40 of ErrBound. The family is alone in its sweep: the cut
// then falls sw.window entries after the one read whichever families a
// pass scores, so a multiset's cost is a function of the multiset alone,
// whatever the threshold (which decides the families scored) and the
// timing of the workers that set it; and a sweep over several families
// steps the entries between their indices too (at K = 2001, 1.5 times the
// steps of scoring each alone). For each (n3, n4) the largest y over the
// rest of the family (a two-dimensional running maximum) says whether any
// completion reaches the threshold; only then are the completions visited.
func (sw *sepWorker) scoreFamily(ctx context.Context, n6, n7 int, p67, q67 []float64, s int) {
	t := sw.p.K - n6 - n7
	d := sw.p.Delta
	nb := s + 1
	// Entry n3·(s+1) + n4 of x, n2·(s+1) + n5 of y.
	x := grow(&sw.xt, (t-s+1)*nb)
	y := grow(&sw.yt, (t-s+1)*nb)
	xs, ys := &sw.sides[0], &sw.sides[1]
	xs.prepare(p67, s, t, d, 1, sw.window, &sw.base)
	ys.prepare(q67, s, t, d, -sw.e, sw.window, &sw.base)
	// A family's costliest multisets are mostly where its bound's first
	// order term is largest: each group of teachers at one corner. Scoring
	// those first raises the threshold before the plateaus of equal cost
	// that a nearly constant gamma creates are visited, and before the
	// columns are weighed.
	for _, a := range [2]int{0, s} {
		xs.fill(x, a, t-s, d, &sw.cur)
		ys.fill(y, a, t-s, d, &sw.cur)
	}
	r := t - s
	for _, g := range [3][2]int{{0, 0}, {r, 0}, {0, r}} { // (n2, n3)
		for _, h := range [3][2]int{{0, 0}, {s, 0}, {0, s}} { // (n4, n5)
			n2, n3, n4, n5 := g[0], g[1], h[0], h[1]
			var cfg Config
			sw.raise(x[n3*nb+n4]+y[n2*nb+n5], &cfg, func() Config {
				return Config{r - n2 - n3, s - n4 - n5, n2, n3, n4, n5, n6, n7}
			})
		}
	}
	// A column of x (n4 = a) meets the columns n5 <= s - a of y, and a
	// column of y the columns n4 <= s - b of x: one whose bound plus the
	// largest bound it meets is below the threshold holds no multiset
	// that reaches it, now or later (the threshold only rises), and is
	// left unfilled (filled false), its entries skipped below as if
	// -Inf; fl(u + v) is monotone in each operand, so no computed cost of
	// such a column reaches the threshold either. The columns filled are those a whole
	// fill gives, bit for bit. Without a family bound (the tests'
	// exhaustive reference) every column is filled.
	thr := sw.threshold()
	// xb[j] and yb[j]: the largest bound of the columns up to j.
	xb, yb := grow(&sw.xb, nb), grow(&sw.yb, nb)
	for j := range nb {
		xb[j], yb[j] = xs.bound[j], ys.bound[j]
		if j > 0 {
			xb[j], yb[j] = math.Max(xb[j], xb[j-1]), math.Max(yb[j], yb[j-1])
		}
	}
	for a := 1; a < s; a++ {
		// A column takes about window·(t-s) steps: a family whose window
		// is the whole vector (a large Delta) about a second at K = 2001,
		// each of its columns about a millisecond.
		if ctx.Err() != nil {
			return
		}
		if sw.fb == nil || xs.bound[a]+yb[s-a] >= thr {
			xs.fill(x, a, t-s, d, &sw.cur)
		}
		if sw.fb == nil || ys.bound[a]+xb[s-a] >= thr {
			ys.fill(y, a, t-s, d, &sw.cur)
		}
	}
	// yr[i·nb + j] = max of y over n2 = i, n5 <= j, and ym[i·nb + j]
	// the max over n2 <= i, n5 <= j.
	yr, ym := grow(&sw.yr, len(y)), grow(&sw.ym, len(y))
	for i := 0; i <= t-s; i++ {
		for j := 0; j <= s; j++ {
			r := y[i*nb+j]
			if !ys.filled[j] {
				r = math.Inf(-1)
			}
			if j > 0 && yr[i*nb+j-1] > r {
				r = yr[i*nb+j-1]
			}
			yr[i*nb+j] = r
			if i > 0 && ym[(i-1)*nb+j] > r {
				r = ym[(i-1)*nb+j]
			}
			ym[i*nb+j] = r
		}
	}
	thr = sw.threshold()
	for n3 := 0; n3 <= t-s; n3++ {
		for n4 := 0; n4 <= s; n4++ {
			if !xs.filled[n4] {
				continue
			}
			xv := x[n3*nb+n4]
			r2, r5 := t-s-n3, s-n4 // the largest n2 and n5
			if m := xv + ym[r2*nb+r5]; m < thr || m == thr && sw.tiesSettled([7]int{n6, n7, s, n3, n4}) {
				continue
			}
			settled := sw.tiesSettled([7]int{n6, n7, s, n3, n4})
			for n2 := 0; n2 <= r2; n2++ {
				if m := xv + yr[n2*nb+r5]; m < thr || m == thr && settled {
					continue
				}
				for n5 := 0; n5 <= r5; n5++ {
					if !ys.filled[n5] {
						continue
					}
					if f := xv + y[n2*nb+n5]; f > thr || f == thr && !settled {
						sw.offer(f, func() Config {
							return Config{t - s - n2 - n3, s - n4 - n5, n2, n3, n4, n5, n6, n7}
						})
						thr = sw.threshold()
						settled = sw.tiesSettled([7]int{n6, n7, s, n3, n4, n2, n5 + 1})
					}
				}
			}
		}
	}
}

// familySide is one side of a family (scoreFamily): for each number a of
// teachers at 1-Delta, the window of the vector after them from the entry
// the family reads on, and a bound on the side's values in the column a.
type familySide struct {
	wins   []float64 // a's window at a·n
	n      int       // entries a window holds
	cut    bool      // whether a window ends before the vector
	scale  float64   // 1 on the P side, -E on the Q side
	bound  []float64 // the largest value of column a, bounded above
	filled []bool    // whether column a of the table is filled
	tails  []float64 // tails[k] bounds the chance of k or more flips at Delta
}

// prepare sets the windows of the family of shift s over the vector c
// (t teachers but those at e^eps corners) and their columns' bounds.
//
// A step reads only an entry and the next, so no entry left of s - a is
// needed, and none right of s + window of c: base keeps c's first
// s + window + 1 entries, exact after every step, and a's window holds
// them from s - a on (see Problem.window).
//
// The value of column a after i <= t - s teachers at Delta is, up to
// rounding, the mean of the window's entries v_k at the number of flips
// among them (capped at the window's last entry when cut, which is held
// fixed): v_0 plus a sum of W_k·(v_k - v_0) whose tails T_k = W_k +
// W_(k+1) + ... are at most Pr[Binomial(t-s, Delta) >= k] <= min(1,
// ((t-s)·Delta)^k/k!) = b_k. With H_k the largest (v_j - v_0)+ over
// 1 <= j <= k, nondecreasing, the sum is at most
// sum_k W_k·H_k = sum_k T_k·(H_k - H_(k-1)) <= sum_k b_k·(H_k - H_(k-1)),
// and its least value the same with (v_0 - v_j)+. Each step's rounding
// moves an entry by at most 7.01u times the largest magnitude M of the
// window (u = 2^-53); the bound adds 8u·M for each of the t - s steps and
// (4n + 32)u·M for its own arithmetic and the scaling of an entry, n the
// window's entries: the differences v_k - v_0 within 2u·M (the sum moves
// by no more than its largest argument does), the sum of at most n - 1
// terms of total at most 2M within (n + 1)·2u·M, and the last sums and
// products within a few u·M.
func (fs *familySide) prepare(c []float64, s, t int, d, scale float64, window int, base *[]float64) {
	end := min(len(c), s+1+window)
	fs.cut, fs.n, fs.scale = end < len(c), end-s, scale
	b := append((*base)[:0], c[:end]...)
	fs.wins = grow(&fs.wins, (s+1)*fs.n)
	fs.bound = grow(&fs.bound, s+1)
	if cap(fs.filled) < s+1 {
		fs.filled = make([]bool, s+1)
	}
	fs.filled = fs.filled[:s+1]
	clear(fs.filled)
	tails := grow(&fs.tails, fs.n)
	// ((t-s)·Delta)^k/k!, raised by 2^-40 a factor for its roundings
	mean, pow := float64(t-s)*d, 1.0
	for k := 1; k < fs.n; k++ {
		pow *= mean * (1 + 0x1p-40) / float64(k)
		tails[k] = math.Min(1, pow)
	}
	slack := float64(8*(t-s)+4*fs.n+32) * unitRoundoff
	for a := 0; a <= s; a++ { // a teachers at 1-Delta
		if a > 0 {
			b = step(b, 1-d)
		}
		w := fs.wins[a*fs.n : (a+1)*fs.n]
		copy(w, b[s-a:])
		v0 := w[0]
		var h, move float64
		mag := math.Abs(v0)
		for k, v := range w[1:] {
			dv := v - v0
			if scale < 0 {
				dv = -dv
			}
			if dv > h {
				move += tails[k+1] * (dv - h)
				h = dv
			}
			// math.Max(mag, |v|) but for its call, most of this loop's
			// cost: the comparison decides all but NaN.
			if x := math.Abs(v); x > mag {
				mag = x
			} else if !(x <= mag) {
				mag = math.Max(mag, x)
			}
		}
		fs.bound[a] = scale*v0 + math.Abs(scale)*(move+slack*mag)
	}
	*base = b
}

// fill sets column a of table (row i: i teachers at Delta, up to ti) to
// the entry the family reads of the window of a after i steps of Delta,
// times the side's scale; cut, the window keeps its length, its last
// entry held fixed.
func (fs *familySide) fill(table []float64, a, ti int, d float64, buf *[]float64) {
	cur := append((*buf)[:0], fs.wins[a*fs.n:(a+1)*fs.n]...)
	nb := len(fs.bound)
	for i := 0; i <= ti; i++ {
		switch {
		case i == 0:
		case fs.cut:
			cur = step(cur, d)[:len(cur)]
		default:
			cur = step(cur, d)
		}
		table[i*nb+a] = fs.scale * cur[0]
	}
	fs.filled[a] = true
	*buf = cur[:0]
}

// grow returns (*buf)[:n], reallocating when it is too short.
func grow(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	return (*buf)[:n]
}
