package pate

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
)

// Smooth sensitivity of PATE's data-dependent cost (PATE paper, Section
// 4.3 and Appendices B-C). The data-dependent Rényi DP f(x) at one order
// is a function of the votes x; printing it is a release. Its local
// sensitivity at distance d, A(d), bounds |f(y) - f(y')| over neighbours
// y, y' with y within d changed teachers of x; the β-smooth sensitivity is
// SS_β(x) = max_d e^{-βd}·A(d), and f(x) + SS_β(x)·N(0, σ²) (GNSS) is
// Rényi-DP with the cost gnssRDP bounds (above the PATE paper's Theorem
// 23, which does not hold near λ = 1/(2β)).

// qPad widens the neighbour bounds B_u, B_l in log q by an absolute
// amount far above their floating-point error, and above the rounding
// that separates a computed q̃ from its exact value.
const qPad = 1e-9

// logErfc returns log erfc(x), accurate to a few ulps (no direction).
func logErfc(x float64) float64 {
	if x < 26 {
		return outward.Ln(math.Erfc(x))
	}
	x2 := x * x
	return -x2 - outward.Ln(x*math.Sqrt(math.Pi)) + math.Log1p(-0.5/x2+0.75/(x2*x2))
}

// logErfcInv returns y with log erfc(y) = t, t < log 2: Newton's method
// narrows a bracket of the root, then bisection takes it down to adjacent
// floats, where a bisection alone would end.
func logErfcInv(t float64) float64 {
	lo, hi := -6.0, 1.0
	for logErfc(hi) > t {
		hi *= 2
		if hi > 1e154 {
			return math.Inf(1)
		}
	}
	// Newton's iterates, each of which narrows the bracket [lo, hi]
	// (logErfc > t at lo, <= t at hi); d/dy log erfc(y) =
	// -2e^{-y²}/(√π·erfc(y)).
	y := hi
	var d float64
	for range 60 {
		l := logErfc(y)
		f := l - t
		if f > 0 {
			lo = math.Max(lo, y)
		} else {
			hi = math.Min(hi, y)
		}
		d = -2 / math.Sqrt(math.Pi) * math.Exp(-y*y-l)
		next := y - f/d
		if !(next > lo && next < hi) || next == y {
			break
		}
		y = next
	}
	// log erfc is concave: the iterates approach the root from above, lo
	// stays where it was, and the bisection's first fifty or so midpoints
	// lie below the root by far more than logErfc errs. below is a point
	// under hi, by about twice the error over the slope d, at which
	// logErfc exceeds t by more than its error (logErfcMargin), so that it
	// exceeds t at every point below: each midpoint there becomes lo
	// without its logErfc, and the midpoints, and the result, are the
	// bisection's own.
	below := math.Inf(-1)
	step := 2 * logErfcMargin(hi, t) / -d
	for range 3 {
		m := hi - step
		if !(m > lo) {
			break
		}
		if l := logErfc(m); l-t > logErfcMargin(m, l) {
			below = m
			break
		}
		step *= 256
	}
	for range 2000 {
		m := lo + (hi-lo)/2
		if m <= lo || m >= hi {
			break
		}
		if m <= below || logErfc(m) > t {
			lo = m
		} else {
			hi = m
		}
	}
	return lo + (hi-lo)/2
}

// logErfcMargin returns a margin by which l = logErfc(m) above t shows
// that logErfc(x) > t at every x <= m. logErfc is within A + B·|log erfc|
// of log erfc, with A = 2^-48 below 26 (erfc within ErfcULPs = 8 ulps of
// itself moves the logarithm by 8·2^-52) and 10^-8 from 26 (the
// asymptotic series' omitted term, at most 15/(8x⁶) relative, 6.2·10^-9
// at 26), and B = 2^-46 (the logarithm's rounding, and the few of the
// series, within an ulp each: 64 ulps). log erfc decreases and v - B|v|
// increases in v, so for x < m logErfc(x) >= log erfc(m) - A - B|log
// erfc(m)| >= l - 2A - 2B(|l| + A)/(1 - B): the margin is twice that.
func logErfcMargin(m, l float64) float64 {
	const b = 0x1p-46
	a := 0x1p-48
	if m >= 26 {
		a = 1e-8
	}
	return 4*a + 4*b*(math.Abs(l)+1)
}

// qMoves bounds q̃ at a neighbour of a histogram: q̃ = r·Σ_{m-1 terms}
// erfc(x_i)/2 with x_i = (gap_i - shift)/(2σ), and one changed vote moves
// every x_i by at most 1/σ (a vote moved between classes changes every
// gap to the plurality by at most two; one added or removed, by at most
// one). The sum of m-1 terms erfc(x_i)/2 equal to s is
// at most (m-1)/2·erfc(erfc⁻¹(2s/(m-1)) - 1/σ) after the move and at
// least (m-1)/2·erfc(erfc⁻¹(2s/(m-1)) + 1/σ) (PATE paper, Appendix B:
// B_u and B_l).
type qMoves struct {
	logScale float64 // log(r(m-1)/2)
	step     float64 // 1/σ
}

func newQMoves(sigma float64, classes int, noise noisymax.Noise) qMoves {
	r := 1.0
	if noise == noisymax.DiscreteNoise {
		r = discreteGNMaxExcess(sigma)
	}
	return qMoves{logScale: outward.Ln(r * float64(classes-1) / 2), step: 1 / sigma}
}

func (m qMoves) up(L float64) float64 {
	y := logErfcInv(L - m.logScale)
	return math.Min(0, logErfc(y-m.step)+m.logScale+qPad)
}

func (m qMoves) down(L float64) float64 {
	y := logErfcInv(L - m.logScale)
	return logErfc(y+m.step) + m.logScale - qPad
}

// both returns up(L) and down(L), inverting erfc once.
func (m qMoves) both(L float64) (up, down float64) {
	y := logErfcInv(L - m.logScale)
	return math.Min(0, logErfc(y-m.step)+m.logScale+qPad), logErfc(y+m.step) + m.logScale - qPad
}

// gnmaxLS computes local sensitivities of GNMax's β at one order.
type gnmaxLS struct {
	k       *curve
	moves   qMoves
	logq1   float64 // B_l(q0)
	plateau float64
	sigma   float64
	noise   noisymax.Noise
	mo      *memo // what its bounds keep
}

func newGNMaxLS(mo *memo, sigma, order float64, classes int, noise noisymax.Noise) *gnmaxLS {
	g := &gnmaxLS{k: newCurve(mo, gnmaxSlope(sigma), order), moves: newQMoves(sigma, classes, noise), sigma: sigma, noise: noise, mo: mo}
	if math.IsInf(g.k.logq0, -1) {
		g.logq1 = math.Inf(-1)
		g.plateau = 0
		return g
	}
	g.logq1 = g.moves.down(g.k.logq0)
	g.plateau = g.lsAt(g.logq1)
	return g
}

// lsAt bounds the local sensitivity of β at a histogram with q̃ = e^L:
// max(β(B_u(q)) - β(q), β(q) - β(B_l(q))), from upper and lower ends
// (PATE paper, Algorithm 3, Proposition 13). Between q1 = B_l(q0) and q0
// it is taken at q1, where it is largest (condition C6).
func (g *gnmaxLS) lsAt(L float64) float64 {
	if L >= g.logq1 && L <= g.k.logq0 {
		L = g.logq1
	}
	u, d := g.moves.both(L)
	b, bu, bl := g.k.at(L), g.k.at(u), g.k.at(d)
	return math.Max(0, math.Max(outward.AddUp(bu.Hi, -b.Lo), outward.AddUp(b.Hi, -bl.Lo)))
}

// distances returns A(d), d = 0..K: an upper bound on the local
// sensitivity of β at every histogram within d changed teachers of counts
// in the relation rel, non-decreasing in d. Below q1 the local
// sensitivity grows with q̃, so the greedy walk that raises q̃ fastest (a
// vote from the plurality to the runner-up) bounds it; above q0 it falls
// with q̃, and the walk that lowers q̃ fastest (a vote from the runner-up
// to the plurality) bounds it; in between, and once a walk reaches
// [q1, q0], it is the plateau (PATE paper, Algorithms 4 and 5). With
// abstentions a vote removed or added changes every gap to the plurality
// by at most one, where a move changes one by two and the others by one
// in the same direction, so a move is the faster step either way while
// one is possible; the walk that lowers q̃ then adds votes to the
// plurality once the other classes are empty, while fewer than K voted
// (without abstentions no histogram lies beyond, and the rest is the
// plateau).
func (g *gnmaxLS) distances(counts []int, rel neighbours) []float64 {
	res := make([]float64, rel.teachers+1)
	for d := range res {
		res[d] = g.plateau
	}
	v := slices.Clone(counts)
	slices.SortFunc(v, func(a, b int) int { return b - a })
	cast := castVotes(v)
	L := gnmaxLogQ(g.mo, v, 0, g.sigma, g.noise)
	if L >= g.logq1 && L <= g.k.logq0 {
		return res
	}
	right := L < g.logq1
walk:
	for d := 0; d <= rel.teachers; d++ {
		if d > 0 {
			switch {
			case right && v[0] > v[1]:
				v[0]--
				v[1]++
			case right:
				break walk
			case v[1] > 0:
				v[0]++
				v[1]--
			case rel.abstain && cast < rel.teachers:
				v[0]++
				cast++
			default:
				break walk
			}
			slices.SortFunc(v, func(a, b int) int { return b - a })
			L = gnmaxLogQ(g.mo, v, 0, g.sigma, g.noise)
		}
		if L >= g.logq1 && L <= g.k.logq0 || (right && L > g.k.logq0) || (!right && L < g.logq1) {
			break // the plateau from here on
		}
		res[d] = g.lsAt(L)
		if d > 0 {
			res[d] = math.Max(res[d], res[d-1])
		}
	}
	return res
}

// thresholdLS computes local sensitivities of the threshold step's β at
// one order from its table over the largest count v.
type thresholdLS struct {
	beta []outward.Interval // β at v = 0..K
	lo   int                // the least possible largest count (neighbours.leastMax)
}

// newThresholdLS tabulates β at one order from the threshold step's log q̃
// at each largest count 0..K, as the account charges it, for the
// threshold step's noise of deviation sigma1.
func newThresholdLS(mo *memo, sigma1, order float64, logq []float64, lo int) *thresholdLS {
	k := newCurve(mo, thresholdSlope(sigma1), order)
	t := &thresholdLS{beta: make([]outward.Interval, len(logq)), lo: lo}
	for v, L := range logq {
		t.beta[v] = k.at(L)
	}
	return t
}

// at returns the local sensitivity of β at a largest count v: its
// neighbours have v - 1 or v + 1 (the largest count has sensitivity 1,
// for a vote moved, added or removed).
func (t *thresholdLS) at(v int) float64 {
	ls := 0.0
	for _, w := range []int{v - 1, v + 1} {
		if w < t.lo || w >= len(t.beta) {
			continue
		}
		ls = math.Max(ls, math.Max(outward.AddUp(t.beta[w].Hi, -t.beta[v].Lo), outward.AddUp(t.beta[v].Hi, -t.beta[w].Lo)))
	}
	return ls
}

// distances returns A(d), d = 0..K: the largest local sensitivity at a
// largest count within d of v.
func (t *thresholdLS) distances(v int) []float64 {
	res := make([]float64, len(t.beta))
	for d := range res {
		for _, w := range []int{v - d, v + d} {
			if w >= t.lo && w < len(t.beta) {
				res[d] = math.Max(res[d], t.at(w))
			}
		}
		if d > 0 {
			res[d] = math.Max(res[d], res[d-1])
		}
	}
	return res
}

// localSensitivity returns A(d), d = 0..K, an upper bound on the local
// sensitivity of the data-dependent total at order λ (RDPDependent) at
// every vote matrix within d changed teachers of the account's: the sum
// over queries of each step's bound, the GNMax step weighted by its
// answer (1 or 0) or, for expected cost, by the largest probability of
// answering within distance d plus the change of that probability times
// λ/σ2² (the product rule). A changed teacher changes at most one vote
// of every query, so every query's histogram moves to a neighbour in the
// account's relation (a vote moved; with abstentions also one added or
// removed: rdpOptions.Abstain). In both directions a query's GNMax cost is β
// at the largest q̃ within one vote, so its A(d) is the one-sided
// A(d + 1) (docs/pate.md).
//
// It requires conditions C5 and C6 of the PATE paper (smoothConditions)
// for σ2, C and λ, and returns an error when they fail, or ctx's error
// once it is done (a query takes up to a millisecond at K = 250: 200,000
// queries take minutes).
func (a *rdpAccount) localSensitivity(ctx context.Context, order float64) ([]float64, error) {
	if err := param.Alpha(order); err != nil {
		return nil, fmt.Errorf("PATE smooth sensitivity: %w", err)
	}
	if c5, c6 := smoothConditions(a.mo, a.mech.Sigma2, a.classes, order, a.mech.Noise); !c5 || !c6 {
		return nil, fmt.Errorf("PATE smooth sensitivity: conditions C5 = %v, C6 = %v at sigma2 = %v, C = %d, order %v: the analysis does not apply (pick another order or more noise)",
			c5, c6, a.mech.Sigma2, a.classes, order)
	}
	g := newGNMaxLS(a.mo, a.mech.Sigma2, order, a.classes, a.mech.Noise)
	m := lsModel{g: g, weight: a.thP, ind: g.k.ind.Hi, scale: 1, pad: 1e-15}
	if a.mech.Confident() {
		m.th = newThresholdLS(a.mo, a.mech.Sigma1, order, a.thLogQ, a.neighbours().leastMax(a.classes))
	}
	return a.sumLocalSensitivity(ctx, m)
}

// lsModel is what the local sensitivity of a per-query cost
// th(v) + w(v)·s(β(Q̃)) needs, v the largest count and Q̃ the GNMax step's
// q̃ (in both directions or one): the threshold step's table th (nil
// without it); the GNMax step's local sensitivities g; for a cost
// weighted by w (an account of expected cost, a Propose-Test-Release
// bound), the weight at each largest count, an upper bound pad on the
// error of its entries, ind >= s(β) at every q̃ and scale, a Lipschitz
// constant of s (|s(b) - s(b')| <= scale·|b - b'|). With cost set, ind
// and scale are taken per query and distance d instead: cost returns s
// and its slope at the largest β a histogram within d + 1 of the query's
// can have (gnmaxLS.reach; both directions).
type lsModel struct {
	g          *gnmaxLS
	th         *thresholdLS
	weight     []float64
	ind, scale float64
	pad        float64
	cost       func(b outward.Interval) (s, slope float64)
}

// sumLocalSensitivity returns A(d), d = 0..K, for the model m: the sum over
// the account's queries of each one's A(d) (addLocalSensitivity).
func (a *rdpAccount) sumLocalSensitivity(ctx context.Context, m lsModel) ([]float64, error) {
	// The queries in lsChunks contiguous chunks, each summed on some core,
	// then the chunks in order: the result does not depend on the cores.
	n := len(a.answers)
	parts := make([][]float64, lsChunks)
	parallel(lsChunks, func(c int) {
		part := make([]float64, a.teachers+1)
		for i := c * n / lsChunks; i < (c+1)*n/lsChunks && ctx.Err() == nil; i++ {
			a.addLocalSensitivity(part, i, m)
		}
		parts[c] = part
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	total := make([]float64, a.teachers+1)
	for _, part := range parts {
		for d, x := range part {
			total[d] = outward.AddUp(total[d], x)
		}
	}
	return total, nil
}

// lsChunks is the number of chunks localSensitivity splits the queries
// into.
const lsChunks = 16

// addLocalSensitivity adds query i's A(d) at every d to total.
func (a *rdpAccount) addLocalSensitivity(total []float64, i int, m lsModel) {
	g, th, pv := m.g, m.th, m.weight
	ans := a.answers[i]
	counts := a.query(i)
	top := counts[argmax(counts)]
	var gl []float64
	if ans != answerWithheld {
		gl = g.distances(counts, a.neighbours())
		if a.directions == BothDirections {
			// Charged at the largest q̃ within one vote, the cost at a
			// histogram within d of the counts is β of the q̃ of one
			// within d + 1 (docs/pate.md, "Both directions").
			gl = append(gl[1:], gl[len(gl)-1])
		}
	}
	var tl []float64
	if th != nil {
		tl = th.distances(top)
	}
	pmax, dp := 0.0, 0.0
	var reach []outward.Interval
	if m.cost != nil && ans == answerUnknown && th != nil {
		reach = g.reach(a.logq[i][1], len(total)+1)
	}
	for d := range total {
		var s float64
		if tl != nil {
			s = tl[d]
		}
		switch ans {
		case answerGiven:
			s = outward.AddUp(s, gl[d])
		case answerUnknown:
			if th == nil {
				s = outward.AddUp(s, gl[d])
				break
			}
			// |p·s(β) - p'·s(β')| <= p·scale·|β - β'| + s(β')·|p - p'|
			// with p at most its largest value within d and s(β') <= ind.
			for _, w := range []int{top - d, top + d} {
				if w < 0 || w >= len(pv) {
					continue
				}
				pmax = math.Max(pmax, pv[w])
				for _, u := range []int{w - 1, w + 1} {
					if u >= 0 && u < len(pv) {
						dp = math.Max(dp, math.Abs(pv[u]-pv[w]))
					}
				}
			}
			ind, scale := m.ind, m.scale
			if reach != nil {
				ind, scale = m.cost(reach[d+1])
			}
			s = outward.AddUp(s, outward.AddUp(outward.MulUp(outward.MulUp(math.Min(1, outward.Up(pmax, 8)), scale), gl[d]), outward.MulUp(outward.Up(dp, 8)+m.pad, ind)))
		}
		total[d] = outward.AddUp(total[d], s)
	}
}

// smoothConditions checks conditions C5 and C6 of the PATE paper's
// smooth-sensitivity analysis of GNMax with noise σ over C classes at
// order λ: C5, β(q) non-decreasing for q < q0; C6, β(B_u(q)) - β(q)
// non-decreasing for q < B_l(q0). Like the PATE authors' check it is
// numerical: it evaluates both on 4,000 points spaced evenly in
// log(-log q) from log q0 (resp. log B_l(q0)) down to log q = -10^6 and
// allows a decrease of 1e-12 relative to the values compared (the
// rounding of β) plus, where the evaluation margin covers it,
// underflowSlack (its widening near underflow). The
// conditions do not depend on the votes; each set of arguments is checked
// once while mo keeps it. A noise other than noisymax.DiscreteNoise or
// noisymax.ContinuousNoise (noisymax.UnsetNoise) establishes neither
// condition.
func smoothConditions(mo *memo, sigma float64, classes int, order float64, noise noisymax.Noise) (c5, c6 bool) {
	c := conditionsOf(mo, sigma, classes, order, noise, true)
	return c.c5, c.c6
}

// smoothConditionsHold reports whether conditions C5 and C6 both hold
// (smoothConditions), without checking C5 where C6's first points show
// that C6 fails: the rules that try orders until both hold (ruleOrder,
// ptrOrder) need no more of the orders they pass over.
func smoothConditionsHold(mo *memo, sigma float64, classes int, order float64, noise noisymax.Noise) bool {
	c := conditionsOf(mo, sigma, classes, order, noise, false)
	return c.c5 && c.c6
}

// conditions is what checkSmoothConditions found: whether C5 and C6
// hold, or, with failsC6, only that C6 fails (C5 unchecked, c5 false).
type conditions struct{ c5, c6, failsC6 bool }

// conditionsOf returns the conditions at the arguments, C5 checked unless
// withC5 is false and C6 fails, as mo keeps them where they were found
// before.
func conditionsOf(mo *memo, sigma float64, classes int, order float64, noise noisymax.Noise, withC5 bool) conditions {
	if noise != noisymax.DiscreteNoise && noise != noisymax.ContinuousNoise {
		return conditions{}
	}
	key := conditionsKey{sigma, order, classes, noise}
	if c, ok := mo.conditions.get(key); ok && (!c.failsC6 || !withC5) {
		return c
	}
	c := checkSmoothConditions(mo, sigma, classes, order, noise, withC5)
	mo.conditions.put(key, c, 1)
	return c
}

// checkSmoothConditions is conditionsOf, computed.
func checkSmoothConditions(mo *memo, sigma float64, classes int, order float64, noise noisymax.Noise, withC5 bool) conditions {
	k := newCurve(mo, gnmaxSlope(sigma), order)
	if math.IsInf(k.logq0, -1) {
		return conditions{c5: true, c6: true} // β is constant
	}
	moves := newQMoves(sigma, classes, noise)
	const n = 4000
	grid := func(top float64) []float64 {
		a, b := outward.Ln(-top), outward.Ln(1e6)
		out := make([]float64, n)
		for i := range out {
			out[i] = -math.Exp(b + (a-b)*float64(i)/(n-1)) // increasing in q
		}
		out[n-1] = top
		return out
	}
	// The margin covers underflowSlack only while σ²·e^{(λ-1)λ/σ²} <
	// 10^280; beyond, the check allows no fall near underflow.
	slack := 0.0
	if 2*outward.Ln(sigma)+(order-1)*order/(sigma*sigma) < 280*math.Ln10 {
		slack = underflowSlack
	}
	// drops reports whether f, at the grid's points i in order, falls
	// below the largest of the earlier ones by more than the allowance.
	drops := func(f func(i int) float64, points []int) bool {
		prev := math.Inf(-1)
		for _, i := range points {
			v := f(i)
			if v < prev-1e-12*math.Max(math.Abs(prev), math.Abs(v))-slack {
				return true
			}
			prev = math.Max(prev, v)
		}
		return false
	}
	every, sparse := make([]int, n), []int{}
	for i := range every {
		every[i] = i
		if i%16 == 0 || i == n-1 {
			sparse = append(sparse, i)
		}
	}
	beta := func(L float64) float64 { return k.at(L).Hi }
	g5 := grid(math.Nextafter(k.logq0, math.Inf(-1)))
	c5At := func(i int) float64 { return beta(g5[i]) }
	g6 := grid(moves.down(k.logq0))
	v6, known := make([]float64, n), make([]bool, n)
	c6At := func(i int) float64 {
		if !known[i] {
			v6[i], known[i] = beta(moves.up(g6[i]))-beta(g6[i]), true
		}
		return v6[i]
	}
	// C6 fails at about half the settings checked (the data-free rule
	// tries orders down to one where it holds), mostly within its last
	// few hundred points, and a point of C6 costs four of C5: every 16th
	// point and the last are checked first. A drop below the largest of
	// those before it is a drop below the largest of all the points
	// before it (the allowance grows slower than that largest), so the
	// check of every point fails too, provided no point's value is NaN,
	// after which every point passes: none is while β's largest value,
	// λ/σ², is finite.
	if !math.IsInf(k.ind.Hi, 1) && drops(c6At, sparse) {
		if !withC5 {
			return conditions{failsC6: true}
		}
		return conditions{c5: !drops(c5At, every)}
	}
	if drops(c5At, every) {
		return conditions{}
	}
	return conditions{c5: true, c6: !drops(c6At, every)}
}

// underflowSlack is the fall that the check of conditions C5 and C6 allows
// besides its relative 1e-12. Where q is near e^-708 or below, β is near
// or under the smallest normal number 2^-1022, and every library result
// under it is widened by up to 2^-1022 (outward.LibUp): the computed upper
// end of β is its value plus a few times 2^-1022 (some terms divided by
// λ - 1), a widening that comes and goes as terms cross 2^-1022, so the
// computed values fall by that much where β rises. At σ = 40, C = 10,
// λ = 4.15, log q = -713.8 the fall is 1.3 times the larger value
// compared, and without the slack C6 fails there between orders at which
// it holds. On σ 5 to 100, C 2 to 100 and orders 1.25 to 64 these falls
// are at most 12 times 2^-1022 (at λ = 1.25), while every setting that
// fails at larger q falls there by 7.9e-10 or more; 2^-1000 is 2^22 times
// 2^-1022. A fall of at most X in β or in β(B_u(q)) - β(q) lowers a
// query's local-sensitivity bound by at most 2X (once at its neighbours'
// β, once along the walk of distances) times the slope of the cost in β, 1
// for the release and at most e^{(λ-1)λ/σ²} for PTR's bound: at
// X = 2^-1000 that is below a millionth of the margin of 2·10^-9 of λ/σ²
// per query that both add (evalMargin) while σ²·e^{(λ-1)λ/σ²} < 10^280,
// where alone the check allows it.
const underflowSlack = 0x1p-1000

// conditionsKey is what a memo keeps conditionsOf's answers by
// (smoothConditions, smoothConditionsHold), a pure function of its
// arguments that costs tens of milliseconds; a C5 left unchecked is
// checked when asked for. maxConditions bounds the answers kept.
type conditionsKey struct {
	sigma, order float64
	classes      int
	noise        noisymax.Noise
}

const maxConditions = 1 << 12

// evalMargin is the margin, relative to the data-independent total at the
// same order, that a GNSS release adds to the smooth sensitivity for the
// rounding of darrm's evaluation of the data-dependent cost: the analysis
// bounds the exact cost's local sensitivity, darrm releases the upper end
// of an interval that encloses it. The tests check that the intervals are
// narrower than 1e-12 of the data-independent value per query, a thousand
// times less than this margin covers.
const evalMargin = 2e-9

// margin returns the margin added to the smooth sensitivity at order
// λ for the evaluation's rounding: 2·10^-9 times the data-independent
// total at λ (a number that does not depend on the votes).
func (a *rdpAccount) margin(order float64) (float64, error) {
	if err := param.Alpha(order); err != nil {
		return 0, fmt.Errorf("PATE account: %w", err)
	}
	per := gnmaxSlope(a.mech.Sigma2)
	if a.mech.Confident() {
		per = per.Add(thresholdSlope(a.mech.Sigma1))
	}
	total := per.Mul(outward.Exact(order)).Mul(outward.Exact(float64(len(a.answers))))
	return outward.MulUp(total.Hi, evalMargin), nil
}
