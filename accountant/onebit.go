package accountant

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"sort"
	"sync"

	"github.com/darrm/darrm/internal/outward"
	"gonum.org/v1/gonum/dsp/fourier"
)

// BitPair is a pair of output distributions of a one-bit release on two
// neighbouring inputs, given by the probabilities of output 1: P on the
// one input, Q on the other. A OneBitSpend lists every pair its mechanism
// can produce, or pairs that dominate them (OneBitSpend).
type BitPair struct {
	P float64 `json:"p"`
	Q float64 `json:"q"`
}

// bitAtom is an atom of the privacy loss distribution of a one-bit
// release's dominating pair: its loss log(n/d), with bounds lo <= log(n/d)
// <= hi, and its probability under the first distribution (an upper
// bound).
type bitAtom struct {
	n, d   *big.Int
	lo, hi float64
	mass   float64
}

// bitLoss is the privacy loss distribution of the dominating pair of a
// OneBitSpend: finite atoms, and the mass of an infinite loss.
type bitLoss struct {
	atoms []bitAtom
	inf   float64 // an upper bound, and infLo a lower bound
	infLo float64
	scale int // an atom's mass is n·2^-scale
}

// fracBits returns the number of binary digits after the point of x in
// [0, 1]: x·2^fracBits(x) is an integer.
func fracBits(x float64) int {
	if x == 0 {
		return 0
	}
	frac, exp := math.Frexp(x)
	m := uint64(frac * (1 << 53))
	return max(0, 53-exp-bits.TrailingZeros64(m))
}

// bitLine is the line a - α·b of a hockey-stick divergence, in units of
// 2^-s.
type bitLine struct{ a, b *big.Int }

// oneBitLoss returns the privacy loss distribution of a pair of
// distributions that dominates every pair of bits, in both orders: its
// hockey-stick divergence H_α is, for every α >= 0, the largest of the
// pairs' (Zhu, Dong and Wang 2022, Prop. 8: a convex function of α
// between (1-α)+ and 1 is the hockey-stick curve of a pair). For one
// bit, H_α(P‖Q) = max(0, 1-α, P-αQ, (1-P)-α(1-Q)), so the largest is the
// upper envelope of lines a - α·b, computed exactly in integers; between
// its breakpoints α_j the envelope is linear, and the pair has an atom
// of loss log α_j with mass (under the first distribution) the drop of a
// at the breakpoint, and an infinite loss of mass the last line's a. The
// envelope is symmetric (both orders of every pair are lines of it), so
// the pair dominates the reversed pairs too.
func oneBitLoss(pairs []BitPair) bitLoss {
	return envelopeLoss(paretoBits(pairs), pairsScale(pairs))
}

// pairsScale returns the least s at which every probability of pairs
// is a multiple of 2^-s.
func pairsScale(pairs []BitPair) int {
	s := 0
	for _, p := range pairs {
		s = max(s, fracBits(p.P), fracBits(p.Q))
	}
	return s
}

// envelopeLoss returns oneBitLoss of pairs whose probabilities are
// multiples of 2^-s.
func envelopeLoss(pairs []BitPair, s int) bitLoss {
	one := new(big.Int).Lsh(big.NewInt(1), uint(s))
	scaled := func(x float64) *big.Int {
		v, _ := new(big.Float).SetMantExp(big.NewFloat(x), s).Int(nil)
		return v
	}
	lines := []bitLine{{one, one}, {new(big.Int), new(big.Int)}}
	for _, p := range pairs {
		x, y := scaled(p.P), scaled(p.Q)
		nx, ny := new(big.Int).Sub(one, x), new(big.Int).Sub(one, y)
		// A line with a <= b never rises above max(0, 1 - α): of each
		// pair's four lines only those of the larger probability count.
		for _, l := range [4]bitLine{{x, y}, {y, x}, {nx, ny}, {ny, nx}} {
			if l.a.Cmp(l.b) > 0 {
				lines = append(lines, l)
			}
		}
	}
	// The upper envelope over α >= 0 of lines a - α·b: steepest first
	// (b decreasing), of equal b the highest; a line is dropped when the
	// one before it meets the next no later than it does (its stretch of
	// the envelope is empty), and lines whose stretch ends at α <= 0 go.
	slices.SortFunc(lines, func(p, q bitLine) int {
		if c := q.b.Cmp(p.b); c != 0 {
			return c
		}
		return q.a.Cmp(p.a)
	})
	x, y := new(big.Int), new(big.Int)
	d1, d2 := new(big.Int), new(big.Int)
	// before reports whether l1 meets l3 no later than l2, b1 > b2 > b3:
	// (a1-a3)/(b1-b3) <= (a1-a2)/(b1-b2).
	before := func(l1, l2, l3 bitLine) bool {
		x.Mul(d1.Sub(l1.a, l3.a), d2.Sub(l1.b, l2.b))
		y.Mul(d1.Sub(l1.a, l2.a), d2.Sub(l1.b, l3.b))
		return x.Cmp(y) <= 0
	}
	var hull []bitLine
	for i, l := range lines {
		if i > 0 && l.b.Cmp(lines[i-1].b) == 0 {
			continue
		}
		for len(hull) >= 2 && before(hull[len(hull)-2], hull[len(hull)-1], l) {
			hull = hull[:len(hull)-1]
		}
		hull = append(hull, l)
	}
	// The first two meet at α = (a0-a1)/(b0-b1): drop the first while
	// that is <= 0.
	for len(hull) >= 2 && hull[0].a.Cmp(hull[1].a) <= 0 {
		hull = hull[1:]
	}
	out := bitLoss{scale: s}
	for j := 1; j < len(hull); j++ {
		bn := new(big.Int).Sub(hull[j-1].a, hull[j].a)
		bd := new(big.Int).Sub(hull[j-1].b, hull[j].b)
		out.atoms = append(out.atoms, bitAtom{n: bn, d: bd, lo: logRatio(bn, bd, false), hi: logRatio(bn, bd, true), mass: scaleDownUp(bn, s)})
	}
	if last := hull[len(hull)-1]; last.a.Sign() > 0 {
		out.inf, out.infLo = scaleDownUp(last.a, s), massDown(last.a, s)
	}
	return out
}

// mean returns the mean privacy loss of one step, 0 when a loss is
// infinite (or the mean negative, by rounding).
func (b bitLoss) mean() float64 {
	if b.inf > 0 {
		return 0
	}
	var mu float64
	for _, a := range b.atoms {
		mu += a.mass * a.hi
	}
	return math.Max(0, mu)
}

// Dominating returns s, which Check accepts, with, when it is a
// OneBitSpend, only the pairs of its Bits that no other of them is
// further apart than, each ordered larger first, largest first: it has
// the same dominating pair as with all of them (the same privacy loss
// distribution, at any scale of its probabilities), and the same list
// whatever the order of its pairs. A private-teacher label's tens of
// thousands of pairs come down to a few tens, which a ledger line can
// hold. A spend of another kind is returned as it is.
func (s Spend) Dominating() Spend {
	if s.Kind == OneBitSpend {
		s.Bits = slices.Clone(cachedBitCurves(s.Bits).dominating)
	}
	return s
}

// paretoBits returns the pairs, each ordered larger first, that no other
// is further apart than: a pair (P, Q), P >= Q, whose P is at most and
// whose Q at least another's has lines P - α·Q and (1-Q) - α(1-P) at
// most that one's at every α >= 0, so it adds nothing to the envelope.
// A private-teacher label lists tens of thousands of pairs, of which a
// few hundred remain.
func paretoBits(pairs []BitPair) []BitPair {
	out := make([]BitPair, len(pairs))
	for i, p := range pairs {
		out[i] = BitPair{P: max(p.P, p.Q), Q: min(p.P, p.Q)}
	}
	// Largest P first, of equal P the smallest Q: a pair is kept when its
	// Q is below every Q before it.
	slices.SortFunc(out, func(a, b BitPair) int {
		if c := cmp.Compare(b.P, a.P); c != 0 {
			return c
		}
		return cmp.Compare(a.Q, b.Q)
	})
	kept := out[:0]
	for _, p := range out {
		if len(kept) == 0 || p.Q < kept[len(kept)-1].Q {
			kept = append(kept, p)
		}
	}
	return kept
}

// scaleDownUp returns v·2^-s rounded up to a float64.
func scaleDownUp(v *big.Int, s int) float64 {
	x := new(big.Float).SetMode(big.ToPositiveInf).SetInt(v)
	f, _ := x.SetMantExp(x, -s).Float64()
	return f
}

// logRatio returns an upper (up) or lower bound of log(n/d), n, d > 0:
// the quotient rounded that way, then the logarithm moved by 2 ulps
// (math.Log is within 1).
func logRatio(n, d *big.Int, up bool) float64 {
	mode, dir := big.ToNegativeInf, math.Inf(-1)
	if up {
		mode, dir = big.ToPositiveInf, math.Inf(1)
	}
	q := new(big.Float).SetMode(mode).SetPrec(53)
	r, _ := q.Quo(new(big.Float).SetInt(n), new(big.Float).SetInt(d)).Float64()
	return math.Nextafter(math.Nextafter(math.Log(r), dir), dir)
}

// bitCurves is what the process knows of one OneBitSpend's pairs: their
// dominating pair, and the answers its compositions gave, by step count.
// A release's count and its totals, a plan's search and its check, and a
// process that releases several times ask the same questions of the
// same pairs; each answer costs a transform of the loss distribution.
type bitCurves struct {
	pairs      []BitPair
	dominating []BitPair // paretoBits of pairs: a release's ledger lines hold them
	loss       bitLoss

	mu      sync.Mutex
	deltas  map[bitQuery]float64   // δ(ε) of k steps (x = ε, y = the δ it is composed for)
	inverse map[bitQuery]bitAnswer // the least ε at δ of k steps, searched up from hi (x = δ, y = hi)
	// runs are the compositions last made, most recent first: a count's
	// search asks whether its count fits and then the total at it, and
	// a release the total and the totals, of the same composition.
	runs []*bitRun
	// answersKey is the key of the pairs' answers in a folder
	// (answersKey, made on first use), readFrom the folder whose answers
	// were read, and addedIn the generation of KeepAnswers in which
	// answers were last added (0: none since they were written).
	answersKey, readFrom string
	addedIn              int
}

// bitQuery is a question to the composition of k steps on a window of
// at most window points (maxBitWindow: the exact composition's; fewer:
// the coarse one that guides a count's search; -lowerBitWindow: the lower
// bound, lowerBitDelta, y 0): δ at ε (x) for the run composed for a total
// δ y, or the least ε at δ (x) searched up from y.
type bitQuery struct {
	k, window int
	x, y      float64
}

// bitAnswer is an exactEps answer.
type bitAnswer struct {
	eps float64
	ok  bool
}

const (
	// maxBitCurves bounds the sets of pairs whose answers the process
	// keeps, and maxBitPairs the pairs they hold together (the first is
	// kept whatever its size). A plan's search for a noise level asks of
	// a set of pairs per level, and a command that plans or simulates
	// several times asks the same again: answers, a few numbers each,
	// are kept for many more sets than compositions are.
	maxBitCurves = 64
	maxBitPairs  = 1 << 20
	// maxRunCurves bounds the sets of pairs, the most recent, that keep
	// their compositions (a few MB each); the others keep their answers
	// only.
	maxRunCurves = 8
	// maxBitRuns bounds the compositions kept of one set of pairs.
	maxBitRuns = 4
	// maxBitAnswers bounds the answers kept of one set of pairs: beyond
	// it they are forgotten.
	maxBitAnswers = 1 << 12
)

// bitCurvesCache keeps the bitCurves of the pairs last used, most recent
// first.
var bitCurvesCache struct {
	sync.Mutex
	recent []*bitCurves
}

// cachedBitCurves returns the bitCurves of pairs, with the answers kept
// in the folder of KeepAnswers.
func cachedBitCurves(pairs []BitPair) *bitCurves {
	c := recentBitCurves(pairs)
	if dir, secret, _ := keptAnswers(); dir != "" {
		c.load(dir, secret)
	}
	return c
}

// recentBitCurves returns the bitCurves of pairs that the process keeps,
// or new ones.
func recentBitCurves(pairs []BitPair) *bitCurves {
	bitCurvesCache.Lock()
	defer bitCurvesCache.Unlock()
	recent := bitCurvesCache.recent
	for i, c := range recent {
		if slices.Equal(c.pairs, pairs) {
			copy(recent[1:i+1], recent[:i])
			recent[0] = c
			dropRuns(recent)
			return c
		}
	}
	// oneBitLoss of the pairs kept, sorted once: a private-teacher
	// label's tens of thousands of pairs cost a few ms to sort.
	dominating := paretoBits(pairs)
	c := &bitCurves{pairs: slices.Clone(pairs), dominating: dominating, loss: envelopeLoss(dominating, pairsScale(pairs)), deltas: map[bitQuery]float64{}, inverse: map[bitQuery]bitAnswer{}}
	recent = append([]*bitCurves{c}, recent...)
	held := 0
	for i, r := range recent {
		held += len(r.pairs)
		if i > 0 && (i >= maxBitCurves || held > maxBitPairs) {
			recent = recent[:i]
			break
		}
	}
	dropRuns(recent)
	bitCurvesCache.recent = recent
	return c
}

// dropRuns drops the compositions of the set of pairs that moving one
// set to the front of recent pushed out of the first maxRunCurves.
func dropRuns(recent []*bitCurves) {
	if len(recent) > maxRunCurves {
		r := recent[maxRunCurves]
		r.mu.Lock()
		r.runs = nil
		r.mu.Unlock()
	}
}

// run returns the composition of k steps for questions at total δ
// delta (newBitRun), made once while it is among the last maxBitRuns
// asked for: the runs of one k and one tilt are the same.
func (c *bitCurves) run(k int, delta float64) (*bitRun, error) {
	r, err := newBitRun([]bitPart{{c.loss, k}}, delta)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, old := range c.runs {
		if old.k == k && old.lambda == r.lambda {
			copy(c.runs[1:i+1], c.runs[:i])
			c.runs[0] = old
			return old, nil
		}
	}
	c.runs = append([]*bitRun{r}, c.runs[:min(len(c.runs), maxBitRuns-1)]...)
	return r, nil
}

// delta returns f(q.x), the profile at ε q.x of the composition q
// asks, as remembered.
func (c *bitCurves) delta(q bitQuery, f func(float64) float64) float64 {
	c.mu.Lock()
	v, ok := c.deltas[q]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = f(q.x)
	gen := answersGen()
	c.mu.Lock()
	if len(c.deltas) >= maxBitAnswers {
		clear(c.deltas)
	}
	c.deltas[q], c.addedIn = v, gen
	c.mu.Unlock()
	return v
}

// answer returns the answer to q remembered, and whether there is one.
func (c *bitCurves) answer(q bitQuery) (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.deltas[q]
	return v, ok
}

// epsAt returns search(), the least ε at total δ q.x searched up from
// q.y of the composition q asks, as remembered.
func (c *bitCurves) epsAt(q bitQuery, search func() (float64, bool)) (float64, bool) {
	c.mu.Lock()
	a, ok := c.inverse[q]
	c.mu.Unlock()
	if ok {
		return a.eps, a.ok
	}
	a.eps, a.ok = search()
	gen := answersGen()
	c.mu.Lock()
	if len(c.inverse) >= maxBitAnswers {
		clear(c.inverse)
	}
	c.inverse[q], c.addedIn = a, gen
	c.mu.Unlock()
	return a.eps, a.ok
}

// maxBitWindow bounds the points of the composed loss distribution of a
// OneBitSpend: the grid of losses is as fine as this allows.
const maxBitWindow = 1 << 19

// bitTails is the Hoeffding factor of the window: the sum of k losses
// lies within 6R√k of its mean (R the range of one) but for e^-72.
const bitTails = 6

// bitRun is the composed privacy loss distribution of k steps of a
// OneBitSpend, discretised pessimistically on the grid of step
// h = lmax/n, lmax the largest finite loss: that loss is index n, its
// mirror -lmax (the envelope is symmetric) index -n, a loss ratio of 1
// index 0, and every other loss is rounded up to the grid, those below
// -lmax raised to it. Raising a loss can only raise
// δ(ε) = E[(1 - e^(ε-L))+] (couple each loss with its rounded value), so
// the profile is never below the true one (Meiser and Mohammadi 2018;
// Koskela, Jälkö and Honkela 2020; Doroshenko et al. 2022).
//
// The transform's rounding is an absolute error, about 10^-10 of the
// whole mass in l1, where a total δ of 10^-12 is decided by entries of
// 10^-14. So, for a small δ, the transform composes the distribution
// tilted by e^(λ·index) (Esscher's transform, which commutes with
// convolution): the tail that decides δ is then the bulk of what is
// transformed, and an absolute error err of the tilted distribution is
// err·e^(C - λs) at index s once untilted (C the log of the tilted
// normaliser of k steps), at most err times the Chernoff bound of the
// tail above s: relative to δ, not to the whole mass.
type bitRun struct {
	k      int       // steps
	lo, hi float64   // bounds of lmax
	n      int       // grid steps in lmax
	first  int       // the index sum of p[0]
	p      []float64 // Pr[all k losses finite, Σ indices = first + r]
	inf    float64   // Pr[some loss infinite], an upper bound
	err    float64   // bound of the error of p in l1, of the tilted p when lambda > 0
	rel    float64   // bound of the relative error of each entry of p
	empty  bool      // no finite loss above 0
	// lambda is the tilt per index (0: none) and cgf the log of the
	// k-step normaliser C: Pr[Σ = s] = tilted(s)·e^(C - λs).
	lambda, cgf float64
	grid        bitGrid // the layout composed
	// start is the index of p's first entry of positive loss, the only
	// ones above an ε >= 0, and losses theirs (loss), in increasing
	// order: the profile's search evaluates it many times.
	start  int
	losses []float64
	// blockMax[b] is the largest entry of p[b·rawBlock:][:rawBlock].
	blockMax []float64
	// tailP[j] and tailE[j] sum p and p·e^-loss over the entries from
	// start+j on (estimate), made on first use.
	tailP, tailE []float64
	fill         func() // computes p, err and rel (ready)
	once, tails  sync.Once
}

// gridIndex returns the index of atom a on the grid of n steps of lmax,
// whose atom top is, and whether it is exact whatever n (top, its
// mirror, a ratio of 1, a loss at most -lmax): the least index whose loss
// is at least a's, and at least -n.
func gridIndex(a, top bitAtom, n int) (int, bool) {
	x, y := new(big.Int), new(big.Int)
	switch {
	case a.n.Cmp(a.d) == 0:
		return 0, true
	case x.Mul(a.n, top.d).Cmp(y.Mul(a.d, top.n)) == 0:
		return n, true
	case x.Mul(a.n, top.n).Cmp(y.Mul(a.d, top.d)) <= 0:
		return -n, true
	}
	h := top.lo // a positive loss over the least step, a negative one over the largest
	if a.hi < 0 {
		h = top.hi
	}
	// Index n is top's loss, the largest: a loss just under it, over the
	// least step, may land past n, and n still rounds it up.
	nf := float64(n)
	return int(math.Min(nf, math.Max(-nf, math.Ceil(outward.Up(a.hi/h*nf, 4))))), false
}

// bitPart is one run of a composition of one-bit releases: k steps of
// the dominating pair whose losses are loss.
type bitPart struct {
	loss bitLoss
	k    int
}

// newBitRun composes the parts' steps, each part k steps of its
// dominating pair (one part: one release's run; several: runs of
// different pairs fixed in an order before the first step, a schedule),
// for questions at a total δ delta (0: none in particular): where the
// transform's absolute rounding bound would be more than 2^-20 of delta,
// it composes the distribution tilted by the λ of the Chernoff bound
// that reaches delta (tiltFor). The transform itself is made on first
// use (ready). Every part's losses lie on one grid, of step lmax/n, lmax
// the largest of all their finite losses.
//
// The grid is as fine as the window the transform needs allows: first
// the grid on which Hoeffding's window of the range holds in
// maxBitWindow points, then, from the width of the window actually
// needed there (the Chernoff bound's, of the tilted distribution when
// tilted: a rare loss of 7.4 beside common ones of ±0.16 sets the range,
// not the width), one as much finer as that window allows.
func newBitRun(parts []bitPart, delta float64) (*bitRun, error) {
	return newBitRunIn(parts, delta, maxBitWindow)
}

// newBitRunIn is newBitRun on a window of at most window points, a
// power of two: a coarser grid, whose transform costs less, for an
// estimate that only guides a search (coarseDelta).
func newBitRunIn(parts []bitPart, delta float64, window int) (*bitRun, error) {
	var k int
	var keep float64
	var top bitAtom
	for _, p := range parts {
		var ok bool
		if k, ok = addSteps(k, p.k); !ok {
			return nil, fmt.Errorf("one-bit composition: more than %d steps", CountLimit)
		}
		keep += float64(p.k) * math.Log1p(-p.loss.inf)
		if t := p.loss.top(); t.n != nil && (top.n == nil || t.hi > top.hi) {
			top = t
		}
	}
	r := &bitRun{k: k, inf: math.Min(1, outward.Up(-math.Expm1(keep), 3+float64(len(parts))))}
	if top.n == nil || top.n.Cmp(top.d) <= 0 {
		r.empty = true
		return r, nil
	}
	r.lo, r.hi = top.lo, top.hi
	kf := float64(k)
	// The window is at most 2kn + 1 points (every sum of k losses in
	// [-n, n]) or 2·bitTails·2n·√k + 3 (the tails' window, rounded out):
	// with 3 points to spare it holds in window, a power of two,
	// and the transform is no larger (one point more would double it).
	n := max(1, int(float64(window-3)/(2*math.Min(kf, 2*bitTails*math.Sqrt(kf)))))
	exact := true
	for _, p := range parts {
		for _, a := range p.loss.atoms {
			_, on := gridIndex(a, top, 1)
			exact = exact && on
		}
	}
	if exact {
		// Losses 0 and ±lmax only (randomized response, a pure bit): the
		// grid of step lmax is exact, and the sum binomial.
		n = 1
	}
	g := layBitGrid(parts, top, n, delta)
	if w := g.hi - g.lo + 1; !exact && !g.direct && w < (window-3)/2 {
		// Indices stay within 2^50 in a sum of k, exactly summed.
		finer := math.Min(float64(n)*float64(window-3)/float64(w)*0.95, 0x1p50/kf)
		if f := layBitGrid(parts, top, int(finer), delta); finer > float64(n) && (f.direct || f.hi-f.lo+1 <= window-3) {
			g = f
		}
	}
	if w := g.hi - g.lo + 1; !g.direct && w > 2*window {
		return nil, fmt.Errorf("one-bit composition: %d steps need a window of %d points", k, w)
	}
	r.use(g)
	return r, nil
}

// top returns the atom of the largest loss (n nil: none).
func (b bitLoss) top() bitAtom {
	var top bitAtom
	for _, a := range b.atoms {
		if top.n == nil || a.hi > top.hi {
			top = a
		}
	}
	return top
}

// use makes g the layout the run composes.
func (r *bitRun) use(g bitGrid) {
	r.n, r.grid = g.n, g
	if g.direct {
		r.fill = func() { r.direct(g.comps) }
		return
	}
	r.lambda, r.cgf, r.rel = g.lambda, g.cgf, g.rel
	r.fill = func() { r.transform(g.tilted, g.lo, g.hi, g.tails) }
}

// bitComp is one part of a composition laid on the grid: masses at
// indices (the least imin), composed k times.
type bitComp struct {
	mass []float64
	idx  []int
	imin int
	k    int
}

// bitGrid is the layout of a composition on a grid of n steps of the
// largest loss: each part's masses at their indices (splitAtoms), whether
// the composition is a direct convolution, and otherwise the tilt, the
// tilted masses, the window [lo, hi] and its tails' mass (the tilted
// distribution's when tilted), and the relative error the tilt adds.
type bitGrid struct {
	n           int
	comps       []bitComp
	direct      bool
	lambda, cgf float64
	tilted      []bitComp
	lo, hi      int
	tails, rel  float64
}

// layBitGrid lays the parts' atoms, the largest loss top's, on the grid
// of n steps for questions at total δ delta (newBitRun).
func layBitGrid(parts []bitPart, top bitAtom, n int, delta float64) bitGrid {
	g := bitGrid{n: n}
	var kf, work float64
	for _, p := range parts {
		c := bitComp{k: p.k, imin: n}
		c.mass, c.idx = splitAtoms(p.loss.atoms, top, n)
		for _, i := range c.idx {
			c.imin = min(c.imin, i)
		}
		g.comps = append(g.comps, c)
		kf += float64(p.k)
	}
	for _, c := range g.comps {
		// Each of its steps convolves its masses with a partial sum of at
		// most k·(n - imin) + 1 points.
		work += float64(len(c.mass)) * float64(c.k) * (kf*float64(n-c.imin) + 1)
	}
	// The direct convolution's work in float64: at k near 2^53 its int
	// product overflows. Its error is relative: it needs no tilt.
	if work <= maxDirect {
		g.direct = true
		return g
	}
	g.tilted = g.comps
	g.lo, g.hi, g.tails = bitWindow(g.comps, n)
	size := 1 << bits.Len(uint(max(1, g.hi-g.lo)))
	if g.lambda = tiltFor(g.comps, delta, transformErr(size, g.comps)+g.tails); g.lambda == 0 {
		return g
	}
	// Each part's tilted masses m_j·e^(λ·i_j - c0)/Z: the sum of their
	// k-fold sums is the tilted distribution, whose window is its own.
	const u = 0x1p-53
	g.tilted = make([]bitComp, len(g.comps))
	var relSteps, smaxIdx, cgfAbs float64
	for ci, c := range g.comps {
		c0 := math.Inf(-1)
		for j, i := range c.idx {
			if c.mass[j] > 0 {
				c0 = math.Max(c0, g.lambda*float64(i))
			}
		}
		t := bitComp{mass: make([]float64, len(c.mass)), idx: c.idx, imin: c.imin, k: c.k}
		var z float64
		for j, i := range c.idx {
			t.mass[j] = c.mass[j] * math.Exp(g.lambda*float64(i)-c0)
			z += t.mass[j]
		}
		for j := range t.mass {
			t.mass[j] /= z
		}
		g.tilted[ci] = t
		term := float64(c.k) * (c0 + math.Log(z))
		g.cgf += term
		cgfAbs += math.Abs(term)
		// The tilted masses are within a relative 4u(λ·span + c0) +
		// (m + 8)u of their definition (u = 2^-53: exp and its argument,
		// the sum Z and the quotient), which k steps multiply by k.
		span := 0.0
		for _, i := range c.idx {
			span = math.Max(span, math.Abs(float64(i)))
		}
		relSteps += float64(c.k) * (8*u*(g.lambda*span+math.Abs(c0)) + float64(len(c.mass)+8)*u)
	}
	g.lo, g.hi, g.tails = bitWindow(g.tilted, n)
	// Untilting adds the error of its exponent C - λs and of exp.
	smaxIdx = math.Max(math.Abs(float64(g.lo)), math.Abs(float64(g.hi)))
	g.rel = relSteps + 4*u*(cgfAbs+g.lambda*smaxIdx) + 4*u
	return g
}

// splitAtoms lays atoms on the grid of n steps of top's loss lmax: an
// atom on the grid (a ratio of 1, lmax, its mirror, and a loss below
// -lmax raised to it) at its index; any other, of loss ℓ between the
// grid's ℓ0 = i·h and ℓ1 = (i+1)·h (h = lmax/n), split between them so
// that both its masses are kept: m1 = m(1 - e^-(ℓ-ℓ0))/(1 - e^-h) at ℓ1
// and m0 = m - m1 at ℓ0, which keeps m·e^-ℓ = m0·e^-ℓ0 + m1·e^-ℓ1 under
// the second distribution. Merging the two outputs gives back the atom,
// so the pair split is a post-processing away from the original, which
// it therefore dominates (Doroshenko et al. 2022, "connect the dots"):
// pessimistic like rounding each loss up to ℓ1, but within O(h²) of the
// truth, not O(h). m1 is rounded up and m0 too (moving mass to the
// higher loss, or adding some, never lowers δ); an atom whose bounds
// straddle a grid point is rounded up to its index, unsplit.
func splitAtoms(atoms []bitAtom, top bitAtom, n int) ([]float64, []int) {
	mass := make([]float64, 0, 2*len(atoms))
	idx := make([]int, 0, 2*len(atoms))
	nf := float64(n)
	hLo, hHi := top.lo/nf*(1-0x1p-50), top.hi/nf*(1+0x1p-50)
	for _, a := range atoms {
		i, on := gridIndex(a, top, n)
		i0 := i - 1
		// ℓ0 = i0·h lies within [l0Lo, l0Hi].
		l0Lo, l0Hi := float64(i0)*hLo, float64(i0)*hHi
		if i0 < 0 {
			l0Lo, l0Hi = l0Hi, l0Lo
		}
		if on || a.mass == 0 || !(a.lo > l0Hi+math.Abs(l0Hi)*0x1p-50) {
			mass, idx = append(mass, a.mass), append(idx, i)
			continue
		}
		// m1/m is increasing in ℓ - ℓ0 and decreasing in h.
		x := (a.hi - l0Lo) * (1 + 0x1p-50)
		ratio := -math.Expm1(-x) / (-math.Expm1(-hLo)) * (1 + 0x1p-48)
		m1 := math.Min(a.mass, outward.Up(a.mass*ratio, 2))
		m0 := outward.AddUp(a.mass, -m1)
		if m0 > 0 {
			mass, idx = append(mass, m0), append(idx, i0)
		}
		mass, idx = append(mass, m1), append(idx, i)
	}
	return mass, idx
}

// bitWindow returns the window [lo, hi] of the sum of the parts' k-fold
// sums (each part's least index imin, its largest at most n) that holds
// all but tails of it: the narrower of Hoeffding's, ±bitTails·√(Σ k·R²)
// around the mean (R the range of one of a part's indices), and the
// Chernoff bound of the masses' own moment generating function
// (tailEdge).
func bitWindow(comps []bitComp, n int) (lo, hi int, tails float64) {
	var mean, spread float64
	for _, c := range comps {
		kf := float64(c.k)
		var m, fin float64
		for j, x := range c.mass {
			m += x * float64(c.idx[j])
			fin += x
		}
		mean += kf * m / fin
		rng := float64(n - c.imin)
		spread += kf * rng * rng
		lo += c.k * c.imin
		hi += c.k * n
	}
	fullLo, fullHi := lo, hi
	t := bitTails * math.Sqrt(spread)
	if float64(hi-lo) > 2*t {
		lo = max(lo, int(math.Floor(mean-t)))
		hi = min(hi, int(math.Ceil(mean+t)))
	}
	// The Chernoff bound of the atoms' own moment generating function
	// cuts the window far more where a rare atom sets the range: a
	// private-teacher label has a loss of 15.8 with mass 2·10^-5 beside
	// losses within ±0.3, so Hoeffding's window, set by the range, is
	// about thirteen times the Chernoff window at 100 steps.
	hi = min(hi, tailEdge(comps, 1))
	lo = max(lo, -tailEdge(comps, -1))
	if lo > fullLo || hi < fullHi {
		tails = 2 * math.Exp(-2*bitTails*bitTails)
	}
	return lo, hi, tails
}

// transformErr bounds, in l1, the rounding of the parts' k-fold sums
// composed by transforms of size points: a relative 2^-50 per level of
// each part's transform and of the inverse, and per power and product,
// over the window (√size times l2), as for the discrete Gaussian.
func transformErr(size int, comps []bitComp) float64 {
	lg := float64(bits.Len(uint(size)))
	var k float64
	for _, c := range comps {
		k += float64(c.k)
	}
	return math.Sqrt(float64(size)) * (k + 8*lg*float64(len(comps))) * 0x1p-50
}

// tiltFor returns the tilt λ per index at which the sum of the parts'
// k-fold sums is composed for questions at total δ delta: 0 when the
// transform's absolute error errBound is within 2^-20 of delta (the tilt
// would change nothing that matters). Otherwise, with x the least index
// at which a Chernoff bound e^(K(λ) - λx) reaches delta (K(λ) = Σ k·log
// M(λ), M a part's masses' moment generating function; x is above the ε
// that delta asks for), the least λ whose bound at x is within e^8 of
// delta, on the geometric scan of tailEdge: there the transform's error
// is at most errBound·e^8·delta, and the tilted distribution is centred
// below x, its window holding the ε sought. The λ of the least x would
// centre it at x itself, and where the largest loss of k steps has more
// mass than delta (one-vote labels, losses ±ε), x is that loss and the
// window would hold nothing below it.
func tiltFor(comps []bitComp, delta, errBound float64) float64 {
	if !(delta > 0 && delta < 1) || errBound <= delta*0x1p-20 {
		return 0
	}
	span := 1.0
	for _, c := range comps {
		for _, i := range c.idx {
			span = math.Max(span, math.Abs(float64(i)))
		}
	}
	logDelta := math.Log(delta)
	const lo, hi = -160, 40
	var lambdas, cgf [hi - lo + 1]float64
	bestX := math.Inf(1)
	for e := lo; e <= hi; e++ {
		lambda := math.Exp2(float64(e)/4) / span
		var k float64
		for _, c := range comps {
			top := math.Inf(-1)
			for j, i := range c.idx {
				if c.mass[j] > 0 {
					top = math.Max(top, lambda*float64(i))
				}
			}
			var sum float64
			for j, i := range c.idx {
				if c.mass[j] > 0 {
					sum += c.mass[j] * math.Exp(lambda*float64(i)-top)
				}
			}
			k += float64(c.k) * (top + math.Log(sum))
		}
		lambdas[e-lo], cgf[e-lo] = lambda, k
		bestX = math.Min(bestX, (cgf[e-lo]-logDelta)/lambda)
	}
	for j, lambda := range lambdas {
		if cgf[j]-lambda*bestX <= logDelta+8 {
			return lambda
		}
	}
	return lambdas[len(lambdas)-1]
}

// tailEdge returns, for sign 1, an index sum x above which the sum of
// the parts' k-fold convolutions of masses at indices holds at most
// e^-73 of its mass, and for sign -1 the same of the negated indices
// (below -x); at most Σ k·(the largest signed index) + 1: tailEdgeAt's
// at e^-73, so that with its rounding the tail is below e^-72, the share
// of each side in the transform's error.
func tailEdge(comps []bitComp, sign int) int { return tailEdgeAt(comps, sign, 73) }

// tailEdgeAt is tailEdge with the tail e^-logTail. It is the Chernoff
// bound, valid for every λ > 0 and for masses that need not sum to 1
// (Markov's inequality on e^(λ·sum)): the measure of sums s >= x is at
// most e^(-λx)·Π M(λ)^k, M(λ) = Σ_j m_j·e^(λ·i_j) of each part, which is
// at most e^-logTail at x >= (Σ k·log M(λ) + logTail)/λ. The λ is the
// best of a geometric scan; a relative 2^-30 and one unit added to
// Σ k·log M(λ) cover its rounding, so the tail is below e^-(logTail-1).
func tailEdgeAt(comps []bitComp, sign int, logTail float64) int {
	tops := make([]float64, len(comps))
	best, span := 1.0, 1.0
	for ci, c := range comps {
		top := math.Inf(-1)
		for j, i := range c.idx {
			if c.mass[j] > 0 {
				top = math.Max(top, float64(sign*i))
			}
			span = math.Max(span, math.Abs(float64(i)))
		}
		if math.IsInf(top, -1) {
			return 0
		}
		tops[ci] = top
		best += float64(c.k) * top
	}
	// λ·span from 2^-40 to 2^10: beyond it the bound is the range's.
	for e := -160; e <= 40; e++ {
		lambda := math.Exp2(float64(e)/4) / span
		var km float64
		for ci, c := range comps {
			var sum float64
			for j, i := range c.idx {
				if c.mass[j] > 0 {
					sum += c.mass[j] * math.Exp(lambda*(float64(sign*i)-tops[ci]))
				}
			}
			km += float64(c.k) * (lambda*tops[ci] + math.Log(sum))
		}
		km += math.Abs(km)*0x1p-30 + 1
		if x := (km + logTail) / lambda; x < best {
			best = x
		}
	}
	return int(math.Ceil(best))
}

// ready computes the run's distribution, once: a run whose answers a
// process has already (bitCurves) is never computed.
func (r *bitRun) ready() {
	r.once.Do(func() {
		if r.fill != nil {
			r.fill()
		}
		r.positive()
	})
}

// transform sets p to the sum of the parts' k-fold convolutions of
// masses at indices over the window [lo, hi] (tails: the mass beyond
// it) by the FFT, the product of each part's transform raised to its k,
// untilted when the masses are tilted (lambda > 0): each entry times
// e^(C - λs), at most 1.
func (r *bitRun) transform(comps []bitComp, lo, hi int, tails float64) {
	// The least power of two that holds the window: the cyclic
	// convolution then wraps onto it only mass from beyond it, the
	// tails', which err bounds.
	w := hi - lo + 1
	size := 1 << bits.Len(uint(w-1))
	tr := takeTransform(size)
	defer putTransform(tr)
	one := tr.seq
	// size is a power of two: s & (size-1) is s modulo size, negative s
	// included (two's complement).
	mask := size - 1
	var prod []complex128
	for ci, comp := range comps {
		clear(one)
		for j, m := range comp.mass {
			one[comp.idx[j]&mask] += m
		}
		var c []complex128
		onOwnStack(func() { c = tr.f.Coefficients(tr.coeff, one) })
		if ci == 0 {
			prod = c
			for i, v := range c {
				prod[i] = powInt(v, comp.k)
			}
			if len(comps) > 1 {
				prod = slices.Clone(prod)
			}
			continue
		}
		for i, v := range c {
			prod[i] *= powInt(v, comp.k)
		}
	}
	var seq []float64
	onOwnStack(func() { seq = tr.f.Sequence(one, prod) })
	r.first, r.p = lo, make([]float64, w)
	var neg float64
	for s := lo; s <= hi; s++ {
		v := seq[s&mask] / float64(size)
		if v < 0 {
			neg -= v
			v = 0
		}
		if r.lambda > 0 && v > 0 {
			v = math.Min(1, v*math.Exp(r.cgf-r.lambda*float64(s)))
		}
		r.p[s-lo] = v
	}
	r.err = neg + transformErr(size, comps) + tails
}

// powInt returns v^k, k >= 1, by repeated squaring: at most 2·log2(k)
// complex products, each within a relative √5·2^-53 (for |v| <= 1 no
// product overflows), so within transform's allowance of k·2^-50 per
// power, and thirty times faster than cmplx.Pow, which goes through
// the logarithm and the exponential (the transform of a plan's search
// spent most of its time there).
func powInt(v complex128, k int) complex128 {
	r := complex(1, 0)
	for ; k > 0; k >>= 1 {
		if k&1 == 1 {
			r *= v
		}
		v *= v
	}
	return r
}

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

// transform is a real FFT of one size with its buffers: a sequence and
// its coefficients.
type transform struct {
	f     *fourier.FFT
	seq   []float64
	coeff []complex128
}

// transforms keeps transforms for reuse, the most recently used first: a
// run's search composes at many step counts, each a transform of the
// same size (the window's points are about maxBitWindow whatever the
// count), whose setup (twiddle factors, about a tenth of a transform
// when profiled) and buffers need not be redone. A sync.Pool, which a
// garbage collection empties, lost them between most transforms: the
// searches allocate enough to collect every few.
var transforms struct {
	sync.Mutex
	kept []*transform
}

// maxTransforms bounds the transforms kept: a count's search makes them
// at three sizes (coarseBitWindow, lowerBitWindow, maxBitWindow), which
// hold 24 MiB (the sequence, its coefficients and the FFT's own three
// arrays of the size: 20 MiB at maxBitWindow).
const maxTransforms = 3

// takeTransform returns a transform of size points.
func takeTransform(size int) *transform {
	transforms.Lock()
	for i, t := range transforms.kept {
		if len(t.seq) == size {
			transforms.kept = slices.Delete(transforms.kept, i, i+1)
			transforms.Unlock()
			return t
		}
	}
	transforms.Unlock()
	return &transform{f: fourier.NewFFT(size), seq: make([]float64, size), coeff: make([]complex128, size/2+1)}
}

// putTransform gives t back for reuse.
func putTransform(t *transform) {
	transforms.Lock()
	defer transforms.Unlock()
	transforms.kept = slices.Insert(transforms.kept, 0, t)
	if len(transforms.kept) > maxTransforms {
		transforms.kept[maxTransforms] = nil
		transforms.kept = transforms.kept[:maxTransforms]
	}
}

// onOwnStack runs f, an FFT, on a goroutine of its own and waits for it,
// so that the FFT's stack sits at the same place within a page whoever
// calls: gonum's radix-4 passes (radf4, radb4) copy their arrays'
// descriptors through the stack in their inner loops, and with the stack
// at some offsets (about 48 bytes of a 4 KiB page, measured) a 2^19-point
// transform takes five times the CPU, likely 4K aliasing of those copies
// with the page-aligned data. On a goroutine of its own the offset is
// set by this package's and gonum's frames alone, outside the window for
// both callers (bitRun's transform: 0xd30 at radf4; fftDGSum's: as fast
// as on its caller's stack, measured). On the caller's stack it is the
// sum of every caller's frames: darrm run as a child of its test binary
// (TestMain, two frames more) landed there, at 0.45 s of CPU for a
// release that took 0.17 s in the built binary.
func onOwnStack(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// maxDirect bounds the work of a direct convolution (atoms × steps ×
// points): beyond it the composition goes through the FFT.
const maxDirect = 1 << 25

// direct sets r.p to the sum of the parts' k-fold convolutions of
// masses at indices, summed directly: every term is a sum of products
// of nonnegative numbers, so each entry is within a relative
// Σ k·(m+1) ulps of the exact value (m a part's masses), which rel
// carries.
func (r *bitRun) direct(comps []bitComp) {
	r.first = 0
	cur, width := []float64{1}, 0
	var ulps int
	for _, c := range comps {
		r.first += c.k * c.imin
		ulps += c.k * (len(c.mass) + 1)
		for range c.k {
			width += r.n - c.imin
			next := make([]float64, width+1)
			for i, v := range cur {
				if v == 0 {
					continue
				}
				for j, m := range c.mass {
					next[i+c.idx[j]-c.imin] += v * m
				}
			}
			cur = next
		}
	}
	r.p = cur
	r.rel = float64(ulps) * outward.ULP
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

// RRBits returns pairs of output probabilities that dominate every pair
// of randomized response on a bit: the bit with probability keep, a fair
// coin otherwise, for a bit that is (bit.Eps, bit.Delta)-DP (the majority
// of private teachers, Lemma B.1.1). The bit's pairs (M, M') on two
// neighbouring inputs fill the polygon of the four inequalities of
// (ε, δ)-DP, whose vertices are (0, 0), (1, 1), (δ, 0), (1, 1-δ),
// ((e^ε+δ)/(e^ε+1), (1-δ)/(e^ε+1)) and their mirror images; the label's
// Pr[1] is (1-keep)/2 + keep·M, affine in M, and its hockey-stick
// divergence at each α is convex in (M, M'), so its largest is at a
// vertex. Each pair is rounded outward (the larger up, the smaller down),
// which gives a pair that dominates it.
func RRBits(keep float64, bit Guarantee) ([]BitPair, error) {
	if !(keep >= 0 && keep <= 1) {
		return nil, &ParamError{Name: "keep", Value: keep, Rule: "must be in [0, 1]"}
	}
	if err := checkStep("bit ", bit); err != nil {
		return nil, err
	}
	e := outward.Exp(outward.Exact(bit.Eps))
	den := e.Add(outward.Exact(1))
	d := outward.Exact(bit.Delta)
	verts := [][2]outward.Interval{
		{d, outward.Exact(0)},
		{outward.Exact(1), outward.Exact(1).Sub(d)},
		{e.Add(d).Div(den), outward.Exact(1).Sub(d).Div(den)},
	}
	half := outward.Exact(1).Sub(outward.Exact(keep)).Div(outward.Exact(2))
	label := func(m outward.Interval) outward.Interval { return half.Add(outward.Exact(keep).Mul(m)) }
	var out []BitPair
	for _, v := range verts {
		p, q := label(v[0]), label(v[1])
		out = append(out, BitPair{P: math.Min(1, p.Hi), Q: math.Max(0, q.Lo)})
	}
	return out, nil
}
