package accountant

import (
	"context"
	"math"

	"github.com/darrm/darrm/internal/outward"
)

// countGuess estimates the count a budget allows, so that MaxSteps's
// search starts at it and composes exactly at two counts only when it
// is right (each a transform of 2^19 points): from k0, the count that
// the totals without the exact composition allow (chooseBounds), the
// coarse composition's ε (coarseRun, a transform of 2^15 points) at
// 2·k0 + 1 is extrapolated by ε(k) ≈ μk + c√k, μ the mean privacy loss
// of one step (Gaussian noise composes exactly so), and the estimate
// refined twice by the same law through the last two counts composed,
// or, once two lie on both sides of the budget, searched between them
// (countBetween). Where a rare large loss decides the count (rareCount),
// the search starts at roughDelta's count instead, and composes coarsely
// near it (countNear). 0 when there is no composition to extrapolate, and
// for steps other than a one-bit release, whose exact composition needs
// no transform (Gaussian noise: closed forms from σ = 4 on) and has no
// cheap estimate to guide the search for its ε: there the search's
// probes of the budget's ε cost less than three such searches. It only
// guides the search: the count is the one the predicate finds. Once ctx
// is done it composes no more (the search then ends with ctx's error).
func (a Account) countGuess(ctx context.Context, m *Memo, budget Guarantee) int {
	if a.Step.Kind != OneBitSpend || !(budget.Delta > 0) || len(a.Before) > 0 {
		return 0
	}
	cheap := func(k int) (bool, error) {
		c, _ := a.chooseBounds(m, k, budget.Delta, budget.Eps)
		return c.done(), nil
	}
	k0 := 0
	if ok, _ := cheap(1); ok {
		var err error
		if k0, err = lastFit(1, budget, cheap); err != nil {
			return 0
		}
	}
	runs := map[int]runCurves{}
	coarse := func(k int) (runCurves, bool) {
		if ctx.Err() != nil {
			return runCurves{}, false
		}
		r, ok := runs[k]
		if !ok {
			if r, ok = a.coarseRun(m, k, budget.Delta); ok {
				runs[k] = r
			}
		}
		return r, ok
	}
	if g, ok := rareCount(m.curvesOf(a.Step.Bits).loss, budget); ok && g >= k0 {
		if n, ok := countNear(coarse, budget, g); ok {
			return n
		}
	}
	exact := func(k int) (float64, bool) {
		r, ok := coarse(k)
		if !ok {
			return 0, false
		}
		return r.exactEps(budget.Delta, 1)
	}
	k1, ok := addSteps(k0, k0+1)
	if !ok {
		return 0
	}
	e1, ok := exact(k1)
	if !ok {
		// No ε at the budget's δ (the mass of infinite losses alone is
		// above it): k1 does not fit where k0 does.
		if n, ok := countBetween(coarse, budget, max(k0, 1), k1); ok {
			return n
		}
		return 0
	}
	if !(e1 > 0) {
		return 0
	}
	// ε = a·k + c·√k through (k1, e1) with a = μ, then through the last
	// two points.
	slope := m.curvesOf(a.Step.Bits).loss.mean()
	c := (e1 - slope*float64(k1)) / math.Sqrt(float64(k1))
	guess := solveCount(slope, c, budget.Eps)
	for range 2 {
		k2 := int(math.Min(guess, CountLimit))
		if k2 < 1 || k2 == k1 {
			break
		}
		e2, ok := exact(k2)
		if !ok {
			break
		}
		// Counts on both sides of the budget: where rare large losses
		// decide the count, ε jumps as their mass passes δ and the law
		// above extrapolates past it, while δ at the budget's ε grows
		// about as a power of k.
		if lo, hi := min(k1, k2), max(k1, k2); (e1 <= budget.Eps) != (e2 <= budget.Eps) {
			if n, ok := countBetween(coarse, budget, lo, hi); ok {
				return n
			}
		}
		x1, x2 := float64(k1), float64(k2)
		r1, r2 := math.Sqrt(x1), math.Sqrt(x2)
		det := x1*r2 - x2*r1
		slope, c = (e1*r2-e2*r1)/det, (x1*e2-x2*e1)/det
		if g := solveCount(slope, c, budget.Eps); g >= 1 && g <= CountLimit {
			guess = g
		}
		k1, e1 = k2, e2
	}
	if !(guess >= 1) {
		return 1
	}
	return int(math.Min(guess, CountLimit))
}

// rareCount returns the last count at which roughDelta, at the budget's
// ε, is within the budget's δ, and whether a rare large loss decides it
// there: the sequences that have it once or more hold most of that δ,
// and k·m_t (m_t its mass) is below 1/2. There the coarse extrapolation
// of ε by μk + c√k jumps far past the count (at K = 11, m = 2 in
// (8, 1e-8) to 402 where it is 79: ε jumps once k·m_t passes δ), while
// roughDelta is within a fraction of a percent of the coarse
// composition.
func rareCount(b bitLoss, budget Guarantee) (int, bool) {
	over := func(k int) bool { return roughDelta(b, k, budget.Eps, 0) > budget.Delta }
	if over(1) {
		return 0, false
	}
	lo, hi := 1, 2
	for !over(hi) {
		if hi == CountLimit {
			return 0, false
		}
		lo, hi = hi, min(2*hi, CountLimit)
	}
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; over(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	all := roughDelta(b, lo, budget.Eps, 0)
	rare := roughDelta(b, lo, budget.Eps, 1)
	return lo, float64(lo)*b.top().mass < 0.5 && rare >= all/2
}

// roughDelta estimates δ(ε) of k steps of the pair whose privacy loss is
// b, from the sequences in which its largest loss ℓ_t comes j times,
// j from from to 3, each the binomial weight of j times the profile of
// jℓ_t plus a Gaussian of the other k-j losses' mean and variance
// (the profile of Gaussian DP), and the mass of infinite losses when
// from is 0. It guides a count's search and decides nothing.
func roughDelta(b bitLoss, k int, eps float64, from int) float64 {
	top := b.top()
	var rest, s1, s2 float64
	for _, a := range b.atoms {
		if a.n != top.n {
			rest += a.mass
			s1 += a.mass * a.hi
			s2 += a.mass * a.hi * a.hi
		}
	}
	if top.n == nil || !(rest > 0 && top.mass > 0) {
		return math.NaN()
	}
	mu := s1 / rest
	v := math.Max(0, s2/rest-mu*mu)
	phi := func(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }
	var out float64
	if from == 0 {
		out = -math.Expm1(float64(k) * math.Log1p(-b.inf))
	}
	logC := 0.0
	for j := 0; j <= 3 && j <= k; j++ {
		if j > 0 {
			logC += outward.Ln(float64(k-j+1) / float64(j))
		}
		if j < from {
			continue
		}
		n := float64(k - j)
		w := math.Exp(logC + float64(j)*outward.Ln(top.mass) + n*outward.Ln(rest))
		mean, s := n*mu+float64(j)*top.hi, math.Sqrt(n*v)
		if s == 0 {
			out += w * math.Max(0, -math.Expm1(eps-mean))
			continue
		}
		// E[(1 - e^(ε-X))+], X ~ N(mean, s²).
		z := (mean - eps) / s
		out += w * math.Max(0, phi(z)-math.Exp(eps-mean+s*s/2)*phi(z-s))
	}
	return out
}

// countNear returns the last count whose coarse composition's δ at the
// budget's ε is within the budget's δ, searched from the estimate g:
// g, then g±1, g±2, g±4, ... on the side the probe at g points to,
// until a probe is on the other side of the budget, then countBetween
// in the last bracket. false when no probe within [1, CountLimit]
// brackets it, or ctx is done.
func countNear(coarse func(k int) (runCurves, bool), budget Guarantee, g int) (int, bool) {
	within := func(k int) (bool, bool) {
		r, ok := coarse(k)
		if !ok {
			return false, false
		}
		return r.delta(budget.Eps) <= budget.Delta, true
	}
	in, ok := within(g)
	if !ok {
		return 0, false
	}
	last := g
	for step := 1; ; step *= 2 {
		k := g - step
		if in {
			k = g + step
		}
		if k < 1 || k > CountLimit {
			return 0, false
		}
		kin, ok := within(k)
		if !ok {
			return 0, false
		}
		if kin != in {
			return countBetween(coarse, budget, min(last, k), max(last, k))
		}
		last = k
	}
}

// countBetween estimates, between the counts lo and hi (lo < hi), the
// last count whose composition's δ at the budget's ε is within the
// budget's δ: regula falsi with the Illinois rule on log δ against
// log k, each probe one coarse composition (coarseRun). false when the
// ends do not bracket it, or ctx is done.
func countBetween(coarse func(k int) (runCurves, bool), budget Guarantee, lo, hi int) (int, bool) {
	h := func(k int) (float64, bool) {
		r, ok := coarse(k)
		if !ok {
			return 0, false
		}
		d := math.Max(r.delta(budget.Eps), math.SmallestNonzeroFloat64)
		return outward.Ln(d) - outward.Ln(budget.Delta), true
	}
	hl, okl := h(lo)
	hh, okh := h(hi)
	if !okl || !okh || !(hl <= 0 && hh > 0) {
		return 0, false
	}
	side := 0
	for i := 0; hi-lo > 1; i++ {
		if i == 64 {
			return 0, false
		}
		t := hl / (hl - hh)
		x := math.Exp(outward.Ln(float64(lo)) + t*(outward.Ln(float64(hi))-outward.Ln(float64(lo))))
		k := min(max(int(math.Round(x)), lo+1), hi-1)
		hk, ok := h(k)
		if !ok {
			return 0, false
		}
		if hk <= 0 {
			lo, hl = k, hk
			if side < 0 {
				hh /= 2
			}
			side = -1
		} else {
			hi, hh = k, hk
			if side > 0 {
				hl /= 2
			}
			side = 1
		}
	}
	return lo, true
}

// coarseBitWindow bounds the points of the coarse composition that
// guides a one-bit count's search (coarseRun): at K = 11, m = 2, 79
// labels in (8, 1e-8), its δ at the budget's ε is within
// a relative 1e-4 of the exact composition's, where the next count's is
// 2.5% above, at a sixteenth of the cost.
const coarseBitWindow = 1 << 15

// coarseRun returns the composition of k steps of a one-bit release on
// a window of coarseBitWindow points for questions at total δ delta, and
// whether there is one: an upper bound of the profile, as the exact
// composition's, only coarser, so it guides the count's search and
// decides nothing. Its answers are kept with the exact composition's
// (bitQuery.window tells them apart), so that a count asked again
// composes nothing, coarse or exact.
func (a Account) coarseRun(m *Memo, k int, delta float64) (runCurves, bool) {
	c := m.curvesOf(a.Step.Bits)
	b, err := newBitRunIn(m.pool(), []bitPart{{c.loss, k}}, delta, coarseBitWindow)
	if err != nil {
		return runCurves{}, false
	}
	r := runCurves{s: a.Step, k: k, guess: b.estimate, bits: c, window: coarseBitWindow}
	r.delta = func(eps float64) float64 {
		return c.delta(bitQuery{k: k, window: coarseBitWindow, x: eps, y: delta}, b.delta)
	}
	return r, true
}

// solveCount returns the k at which a·k + c·√k = eps, a >= 0 and c > 0
// (else NaN).
func solveCount(a, c, eps float64) float64 {
	if !(a >= 0 && c > 0) {
		return math.NaN()
	}
	// as² + cs = ε, s = √k, in the form without cancellation.
	s := 2 * eps / (c + math.Sqrt(c*c+4*a*eps))
	return s * s
}
