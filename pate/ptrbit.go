package pate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
)

// falsePassMargin returns the least margin z (to 1e-9) whose false-pass
// bound (falsePass) is at most delta, and that bound.
func falsePassMargin(delta float64) (z, bound float64, err error) {
	lo, hi := 0.0, 40.0
	if falsePass(hi) > delta {
		return 0, 0, fmt.Errorf("PATE PTR: %w", &param.Error{Name: "budget delta", Value: delta, Rule: "too small for a test"})
	}
	for hi-lo > 1e-9 {
		mid := (lo + hi) / 2
		if falsePass(mid) <= delta {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, falsePass(hi), nil
}

// falsePass returns an upper bound on the probability that the test
// passes at votes whose bound f̂ exceeds the proposal: there u < 0, so
// clamp(u - z) < -z and the pass probability Φ(a) has a < -z + ptrSlack
// (ptrDraw).
func falsePass(z float64) float64 {
	return outward.Up(math.Erfc(outward.DivDirected(outward.AddDown(z, -ptrSlack), math.Sqrt2, false)*(1-0x1p-52))/2, 4)
}

// The test releases one bit. With G drawn from the discrete Gaussian of
// deviation 1 on the lattice ptrStep·Z, centred at 0, it passes when
// G <= clamp(u - z), u = (g + 1)/σ for the distance to instability g,
// the clamp to [-ptrClamp,
// ptrClamp]: it passes with probability Φ(a), a within ptrSlack of
// clamp(u - z) (docs/pate.md). The clamp costs nothing that matters (a
// pass at a <= -40 has probability below 10^-349) and bounds the
// divergence at every order.
const (
	ptrStep  = 0x1p-20
	ptrClamp = 40.0
	// ptrSlack bounds |a - clamp(u - z)|: the lattice's step, plus the
	// rounding of u - z where it is within the clamp.
	ptrSlack = ptrStep + 0x1p-40
	// ptrRound bounds the relative rounding of u = (g + 1)/σ at either
	// neighbour (2^-52 each), as a factor e^{±ptrRound} on u.
	ptrRound = 0x1p-49
)

// ptrClampTo returns x clamped to [-ptrClamp, ptrClamp] (NaN stays NaN,
// -0 stays -0), in comparisons the compiler inlines where math.Max and
// math.Min are calls: ptrBitRDP clamps five values at every point.
func ptrClampTo(x float64) float64 {
	switch {
	case x > ptrClamp:
		return ptrClamp
	case x < -ptrClamp:
		return -ptrClamp
	}
	return x
}

// sqrt2 encloses √2 (ptrBitRDP takes the logarithms of Φ millions of
// times).
var sqrt2 = outward.Sqrt(outward.Exact(2))

// logPhiUp and logPhiDown return upper and lower bounds on log Φ(x), Φ
// the standard normal distribution function: Φ(x) = erfc(-x/√2)/2.
// Above phiOne they return their bounds at 9, made once: there -x/√2 <
// -6, where math.Erfc returns 2 (its code says so; TestLogPhiAboveOne
// checks the bits), so that every x computes the same bounds; a tenth
// to a third of the logarithms ptrBitRDP takes are there.
func logPhiUp(x float64) float64 {
	if x > phiOne {
		return logPhiOneUp
	}
	return logPhiUpAt(x)
}

func logPhiDown(x float64) float64 {
	if x > phiOne {
		return logPhiOneDown
	}
	return logPhiDownAt(x)
}

// phiOne is where logPhiUp and logPhiDown return logPhiOneUp and
// logPhiOneDown: 8.5/√2 > 6.01.
const phiOne = 8.5

var logPhiOneUp, logPhiOneDown = logPhiUpAt(9), logPhiDownAt(9)

// logPhiUpAt and logPhiDownAt compute logPhiUp and logPhiDown.
func logPhiUpAt(x float64) float64 {
	y := outward.Exact(x).Neg().Div(sqrt2)
	return outward.AddUp(logErfcUp(y.Lo), -math.Ln2+outward.ULP)
}

func logPhiDownAt(x float64) float64 {
	y := outward.Exact(x).Neg().Div(sqrt2)
	return outward.AddDown(logErfcDown(y.Hi), -math.Ln2-outward.ULP)
}

// ptrBitRDP returns an upper bound on the Rényi divergence at order λ
// between the test's outcomes (pass or fail) at neighbouring votes, for
// the deviation σ of its noise (in changed teachers) and margin z: the
// supremum over u of D_λ(Bern(Φ(a)) ‖ Bern(Φ(a'))), a within ptrSlack of
// clamp(u - z) and a' of clamp(u'e^τ - z), u' in [u - c, u + c],
// c = 1/σ (the distance to instability moves by at most one between
// neighbours), |τ| <= ptrRound (docs/pate.md proves the reduction). It
// covers the line of u with cells of the given width, plus the two
// half-lines where every value clamps: in a cell [u0, u1], a lies in
// [A(u0), A(u1)] and a' in [lo(u), hi(u)] (A, lo, hi non-decreasing in
// u); for a fixed p = Φ(a) the divergence is largest at an end of a'
// (p^λq^{1-λ} + (1-p)^λ(1-q)^{1-λ} is convex in q), and at the end e
// each of its two terms is monotone in p and in q, so it is at most
//
//	log(Φ(A(u1))^λ·Φ(e(u0))^{1-λ} + Φ(-A(u0))^λ·Φ(-e(u1))^{1-λ})/(λ - 1),
//
// every logarithm bounded outward. It is made once per arguments while
// mo keeps it (maxBits).
func ptrBitRDP(mo *memo, sigma, z, order, width float64) (float64, error) {
	key := ptrBitKey{math.Float64bits(sigma), math.Float64bits(z), math.Float64bits(order), math.Float64bits(width)}
	if r, ok := mo.bits.get(key); ok {
		return r, nil
	}
	r, err := newPTRBitRDP(sigma, z, order, width)
	if err != nil {
		return r, err
	}
	mo.bits.put(key, r, 1)
	return r, nil
}

// ptrBitKey is what ptrBitRDP's bound is a function of: its arguments'
// bits (-0 and 0 apart).
type ptrBitKey struct{ sigma, z, order, width uint64 }

// maxBits bounds the bounds of ptrBitRDP a memo keeps (each some 50
// bytes). Each costs up to 20 ms, and one plan asks for many again:
// ptrSigma's searches for the plans of different query counts (a plan on
// proxy votes tries about ten) start at the same σs, and a plan's test,
// its guarantee and its fallback each take the test's Rényi DP at the
// same orders (a plan on proxy votes made 114 bounds, 55 of them
// different).
const maxBits = 1 << 12

// newPTRBitRDP computes ptrBitRDP's bound.
func newPTRBitRDP(sigma, z, order, width float64) (float64, error) {
	if err := param.Positive("sigma", sigma); err != nil {
		return 0, fmt.Errorf("PATE PTR: %w", err)
	}
	if err := param.Alpha(order); err != nil {
		return 0, fmt.Errorf("PATE PTR: %w", err)
	}
	c := outward.Exact(1).Div(outward.Exact(sigma)).Hi
	eb := outward.Exp(outward.Exact(ptrRound))
	lam := outward.Exact(order)
	oneMinus := outward.Exact(1).Sub(lam)
	lm1 := lam.Sub(outward.Exact(1))
	// At u: bounds on A(u) = clamp(u - z) (below and above, slack
	// included), and on the ends lo(u), hi(u) of a''s range, each from
	// below (D) and above (U).
	type ends struct{ aLo, aHi, loD, loU, hiD, hiU float64 }
	// logs holds, at u, the bounds on the logarithms cell uses: λ·log Φ
	// at aHi and at -aLo from above; (1 - λ)·log Φ at loD, hiD, -loU,
	// -hiU from above.
	type logs struct{ p, f, lo1, hi1, lo2, hi2 float64 }
	scale := func(k outward.Interval, l float64) float64 { return k.Mul(outward.Exact(l)).Hi }
	logsAt := func(e ends) logs {
		return logs{
			p: scale(lam, logPhiUp(e.aHi)), f: scale(lam, logPhiUp(-e.aLo)),
			lo1: scale(oneMinus, logPhiDown(e.loD)), hi1: scale(oneMinus, logPhiDown(e.hiD)),
			lo2: scale(oneMinus, logPhiDown(-e.loU)), hi2: scale(oneMinus, logPhiDown(-e.hiU)),
		}
	}
	clampSlack := func(x outward.Interval) (float64, float64) {
		return outward.AddDown(ptrClampTo(x.Lo), -ptrSlack), outward.AddUp(ptrClampTo(x.Hi), ptrSlack)
	}
	at := func(u float64) logs {
		var e ends
		e.aLo, e.aHi = clampSlack(outward.Exact(u).Sub(outward.Exact(z)))
		m := outward.Exact(u).Sub(outward.Exact(c))
		p := outward.Exact(u).Add(outward.Exact(c))
		// (u ∓ c)·e^{±τ}: the least and largest over the corners.
		mm, md, pm, pd := m.Mul(eb), m.Div(eb), p.Mul(eb), p.Div(eb)
		lo := outward.Interval{Lo: math.Min(mm.Lo, md.Lo), Hi: math.Min(mm.Hi, md.Hi)}
		hi := outward.Interval{Lo: math.Max(pm.Lo, pd.Lo), Hi: math.Max(pm.Hi, pd.Hi)}
		lo = lo.Sub(outward.Exact(z))
		hi = hi.Sub(outward.Exact(z))
		e.loD, _ = clampSlack(lo)
		e.loU = outward.AddUp(ptrClampTo(lo.Hi), -ptrSlack)
		e.hiD = outward.AddDown(ptrClampTo(hi.Lo), ptrSlack)
		_, e.hiU = clampSlack(hi)
		return logsAt(e)
	}
	// end returns LogAddExp(t1, t2).Div(lm1).Hi: from the sum's upper end
	// alone where the quotient is far from underflow and λ - 1 exact,
	// where the lower end's quotient is not above the upper's (beside
	// underflow, a quotient rounds up no higher at a lower numerator).
	end := func(t1, t2 float64) float64 {
		if s := outward.LogAddExpUp(t1, t2); s >= 0x1p-900 && lm1.Lo == lm1.Hi {
			if q := outward.DivDirected(s, lm1.Lo, true); q >= 0x1p-900 {
				return q
			}
		}
		return outward.LogAddExp(outward.Exact(t1), outward.Exact(t2)).Div(lm1).Hi
	}
	cell := func(e0, e1 logs) float64 {
		worst := 0.0
		for _, t := range [][2]float64{{e0.lo1, e1.lo2}, {e0.hi1, e1.hi2}} {
			worst = math.Max(worst, end(outward.AddUp(e1.p, t[0]), outward.AddUp(e0.f, t[1])))
		}
		return worst
	}
	// Beyond ±top every value clamps to the same end.
	top := (ptrClamp+z+c+1)*eb.Hi + 1
	lo, hi := outward.AddDown(-ptrClamp, -ptrSlack), outward.AddUp(-ptrClamp, ptrSlack)
	low := logsAt(ends{aLo: lo, aHi: hi, loD: lo, loU: hi, hiD: lo, hiU: hi})
	lo, hi = outward.AddDown(ptrClamp, -ptrSlack), outward.AddUp(ptrClamp, ptrSlack)
	high := logsAt(ends{aLo: lo, aHi: hi, loD: lo, loU: hi, hiD: lo, hiU: hi})
	worst := math.Max(cell(low, low), cell(high, high))
	// Cells of width ptrCoarse first; then, the largest bound first, each
	// is split into cells of the given width until the rest are below the
	// largest bound found: the result is the largest bound over a
	// partition of the line.
	n := int(math.Ceil(2 * top / ptrCoarse))
	us := make([]float64, n+1)
	es := make([]logs, n+1)
	for i := range us {
		us[i] = -top + 2*top*float64(i)/float64(n)
		es[i] = at(us[i])
	}
	worst = math.Max(worst, math.Max(cell(low, es[0]), cell(es[n], high)))
	coarse := make([]float64, n)
	idx := make([]int, n)
	for i := range coarse {
		coarse[i], idx[i] = cell(es[i], es[i+1]), i
	}
	sort.Slice(idx, func(i, j int) bool { return coarse[idx[i]] > coarse[idx[j]] })
	// refine splits a cell in eight, the largest bound first, until its
	// cells are within width or below the largest bound found.
	var refine func(u0, u1 float64, e0, e1 logs, bound float64)
	refine = func(u0, u1 float64, e0, e1 logs, bound float64) {
		if bound <= worst || u1-u0 <= width {
			worst = math.Max(worst, bound)
			return
		}
		var pts [9]logs
		var bs [8]float64
		pts[0], pts[8] = e0, e1
		for k := 1; k < 8; k++ {
			pts[k] = at(u0 + (u1-u0)*float64(k)/8)
		}
		order := [8]int{0, 1, 2, 3, 4, 5, 6, 7}
		for k := range bs {
			bs[k] = cell(pts[k], pts[k+1])
		}
		// The largest bound first, ties in place: an insertion sort, as
		// sort.Slice sorts eight, without its allocations.
		for i := 1; i < len(order); i++ {
			for j := i; j > 0 && bs[order[j]] > bs[order[j-1]]; j-- {
				order[j], order[j-1] = order[j-1], order[j]
			}
		}
		for _, k := range order {
			v0, v1 := u0+(u1-u0)*float64(k)/8, u0+(u1-u0)*float64(k+1)/8
			if k == 7 {
				v1 = u1
			}
			refine(v0, v1, pts[k], pts[k+1], bs[k])
		}
	}
	for _, i := range idx {
		if coarse[i] <= worst {
			break
		}
		refine(us[i], us[i+1], es[i], es[i+1], coarse[i])
	}
	return worst, nil
}

// ptrCoarse is the width of ptrBitRDP's first cells.
const ptrCoarse = 1.0 / 8

// ptrWidth is the width of ptrBitRDP's cells in a bound the release
// uses, ptrSearchWidth in the rule's search of σ (a looser bound,
// which only guides the choice).
const (
	ptrWidth       = 1.0 / 512
	ptrSearchWidth = 1.0 / 32
)

// ptrTestRDP returns the test's Rényi DP at order: ptrBitRDP at ptrWidth,
// or 1/(256σ) if narrower (a cell's bound exceeds the supremum by about
// its width against the shift 1/σ: within 1% there).
func ptrTestRDP(mo *memo, sigma, z, order float64) (float64, error) {
	return ptrBitRDP(mo, sigma, z, order, math.Min(ptrWidth, 1/(256*sigma)))
}

// ptrGuaranteeOrders are the orders, besides the bound's, at which the
// test's own Rényi DP is converted (ptrTestGuarantee); any set is valid.
var ptrGuaranteeOrders = []float64{1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}

// ptrTestOrders returns the orders at which the test's own Rényi DP is
// converted: ptrGuaranteeOrders and order, the bound's. Its guarantee, its
// floor and the skips of newPTRRule's search, and a fallback's ε_2 are
// over the same orders.
func ptrTestOrders(order float64) []float64 {
	return append(slices.Clone(ptrGuaranteeOrders), order)
}

// ptrTestGuarantee returns the test's own (ε, delta): its Rényi DP
// converted at delta, the least over ptrTestOrders(order)
// (ptrLeastConversion).
func ptrTestGuarantee(mo *memo, sigma, z, order, delta float64) (accountant.Guarantee, error) {
	orders := ptrTestOrders(order)
	e, err := ptrLeastConversion(mo, sigma, z, orders, ptrTestLower(sigma, orders), delta, 0)
	return accountant.Guarantee{Eps: e, Delta: delta}, err
}

// ptrLeastConversion returns the least over orders λ of the conversion at
// delta of the test's Rényi DP (ptrTestRDP) plus λ·slope (a release's
// composed with it; 0 for the test alone), given lower bounds on the
// test's Rényi DP at each order (ptrTestLower). The conversion increases
// with the Rényi DP: an order whose conversion of its lower bound is not
// below the least found cannot lower it, and its Rényi DP (up to a fifth
// of a second of CPU at the high orders, most of a plan's) is not
// computed. The orders are tried from the least conversion of the lower
// bounds up, so that the least is found before the orders it rules out:
// the result is the least over every order, to the bit.
func ptrLeastConversion(mo *memo, sigma, z float64, orders, lower []float64, delta, slope float64) (float64, error) {
	type try struct{ order, floor float64 }
	tries := make([]try, len(orders))
	for i, o := range orders {
		f, err := accountant.ImprovedConversion.ConvertRDP(outward.AddUp(lower[i], outward.MulUp(o, slope)), o, delta)
		if err != nil {
			f = math.Inf(-1) // tried first: its own conversion reports the error
		}
		tries[i] = try{o, f}
	}
	slices.SortStableFunc(tries, func(a, b try) int { return cmp.Compare(a.floor, b.floor) })
	best := math.Inf(1)
	for _, t := range tries {
		if t.floor >= best {
			break
		}
		r, err := ptrTestRDP(mo, sigma, z, t.order)
		if err != nil {
			return best, err
		}
		e, err := accountant.ImprovedConversion.ConvertRDP(outward.AddUp(r, outward.MulUp(t.order, slope)), t.order, delta)
		if err != nil {
			return best, err
		}
		best = math.Min(best, e)
	}
	return best, nil
}

// ptrTestLower returns, at each order λ, a lower bound on the test's
// Rényi DP (ptrBitRDP's bound, which is at least the supremum it bounds):
// the largest D_λ(Bern(Φ(a)) ‖ Bern(Φ(a'))), every logarithm bounded
// inward, over a on a grid of step 1/8 in [-ptrClamp, ptrClamp] and a' =
// clamp(a ± c), c <= 1/σ: outcomes the test draws at neighbours (u = a +
// z, u' = u ± c), wherever the margin z puts them: for the plans' σ of 4
// to 13 within 2% of the bound from order 8 up, where the orders compete.
// 0 where σ or λ is not valid (ptrBitRDP reports it). The logarithms, the
// orders' alike, are taken once.
func ptrTestLower(sigma float64, orders []float64) []float64 {
	out := make([]float64, len(orders))
	if !(sigma > 0) || math.IsInf(sigma, 1) {
		return out
	}
	c := outward.Exact(1).Div(outward.Exact(sigma)).Lo
	// At each a: log Φ(a), log Φ(-a) from below; at each a', log Φ(a'),
	// log Φ(-a') from above.
	type pair struct{ p, q, pb, qb float64 }
	var pairs []pair
	for i := range 16*int(ptrClamp) + 1 {
		a := float64(i)/8 - ptrClamp
		p, q := logPhiDown(a), logPhiDown(-a)
		for _, b := range []float64{ptrClampTo(outward.AddDown(a, c)), ptrClampTo(outward.AddUp(a, -c))} {
			pairs = append(pairs, pair{p, q, logPhiUp(b), logPhiUp(-b)})
		}
	}
	for k, o := range orders {
		if param.Alpha(o) != nil {
			continue
		}
		lam := outward.Exact(o)
		oneMinus := outward.Exact(1).Sub(lam)
		lm1 := lam.Sub(outward.Exact(1))
		for _, x := range pairs {
			t1 := outward.Exact(lam.Mul(outward.Exact(x.p)).Lo).Add(oneMinus.Mul(outward.Exact(x.pb)))
			t2 := outward.Exact(lam.Mul(outward.Exact(x.q)).Lo).Add(oneMinus.Mul(outward.Exact(x.qb)))
			d := outward.LogAddExp(outward.Exact(t1.Lo), outward.Exact(t2.Lo)).Div(lm1).Lo
			out[k] = math.Max(out[k], d)
		}
	}
	return out
}

// ptrSigmaMax is the most noise newPTRRule's search raises σ to.
const ptrSigmaMax = 1e6

// ptrTestFloor returns the least conversion at delta over orders of a
// Rényi DP of 0: no test's own guarantee (ptrTestGuarantee) is below it,
// the conversion increasing with the Rényi DP. An order whose conversion
// fails is left out.
func ptrTestFloor(orders []float64, delta float64) float64 {
	floor := math.Inf(1)
	for _, o := range orders {
		if e, err := accountant.ImprovedConversion.ConvertRDP(0, o, delta); err == nil {
			floor = math.Min(floor, e)
		}
	}
	return floor
}

// ptrTestAbove reports whether the lower bounds of the test's Rényi DP at
// σ (ptrTestLower) convert above eps at delta at every order: then so do
// its bounds (ptrTestRDP), and its guarantee, their least conversion
// (ptrTestGuarantee), is above eps too. An order whose conversion fails
// answers false, so that the bounds are computed and report it.
func ptrTestAbove(sigma float64, orders []float64, delta, eps float64) bool {
	lower := ptrTestLower(sigma, orders)
	for i, o := range orders {
		e, err := accountant.ImprovedConversion.ConvertRDP(lower[i], o, delta)
		if err != nil || e <= eps {
			return false
		}
	}
	return true
}
