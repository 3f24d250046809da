package accountant

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/roots"
)

// steps returns a·b, a number of coordinates or steps of a run, and
// whether it is in [0, CountLimit]: beyond it an int product can
// overflow, and a float64 count is no longer exact.
func steps(a, b int) (int, bool) {
	if a < 0 || b < 0 || a > 0 && b > CountLimit/a {
		return 0, false
	}
	return a * b, true
}

// addSteps returns a + b, and whether it is in [0, CountLimit].
func addSteps(a, b int) (int, bool) {
	if a < 0 || b < 0 || a > CountLimit-b {
		return 0, false
	}
	return a + b, true
}

// runCurves is what composes k steps of a described mechanism, fixed
// before the run: its exact profile δ(ε), when known, and its RDP total
// at an order.
type runCurves struct {
	s     Spend
	k     int
	memo  *Memo                     // what the run's questions keep
	delta func(eps float64) float64 // nil: no exact composition
	// guess, when set, estimates delta cheaply to guide exactEps's
	// search (roots.EdgeGuided).
	guess func(eps float64) float64
	// bits, for a OneBitSpend, remembers the answers of delta and
	// exactEps, of the composition on a window of window points.
	bits   *bitCurves
	window int
	// lower, when set, bounds delta from below at less cost
	// (lowerBitDelta), so that a count that does not fit is told without
	// the exact composition (beyond).
	lower func(eps float64) float64
	// sums, for a discrete GaussianSpend, are the noise sums that delta
	// composes, which remember exactEps's answers (dgEpsAt).
	sums []*dgSum
	// epsAt, when set, is the exact composition's ε at a total δ in
	// closed form (LaplaceSpend), and delta is nil.
	epsAt func(delta float64) (float64, bool)
	// missing says why a step that has an exact composition has none
	// here (its window, its count, its parts), for Total.Inexact.
	missing string
}

// newRunCurves prepares the exact composition of k steps of s, when s has
// one, for questions at total δ delta (its bounds are made tight there):
// continuous Gaussian noise by Gaussian DP, discrete Gaussian noise by the
// exact distribution of its privacy loss (at most two distinct σ), a
// one-bit release by the privacy loss distribution of its dominating
// pair, discretised pessimistically.
func newRunCurves(m *Memo, s Spend, k int, delta float64) runCurves {
	r := runCurves{s: s, k: k, memo: m}
	if s.Kind == LaplaceSpend {
		r.epsAt = laplaceRun(*s.Laplace, k)
		return r
	}
	if s.Kind == OneBitSpend {
		c := m.curvesOf(s.Bits)
		b, err := c.run(m.pool(), k, delta)
		if err != nil {
			r.missing = err.Error()
			return r
		}
		r.delta = func(eps float64) float64 {
			return c.delta(bitQuery{k: k, window: maxBitWindow, x: eps, y: delta}, b.delta)
		}
		r.lower = func(eps float64) float64 {
			return c.delta(bitQuery{k: k, window: -lowerBitWindow, x: eps}, func(eps float64) float64 {
				return lowerBitDelta(c.loss, k, eps, lowerBitWindow)
			})
		}
		r.guess, r.bits, r.window = b.estimate, c, maxBitWindow
		return r
	}
	if s.Kind == SampledGaussianSpend {
		r.missing = "no exact composition of the sampled Gaussian mechanism is implemented"
	}
	if s.Kind != GaussianSpend {
		return r
	}
	if !s.Discrete {
		mu2 := outward.MulUp(float64(k), s.mu2())
		r.delta = func(eps float64) float64 { return gdpDelta(eps, mu2) }
		return r
	}
	sums, err := discreteSums(m, s.Gaussian, k)
	if err != nil {
		r.missing = err.Error()
		return r
	}
	r.delta = func(eps float64) float64 { return discreteGaussianDelta(eps, sums) }
	r.guess = func(eps float64) float64 { return dgDelta(eps, sums, true) }
	r.sums = sums
	return r
}

// beyond reports whether the profile at eps is shown above delta by its
// lower bound (lower), which the exact composition, an upper bound of
// the same profile, is then above too: the exact composition need not be
// made to tell that the run does not fit. It is not asked where the
// coarse composition that guided the count's search (coarseRun) found
// the profile within delta, where it could not tell.
func (r runCurves) beyond(eps, delta float64) bool {
	if r.lower == nil {
		return false
	}
	if d, ok := r.bits.answer(bitQuery{k: r.k, window: coarseBitWindow, x: eps, y: delta}); ok && d <= delta {
		return false
	}
	// The bound is at most ι·k + k·m_t (lowerBitDelta): where that is
	// within delta it cannot tell, and where the largest loss is common
	// (k·m_t of 1/2 or more) it keeps too little of δ to.
	l := r.bits.loss
	rare := float64(r.k) * l.top().mass
	if !(rare < 0.5 && float64(r.k)*l.inf+rare > delta) {
		return false
	}
	return r.lower(eps) > delta
}

// renyiEps returns the ε of the run's RDP curve at δ under conversion c,
// and whether it has one: the zCDP slope exactly (RhoToDP), else the best
// integer order in [2, 4096].
func (r runCurves) renyiEps(delta float64, c Conversion) (float64, bool) {
	if rho, ok := r.s.rho(); ok {
		eps, _, err := c.RhoToDP(outward.MulUp(float64(r.k), rho), delta)
		return eps, err == nil
	}
	if _, ok := r.s.rdp(r.memo, 2); !ok {
		return 0, false
	}
	best := math.Inf(1)
	for a := 2; a <= maxSGMOrder; a++ {
		one, _ := r.s.rdp(r.memo, float64(a))
		eps, err := c.ConvertRDP(outward.MulUp(float64(r.k), one), float64(a), delta)
		if err == nil && eps < best {
			best = eps
		}
	}
	return best, !math.IsInf(best, 1)
}

// exactEps returns the least ε, to a relative 1e-9 and rounded up, at
// which the exact profile is at most delta, searching up from hi; false
// when none up to 2^60·hi is (a δ below the bound of the evaluation's
// error).
func (r runCurves) exactEps(delta, hi float64) (float64, bool) {
	if r.bits != nil {
		q := bitQuery{k: r.k, window: r.window, x: delta, y: hi}
		return r.bits.epsAt(q, func() (float64, bool) { return r.searchEps(delta, hi) })
	}
	if r.sums != nil {
		return dgEpsAt(r.sums, delta, hi, func() (float64, bool) { return r.searchEps(delta, hi) })
	}
	return r.searchEps(delta, hi)
}

// searchEps is exactEps's search. Where the estimate is above twice
// delta, the profile (the same sum but for rounding) is above delta too,
// and is not summed; where it is within half of delta, the profile at hi
// is not summed before the search either: an answer below hi is one at
// which the search found the profile within delta (ok), so it is within
// delta at hi too (the profile decreases in ε), and only an answer at hi
// itself is checked there. Either way the search takes the steps it
// would take without the estimate, a few sums over the window fewer
// (were the estimate wrong, it would double hi once more, and bisect to
// the same edge).
func (r runCurves) searchEps(delta, hi float64) (float64, bool) {
	ok := func(eps float64) bool { return r.delta(eps) <= delta }
	above := func(eps float64) bool { return r.guess != nil && r.guess(eps) > 2*delta }
	below := func(eps float64) bool { return r.guess != nil && r.guess(eps) <= delta/2 }
	if !above(0) && ok(0) {
		return 0, true
	}
	for range 60 {
		if above(hi) || !below(hi) && !ok(hi) {
			hi = 2*hi + 1
			continue
		}
		if r.guess == nil {
			return roots.Edge(0, hi, 1e-9, ok), true
		}
		e := roots.EdgeGuided(0, hi, 1e-9, ok, func(eps float64) bool { return r.guess(eps) <= delta })
		if e < hi || ok(hi) {
			return e, true
		}
		hi = 2*hi + 1
	}
	return 0, false
}

// canonicalEps returns, for a OneBitSpend, the optimal composition of its
// guarantee at total δ delta, and whether there is one: the mechanism is
// dominated by the canonical (ε, δ) pair of its guarantee as well as by
// its pairs' (Kairouz, Oh and Viswanath 2015, Thm 2.1), so both
// compositions bound its run and the exact total is the smaller, never
// above optimal composition's where the discretised loss distribution
// would be.
func (r runCurves) canonicalEps(delta float64) (float64, bool) {
	if r.s.Kind != OneBitSpend {
		return 0, false
	}
	slack := slackFor(r.s.Delta, r.k, delta)
	if !(slack > 0 && slack < 1) {
		return 0, false
	}
	g, err := composeOptimal(r.s.Guarantee, r.k, slack)
	return g.Eps, err == nil
}

// laplaceRun returns the exact composition of k steps of a LaplaceSpend
// part p: ε at total δ. A coordinate moved by 1 under discrete Laplace
// noise of scale b has privacy loss (|y-1| - |y|)/b, which is +1/b when
// y <= 0 (probability 1/(1 + e^(-1/b))) and -1/b otherwise: randomized
// response with ε = 1/b, exactly. A coordinate moved by less is a
// post-processing of it, and the two directions are mirror images, so k
// steps of Coords coordinates are dominated by k·Coords compositions of
// randomized response, which optimal composition gives exactly (Kairouz,
// Oh and Viswanath 2015, Thm 3.3: it is the composition of that pair)
// with total δ its slack; none beyond maxOptimalSteps.
func laplaceRun(p LaplacePart, k int) func(delta float64) (float64, bool) {
	n, ok := steps(p.Coords, k)
	return func(delta float64) (float64, bool) {
		if !ok || n > maxOptimalSteps || !(delta > 0 && delta < 1) {
			return 0, false
		}
		c := newRRComp(p.coordEps(), n)
		return outward.Up(c.epsFor(delta), optimalMargin), true
	}
}

// ComposeRun returns the totals of k steps of the mechanism s describes,
// whose parameters are fixed before the first step (the steps' inputs may
// be chosen adaptively), that hold at once: the compositions of its
// per-step guarantee (allTotals: simple, general, optimal with slack
// deltaPrime), and, for a mechanism with curves, at total δ delta, its
// RDP composition under conversion c (Renyi) and the exact composition of
// its dominating pairs (Exact). Each is a valid bound; the smallest that
// meets a budget is the one to use (Best, MaxRunSteps).
func ComposeRun(m *Memo, s Spend, k int, delta, deltaPrime float64, c Conversion) ([]Total, error) {
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("compose run: %w", err)
	}
	if err := param.CountIn("steps", k, 1, CountLimit); err != nil {
		return nil, fmt.Errorf("compose run: %w", err)
	}
	if err := c.Check(delta); err != nil {
		return nil, fmt.Errorf("compose run: %w", err)
	}
	out := allTotals(s.Guarantee, k, deltaPrime)
	r := newRunCurves(m.forCall(), s, k, delta)
	eps, ok := r.renyiEps(delta, c)
	if ok {
		out = append(out, Total{Method: Renyi, Guarantee: Guarantee{Eps: eps, Delta: delta}})
	}
	if r.epsAt != nil {
		if e, ok := r.epsAt(delta); ok {
			out = append(out, Total{Method: Exact, Guarantee: Guarantee{Eps: e, Delta: delta}})
		}
	}
	if r.delta != nil {
		hi := eps
		if !ok {
			hi = 1
		}
		e, ok := r.exactEps(delta, hi)
		if c, cok := r.canonicalEps(delta); cok && (!ok || c < e) {
			e, ok = c, true
		}
		if ok {
			out = append(out, Total{Method: Exact, Guarantee: Guarantee{Eps: e, Delta: delta}})
		}
	}
	return out, nil
}
