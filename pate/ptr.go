package pate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/votefile"
)

// Generalized Propose-Test-Release of PATE's labels (Redberg, Zhu and
// Wang, AISTATS 2023): the data-dependent Rényi DP of the release that
// runs, at the votes, is tested privately against a proposed bound, and
// the labels are released only if the test passes. docs/pate.md, "A
// data-dependent guarantee: generalized PTR", states the theorem and
// proves every bound below.

// logPass returns intervals that enclose log Pr[answer] and
// log Pr[withhold] of the threshold step at largest count v (the step
// answers when v + Z >= T). With noisymax.ContinuousNoise, Z ~ N(0, σ1²):
// Pr[answer] = erfc(x)/2 and Pr[withhold] = erfc(-x)/2, x = (T - v)/(σ1√2).
// With noisymax.DiscreteNoise, Z ~ N_Z(0, σ1²) and the step answers when
// Z >= k = ⌈T⌉ - v: Pr[answer] = Pr[Z >= k], Pr[withhold] =
// Pr[Z <= k - 1] = Pr[Z >= 1 - k] (discreteTailLog).
func logPass(v int, t, sigma1 float64, kind noisymax.Noise) (answer, withhold outward.Interval) {
	if kind == noisymax.DiscreteNoise {
		// One of k and 1 - k is at most 0, where discreteTailLog takes
		// log(1 - ·) of its tail at the other: that tail is summed once.
		k := math.Ceil(t) - float64(v)
		if k >= 1 {
			a := discreteTailLog(k, sigma1)
			return a, outward.Log1mExp(a)
		}
		w := discreteTailLog(1-k, sigma1)
		return outward.Log1mExp(w), w
	}
	s2 := outward.Exact(sigma1).Mul(outward.Sqrt(outward.Exact(2)))
	x := outward.Exact(t).Sub(outward.Exact(float64(v))).Div(s2)
	half := func(lo, hi float64) outward.Interval { // log(erfc(·)/2) from bounds on log erfc
		return outward.Interval{Lo: lo - math.Ln2 - outward.ULP, Hi: math.Min(0, hi-math.Ln2+outward.ULP)}
	}
	return half(logErfcDown(x.Hi), logErfcUp(x.Lo)), half(logErfcDown(-x.Lo), logErfcUp(-x.Hi))
}

// discreteTailLog returns an interval enclosing log Pr[Z >= k] for
// Z ~ N_Z(0, σ²) and an integer k. For k >= 1 it sums the terms
// e^{-z²/(2σ²)}, z = k, k+1, ..., relative to the first (so that none
// underflows), until a term falls below 1e-20 of the sum, and bounds the
// rest by ∫_z^∞ e^{-u²/(2σ²)}du <= (σ²/z)·e^{-z²/(2σ²)} (Mills' ratio);
// the normaliser N = Σ_z e^{-z²/(2σ²)} lies in [σ√(2π), σ√(2π)(1 +
// 3e^{-2π²σ²})] by Poisson summation (σ >= 1/2). For k <= 0 it is
// log(1 - Pr[Z >= 1 - k]).
func discreteTailLog(k, sigma float64) outward.Interval {
	if k <= 0 {
		return outward.Log1mExp(discreteTailLog(1-k, sigma))
	}
	s2 := outward.Exact(2).Mul(outward.Exact(sigma).Mul(outward.Exact(sigma)))
	kk := outward.Exact(k)
	sum := outward.Exact(0)
	z := k
	for {
		// e^{-(z² - k²)/(2σ²)} with z² - k² = (z - k)(z + k).
		e := outward.Exp(outward.Exact(z - k).Mul(outward.Exact(z).Add(kk)).Neg().Div(s2))
		sum = sum.Add(e)
		z++
		if e.Hi < sum.Lo*1e-20 || e.Hi == 0 {
			// The rest, Σ_{u >= z}: below ∫_{z-1}^∞, at most
			// (σ²/(z-1))·e^{-((z-1)² - k²)/(2σ²)}.
			rest := e.Mul(outward.Exact(sigma * sigma)).Div(outward.Exact(z - 1))
			sum.Hi = outward.AddUp(sum.Hi, outward.Up(rest.Hi, 4))
			break
		}
	}
	logN := outward.Log(outward.Exact(sigma).Mul(outward.Sqrt(outward.Exact(2 * math.Pi).Mul(outward.Interval{Lo: outward.Down(1, 2), Hi: outward.Up(1, 2)}))))
	logN.Hi = outward.AddUp(logN.Hi, outward.Log1p(outward.Exact(3).Mul(outward.Exp(outward.Exact(-2*math.Pi*math.Pi).Mul(outward.Exact(sigma*sigma))))).Hi)
	head := kk.Mul(kk).Neg().Div(s2)
	return head.Add(outward.Log(sum)).Sub(logN)
}

// ptrThreshold tabulates, at one order λ and for the largest counts
// v = 0..K, the two parts of the bound that PTR charges the threshold step
// with (docs/pate.md): with P_v, F_v the probabilities of answering and
// withholding at v,
//
//	D(v, w) = log(F_v^λ F_w^{1-λ} + P_v^λ P_w^{1-λ})/(λ - 1),
//	π(v, w) = P_v^λ P_w^{1-λ}/(F_v^λ F_w^{1-λ} + P_v^λ P_w^{1-λ}),
//
// t(v) the largest D and pi(v) the largest π over w in {v-1, v, v+1} ∩
// [0, K] and both orders of v and w (a changed teacher moves the largest
// count by at most one): a query whose largest count is v costs at most
// t(v) + pi(v)·(e^{(λ-1)B} - 1)/(λ - 1) in both directions, B the GNMax
// step's bound. The tables are made once per settings while kept
// (ptrThresholds), and shared: callers only read them.
func ptrThreshold(m ensemble.ConfidentGNMax, teachers int, order float64) (t, pi []outward.Interval) {
	key := ptrThresholdKey{m.Threshold, m.Sigma1, m.Noise, teachers, math.Float64bits(order)}
	if tab, ok := ptrThresholds.get(key); ok {
		return tab[0], tab[1]
	}
	t, pi = newPTRThreshold(m, teachers, order)
	ptrThresholds.put(key, [2][]outward.Interval{t, pi}, len(t)+len(pi))
	return t, pi
}

// ptrThresholdKey is what ptrThreshold's tables are a function of: the
// threshold step's settings, K and the order's bits.
type ptrThresholdKey struct {
	threshold, sigma1 float64
	noise             noisymax.Noise
	teachers          int
	order             uint64
}

// ptrThresholds keeps the tables ptrThreshold made in this process. Each
// costs K + 1 tails of the threshold step's noise (40 ms at K = 250,
// σ1 = 150, discrete), and a process asks for the same again: every
// bound a search of a plan's N tests (PTRQueries) is at the same
// settings and order. Its cost is the intervals held (16 bytes each,
// 2(K + 1) a pair of tables), at most 2^21, so that many plans at a large
// K hold at most 32 MiB.
var ptrThresholds = kept[ptrThresholdKey, [2][]outward.Interval]{limit: 1 << 21}

// newPTRThreshold computes ptrThreshold's tables.
func newPTRThreshold(m ensemble.ConfidentGNMax, teachers int, order float64) (t, pi []outward.Interval) {
	logP := make([]outward.Interval, teachers+1)
	logF := make([]outward.Interval, teachers+1)
	for v := range logP {
		logP[v], logF[v] = logPass(v, m.Threshold, m.Sigma1, m.Noise)
	}
	lam := outward.Exact(order)
	oneMinus := outward.Exact(1).Sub(lam)
	lm1 := lam.Sub(outward.Exact(1))
	pair := func(v, w int) (d, p outward.Interval) {
		a := lam.Mul(logF[v]).Add(oneMinus.Mul(logF[w]))
		b := lam.Mul(logP[v]).Add(oneMinus.Mul(logP[w]))
		s := outward.LogAddExp(a, b)
		d = s.Div(lm1)
		d.Lo = math.Max(d.Lo, 0)
		p = outward.Exp(b.Sub(s))
		p.Hi = math.Min(p.Hi, 1)
		return d, p
	}
	widen := func(x, y outward.Interval) outward.Interval {
		return outward.Interval{Lo: math.Max(x.Lo, y.Lo), Hi: math.Max(x.Hi, y.Hi)}
	}
	t = make([]outward.Interval, teachers+1)
	pi = make([]outward.Interval, teachers+1)
	for v := range t {
		for w := max(v-1, 0); w <= min(v+1, teachers); w++ {
			d1, p1 := pair(v, w)
			d2, p2 := pair(w, v)
			t[v] = widen(t[v], widen(d1, d2))
			pi[v] = widen(pi[v], widen(p1, p2))
		}
	}
	return t, pi
}

// ptrGNMax returns (e^{(λ-1)B} - 1)/(λ - 1) for an interval B: the
// factor the GNMax step's bound B enters PTR's per-query bound with
// (docs/pate.md).
func ptrGNMax(b outward.Interval, order float64) outward.Interval {
	lm1 := outward.Exact(order).Sub(outward.Exact(1))
	return outward.Exp(lm1.Mul(b)).Sub(outward.Exact(1)).Div(lm1)
}

// ptrBound returns, at order λ, the data-dependent Rényi DP of a release
// of the account's queries in both directions that PTR tests (an upper
// end of its exact value, f̂ in docs/pate.md) and its local sensitivity at
// every distance 0..K (A(d)). Each query costs t(v) + π(v)·g(B)
// (ptrThreshold, ptrGNMax) with Confident-GNMax, B with GNMax, B =
// β(Q̃) the GNMax step's bound in both directions; queries compose by
// addition (the votes are fixed, the noises independent). The account
// must be in both directions and of expected cost (no answers known).
func (a *rdpAccount) ptrBound(ctx context.Context, order float64) (f float64, ls []float64, err error) {
	if a.directions != BothDirections || a.mode == answerGiven {
		return 0, nil, fmt.Errorf("PATE PTR: the account must be in both directions, with no answers known")
	}
	if c5, c6 := smoothConditions(a.mech.Sigma2, a.classes, order, a.mech.Noise); !c5 || !c6 {
		return 0, nil, fmt.Errorf("PATE PTR: conditions C5 = %v, C6 = %v at sigma2 = %v, C = %d, order %v: the sensitivity analysis does not apply (pick another order or more noise)",
			c5, c6, a.mech.Sigma2, a.classes, order)
	}
	g := newGNMaxLS(a.mech.Sigma2, order, a.classes, a.mech.Noise)
	model := lsModel{g: g, scale: 1, ind: g.k.ind.Hi}
	var t, pi []outward.Interval
	if a.mech.Confident() {
		t, pi = ptrThreshold(a.mech, a.teachers, order)
		model.th = &thresholdLS{beta: t, lo: a.neighbours().leastMax(a.classes)}
		model.weight = make([]float64, len(pi))
		pad := 0.0
		for v, p := range pi {
			model.weight[v] = p.Hi
			pad = math.Max(pad, p.Hi-p.Lo)
		}
		model.pad = outward.Up(pad, 4) + 1e-15
		// s(B) = (e^{(λ-1)B} - 1)/(λ - 1) and its slope e^{(λ-1)B}, both
		// increasing in B.
		lm1 := outward.Exact(order).Sub(outward.Exact(1))
		model.cost = func(b outward.Interval) (float64, float64) {
			return ptrGNMax(b, order).Hi, outward.Exp(lm1.Mul(b)).Hi
		}
	}
	for i := range a.answers {
		b := g.k.at(a.logq[i][1])
		c := b.Hi
		if t != nil {
			v := a.top(i)
			c = outward.AddUp(t[v].Hi, outward.MulUp(pi[v].Hi, ptrGNMax(b, order).Hi))
		}
		f = outward.AddUp(f, c)
	}
	ls, err = a.sumLocalSensitivity(ctx, model)
	return f, ls, err
}

// reach returns upper bounds on β at every histogram within j = 0..n-1
// changed teachers of one whose Q̃ (or q̃) is e^L: β(B_u^j(e^L)), B_u
// applied j times (qMoves: a changed teacher moves q̃, and Q̃, to at most
// B_u of it), which condition C5 (β non-decreasing below q0) makes
// bounds; from q0 on, β is λ/σ2², its largest value.
func (g *gnmaxLS) reach(L float64, n int) []outward.Interval {
	out := make([]outward.Interval, n)
	for j := range out {
		if L >= g.k.logq0 {
			for ; j < n; j++ {
				out[j] = g.k.ind
			}
			break
		}
		out[j] = g.k.at(L)
		L = g.moves.up(L)
	}
	return out
}

// PTROptions are the settings of a release of PATE's labels by generalized
// Propose-Test-Release (ReleasePTR). Every one is fixed before the
// votes are seen: none is chosen from them.
type PTROptions struct {
	// Budget is the (ε, δ) to publish, δ > 0.
	Budget accountant.Guarantee
	// Queries is the proposal: how many queries, the first of the votes,
	// are labelled if the test passes; 0 proposes every query. Choosing
	// it from the votes would release something of them that no test
	// accounts for: fix it from the budget on proxy votes.
	Queries int
	// Abstain says that teachers may abstain (rdpOptions.Abstain).
	Abstain bool
	// Fallback asks, on a failed test, for the data-independent release
	// of the first PTRResult.Fallback queries, within what the test left
	// (docs/pate.md), where a failed test labels none.
	Fallback bool
}

// PTRArgument names the argument of the total a PTR release publishes.
const PTRArgument = "generalized PTR"

// PTRResult is a release by generalized Propose-Test-Release: whether its
// test passed (the proposed queries are then labelled, else none is), and
// the one total to publish, Publish, which holds either way. Every other
// field is a function of the settings alone (ptrRule), not of the votes:
// the data-dependent bound tested, its distance to instability and the
// test's draw are never returned.
type PTRResult struct {
	Pass    bool
	Queries int
	// Publish is the total to publish, by the argument PTRArgument
	// (docs/pate.md, "A data-dependent guarantee: generalized PTR"): the
	// budget's ε itself, in its own decimal.
	Publish accountant.Guarantee
	// Order is the Rényi order of the bound tested, Proposal the bound
	// proposed at it; Sigma the deviation of the test's noise, in changed
	// teachers, Margin its margin z in deviations of its noise and
	// TestRDP its Rényi DP at Order (ptrBitRDP: the test releases one
	// bit).
	Order, Proposal, Sigma, Margin, TestRDP float64
	// Test is the test's own guarantee, FalsePass the probability that
	// the test passes at votes whose bound exceeds the proposal.
	Test      accountant.Guarantee
	FalsePass float64
	// Fallback is the number of queries, the first of the votes, that
	// the data-independent release labels if the test fails
	// (PTROptions.Fallback); 0 labels none.
	Fallback int
	// converted is the ε the test and the proposal convert to, within
	// the budget's: the total that label files written before the total
	// was the budget's ε state (labelsPTR accepts it).
	converted float64
}

// ptrShareTest is the share of the budget's δ that the test's own
// guarantee takes; the false-pass probability takes the rest.
const ptrShareTest = 0.02

// ptrRule returns the plan of a PTR release of queries queries by m over
// C classes (every field of PTRResult but Pass), from opts alone
// (docs/pate.md lists the rule and why each piece holds):
//
//   - the order λ: ptrOrder's, the budget's alone;
//   - δ: the test's own δ_t = δ/50, the false-pass probability at most
//     δ - δ_t, which fixes the margin z (falsePass);
//   - σ: ptrSigma's, which minimises the test's Rényi DP plus its
//     margin z·σ·a in units of the bound, for a stand-in a of the
//     bound's local sensitivity per changed teacher (ptrStandIn of the
//     data-independent Rényi DP at λ), raised until the test alone is
//     within the budget's ε;
//   - the proposal: the largest Rényi DP at λ that, added to the test's,
//     converts to the budget's ε at its δ.
func ptrRule(m ensemble.ConfidentGNMax, classes, queries int, opts PTROptions) (PTRResult, error) {
	key := ptrRuleKey{m: m, classes: classes, queries: queries, budget: opts.Budget, fallback: opts.Fallback}
	r, ok := ptrRules.get(key)
	if ok {
		return r, nil
	}
	var err error
	if opts.Fallback {
		// The plan with a fallback is the plan without it and the
		// fallback's count: a release that falls back, and the account
		// of its labels, reuse the plan a plain release made.
		plain := opts
		plain.Fallback = false
		if r, err = ptrRule(m, classes, queries, plain); err == nil {
			err = ptrFallback(&r, m, opts.Budget.Delta*ptrShareTest)
		}
	} else {
		r, err = newPTRRule(m, classes, queries, opts, true)
	}
	if err != nil {
		return r, err
	}
	ptrRules.put(key, r, 1)
	return r, nil
}

// ptrRuleKey is what a plan of ptrRule is a function of: the settings.
type ptrRuleKey struct {
	m                ensemble.ConfidentGNMax
	classes, queries int
	budget           accountant.Guarantee
	fallback         bool
}

// ptrRules keeps the plans ptrRule made in this process. A plan is a
// function of the settings alone and costs up to a second of CPU (most of
// it ptrSigma's search), and a process asks for the same plan again: a
// plan on proxy votes reports the N its search ended on, an account of
// labels recomputes the plan of the release that made them, and a
// program (or a test) that releases with the same settings again needs
// it each time. It holds at most 256 plans (a search of N adds about
// ten).
var ptrRules = kept[ptrRuleKey, PTRResult]{limit: 256}

// newPTRRule computes ptrRule's plan without a fallback; without withTest
// all of it but the test's own guarantee and the total to publish (Test
// and Publish, left 0), which PTRQueries' search needs of none but the
// plan it returns: the least conversion over the orders, whose Rényi DP
// at the best order took most of a plan's CPU, is then computed only
// where the conversion at the bound's order, which is at least that
// least, exceeds the budget's ε.
func newPTRRule(m ensemble.ConfidentGNMax, classes, queries int, opts PTROptions, withTest bool) (PTRResult, error) {
	b := opts.Budget
	if err := param.Positive("budget eps", b.Eps); err != nil {
		return PTRResult{}, fmt.Errorf("PATE PTR: %w", err)
	}
	if !(b.Delta > 0 && b.Delta < 0.5) {
		return PTRResult{}, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "budget delta", Value: b.Delta, Rule: "must be in (0, 0.5): the test may pass falsely with a probability the delta holds"})
	}
	if queries < 1 {
		return PTRResult{}, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "queries", Value: queries, Rule: "must be >= 1"})
	}
	rho, err := m.RunSlope(queries, queries)
	if err != nil {
		return PTRResult{}, err
	}
	r := PTRResult{Queries: queries}
	if r.Order, err = ptrOrder(b, m, classes); err != nil {
		return r, err
	}
	deltaTest := b.Delta * ptrShareTest
	if r.Margin, r.FalsePass, err = falsePassMargin(b.Delta - deltaTest); err != nil {
		return r, err
	}
	// The test alone converts, at any noise, to at least its Rényi DP of
	// 0 converted: a budget below that allows no σ, which the search
	// below would learn only at ptrSigmaMax, after hours of bounds.
	orders := ptrTestOrders(r.Order)
	if floor := ptrTestFloor(orders, deltaTest); floor > b.Eps {
		return r, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "budget eps", Value: b.Eps, Rule: fmt.Sprintf("must be at least %v: the test alone is no better than (%v, %v)-DP at any noise (Rényi DP 0 converted at its share of the budget's delta, delta/50); raise it, or the budget's delta", floor, floor, deltaTest)})
	}
	// Nor does any noise leave room for a proposal where a Rényi DP of 0
	// at the order converts above the budget: the proposal's and the
	// test's convert to more.
	if e, err := accountant.ImprovedConversion.ConvertRDP(0, r.Order, b.Delta); err == nil && e >= b.Eps {
		return r, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "budget eps", Value: b.Eps, Rule: fmt.Sprintf("leaves no room for a proposal at any noise: at the order %v the budget gives, a Rényi DP of 0 converts to %v at the budget's delta; raise it", r.Order, e)})
	}
	r.Sigma = ptrSigma(r.Margin, r.Order, r.Order*rho*ptrStandIn)
	for {
		// Where even the lower bounds of the test's Rényi DP convert
		// above the budget, so do its bounds: σ is raised without them,
		// through the same steps, to the same σ.
		if r.Sigma < ptrSigmaMax && ptrTestAbove(r.Sigma, orders, deltaTest, b.Eps) {
			r.Sigma *= 1.05
			continue
		}
		if r.TestRDP, err = ptrTestRDP(r.Sigma, r.Margin, r.Order); err != nil {
			return r, err
		}
		if !withTest {
			if u, err := accountant.ImprovedConversion.ConvertRDP(r.TestRDP, r.Order, deltaTest); err == nil && u <= b.Eps {
				break
			}
		}
		if r.Test, err = ptrTestGuarantee(r.Sigma, r.Margin, r.Order, deltaTest); err != nil {
			return r, err
		}
		if r.Test.Eps <= b.Eps || r.Sigma >= ptrSigmaMax {
			break
		}
		// The rule's σ makes the test too costly on its own: more noise.
		r.Sigma *= 1.05
	}
	if r.Test.Eps > b.Eps {
		return r, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "budget eps", Value: b.Eps, Rule: fmt.Sprintf("is below the test's own guarantee (%v, %v) at the most noise tried, sigma = %.6g: raise it", r.Test.Eps, r.Test.Delta, r.Sigma)})
	}
	cost, err := accountant.ImprovedConversion.ConvertRDP(r.TestRDP, r.Order, b.Delta)
	if err != nil {
		return r, err
	}
	// ConvertRDP is r + a cost of the order and δ, rounded up: step the
	// proposal down until it converts within the budget.
	r.Proposal = b.Eps - cost
	for k := 0; r.Proposal > 0; k++ {
		e, err := accountant.ImprovedConversion.ConvertRDP(outward.AddUp(r.Proposal, r.TestRDP), r.Order, b.Delta)
		if err != nil {
			return r, err
		}
		if e <= b.Eps {
			if withTest {
				// The total is the budget's ε, which the conversion and
				// the test's own ε are within: a bound as the user wrote
				// it (2, not 1.9999999999999998).
				r.converted = math.Max(e, r.Test.Eps)
				r.Publish = accountant.Guarantee{Eps: b.Eps, Delta: math.Max(b.Delta, outward.AddUp(r.Test.Delta, r.FalsePass))}
			}
			break
		}
		r.Proposal -= math.Max(e-b.Eps, 1e-15) * float64(k+1)
	}
	if !(r.Proposal > 0) {
		return r, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "budget eps", Value: b.Eps, Rule: fmt.Sprintf("leaves no room for a proposal: the test's cost at order %v (Rényi DP %v) converts to %v at the budget's delta %v; raise it", r.Order, r.TestRDP, cost, b.Delta)})
	}
	return r, nil
}

// PlanPTR returns the plan of a PTR release of the first opts.Queries
// queries (>= 1) by m, Confident-GNMax or GNMax, over classes classes
// (ptrFamily), every field of PTRResult but Pass: a function of the
// settings alone, so that the total a release publishes, and a ledger
// charges it, is known before any vote is read (a ledger's declared use
// of PTR releases counts them by it).
func PlanPTR(m ensemble.Mechanism, classes int, opts PTROptions) (PTRResult, error) {
	g, err := ptrFamily(m, classes)
	if err != nil {
		return PTRResult{}, err
	}
	return ptrRule(g, classes, opts.Queries, opts)
}

// ptrFamily returns the settings of the steps of m, of the GNMax family on
// the class counts of votes of classes classes (ensemble.GNMaxFamily),
// which PTR tests, its noise the discrete Gaussian unless set, as a
// release draws it.
func ptrFamily(m ensemble.Mechanism, classes int) (ensemble.ConfidentGNMax, error) {
	g, ok := ensemble.GNMaxFamily(m, classes)
	if !ok {
		return g, fmt.Errorf("PATE PTR: the mechanism must be Confident-GNMax or GNMax on class counts, not %T", m)
	}
	return g.Drawn(), nil
}

// ptrFallback sets r.Fallback, the most queries q <= r.Queries whose
// data-independent release, ρ_fb(λ') = λ'·ρ·q Rényi DP at every order λ'
// (m.RunSlope), may follow a failed test within r's total (docs/pate.md):
// at the bound's order within the proposal, ρ_fb(λ) <= β_prop, so that a
// good case's adaptive composition, the test then the labels or the
// fallback, is still ρ_t(λ) + β_prop; and, in the bad case, the test and
// the fallback composed, ε_2 = min over ptrGuaranteeOrders and λ of the
// conversion of ρ_t(λ') + ρ_fb(λ') at δ_t, within the total's ε. The
// total is the same with a fallback as without.
func ptrFallback(r *PTRResult, m ensemble.ConfidentGNMax, deltaTest float64) error {
	orders := ptrTestOrders(r.Order)
	lower := ptrTestLower(r.Sigma, orders)
	// eps2 returns ε_2 for q queries, +Inf where the proposal does not
	// hold the fallback at λ.
	eps2 := func(q int) (float64, error) {
		slope, err := m.RunSlope(q, q)
		if err != nil {
			return 0, err
		}
		if outward.MulUp(r.Order, slope) > r.Proposal {
			return math.Inf(1), nil
		}
		return ptrLeastConversion(r.Sigma, r.Margin, orders, lower, deltaTest, slope)
	}
	lo, hi := 0, r.Queries+1
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		e, err := eps2(mid)
		if err != nil {
			return err
		}
		if e <= r.Publish.Eps {
			lo = mid
		} else {
			hi = mid
		}
	}
	r.Fallback = lo
	return nil
}

// ptrOrder returns the order at which a Gaussian mechanism that is
// (ε, δ)-DP at the budget b by the improved conversion is converted
// (accountant.Conversion.RhoToDP's optimum, a function of b alone), or, where
// conditions C5 and C6 fail there for m's σ2 and C, the first of
// 1 + (λ - 1)·2^{-k/2} (k = 1, 2, ..., rounded down to a quarter) where
// they hold.
func ptrOrder(b accountant.Guarantee, m ensemble.ConfidentGNMax, classes int) (float64, error) {
	lo, hi := 1e-12, 1e3 // ρ: RhoToDP's ε increases with it
	for range 200 {
		mid := math.Sqrt(lo * hi)
		e, _, err := accountant.ImprovedConversion.RhoToDP(mid, b.Delta)
		if err != nil {
			return 0, err
		}
		if e > b.Eps {
			hi = mid
		} else {
			lo = mid
		}
	}
	_, order, err := accountant.ImprovedConversion.RhoToDP(lo, b.Delta)
	if err != nil {
		return 0, err
	}
	top := order - 1
	for k := 1; ; k++ {
		if smoothConditionsHold(m.Sigma2, classes, order, m.Noise) {
			return order, nil
		}
		if order = 1 + math.Floor(4*top*math.Pow(2, -float64(k)/2))/4; order <= 1 {
			return 0, fmt.Errorf("PATE PTR: %w", &accountant.SettingError{Name: "sigma2", Value: strconv.FormatFloat(m.Sigma2, 'g', -1, 64),
				Rule: fmt.Sprintf("conditions C5 and C6 of the data-dependent bound fail for C = %d at every order the rule tries for the budget (%v, %v), %v down to 1: lower it, or change the budget", classes, b.Eps, b.Delta, 1+top)})
		}
	}
}

// falsePassMargin returns the least margin z (to 1e-9) whose false-pass
// bound (falsePass) is at most delta, and that bound.
func falsePassMargin(delta float64) (z, bound float64, err error) {
	lo, hi := 0.0, 40.0
	if falsePass(hi) > delta {
		return 0, 0, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "budget delta", Value: delta, Rule: "too small for a test"})
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
// kept (ptrBits).
func ptrBitRDP(sigma, z, order, width float64) (float64, error) {
	key := ptrBitKey{math.Float64bits(sigma), math.Float64bits(z), math.Float64bits(order), math.Float64bits(width)}
	if r, ok := ptrBits.get(key); ok {
		return r, nil
	}
	r, err := newPTRBitRDP(sigma, z, order, width)
	if err != nil {
		return r, err
	}
	ptrBits.put(key, r, 1)
	return r, nil
}

// ptrBitKey is what ptrBitRDP's bound is a function of: its arguments'
// bits (-0 and 0 apart).
type ptrBitKey struct{ sigma, z, order, width uint64 }

// ptrBits keeps the bounds ptrBitRDP made in this process. Each costs
// up to 20 ms, and one process asks for many again: ptrSigma's searches
// for the plans of different query counts (a plan on proxy votes tries
// about ten) start at the same σs, and a plan's test, its guarantee and
// its fallback each take the test's Rényi DP at the same orders (a plan
// on proxy votes made 114 bounds, 55 of them different). It holds at
// most 4,096 (each some 50 bytes).
var ptrBits = kept[ptrBitKey, float64]{limit: 1 << 12}

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
func ptrTestRDP(sigma, z, order float64) (float64, error) {
	return ptrBitRDP(sigma, z, order, math.Min(ptrWidth, 1/(256*sigma)))
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
func ptrTestGuarantee(sigma, z, order, delta float64) (accountant.Guarantee, error) {
	orders := ptrTestOrders(order)
	e, err := ptrLeastConversion(sigma, z, orders, ptrTestLower(sigma, orders), delta, 0)
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
func ptrLeastConversion(sigma, z float64, orders, lower []float64, delta, slope float64) (float64, error) {
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
		r, err := ptrTestRDP(sigma, z, t.order)
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

// ptrStandIn is the stand-in of the bound's local sensitivity per
// changed teacher, as a share of the data-independent Rényi DP of the
// queries at the bound's order, that ptrSigma weighs the test's margin
// with: the rule sees no vote.
const ptrStandIn = 1.0 / 128

// ptrSigma returns the deviation σ of the test's noise, in changed
// teachers, that minimises the test's Rényi DP at order (ptrBitRDP at
// ptrSearchWidth) plus its margin z·σ·a, a the stand-in local sensitivity
// per changed teacher, over σ in [1, 10^4] by golden-section search on
// log σ (the first term falls in σ, the second grows).
func ptrSigma(z, order, a float64) float64 {
	obj := func(s float64) float64 {
		r, err := ptrBitRDP(s, z, order, ptrSearchWidth)
		if err != nil {
			return math.Inf(1)
		}
		return r + z*a*s
	}
	const g = 0.6180339887498949
	lo, hi := 0.0, 4*math.Ln10
	x1, x2 := hi-g*(hi-lo), lo+g*(hi-lo)
	f1, f2 := obj(math.Exp(x1)), obj(math.Exp(x2))
	for hi-lo > 0.02 {
		if f1 <= f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - g*(hi-lo)
			f1 = obj(math.Exp(x1))
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + g*(hi-lo)
			f2 = obj(math.Exp(x2))
		}
	}
	return math.Exp((lo + hi) / 2)
}

// ptrPlan returns the plan of a PTR release of the first opts.Queries
// queries of counts (every query when 0; what names them in errors) by
// mech (ptrFamily, ptrRule) and the account of those queries at its order, whose test is
// yet to be drawn. Without withTest the plan is newPTRRule's without the
// test's guarantee, and without a fallback.
func ptrPlan(counts [][]int, teachers, classes int, mech ensemble.Mechanism, opts PTROptions, what string, withTest bool) (PTRResult, *rdpAccount, error) {
	m, err := ptrFamily(mech, classes)
	if err != nil {
		return PTRResult{}, nil, err
	}
	n := opts.Queries
	if n == 0 {
		n = len(counts)
	}
	if n > len(counts) {
		return PTRResult{}, nil, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "queries", Value: n, Rule: fmt.Sprintf("must be at most the %d queries of the %s", len(counts), what)})
	}
	var r PTRResult
	if withTest {
		r, err = ptrRule(m, classes, n, opts)
	} else {
		r, err = newPTRRule(m, classes, n, opts, false)
	}
	if err != nil {
		return r, nil, err
	}
	acct, err := newRDPAccount(m, teachers, classes, rdpOptions{Orders: []float64{r.Order}, Abstain: opts.Abstain})
	if err != nil {
		return r, nil, err
	}
	for i, c := range counts[:n] {
		if err := acct.add(c, answerUnknown); err != nil {
			return r, nil, fmt.Errorf("query %d: %w", i+1, err)
		}
	}
	return r, acct, nil
}

// ReleasePTR releases the labels of s by generalized Propose-Test-Release:
// ensemble.Release of s (Confident-GNMax or GNMax on class counts),
// accounted as a whole (ensemble.Accounted, "ptr"): it labels the first
// opts.Queries queries (every query of counts when 0) only if the test of
// PTR (docs/pate.md) passes on counts, the counts of s.Votes, drawn from
// s.Random (crypto/rand when nil), and publishes the total of the
// PTRResult, by PTRArgument, whether it passes or not (PTRResult.Pass);
// a ledger of s is charged that total as one step before the test is
// drawn. A failed test is ensemble.ErrTestFailed, with no label
// released, or, with opts.Fallback, no error and the first
// PTRResult.Fallback queries labelled by the data-independent release.
// The queries after the proposal are not requested
// (ensemble.ReleaseResult.NotRequested). s takes no budget and no
// MaxQueries: opts.Budget is the release's, opts.Queries its proposal.
func ReleasePTR(ctx context.Context, s ensemble.ReleaseSpec, counts [][]int, opts PTROptions) (ensemble.Released, PTRResult, error) {
	if s.Votes == nil {
		return ensemble.Released{}, PTRResult{}, fmt.Errorf("PATE PTR: ReleaseSpec.Votes is not set")
	}
	if _, ok := ensemble.GNMaxFamily(s.Mechanism, s.Votes.Classes()); !ok {
		return ensemble.Released{}, PTRResult{}, fmt.Errorf("PATE PTR: ReleaseSpec.Mechanism must be Confident-GNMax or GNMax on class counts, not %T", s.Mechanism)
	}
	r, acct, err := ptrPlan(counts, s.Votes.K(), s.Votes.Classes(), s.Mechanism, opts, "votes", true)
	if err != nil {
		return ensemble.Released{}, r, err
	}
	src := s.Random
	if src == nil {
		src = noise.NewSource()
	}
	// The test's outcome is output too (a failed test releases that it
	// failed): a seeded stream would let anyone who knows the seed read
	// the bit tested, so it is refused here, before the test, as the
	// label loop refuses it before the first label.
	if _, seeded := src.Seeded(); seeded && !s.Options.Experiment {
		return ensemble.Released{}, r, fmt.Errorf("PATE PTR: a seeded Random makes the test's noise reproducible: set ReleaseSpec.Options.Experiment to use one, and publish neither the labels nor the test's outcome")
	}
	s.Random = src
	// The test holds for the votes it tested: a row released must be the
	// row tested, whatever the reader reads the second time.
	s.Votes = &testedVotes{Reader: s.Votes, counts: counts}
	s.Accounted = &ensemble.Accounted{Accounting: "ptr", Queries: r.Queries, Fallback: r.Fallback,
		Total:  accountant.Total{Guarantee: r.Publish, DeltaFrom: accountant.BudgetDelta, Argument: PTRArgument, ArgumentSource: ptrSource},
		Budget: opts.Budget,
		Test: func(ctx context.Context) (bool, error) {
			var err error
			r.Pass, err = acct.ptrTest(ctx, r, src)
			return r.Pass, err
		}}
	out, err := ensemble.Release(ctx, s)
	return out, r, err
}

// testedVotes reads the votes of a PTR release and stops, with an error,
// at a query whose counts are not those the test was drawn on: a file
// that changed between the test's read and the release's would otherwise
// be labelled under a test it did not pass.
type testedVotes struct {
	votefile.Reader
	counts [][]int
	err    error
}

func (v *testedVotes) Next() bool {
	if v.err != nil || !v.Reader.Next() {
		return false
	}
	q := v.Reader.Query()
	if i := q.Index - 1; i < len(v.counts) && !slices.Equal(q.Counts, v.counts[i]) {
		v.err = fmt.Errorf("PATE PTR: query %d (line %d) reads %v, where the test was drawn on %v: the votes changed since they were tested, and no label of it is released", q.Index, q.Line, q.Counts, v.counts[i])
		return false
	}
	return true
}

func (v *testedVotes) Err() error {
	if v.err != nil {
		return v.err
	}
	return v.Reader.Err()
}

// ptrSource names the result behind a PTR release's total.
const ptrSource = "generalized Propose-Test-Release (Redberg, Zhu and Wang 2023), with a Renyi bound tested (docs/pate.md)"

// ptrTest draws the test of plan r on the account's queries (ptrStatistic,
// then ptrDraw).
func (a *rdpAccount) ptrTest(ctx context.Context, r PTRResult, src *noise.Source) (bool, error) {
	g, err := a.ptrStatistic(ctx, r)
	if err != nil {
		return false, err
	}
	return ptrDraw(g, r, src)
}

// ptrStatistic returns, for plan r, the distance to instability that the
// test draws on (ptrDistance of the bound on the account's queries,
// ptrBound, its local sensitivity and the evaluation margin). It is a
// function of the votes.
func (a *rdpAccount) ptrStatistic(ctx context.Context, r PTRResult) (int, error) {
	f, ls, err := a.ptrBound(ctx, r.Order)
	if err != nil {
		return 0, err
	}
	margin, err := a.margin(r.Order)
	if err != nil {
		return 0, err
	}
	return ptrDistance(f, ls, margin, r.Proposal), nil
}

// ptrDistance returns the distance to instability of a bound f̂ whose
// local sensitivity at distance d is at most ls[d], against the proposal
// β_prop, with the evaluation margin m: -1 when f̂ > β_prop, else the
// largest k <= len(ls) with f̂ + Σ_{d<k} (ls[d] + m) <= β_prop. It changes
// by at most one between neighbouring votes, provided ls at a neighbour
// is at most ls[d + 1] (docs/pate.md), and is at least 0 only where
// f̂ <= β_prop.
func ptrDistance(f float64, ls []float64, margin, proposal float64) int {
	if !(f <= proposal) {
		return -1
	}
	g := 0
	for _, l := range ls {
		if f = outward.AddUp(f, outward.AddUp(l, margin)); !(f <= proposal) {
			break
		}
		g++
	}
	return g
}

// ptrDraw draws the test at distance to instability g: G from the
// discrete Gaussian of deviation 1 on ptrStep·Z centred at 0, from src,
// and passes when G <= clamp(u - z), u = (g + 1)/σ. Its pass probability
// is Φ(a), a within ptrSlack of clamp(u - z) (docs/pate.md): the step's
// share is at most ptrStep (the lattice sum of an increasing density
// against its integral), and the rounding of u - z at most 41·2^-53
// inside the clamp; the rounding of u is a factor within e^{±2^-52}, in
// ptrRound.
func ptrDraw(g int, r PTRResult, src *noise.Source) (bool, error) {
	a := ptrClampTo(float64(g+1)/r.Sigma - r.Margin)
	x, err := discrete.LatticeGaussian(src, 0, 1, ptrStep)
	if err != nil {
		return false, err
	}
	return x <= a, nil
}

// ptrPassProbability returns the plan of a PTR release by m (as PlanPTR
// takes it) of the first opts.Queries queries of proxy (every query when
// 0) and the probability that its test would pass on them,
// Φ((g + 1)/σ - z), g the distance to instability (ptrStatistic; the
// lattice's difference from continuous noise neglected). It is for
// planning on proxy votes that do not depend on the private training data
// (synthetic, or of teachers trained on public data; not the same
// teachers' votes on other queries): on votes that do, it is a function
// of the private data, and so is a proposal chosen from it. Without
// withTest the plan is ptrPlan's without the test's guarantee (the
// probability is the same).
func ptrPassProbability(ctx context.Context, proxy [][]int, teachers, classes int, m ensemble.Mechanism, opts PTROptions, withTest bool) (PTRResult, float64, error) {
	r, acct, err := ptrPlan(proxy, teachers, classes, m, opts, "proxy votes", withTest)
	if err != nil {
		return r, 0, err
	}
	g, err := acct.ptrStatistic(ctx, r)
	if err != nil {
		return r, 0, err
	}
	return r, math.Erfc(-(float64(g+1)/r.Sigma-r.Margin)/math.Sqrt2) / 2, nil
}

// PTRQueries returns the plan of the PTR release under opts (its Queries
// ignored) of the most queries N, the first of proxy, that passes on proxy
// with probability at least pass, and that probability, Φ((g + 1)/σ - z),
// g the distance to instability (ptrStatistic; the lattice's difference
// from continuous noise neglected); found by bisection (the probability
// falls as queries are added); a plan of 0 queries when not even one
// passes. It is for planning on proxy votes that do not depend on the
// private training data (synthetic, or of teachers trained on public
// data; not the same teachers' votes on other queries): on votes that do,
// it is a function of the private data, and so is a proposal chosen from
// it.
func PTRQueries(ctx context.Context, proxy [][]int, teachers, classes int, m ensemble.Mechanism, opts PTROptions, pass float64) (PTRResult, float64, error) {
	if !(pass > 0 && pass < 1) {
		return PTRResult{}, 0, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "pass probability", Value: pass, Rule: "must be in (0, 1)"})
	}
	// The search's plans need no test guarantee (ptrPassProbability
	// without it); the plan returned is ptrRule's, with it.
	lo, hi, plo := 0, len(proxy)+1, 0.0
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		o := opts
		o.Queries = mid
		_, p, err := ptrPassProbability(ctx, proxy, teachers, classes, m, o, false)
		if err != nil {
			return PTRResult{}, 0, err
		}
		if p >= pass {
			lo, plo = mid, p
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return PTRResult{}, plo, nil
	}
	g, err := ptrFamily(m, classes)
	if err != nil {
		return PTRResult{}, 0, err
	}
	o := opts
	o.Queries = lo
	best, err := ptrRule(g, classes, lo, o)
	if err != nil {
		return PTRResult{}, 0, err
	}
	return best, plo, nil
}

// labelsPTR returns the plan of the PTR release that made the labels of
// opts, when their header says it was accounted as a whole by generalized
// PTR (nil when it says nothing of it): ptrRule's plan from the budget
// the header states, the mechanism and the n queries labelled (a release
// whose test passed labels its whole proposal, the first queries of the
// votes), which must publish the total the header states. The plan is a
// function of the settings alone, so the account recomputes what
// aggregate published without its test.
func labelsPTR(opts AccountOptions, classes, n int) (*PTRResult, error) {
	lr := opts.Labels
	if lr == nil || lr.Meta() == nil || lr.Meta().Accounting == "" {
		return nil, nil
	}
	m, t := lr.Meta(), lr.Meta().Total
	switch {
	case m.Accounting != "ptr" || t.Argument != PTRArgument:
		return nil, lr.HeaderErrorf("accounting %q by %q: a release accounted as a whole is accounted only by %s (accounting ptr)", m.Accounting, t.Argument, PTRArgument)
	case t.BudgetDelta == 0:
		return nil, lr.HeaderErrorf("accounting ptr without the budget its total was planned within (the total's budget_eps and budget_delta), from which the account recomputes that total: label the votes again with this darrm")
	}
	budget := accountant.Guarantee{Eps: t.BudgetEps, Delta: t.BudgetDelta}
	proposed := n
	if t.FallbackOf > 0 {
		proposed = t.FallbackOf // the test failed: the labels are the fallback's
	}
	r, err := ptrRule(opts.GNMax(), classes, proposed, PTROptions{Budget: budget, Fallback: t.FallbackOf > 0})
	if err != nil {
		return nil, lr.HeaderErrorf("accounting ptr within the budget %v: %v", budget, err)
	}
	if t.FallbackOf > 0 && r.Fallback != n {
		return nil, lr.HeaderErrorf("it states a fallback of a PTR release of %d queries, which labels %d within the budget %v, not its %d labelled queries: the header does not describe this release",
			t.FallbackOf, r.Fallback, budget, n)
	}
	if stated := (accountant.Guarantee{Eps: t.Eps, Delta: t.Delta}); r.Publish != stated && (accountant.Guarantee{Eps: r.converted, Delta: r.Publish.Delta}) != stated {
		what := fmt.Sprintf("its %d labelled queries", n)
		if t.FallbackOf > 0 {
			what = fmt.Sprintf("%d proposed queries", proposed)
		}
		return nil, lr.HeaderErrorf("it states the total %v by %s, but a PTR release of %s within the budget %v publishes %v: the header does not describe this release",
			stated, PTRArgument, what, budget, r.Publish)
	}
	r.Pass = t.FallbackOf == 0
	return &r, nil
}

// ptrTotal is the total to publish of an account of a PTR release's
// labels: the release's, by PTRArgument, or, with smooth-sensitivity
// draws on the same votes, its sum with theirs (basic composition, the
// PTR total being known only as an (ε, δ)).
func (a *AccountResult) ptrTotal() (accountant.Total, error) {
	t := accountant.Total{Guarantee: a.PTR.Publish, DeltaFrom: accountant.BudgetDelta, Argument: PTRArgument, ArgumentSource: ptrSource}
	if len(a.Draws) == 0 {
		return t, nil
	}
	d, err := rdpTotal(0, a.Draws, a.Options.Orders, a.Options.Delta)
	if err != nil {
		return t, err
	}
	t.Guarantee = accountant.Guarantee{Eps: outward.AddUp(t.Guarantee.Eps, d.Guarantee.Eps), Delta: outward.AddUp(t.Guarantee.Delta, d.Guarantee.Delta)}
	t.Argument = PTRArgument + " and the smooth-sensitivity draws' Renyi DP, added (basic composition)"
	return t, nil
}
