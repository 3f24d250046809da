package constraints

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
)

// Scored is a configuration with its privacy cost f.
type Scored struct {
	Config Config
	F      float64
}

// SeparateOptions tune Separate.
type SeparateOptions struct {
	// Top is how many of the costliest configurations with cost > Floor to
	// return in Separation.Top (0: none; the worst one is always returned
	// in Separation.Worst). They are reduced: no teacher at one of the two
	// e^eps corners while another is at the other (see Separate); the rows
	// of the others are convex combinations of theirs.
	Top int
	// Floor is the cost a configuration must exceed to enter Top; a
	// cutting-plane loop passes the budget so that Top holds violated rows.
	Floor float64
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Progress, if set, is called with the fraction of the work done.
	// Calls are serialised.
	Progress func(fraction float64)
	// Shard and Shards split the work into Shards independent parts, of
	// which Separate does part Shard (0 <= Shard < Shards); Shards <= 1
	// means all of it. The work items are the reduced pairs (n6, n7) of
	// counts at the two e^eps corners (in the one-vote relation, the 2K
	// pairs of vote vectors), dealt round-robin. MergeSeparations
	// combines the parts exactly.
	Shard, Shards int
}

// Separation is the exact solution of the separation problem for one gamma.
type Separation struct {
	MaxF  float64  // max of f over all corner multisets
	Worst Config   // a multiset attaining MaxF
	Top   []Scored // the costliest reduced multisets above Floor, by decreasing F
	// ErrBound bounds |computed f - exact f| for every multiset plus
	// |Budget() - exact budget|: MaxF is the exact maximum to within
	// ErrBound, and MaxF + ErrBound <= Budget() proves exact f <= exact
	// budget (see Problem.ErrBound).
	ErrBound float64
	Configs  *big.Int // number of multisets the maximisation covers
	// Shard and Shards say which part of the work this is (0 and 1 for a
	// whole separation).
	Shard, Shards int
}

// unitRoundoff is 2^-53, the relative rounding error of float64 arithmetic.
const unitRoundoff = 0x1p-53

// ErrBound returns a bound on |computed f - exact f| for every multiset, as
// Separate computes f, plus |Budget() - exact budget|, where "exact" means
// the real-number value at the float64 inputs K, m, eps, Delta, delta and
// gamma, m·eps being MEps() (docs/solve.md, "The rounding bound", derives
// it). With u = 2^-53, E = e^{m·eps} and B the budget:
//
//   - a corner coordinate a takes at most 6 roundings (exp, two products,
//     two sums, a quotient): |â - a| <= 6u;
//   - each of the K teachers updates each side's correlation vector, whose
//     values stay in [-1, 1] (gamma in [0, 1]), by c + â·(c' - c): 3
//     roundings of quantities at most 2 in magnitude (5u), plus
//     |â - a|·|c' - c| <= 12u; a convex combination never amplifies the
//     errors already there, so each side is within 17Ku;
//   - Ê = exp(m·eps) is within (m·eps + 1)u relative (the exponential's
//     error, with room for a rounding of m·eps that MEps no longer makes);
//     the product Ê·C_q adds E·(17K + m·eps + 2)u and the final
//     subtraction u·(1 + E);
//   - Budget() = expm1(m·eps) + 2·delta is within (E·(m·eps + 1) + B)u.
//
// The sum, u·((1+E)(17K+1) + E(2m·eps+3) + B), is raised by 2^-20 relative
// for the second-order terms.
//
// In the one-vote relation the costs are single inequalities and the bound
// is errBoundOneVote's.
func (p Problem) ErrBound() float64 {
	if p.Relation == accountant.OneVote {
		return p.errBoundOneVote()
	}
	return p.roundingSum() * (1 + 0x1p-20)
}

// roundingSum is ErrBound's sum of first-order terms,
// u·((1+E)(17K+1) + E(2m·eps+3) + B), before its raise for the rest.
func (p Problem) roundingSum() float64 {
	e, me := p.E(), p.MEps()
	k := float64(p.K)
	return ((1+e)*(17*k+1) + e*(2*me+3) + p.Budget()) * unitRoundoff
}

// Separate computes, for the noise function gamma(0..K), the maximum of the
// privacy cost f over every multiset of K corners (Lemma 3.6.1), exactly,
// together with a maximising multiset and the costliest reduced multisets
// above opts.Floor. It visits no row explicitly.
//
// The method. Let w(l) = -gamma(l) for l < H and +gamma(l) for l >= H, so
// that f = sum_l w(l)·(alpha_l - E·alpha'_l). For a pmf pi define the
// correlation vector C[s] = sum_j pi_j·w(j+s). Adding a Bernoulli(a) factor
// to pi maps C to (1-a)·C[s] + a·C[s+1], an O(K) update, and f is
// C_p[0] - E·C_q[0] where C_p and C_q start from w and receive the P and Q
// coordinates of every teacher. Corners (0,Delta), (Delta,0), (1-Delta,1)
// and (1,1-Delta) act on one side as the identity or a shift, so once the
// counts n6, n7 of the two e^eps corners are fixed, the P side depends only
// on (n3, n4, n1+n5) and the Q side only on (n2, n5, n1+n4).
//
// Only the pairs with n6 = 0 or n7 = 0 are visited (reduced pairs): a
// teacher at each e^eps corner is a couple whose vote sum has the same law
// on both sides, so a multiset with both is a convex combination of
// multisets with the couple replaced by two sure teachers (docs/solve.md,
// "Mirror couples"),
// and its cost and row are no larger than theirs. The maximum over the
// reduced pairs is the maximum over every multiset.
//
// A first pass bounds every multiset of each reduced pair from its two
// vectors alone, family by family (familyBound: about 1.5·K^2 steps in
// all), and a second scores, costliest bound first, only the families
// whose bound reaches the best cost so far or the entry to the top list
// (scoreFamily, O(t^3) for a pair); the bounds exceed every cost as
// computed, so the maximum, the worst multiset and the top list are
// exactly those of scoring every multiset of the reduced pairs. When
// Delta = 0 the maximisation takes about K^2 steps (see itemPure), instead
// of the C(K+3, 3)·K of visiting every row.
//
// In the one-vote relation it evaluates the 4K inequalities of every pair
// of neighbouring vote counts (separateOneVote), in O(K) steps.
func (p Problem) Separate(ctx context.Context, gamma []float64, opts SeparateOptions) (Separation, error) {
	if err := param.Workers(opts.Workers); err != nil {
		return Separation{}, err
	}
	if p.Relation == accountant.OneVote {
		return p.separateOneVote(ctx, gamma, opts)
	}
	var fb *familyBound
	if p.Delta > 0 {
		fb = newFamilyBound(p, familyOrder, true)
	}
	return p.separate(ctx, gamma, opts, fb, p.window())
}

// separate is Separate with the family bound fb when Delta > 0 (nil scores
// every multiset: the tests' exhaustive reference) and the window of
// scoreFamily (p.window(); K+1 keeps every entry).
func (p Problem) separate(ctx context.Context, gamma []float64, opts SeparateOptions, fb *familyBound, window int) (Separation, error) {
	if err := p.Validate(); err != nil {
		return Separation{}, err
	}
	w, err := p.weights(gamma)
	if err != nil {
		return Separation{}, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, p.K+1)
	shards := max(opts.Shards, 1)
	if opts.Shard < 0 || opts.Shard >= shards {
		return Separation{}, fmt.Errorf("shard %d of %d: must be in [0, %d)", opts.Shard, shards, shards)
	}

	// Work items are the counts n6 of the first e^eps corner, item 0
	// walking the pairs (0, n7) (Delta > 0), or one chain that gives
	// every reduced pair (Delta = 0, see itemPure); the weights only drive
	// the progress report.
	items := p.K + 1
	if p.Delta == 0 {
		items = 1
	}
	weights := make([]float64, items)
	var totalWeight float64
	for i := range weights {
		weights[i] = float64(p.K - i + 1)
		if i == 0 {
			weights[i] = float64(p.K+1) * float64(p.K+2) / 2
		}
		totalWeight += weights[i]
	}
	deal := newDealer(items)
	var (
		mu       sync.Mutex
		doneW    float64
		wg       sync.WaitGroup
		results  = make([]*sepWorker, workers)
		canceled atomic.Bool
		global   = new(sharedBest)
		// With Delta > 0 the first pass bounds every pair (n6, n7) and
		// the second scores the pairs whose bound reaches the threshold.
		bounds []float64
		// progress reports the fraction done; with Delta > 0 the first
		// pass is the first half.
		progress = func(f float64) {}
	)
	global.set(math.Inf(-1))
	if opts.Progress != nil {
		progress = opts.Progress
	}
	if p.Delta > 0 {
		bounds = make([]float64, numReducedPairs(p.K))
	}
	// Each work item starts from correlation vectors computed once here:
	// after n6 teachers at the first e^eps corner on each side (Delta >
	// 0), or the weights themselves (Delta = 0).
	p6s, q6s := p.chains(w, items)
	for i := range results {
		sw := newSepWorker(p, w, opts)
		sw.p6s, sw.q6s = p6s, q6s
		sw.shard, sw.shards = opts.Shard, shards
		sw.global, sw.bounds, sw.fb, sw.window = global, bounds, fb, window
		results[i] = sw
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
				if p.Delta > 0 {
					sw.item(ctx, i)
				} else {
					sw.itemPure(ctx, i)
				}
				mu.Lock()
				doneW += weights[i]
				if p.Delta > 0 {
					progress(doneW / totalWeight / 2)
				} else {
					progress(doneW / totalWeight)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Separation{}, err
	}
	if p.Delta > 0 {
		if err := scorePairs(ctx, p, results, bounds, shards, opts.Shard, progress); err != nil {
			return Separation{}, err
		}
	}

	sep := Separation{MaxF: math.Inf(-1), ErrBound: p.ErrBound(), Configs: p.NumConfigs(), Shard: opts.Shard, Shards: shards}
	if shards > 1 {
		sep.Configs = p.shardConfigs(opts.Shard, shards)
	}
	var top []Scored
	for _, sw := range results {
		if sw.bestConfig != nil && (sep.Worst == nil || better(Scored{sw.bestConfig, sw.best}, Scored{sep.Worst, sep.MaxF})) {
			sep.MaxF, sep.Worst = sw.best, sw.bestConfig
		}
		top = append(top, sw.top...)
	}
	sort.Slice(top, func(i, j int) bool { return better(top[i], top[j]) })
	if len(top) > opts.Top {
		top = top[:opts.Top]
	}
	sep.Top = top
	return sep, nil
}

// weights returns w(l) = -gamma(l) for l < H and gamma(l) for l >= H,
// after checking what the corner reduction (Lemma 3.6.1) and ErrBound
// assume of gamma: K+1 values in [0, 1], symmetric.
func (p Problem) weights(gamma []float64) ([]float64, error) {
	if len(gamma) != p.K+1 {
		return nil, fmt.Errorf("gamma has %d values, want K+1 = %d", len(gamma), p.K+1)
	}
	w := make([]float64, p.K+1)
	for l, g := range gamma {
		if !(g >= 0 && g <= 1) {
			return nil, fmt.Errorf("gamma(%d) = %v: must be in [0, 1]", l, g)
		}
		if g != gamma[p.K-l] {
			return nil, fmt.Errorf("gamma(%d) = %v but gamma(%d) = %v: gamma must be symmetric, gamma(l) = gamma(K-l)", l, g, p.K-l, gamma[p.K-l])
		}
		w[l] = g
		if l < p.H() {
			w[l] = -g
		}
	}
	return w, nil
}

// chains returns the correlation vectors that start each work item, for
// i < items: after i teachers at the first e^eps corner on each side
// (Delta > 0), or after i teachers at each e^eps corner on the P side
// (Delta = 0, see itemPure).
func (p Problem) chains(w []float64, items int) (ps, qs [][]float64) {
	hi, lo := epsCorner(p.Eps, p.Delta)
	ps, qs = make([][]float64, items), make([][]float64, items)
	pc, qc := slices.Clone(w), slices.Clone(w)
	for i := range items {
		switch {
		case i == 0:
		case p.Delta > 0:
			pc, qc = step(pc, hi), step(qc, lo)
		default:
			pc = step(step(pc, hi), lo)
		}
		ps[i], qs[i] = slices.Clone(pc), slices.Clone(qc)
	}
	return ps, qs
}

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
