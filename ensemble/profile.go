package ensemble

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"sync"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/outward"
)

// maxProfilePoints bounds the points of a privacy profile that
// oneVoteProfile evaluates, each in O(K): every subset of the candidates
// gives valid points, the largest ratio (the pure-DP point, when there is
// one) is always among them.
const maxProfilePoints = 64

// unit54 is 2^54: the label's probabilities are multiples of 2^-54 (a
// threshold in units of 2^-53, halved by the fair coin).
const unit54 = 1 << 54

// ones returns Pr[label = 1 | L = l]·2^54, an integer: the majority with
// probability t(l)/2^53, else a fair coin.
func (tb *table) ones(l int) uint64 {
	if 2*l > tb.k {
		return discrete.Unit53 + tb.t[l]
	}
	return discrete.Unit53 - tb.t[l]
}

// oneVoteBits returns the pairs of the label's Pr[1] at every two
// neighbouring vote counts l and l + 1 in the one-vote relation, as a
// accountant.OneBitSpend lists them: each probability is a multiple of
// 2^-54, which a float64 may not hold, so the larger of a pair is rounded
// up and the smaller down (a pair further apart dominates it). A pair
// whose probabilities are near 1 is given by its Pr[0]s, which have the
// same hockey-stick lines: 1 - 2^-54 would round up to 1, a loss of
// 2^-54 into an infinite one.
func (tb *table) oneVoteBits() []accountant.BitPair {
	out := make([]accountant.BitPair, tb.k)
	for l := range out {
		x, y := tb.ones(l), tb.ones(l+1)
		if x+y > unit54 {
			x, y = unit54-x, unit54-y
		}
		out[l] = accountant.BitPair{P: unitFloat(x, x >= y), Q: unitFloat(y, y > x)}
	}
	return out
}

// tooManyConfigs says why the label of p has no pairs: more corner
// multisets than maxBitConfigs (Privacy.CurveMissing).
func tooManyConfigs(p constraints.Problem) string {
	return fmt.Sprintf("the label's pairs at %v corner multisets of K = %d teachers are more than the %d listed", p.NumConfigs(), p.K, maxBitConfigs)
}

// maxBitConfigs bounds the corner multisets whose label probabilities
// privateTeacherBits evaluates: C(K+7, 7) for Δ > 0 is 31,824 at K = 11
// and 2.6·10^10 at K = 101; above the bound the label is composed by its
// guarantee alone.
const maxBitConfigs = 1 << 17

// privateTeacherBits returns pairs of the label's Pr[1] that dominate
// every pair it can produce in the private-teachers relation of p, and
// whether there are not too many corner multisets to list them. For one
// output and one α, Pr[1 | D] - α·Pr[1 | D'] is affine in each teacher's
// pair of vote probabilities, which range over that teacher's (ε, Δ)
// polygon, so its largest is at a corner multiset (Lemma 3.4.4, at every
// α at once): the pairs at every corner multiset, each widened by a
// proven bound of its rounding (labelBounds: the larger up, the smaller
// down, with directed rounding), dominate the label at every α.
func (tb *table) privateTeacherBits(m *accountant.Memo, p constraints.Problem) ([]accountant.BitPair, bool) {
	return privateTeacherBits(m, p, tb.labelProbs())
}

// labelProbs returns the label's probabilities as privateTeacherBits
// takes them.
func (tb *table) labelProbs() labelProbs {
	// ones(l)/2^54 and its complement are integers over 2^54, rounded
	// once to a float64: within 2^-53 relative.
	f := labelProbs{one: make([]float64, tb.k+1), zero: make([]float64, tb.k+1), rel: 0x1p-53}
	for l := range f.one {
		f.one[l] = float64(tb.ones(l)) / unit54
		f.zero[l] = float64(unit54-tb.ones(l)) / unit54
	}
	return f
}

// labelProbs is the label's Pr[1 | L = l] (one) and Pr[0 | L = l]
// (zero), each computed so, within abs + rel·(its value) of the truth:
// the complement is given, not taken as 1 - one, so that a probability
// near 1 keeps the relative precision of its complement.
type labelProbs struct {
	one, zero []float64
	abs, rel  float64
}

// cornerULPs bounds the absolute error, in units of 2^-52, of the
// corners of a teacher's polygon as constraints.Problem.Corners computes
// them: (1 + Δe^-ε)/(1 + e^-ε) and (1 - Δ)e^-ε/(1 + e^-ε) take an exp
// (within 1 ulp) and four roundings (1/2 ulp each) of values at most 1,
// within 3 ulps; 1 - Δ one rounding; the others are exact.
const cornerULPs = 8

// roundingBound returns a bound of |x̂ - x|, x the label's Pr[1] at a
// corner multiset of K teachers and x̂ the float64 that privateTeacherBits
// computes, for f within fErr of Pr[1 | L = l]. With u = cornerULPs and
// η = 2^-53 (the unit roundoff; 2η = 2^-52 = ulp), the pmf's recurrence
// â'[l] = fl(fl(q̂'â[l]) + fl(q̂â[l-1])), q̂' = fl(1 - q̂), |q̂ - q| <= u·ulp,
// differs from a'[l] = (1-q)a[l] + q·a[l-1] by
// (1-q)(â[l]-a[l]) + q(â[l-1]-a[l-1]) + (q-q̂)(â[l] - â[l-1]) plus four
// roundings: with E = max |â - a| and every â at most 1 + E, at most
// E + u·ulp·(1+E) + 4η(1+E)(1+η)² <= E + (u + 2)·ulp·(1+E)(1+η)², which
// is at most E + (2u + 2)·ulp while E < 1/2; so after K teachers (the
// corners (0, 0) and (1, 1) shift the pmf exactly) every entry is
// within K(2u + 2)·ulp. Then x̂ = Σ_l fl(â_l·f̂_l), summed in
// order, differs from x = Σ_l a_l·f_l by Σ_l |â_l - a_l|·f_l <= (K+1)·E_K,
// Σ_l â_l·|f̂_l - f_l| <= (1 + (K+1)E_K)·fErr, and the 2K+1 roundings of
// nonnegative terms summing to at most 1 + (K+1)E_K: at most
// (2K+1)η(1 + 2^-40) <= (K+3)·ulp less (K+1)E_K·fErr (fErr <= 1/2 and
// (K+1)E_K < 2^-30 for K <= 2^10: privateTeacherBits lists at most 2^17
// multisets, K <= 11 for Δ > 0 and K <= 101 for Δ = 0). The bound is
// ((K+1)·K·(2u+2) + K + 3)·ulp + fErr. TestPrivateTeacherBitsAgainstBig
// checks it against 200-bit arithmetic.
//
// It is absolute: about 5·10^-13 at K = 11, which turns a Pr[1] of that
// size into 0, a loss into an infinite one (labelBounds keeps a relative
// bound beside it).
func roundingBound(k int, fErr float64) float64 {
	const ulp = 0x1p-52
	n := float64(k)
	return ((n+1)*n*(2*cornerULPs+2)+n+3)*ulp + fErr
}

// cornerRel returns, for each corner of p (Corners' order) and each of
// its two sides, a bound r of the relative error of its probability q̂
// as the pmf's recurrence uses it, and of the complement fl(1 - q̂) it
// takes, against the exact corner q at the float64 ε and Δ: 0 for the
// corners 0 and 1 (they shift the pmf exactly). The corner 1 - Δ is
// within |fl(1-Δ) - (1-Δ)| of the truth (computed exactly); every other
// within 9u relative (u = 2^-53: Δ is exact, (1 + Δe^-ε)/(1 + e^-ε) and
// (1 - Δ)e^-ε/(1 + e^-ε) take an exp within an ulp and four roundings).
// With A that absolute error, r = max(A/(q̂ - A), (u(1 - q̂) + A)/(1 - q̂ - A)):
// the complement is exact for q̂ >= 1/2 (Sterbenz) and rounded once
// otherwise. For the corner 1 - Δ the complement's r is about u/Δ
// (5.5·10^-8 at Δ = 10^-9), the price of a corner that is not a float64.
func cornerRel(p constraints.Problem) [][2]float64 {
	const u = 0x1p-53
	cs := p.Corners()
	oneMinus := 1 - p.Delta
	// (1 - Δ) - fl(1 - Δ), exactly: |Δ| <= 1 (Fast2Sum).
	e := math.Abs((1 - oneMinus) - p.Delta)
	out := make([][2]float64, len(cs))
	for j, c := range cs {
		for side, q := range [2]float64{c.P, c.Q} {
			if q == 0 || q == 1 {
				continue
			}
			a := 9 * u * q
			// The corners (1 - Δ, 1) and (1, 1 - Δ), at positions 4 and 5
			// of the eight corners with Δ > 0.
			if len(cs) == 8 && (j == 4 && side == 0 || j == 5 && side == 1) && q == oneMinus {
				a = e
			}
			r := math.Max(a/(q-a), (u*(1-q)+a)/(1-q-a))
			if !(r >= 0 && r < 1) {
				r = math.Inf(1)
			}
			out[j][side] = outward.Up(r, 4)
		}
	}
	return out
}

// labelBounds bounds the errors of the label's probabilities at the
// corner multisets of one release; it holds what the bounds take that is
// the same at every multiset, computed once, not at each of a multiset's
// four sums.
//
// The bound of |x̂ - x|, x the label's probability (Pr[1] with f.one,
// Pr[0] with f.zero) at one side of corner multiset c and
// x̂ = Σ_l fl(â_l·f̂_l) as cornerProbs computes it, given r, that
// side's cornerRel, is the least of roundingBound's absolute bound and a
// relative one, which keeps a probability of 10^-12 at its own size.
// The pmf's recurrence adds only nonnegative terms: with q̂ and its
// complement within a relative r_j of the teacher's, each teacher
// multiplies every entry's relative error by at most (1 + r_j)(1 + u)²,
// so â_l = a_l(1 + ρ_l), |ρ_l| <= R = Π_j ((1 + r_j)(1 + u)²)^c_j - 1
// over the corners with q̂ ∉ {0, 1}. With f̂_l within e_l = abs + rel·f̂_l
// of f_l and the sum of K + 1 nonnegative products within σ = (K + 2)u
// relative, |x - x̂| <= (R/(1-R) + σ)·x̂/(1-σ) + Σ_l â_l·e_l/(1-R).
type labelBounds struct {
	k      int          // K
	rel    [][2]float64 // cornerRel
	factor [][2]float64 // (1 + r_j)(1 + u)², raised a little, of each corner and side
	abs    float64      // roundingBound's, for f <= 1
	sigma  float64      // σ, raised a little
	e      [2][]float64 // e_l of f.one and f.zero
	// The products of R at the multiset growth was last asked for, by
	// side: prod[side][j] is over the corners before j, whose counts are
	// at[side][:j]. cornerProbs lists the multisets in lexicographic
	// order, so that consecutive ones share most of their first counts:
	// growth multiplies from the first count that differs only, the same
	// products in the same order.
	at   [2]constraints.Config
	prod [2][]float64
}

// newLabelBounds returns the bounds of the label's probabilities f at
// the corner multisets of K teachers, given rel (cornerRel).
func newLabelBounds(k int, f labelProbs, rel [][2]float64) *labelBounds {
	const u = 0x1p-53
	b := &labelBounds{
		k:      k,
		rel:    rel,
		factor: make([][2]float64, len(rel)),
		abs:    roundingBound(k, f.abs+f.rel), // f <= 1
		sigma:  float64(k+2) * u * 1.01,
	}
	for j, r := range rel {
		for side := range r {
			b.factor[j][side] = (1 + r[side]) * (1 + 2.01*u)
		}
	}
	for side := range b.at {
		b.at[side] = make(constraints.Config, len(rel))
		for j := range b.at[side] {
			b.at[side][j] = -1 // no count: the first multiset differs at once
		}
		b.prod[side] = make([]float64, len(rel)+1)
		b.prod[side][0] = 1
	}
	for o, probs := range [2][]float64{f.one, f.zero} {
		b.e[o] = make([]float64, len(probs))
		for l, v := range probs {
			b.e[o][l] = f.abs + f.rel*v
		}
	}
	return b
}

// growth returns R, rounded up, for one side of corner multiset c.
func (b *labelBounds) growth(c constraints.Config, side int) float64 {
	at, prod := b.at[side], b.prod[side]
	j := 0
	for j < len(c) && c[j] == at[j] {
		j++
	}
	for ; j < len(c); j++ {
		grow := prod[j]
		if b.rel[j][side] > 0 {
			for range c[j] {
				grow *= b.factor[j][side]
			}
		}
		at[j], prod[j+1] = c[j], grow
	}
	return outward.Up(prod[len(c)]-1, 4+float64(b.k))
}

// bound returns the bound of the error of x, the label's Pr[1]
// (output 0) or Pr[0] (output 1) from the pmf alpha of one side whose
// growth is bigR.
func (b *labelBounds) bound(bigR float64, output int, alpha []float64, x float64) float64 {
	if !(bigR < 0.25) {
		return b.abs
	}
	var ae float64
	for l, a := range alpha {
		ae += a * b.e[output][l]
	}
	// A tenth more: the bound is tight to first order where a corner's
	// own error (1 - Δ's) decides it.
	w := 1.1 * ((bigR/(1-bigR)+b.sigma)*x/(1-b.sigma) + ae*1.01/(1-bigR))
	return math.Min(b.abs, outward.Up(w, 8))
}

// privateTeacherBits returns the pairs of (*table).privateTeacherBits for
// a label whose probabilities are f: teacherBitsOf's, kept in m for the
// next release of the same teachers and f (teacherBitsIn).
func privateTeacherBits(m *accountant.Memo, p constraints.Problem, f labelProbs) ([]accountant.BitPair, bool) {
	// The pairs are those of the teachers' corners and f alone: m and the
	// target's delta say what a release certifies, not what its label
	// reveals. Held without them, the pairs are found again where a search
	// over m (package plan's for subsampling) tries every m of one
	// subsample size.
	key := p
	key.M, key.TargetDelta = 0, 0
	kept := teacherBitsIn(m)
	if bits, ok := kept.get(key, f); ok {
		return bits, true
	}
	bits, ok := teacherBitsOf(p, f)
	if ok {
		kept.put(key, f, bits)
	}
	return bits, ok
}

// teacherBitsKey is the key of the pairs a Memo keeps for this package.
type teacherBitsKey struct{}

// teacherBitsIn returns the pairs of the releases last described that m
// keeps, most recent first: a command builds the same release more than
// once (a simulation plans it, then runs it), and every release with the
// same problem and noise function has the same pairs, each costing a
// pass over every corner multiset (31,824 at K = 11). They are bounded by
// maxMemoEntries and maxMemoPairs; a nil m keeps none.
func teacherBitsIn(m *accountant.Memo) *bitsMemo {
	return m.Keep(teacherBitsKey{}, func() any { return new(bitsMemo) }).(*bitsMemo)
}

// Bounds of teacherBitsIn's pairs: a few releases, and at most 4 MiB of pairs.
const (
	maxMemoEntries = 8
	maxMemoPairs   = 1 << 18
)

// bitsMemo is a bounded list of privateTeacherBits' results, safe for
// concurrent use.
type bitsMemo struct {
	mu     sync.Mutex
	recent []memoBits
}

// memoBits is teacherBitsOf(p, f): f is the memo's own copy, bits shared
// by nothing outside the memo.
type memoBits struct {
	p    constraints.Problem
	f    labelProbs
	bits []accountant.BitPair
}

// get returns a copy of the pairs of p and f, and whether they are held;
// a hit becomes the most recent.
func (m *bitsMemo) get(p constraints.Problem, f labelProbs) ([]accountant.BitPair, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, e := range m.recent {
		if sameProblem(e.p, p) && sameLabelProbs(e.f, f) {
			copy(m.recent[1:i+1], m.recent[:i])
			m.recent[0] = e
			return slices.Clone(e.bits), true
		}
	}
	return nil, false
}

// put holds a copy of bits, the pairs of p and f, as the most recent,
// dropping the least recent beyond the bounds.
func (m *bitsMemo) put(p constraints.Problem, f labelProbs, bits []accountant.BitPair) {
	if len(bits) > maxMemoPairs {
		return
	}
	e := memoBits{p: p, f: labelProbs{one: slices.Clone(f.one), zero: slices.Clone(f.zero), abs: f.abs, rel: f.rel}, bits: slices.Clone(bits)}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recent = slices.Insert(m.recent, 0, e)
	total := 0
	for i, r := range m.recent {
		if total += len(r.bits); total > maxMemoPairs || i == maxMemoEntries {
			clear(m.recent[i:])
			m.recent = m.recent[:i]
			break
		}
	}
}

// sameProblem says whether p and q are the same problem, every float bit
// for bit (a -0 is not a 0 here).
func sameProblem(p, q constraints.Problem) bool {
	// == compares every field, one added later too; the floats again by
	// their bits, which == does not (-0 == 0).
	return p == q && sameFloats(
		[]float64{p.M, p.Eps, p.Delta, p.TargetDelta}, []float64{q.M, q.Eps, q.Delta, q.TargetDelta})
}

// sameLabelProbs says whether f and g are the same, bit for bit.
func sameLabelProbs(f, g labelProbs) bool {
	return sameFloats(f.one, g.one) && sameFloats(f.zero, g.zero) && sameFloats([]float64{f.abs, f.rel}, []float64{g.abs, g.rel})
}

// sameFloats says whether a and b hold the same float64s, bit for bit.
func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// teacherBitsOf computes the pairs of privateTeacherBits. Each pair is given by the output
// whose probabilities are the smaller (Pr[1] on both inputs, or Pr[0]):
// a pair (P, Q) and (1 - P, 1 - Q) have the same hockey-stick lines, and
// the smaller keep their relative precision in a float64 (1 - 10^-12 does
// not); the larger is rounded up by its bound, the smaller down. Only
// that output's bounds are computed, half of the multiset's four.
func teacherBitsOf(p constraints.Problem, f labelProbs) ([]accountant.BitPair, bool) {
	if !p.NumConfigs().IsInt64() || p.NumConfigs().Int64() > maxBitConfigs {
		return nil, false
	}
	seen := make(map[accountant.BitPair]struct{}, p.NumConfigs().Int64())
	var out []accountant.BitPair
	err := cornerProbs(p, f, func(m *cornerMultiset) {
		// side 0 is D's, side 1 D''s; output 0 is Pr[1], output 1 Pr[0].
		o := 0
		if m.probs[0][0]+m.probs[1][0] > m.probs[0][1]+m.probs[1][1] {
			o = 1
		}
		x, y := 0, 1
		if m.probs[x][o] < m.probs[y][o] {
			x, y = y, x
		}
		b := accountant.BitPair{P: math.Min(1, outward.AddUp(m.probs[x][o], m.err(x, o))), Q: math.Max(0, outward.AddDown(m.probs[y][o], -m.err(y, o)))}
		// One hash of b, not a look-up and an insertion: b is new if
		// the set grows.
		n := len(seen)
		seen[b] = struct{}{}
		if len(seen) > n {
			out = append(out, b)
		}
	}, cornerRel(p))
	return out, err == nil
}

// cornerMultiset is a corner multiset c with the label's probabilities
// at both of its sides, probs[side][output] (side 0 is D's, 1 D”s;
// output 0 is Pr[1], 1 Pr[0]), and what bounds their errors: each bound
// is computed when asked for (err), as a caller may need only some.
type cornerMultiset struct {
	c      constraints.Config
	probs  [2][2]float64
	alpha  [2][]float64
	bounds *labelBounds
	growth [2]float64 // labelBounds.growth of each side, NaN until asked for
}

// err returns the bound of the error of probs[side][output] against the
// exact value at the float64 ε, Δ and f (labelBounds).
func (m *cornerMultiset) err(side, output int) float64 {
	if math.IsNaN(m.growth[side]) {
		m.growth[side] = m.bounds.growth(m.c, side)
	}
	return m.bounds.bound(m.growth[side], output, m.alpha[side], m.probs[side][output])
}

// cornerProbs calls fn with the label's Pr[1] and Pr[0] = Σ_l α_l·f[l]
// on both sides of every corner multiset of p, as computed in float64,
// and the bound of the error of each against the exact value at the
// float64 ε, Δ and f (m.err: labelBounds, from rel, cornerRel of p).
// fn must not keep m.
func cornerProbs(p constraints.Problem, f labelProbs, fn func(m *cornerMultiset), rel [][2]float64) error {
	m := &cornerMultiset{bounds: newLabelBounds(p.K, f, rel)}
	return p.AllPMFs(func(c constraints.Config, alpha, alphaPrime []float64) bool {
		m.c, m.alpha = c, [2][]float64{alpha, alphaPrime}
		for s, a := range m.alpha {
			var one, zero float64
			for l, v := range a {
				one += v * f.one[l]
				zero += v * f.zero[l]
			}
			m.probs[s] = [2]float64{one, zero}
		}
		m.growth = [2]float64{math.NaN(), math.NaN()}
		fn(m)
		return true
	})
}

// unitFloat returns x·2^-54 rounded up or down to a float64.
func unitFloat(x uint64, up bool) float64 {
	f := float64(x)
	switch {
	case up && uint64(f) < x:
		f = math.Nextafter(f, math.Inf(1))
	case !up && f != 0x1p64 && uint64(f) > x:
		f = math.Nextafter(f, 0)
	}
	return f / unit54
}

// oneVoteProfile returns points of the exact privacy profile of the label
// tb releases in the one-vote relation, beyond its guarantee g: for each
// point (ε_i, δ_i), with ε_i >= g.Eps and δ_i < g.Delta, δ_i bounds the
// hockey-stick divergence sup_S P(S) - e^ε_i·Q(S) between the label's
// distributions P and Q at any two neighbouring vote counts l and l ± 1, in
// both orders. The label is one bit, so S is {0} or {1}, and each ordered
// pair and output gives a line a - α·b in α = e^ε_i (a, b the two
// probabilities, in units of 2^-54); the profile is the largest of them
// and 0. It is evaluated exactly (integers, and α a float64) at
// candidates α: e^g.Eps, rounded down, and the ratios a/b of the lines,
// rounded up, where the profile changes slope. Each δ_i is rounded up and
// each ε_i = log α rounded up, so every point is a guarantee of the label
// (accountant.ComposeProfile composes them).
func (tb *table) oneVoteProfile(g accountant.Guarantee) []accountant.Guarantee {
	type line struct {
		a, b  uint64
		ratio float64 // a/b rounded up; +Inf when b = 0
	}
	var lines []line
	for l := 0; l < tb.k; l++ {
		x, y := tb.ones(l), tb.ones(l+1)
		for _, ab := range [][2]uint64{{x, y}, {y, x}, {unit54 - x, unit54 - y}, {unit54 - y, unit54 - x}} {
			if a, b := ab[0], ab[1]; a > b {
				lines = append(lines, line{a, b, ratioUp(a, b)})
			}
		}
	}
	// Largest ratio first: at α only the lines of ratio > α can be
	// positive (a <= ratio·b <= α·b for the others).
	slices.SortFunc(lines, func(p, q line) int { return -compareFloat(p.ratio, q.ratio) })
	lines = slices.Compact(lines)
	at := func(alpha float64) float64 {
		best := new(big.Float)
		for _, ln := range lines {
			if ln.ratio <= alpha {
				break
			}
			if v := excess(ln.a, ln.b, alpha); v.Cmp(best) > 0 {
				best = v
			}
		}
		return scaleUp(best)
	}
	cands := []float64{math.Nextafter(math.Nextafter(math.Exp(g.Eps), 0), 0)}
	for _, ln := range lines {
		if !math.IsInf(ln.ratio, 1) && logUp(ln.ratio) > g.Eps {
			cands = append(cands, ln.ratio)
		}
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	if n := len(cands); n > maxProfilePoints {
		pick := make([]float64, 0, maxProfilePoints)
		for i := range maxProfilePoints {
			pick = append(pick, cands[(n-1)*i/(maxProfilePoints-1)])
		}
		cands = slices.Compact(pick)
	}
	var points []accountant.Guarantee
	for _, alpha := range cands {
		p := accountant.Guarantee{Eps: max(g.Eps, logUp(alpha)), Delta: at(alpha)}
		if p.Delta < g.Delta {
			points = append(points, p)
		}
	}
	return points
}

// excess returns max(0, a - alpha·b) exactly, for a, b <= 2^54 and a
// finite alpha >= 1: 256 bits hold alpha·b (107 bits) and the difference,
// whose bits lie between 2^-52 (alpha's last, alpha >= 1) and
// 2^54·alpha, for alpha below 2^150. A larger alpha leaves a - alpha·b
// positive only when b = 0, and then it is a.
func excess(a, b uint64, alpha float64) *big.Float {
	if b == 0 {
		return new(big.Float).SetUint64(a)
	}
	if alpha >= 0x1p150 {
		return new(big.Float)
	}
	x := new(big.Float).SetPrec(256).SetUint64(b)
	x.Mul(x, new(big.Float).SetFloat64(alpha))
	x.Sub(new(big.Float).SetPrec(256).SetUint64(a), x)
	if x.Sign() < 0 {
		return new(big.Float)
	}
	return x
}

// scaleUp returns v/2^54 rounded up to a float64 (the scaling is exact).
func scaleUp(v *big.Float) float64 { return floatUp(new(big.Float).SetMantExp(v, -54)) }

// ratioUp returns a/b rounded up to a float64, +Inf when b = 0.
func ratioUp(a, b uint64) float64 {
	if b == 0 {
		return math.Inf(1)
	}
	x := new(big.Float).SetMode(big.ToPositiveInf).SetPrec(256)
	return floatUp(x.Quo(new(big.Float).SetUint64(a), new(big.Float).SetUint64(b)))
}

// floatUp returns the least float64 >= x.
func floatUp(x *big.Float) float64 {
	f, acc := x.Float64()
	if acc == big.Below {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

// logUp returns an upper bound of log(x): outward.Ln is within 1.5 ulps
// (an ulp but for a subnormal x), inside the two it is moved by.
func logUp(x float64) float64 {
	return math.Nextafter(math.Nextafter(outward.Ln(x), math.Inf(1)), math.Inf(1))
}

// compareFloat orders float64s, +Inf last.
func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
