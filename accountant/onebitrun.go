package accountant

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"sync"

	"github.com/darrm/darrm/internal/outward"
)

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
	// ones above an ε >= 0: the profile's search evaluates them many
	// times.
	start int
	// blockMax[b] is the largest entry of p[b·rawBlock:][:rawBlock].
	blockMax []float64
	// tailP[b] and tailE[b] sum p and p·e^-loss over the entries after
	// the last b blocks of estimateAnchor entries from start on, and up
	// is e^h (suffixSums), made on first use (estimate).
	tailP, tailE []float64
	up           float64
	fill         func()         // computes p, err and rel (ready)
	pool         *transformPool // transform's; nil: its own
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
func newBitRun(pool *transformPool, parts []bitPart, delta float64) (*bitRun, error) {
	return newBitRunIn(pool, parts, delta, maxBitWindow)
}

// newBitRunIn is newBitRun on a window of at most window points, a
// power of two: a coarser grid, whose transform costs less, for an
// estimate that only guides a search (coarseDelta).
func newBitRunIn(pool *transformPool, parts []bitPart, delta float64, window int) (*bitRun, error) {
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
	r := &bitRun{k: k, inf: math.Min(1, outward.Up(-math.Expm1(keep), 3+float64(len(parts)))), pool: pool}
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
		term := float64(c.k) * (c0 + outward.Ln(z))
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
	logDelta := outward.Ln(delta)
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
			k += float64(c.k) * (top + outward.Ln(sum))
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
			km += float64(c.k) * (lambda*tops[ci] + outward.Ln(sum))
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
