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
	// means all of it. The work items are the 2K+1 reduced pairs (n6, n7)
	// of counts at the two e^eps corners (in the one-vote relation, the
	// 2K pairs of vote vectors), dealt round-robin, and Shards may not
	// exceed them. MergeSeparations combines the parts exactly.
	Shard, Shards int
}

// check checks opts's fields against their domains, naming the field:
// its workers would otherwise panic on a Top below 0.
func (opts SeparateOptions) check() error {
	if err := param.Workers(opts.Workers); err != nil {
		return err
	}
	switch {
	case opts.Top < 0:
		return &param.Error{Name: "Top", Value: opts.Top, Rule: "must be >= 0"}
	case math.IsNaN(opts.Floor):
		return &param.Error{Name: "Floor", Value: opts.Floor, Rule: "must be a number"}
	}
	return nil
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
	// The problem first: the family bound allocates by K.
	if err := p.Validate(); err != nil {
		return Separation{}, err
	}
	if err := opts.check(); err != nil {
		return Separation{}, err
	}
	// A part beyond the work items would cover nothing: its maximum is
	// -Inf, which no part file can hold.
	if n := p.parts(); opts.Shards > n {
		return Separation{}, &param.Error{Name: "Shards", Value: opts.Shards,
			Rule: fmt.Sprintf("must be at most %d at K = %d, the work items the exhaustive pass deals to its parts (%s): a part beyond them covers nothing", n, p.K, p.partsOf())}
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
