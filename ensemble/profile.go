package ensemble

import (
	"math"
	"math/big"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
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
// α at once): the pairs at every corner multiset, each widened by a bound
// of its rounding (the larger up, the smaller down), dominate the label
// at every α. The pmfs come from the recurrence
// α'[l] = (1-q)·α[l] + q·α[l-1] (constraints.Problem.AllPMFs), whose absolute
// error grows by at most 2u + 2 ulps a teacher, u the corners' error (8
// ulps: an exp and four roundings); Pr[1] = Σ_l α_l·f(l) adds (K+1)
// times it, K+3 roundings and the error of f. The bound is twice that.
func (tb *table) privateTeacherBits(p constraints.Problem) ([]accountant.BitPair, bool) {
	f := make([]float64, tb.k+1)
	for l := range f {
		f[l] = float64(tb.ones(l)) / unit54
	}
	return privateTeacherBits(p, f, 0x1p-53)
}

// privateTeacherBits returns the pairs of (*table).privateTeacherBits for
// a label with Pr[1 | L = l] = f[l], each within fErr of the truth.
func privateTeacherBits(p constraints.Problem, f []float64, fErr float64) ([]accountant.BitPair, bool) {
	if !p.NumConfigs().IsInt64() || p.NumConfigs().Int64() > maxBitConfigs {
		return nil, false
	}
	const ulp = 0x1p-52
	k := float64(p.K)
	widen := 2 * (((k+1)*k*(2*8+2)+k+3)*ulp + fErr)
	prob := func(alpha []float64) float64 {
		var s float64
		for l, a := range alpha {
			s += a * f[l]
		}
		return s
	}
	seen := map[accountant.BitPair]bool{}
	var out []accountant.BitPair
	err := p.AllPMFs(func(_ constraints.Config, alpha, alphaPrime []float64) bool {
		x, y := prob(alpha), prob(alphaPrime)
		if x < y {
			x, y = y, x
		}
		b := accountant.BitPair{P: math.Min(1, x+widen), Q: math.Max(0, y-widen)}
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
		return true
	})
	return out, err == nil
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
