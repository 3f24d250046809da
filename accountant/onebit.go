package accountant

import (
	"cmp"
	"math"
	"math/big"
	"math/bits"
	"slices"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
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
// hold. A spend of another kind is returned as it is, and so is one
// whose pairs Check refuses, for Check to report: a probability outside
// [0, 1] panicked in the loss distribution.
func (s Spend) Dominating(m *Memo) Spend {
	if s.Kind == OneBitSpend && checkBits(s.Bits) == nil {
		s.Bits = slices.Clone(m.forCall().curvesOf(s.Bits).dominating)
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
// (outward.Ln is within 1, and 1.5 for a subnormal quotient).
func logRatio(n, d *big.Int, up bool) float64 {
	mode, dir := big.ToNegativeInf, math.Inf(-1)
	if up {
		mode, dir = big.ToPositiveInf, math.Inf(1)
	}
	q := new(big.Float).SetMode(mode).SetPrec(53)
	r, _ := q.Quo(new(big.Float).SetInt(n), new(big.Float).SetInt(d)).Float64()
	return math.Nextafter(math.Nextafter(outward.Ln(r), dir), dir)
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
		return nil, &param.Error{Name: "keep", Value: keep, Rule: "must be in [0, 1]"}
	}
	if err := checkStep("bit ", bit); err != nil {
		return nil, err
	}
	e := outward.Exp(outward.Exact(bit.Eps))
	den := e.Add(outward.Exact(1))
	d := outward.Exact(bit.Delta)
	m := e.Add(d).Div(den)
	if math.IsNaN(m.Lo) || math.IsNaN(m.Hi) || math.IsInf(m.Hi, 1) {
		// e^ε overflowed (ε above about 709), at least its upper end
		// (from about 709.09 on amd64 e^ε is [0, +Inf]), and
		// (e^ε+δ)/(e^ε+1) took Inf/Inf: NaN, or [NaN, +Inf], whose
		// P was NaN at keep = 0 and 1 at any other keep, far above
		// (1-keep)/2 + keep. The vertex is 1 in the limit, and 1
		// bounds every M.
		m = outward.Exact(1)
	}
	verts := [][2]outward.Interval{
		{d, outward.Exact(0)},
		{outward.Exact(1), outward.Exact(1).Sub(d)},
		{m, outward.Exact(1).Sub(d).Div(den)},
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

// pureEps returns the ε at δ = 0 of a OneBitSpend's pairs, and whether
// they have one: the largest privacy loss of their dominating pair
// (oneBitLoss), rounded up, when none of its losses is infinite (no pair
// has a probability 0 or 1 that the other does not share). It is the
// per-step pure loss, a point of the release's privacy profile.
func (s Spend) pureEps(m *Memo) (float64, bool) {
	if s.Kind != OneBitSpend || len(s.Bits) == 0 {
		return 0, false
	}
	l := m.curvesOf(s.Bits).loss
	if l.inf > 0 || len(l.atoms) == 0 {
		return 0, false
	}
	eps := 0.0
	for _, a := range l.atoms {
		eps = math.Max(eps, a.hi)
	}
	return eps, eps > 0
}
