package ensemble

import (
	"math"
	"math/big"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/noise"
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
		return noise.Unit53 + tb.t[l]
	}
	return noise.Unit53 - tb.t[l]
}

// oneVoteBits returns the pairs of the label's Pr[1] at every two
// neighbouring vote counts l and l + 1 in the one-vote relation, as a
// accountant.OneBitSpend lists them: each probability is a multiple of
// 2^-54, which a float64 may not hold, so the larger of a pair is rounded
// up and the smaller down (a pair further apart dominates it).
func (tb *table) oneVoteBits() []accountant.BitPair {
	out := make([]accountant.BitPair, tb.k)
	for l := range out {
		x, y := tb.ones(l), tb.ones(l+1)
		out[l] = accountant.BitPair{P: unitFloat(x, x >= y), Q: unitFloat(y, y > x)}
	}
	return out
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
// proven bound of its rounding (rounding bound: the larger up, the
// smaller down, with directed rounding), dominate the label at every α.
func (tb *table) privateTeacherBits(p constraints.Problem) ([]accountant.BitPair, bool) {
	f := make([]float64, tb.k+1)
	for l := range f {
		f[l] = float64(tb.ones(l)) / unit54
	}
	return privateTeacherBits(p, f, 0x1p-53)
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
func roundingBound(k int, fErr float64) float64 {
	const ulp = 0x1p-52
	n := float64(k)
	return ((n+1)*n*(2*cornerULPs+2)+n+3)*ulp + fErr
}

// privateTeacherBits returns the pairs of (*table).privateTeacherBits for
// a label with Pr[1 | L = l] = f[l], each within fErr of the truth.
func privateTeacherBits(p constraints.Problem, f []float64, fErr float64) ([]accountant.BitPair, bool) {
	if !p.NumConfigs().IsInt64() || p.NumConfigs().Int64() > maxBitConfigs {
		return nil, false
	}
	widen := roundingBound(p.K, fErr)
	seen := make(map[accountant.BitPair]bool, p.NumConfigs().Int64())
	var out []accountant.BitPair
	err := cornerProbs(p, f, func(_ constraints.Config, x, y float64) {
		if x < y {
			x, y = y, x
		}
		b := accountant.BitPair{P: math.Min(1, outward.AddUp(x, widen)), Q: math.Max(0, outward.AddDown(y, -widen))}
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	})
	return out, err == nil
}

// cornerProbs calls fn with the label's Pr[1] = Σ_l α_l·f[l] on both
// sides of every corner multiset of p, as computed in float64, each
// within roundingBound of the exact value at the float64 ε, Δ and f.
func cornerProbs(p constraints.Problem, f []float64, fn func(c constraints.Config, x, y float64)) error {
	prob := func(alpha []float64) float64 {
		var s float64
		for l, a := range alpha {
			s += a * f[l]
		}
		return s
	}
	return p.AllPMFs(func(c constraints.Config, alpha, alphaPrime []float64) bool {
		fn(c, prob(alpha), prob(alphaPrime))
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

// logUp returns an upper bound of log(x): math.Log is within an ulp.
func logUp(x float64) float64 {
	return math.Nextafter(math.Nextafter(math.Log(x), math.Inf(1)), math.Inf(1))
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
