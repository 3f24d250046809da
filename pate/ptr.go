package pate

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
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
		k := math.Ceil(t) - float64(v)
		return discreteTailLog(k, sigma1), discreteTailLog(1-k, sigma1)
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
// step's bound.
func ptrThreshold(m noisymax.ConfidentGNMax, teachers int, order float64) (t, pi []outward.Interval) {
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
// Propose-Test-Release (ProposeTestRelease). Every one is fixed before the
// votes are seen: none is chosen from them.
type PTROptions struct {
	// Budget is the (ε, δ) to publish, δ > 0.
	Budget accountant.Guarantee
	// Queries is the proposal: how many queries, the first of the votes,
	// are labelled if the test passes; 0 proposes every query. Choosing
	// it from the votes would release something of them that no test
	// accounts for: fix it from the budget on proxy votes.
	Queries int
	// Smooth fixes the order of the data-dependent bound tested, the
	// smoothness β and the noise multiplier σ of the test; those left 0
	// are set by ptrRule, which sees no vote. FromVotes is refused.
	Smooth SmoothParams
	// Abstain says that teachers may abstain (rdpOptions.Abstain).
	Abstain bool
}

// PTRArgument names the argument of the total a PTR release publishes.
const PTRArgument = "generalized PTR"

// PTRResult is a release by generalized Propose-Test-Release: whether its
// test passed (the proposed queries are then labelled, else none is), and
// the one total to publish, Publish, which holds either way. Every other
// field is a function of the settings alone (ptrRule), not of the votes:
// the data-dependent bound tested, its smooth sensitivity and the test's
// draw are never returned.
type PTRResult struct {
	Pass    bool
	Queries int
	// Publish is the total to publish, by the argument PTRArgument
	// (docs/pate.md, "A data-dependent guarantee: generalized PTR").
	Publish accountant.Guarantee
	// Order is the Rényi order of the bound tested, Proposal the bound
	// proposed at it; Beta and Sigma the test's smoothness and noise
	// multiplier, Margin its margin z in deviations of its noise and
	// TestRDP its Rényi DP at Order (gnssLatticeRDP at σ/k).
	Order, Proposal, Beta, Sigma, Margin, TestRDP float64
	// Test is the test's own guarantee, FalsePass the probability that
	// the test passes at votes whose bound exceeds the proposal.
	Test      accountant.Guarantee
	FalsePass float64
}

// ptrShareTest is the share of the budget's δ that the test's own
// guarantee takes; the false-pass probability takes the rest.
const ptrShareTest = 0.25

// ptrRule returns the plan of a PTR release of queries queries by m over
// C classes (every field of PTRResult but Pass), from opts alone
// (docs/pate.md lists the rule and why each piece holds):
//
//   - the order λ: opts.Smooth.Order, else ptrOrder's, the budget's
//     alone;
//   - δ: the test's own δ_t = δ/4, the false-pass probability at most
//     δ - δ_t, which fixes the margin z (falsePass);
//   - β and σ: opts.Smooth's, else ptrSmooth's, which minimise the test's
//     Rényi DP plus its margin for a stand-in smooth sensitivity (1/128
//     of the data-independent Rényi DP at λ at β = 0.4/λ,
//     dataFreeSmooth's), σ raised until the test alone is within the
//     budget's ε;
//   - the proposal: the largest Rényi DP at λ that, added to the test's,
//     converts to the budget's ε at its δ.
func ptrRule(m noisymax.ConfidentGNMax, classes, queries int, opts PTROptions) (PTRResult, error) {
	b := opts.Budget
	if err := param.Positive("budget eps", b.Eps); err != nil {
		return PTRResult{}, fmt.Errorf("PATE PTR: %w", err)
	}
	if !(b.Delta > 0 && b.Delta < 0.5) {
		return PTRResult{}, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "budget delta", Value: b.Delta, Rule: "must be in (0, 0.5): the test may pass falsely with a probability the delta holds"})
	}
	if opts.Smooth.FromVotes {
		return PTRResult{}, fmt.Errorf("PATE PTR: the test's parameters cannot be chosen from the votes: give them, or leave them to the data-free rule")
	}
	if queries < 1 {
		return PTRResult{}, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "queries", Value: float64(queries), Rule: "must be >= 1"})
	}
	rho, err := m.RunSlope(queries, queries)
	if err != nil {
		return PTRResult{}, err
	}
	r := PTRResult{Queries: queries, Order: opts.Smooth.Order, Beta: opts.Smooth.Beta, Sigma: opts.Smooth.Sigma}
	if r.Order == 0 {
		if r.Order, err = ptrOrder(b, m, classes); err != nil {
			return r, err
		}
	}
	deltaTest := b.Delta * ptrShareTest
	if r.Margin, r.FalsePass, err = falsePassMargin(b.Delta - deltaTest); err != nil {
		return r, err
	}
	if r.Beta == 0 || r.Sigma == 0 {
		r.Beta, r.Sigma = ptrSmooth(r.Beta, r.Sigma, r.Margin, r.Order, r.Order*rho*ruleSSShare)
	}
	if !(r.Order*r.Beta < 0.5) {
		return r, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "beta", Value: r.Beta, Rule: fmt.Sprintf("must be below 1/(2·order) = %v", 0.5/r.Order)})
	}
	if r.TestRDP, err = ptrTestRDP(r.Beta, r.Sigma, r.Margin, r.Order); err != nil {
		return r, err
	}
	if r.Test, err = ptrTestGuarantee(r.Beta, r.Sigma, r.Margin, r.Order, deltaTest); err != nil {
		return r, err
	}
	for opts.Smooth.Sigma == 0 && r.Test.Eps > b.Eps && r.Sigma < 1e6 {
		// The rule's σ makes the test too costly on its own: more noise.
		r.Sigma *= 1.05
		if r.TestRDP, err = ptrTestRDP(r.Beta, r.Sigma, r.Margin, r.Order); err != nil {
			return r, err
		}
		if r.Test, err = ptrTestGuarantee(r.Beta, r.Sigma, r.Margin, r.Order, deltaTest); err != nil {
			return r, err
		}
	}
	if r.Test.Eps > b.Eps {
		return r, fmt.Errorf("PATE PTR: the test alone is (%v, %v)-DP, above the budget's eps %v: raise sigma or the budget", r.Test.Eps, r.Test.Delta, b.Eps)
	}
	cost, err := accountant.ConvertRDP(r.TestRDP, r.Order, b.Delta, accountant.ImprovedConversion)
	if err != nil {
		return r, err
	}
	// ConvertRDP is r + a cost of the order and δ, rounded up: step the
	// proposal down until it converts within the budget.
	r.Proposal = b.Eps - cost
	for k := 0; r.Proposal > 0; k++ {
		e, err := accountant.ConvertRDP(outward.AddUp(r.Proposal, r.TestRDP), r.Order, b.Delta, accountant.ImprovedConversion)
		if err != nil {
			return r, err
		}
		if e <= b.Eps {
			r.Publish = accountant.Guarantee{Eps: math.Max(e, r.Test.Eps), Delta: math.Max(b.Delta, outward.AddUp(r.Test.Delta, r.FalsePass))}
			break
		}
		r.Proposal -= math.Max(e-b.Eps, 1e-15) * float64(k+1)
	}
	if !(r.Proposal > 0) {
		return r, fmt.Errorf("PATE PTR: the test's cost at order %v (Renyi DP %v) leaves no room for a proposal within eps %v at delta %v", r.Order, r.TestRDP, b.Eps, b.Delta)
	}
	return r, nil
}

// ptrOrder returns the order at which a Gaussian mechanism that is
// (ε, δ)-DP at the budget b by the improved conversion is converted
// (accountant.RhoToDP's optimum, a function of b alone), or, where
// conditions C5 and C6 fail there for m's σ2 and C, the first of
// 1 + (λ - 1)·2^{-k/2} (k = 1, 2, ..., rounded down to a quarter) where
// they hold.
func ptrOrder(b accountant.Guarantee, m noisymax.ConfidentGNMax, classes int) (float64, error) {
	lo, hi := 1e-12, 1e3 // ρ: RhoToDP's ε increases with it
	for range 200 {
		mid := math.Sqrt(lo * hi)
		e, _, err := accountant.RhoToDP(mid, b.Delta, accountant.ImprovedConversion)
		if err != nil {
			return 0, err
		}
		if e > b.Eps {
			hi = mid
		} else {
			lo = mid
		}
	}
	_, order, err := accountant.RhoToDP(lo, b.Delta, accountant.ImprovedConversion)
	if err != nil {
		return 0, err
	}
	top := order - 1
	for k := 1; ; k++ {
		if c5, c6 := smoothConditions(m.Sigma2, classes, order, m.Noise); c5 && c6 {
			return order, nil
		}
		if order = 1 + math.Floor(4*top*math.Pow(2, -float64(k)/2))/4; order <= 1 {
			return 0, fmt.Errorf("PATE PTR: conditions C5 and C6 fail at sigma2 = %v, C = %d at every order the rule tries (%v down to 1): fix the order", m.Sigma2, classes, 1+top)
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
// passes at votes whose bound f exceeds the proposal: that a discrete
// Gaussian on hZ (h = gnssLattice) of deviation s >= 2^10·h centred at
// f + z·s falls at or below f, i.e. at least z·s below its centre. The
// lattice points u >= z·s below the centre carry at most
// e^{-z²/2} + (1/h)∫_{zs}^∞ e^{-u²/(2s²)}du of weight, and all of them at
// least (s√(2π)/h)(1 - 3e^{-2π²s²/h²}) (Poisson summation), so the
// probability is at most (Φ(-z) + (h/s)·φ(z))/(1 - 3e^{-2π²·2^20}) with
// h/s <= 2^-10; the last factor is 1 to far below float64 precision.
func falsePass(z float64) float64 {
	tail := outward.Up(math.Erfc(z/math.Sqrt2)/2, 4)
	dens := outward.Up(math.Exp(-z*z/2)/math.Sqrt(2*math.Pi), 4)
	return outward.AddUp(tail, outward.MulUp(dens, 0x1p-10))
}

// ptrK returns k = 1 + z·σ·(e^β - 1), rounded up: the test releases f +
// z·s, whose local sensitivity is at most S + z(e^β - 1)s = (k/σ)·s for
// s = S·σ (docs/pate.md), so its noise s is GNSS's at multiplier σ/k.
func ptrK(beta, sigma, z float64) float64 {
	return outward.AddUp(1, outward.MulUp(outward.MulUp(z, sigma), outward.Up(math.Expm1(beta), 4)))
}

// ptrTestRDP returns the test's Rényi DP at order: gnssLatticeRDP at β and
// σ/k (ptrK).
func ptrTestRDP(beta, sigma, z, order float64) (float64, error) {
	return gnssLatticeRDP(beta, outward.DivDirected(sigma, ptrK(beta, sigma, z), false), order)
}

// ptrTestGuarantee returns the test's own (ε, delta): its Rényi DP
// converted at delta, the least over darrm's orders and the order of the
// bound, those below 1/(2β) (GNSS's bound holds there only).
func ptrTestGuarantee(beta, sigma, z, order, delta float64) (accountant.Guarantee, error) {
	best := accountant.Guarantee{Eps: math.Inf(1), Delta: delta}
	for _, o := range append(defaultOrders(), order) {
		if !(o*beta < 0.5) {
			continue
		}
		r, err := ptrTestRDP(beta, sigma, z, o)
		if err != nil {
			return best, err
		}
		e, err := accountant.ConvertRDP(r, o, delta, accountant.ImprovedConversion)
		if err != nil {
			return best, err
		}
		best.Eps = math.Min(best.Eps, e)
	}
	return best, nil
}

// ptrSmooth returns β and σ for the test where not given (0): the pair
// that minimises the test's Rényi DP at order plus its margin z·S(β)·σ,
// over β = b/λ, b = 0.05, 0.10, ..., 0.45, and σ on a grid of ratio 1.01
// from 1 to 10^4, for the stand-in S(β) = ss·0.4/(βλ) (ss, the smooth
// sensitivity expected at β = 0.4/λ, dataFreeSmooth's; a local
// sensitivity that grows linearly with the distance has a β-smooth
// sensitivity in 1/β).
func ptrSmooth(beta, sigma, z, order, ss float64) (float64, float64) {
	best, bb, bs := math.Inf(1), beta, sigma
	for j := 1; j <= 9; j++ {
		b := beta
		if b == 0 {
			b = 0.05 * float64(j) / order
		} else if j > 1 {
			break
		}
		s0, s1 := sigma, sigma
		if sigma == 0 {
			s0, s1 = 1, 1e4
		}
		for s := s0; s <= s1; s *= 1.01 {
			r, err := ptrTestRDP(b, s, z, order)
			if err != nil {
				break
			}
			if v := r + z*ss*0.4/(b*order)*s; v < best {
				best, bb, bs = v, b, s
			}
		}
	}
	return bb, bs
}

// ProposeTestRelease runs the test of a release of the first opts.Queries
// queries of counts (every query when 0; K teachers, C classes) by m
// (Confident-GNMax or GNMax) by generalized Propose-Test-Release: the
// data-dependent Rényi DP of that release at the votes, in both
// directions (ptrBound), is tested against the proposal with noise drawn
// from src (crypto/rand for a release: noise.NewSource). It returns
// whether the test passed and the total to publish, which holds whether
// it passed or not. It draws no label: on a pass the caller labels the
// proposed queries with m, with fresh noise.
func ProposeTestRelease(ctx context.Context, counts [][]int, teachers, classes int, m noisymax.ConfidentGNMax, opts PTROptions, src *noise.Source) (PTRResult, error) {
	n := opts.Queries
	if n == 0 {
		n = len(counts)
	}
	if n > len(counts) {
		return PTRResult{}, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "queries", Value: float64(n), Rule: fmt.Sprintf("must be at most the %d queries of the votes", len(counts))})
	}
	r, err := ptrRule(m, classes, n, opts)
	if err != nil {
		return r, err
	}
	acct, err := newRDPAccount(m, teachers, classes, rdpOptions{Orders: []float64{r.Order}, Abstain: opts.Abstain})
	if err != nil {
		return r, err
	}
	for i, c := range counts[:n] {
		if err := acct.add(c, answerUnknown); err != nil {
			return r, fmt.Errorf("query %d: %w", i+1, err)
		}
	}
	r.Pass, err = acct.ptrTest(ctx, r, src)
	return r, err
}

// ptrTest draws the test of plan r on the account's queries (ptrStatistic,
// then ptrDraw).
func (a *rdpAccount) ptrTest(ctx context.Context, r PTRResult, src *noise.Source) (bool, error) {
	f, s, err := a.ptrStatistic(ctx, r)
	if err != nil {
		return false, err
	}
	return ptrDraw(f, s, r, src)
}

// ptrStatistic returns, for plan r, the bound f̂ on the account's queries
// (ptrBound) and the deviation s = max(S·σ, floor) of the test's noise,
// S the β-smooth sensitivity of f̂ plus the evaluation margin
// (gnssDeviation, its floor at the order 1/(2β), the largest the test's
// Rényi DP is used at: ptrTestGuarantee). Both are functions of the votes.
func (a *rdpAccount) ptrStatistic(ctx context.Context, r PTRResult) (f, s float64, err error) {
	f, ls, err := a.ptrBound(ctx, r.Order)
	if err != nil {
		return 0, 0, err
	}
	ss, err := smoothSensitivity(ls, r.Beta)
	if err != nil {
		return 0, 0, err
	}
	margin, err := a.margin(r.Order)
	if err != nil {
		return 0, 0, err
	}
	s, err = gnssDeviation(outward.AddUp(ss, margin), r.Sigma, 0.5/r.Beta)
	return f, s, err
}

// ptrDraw draws the test: a discrete Gaussian on hZ (h = gnssLattice) of
// deviation s centred at f + z·s, and passes when it falls at or below
// the proposal.
func ptrDraw(f, s float64, r PTRResult, src *noise.Source) (bool, error) {
	y, err := discrete.LatticeGaussian(src, outward.AddUp(f, outward.MulUp(r.Margin, s)), s, gnssLattice)
	if err != nil {
		return false, err
	}
	return y <= r.Proposal, nil
}

// PTRPassProbability returns the plan of a PTR release of the first
// opts.Queries queries of proxy (every query when 0) and the probability
// that its test would pass on them, Φ((β_prop - f̂ - z·s)/s) (the
// lattice's difference from continuous noise neglected). It is for
// planning on proxy votes (held out, public, or earlier votes of the same
// teachers): on the private votes it is a function of them, not for
// publication.
func PTRPassProbability(ctx context.Context, proxy [][]int, teachers, classes int, m noisymax.ConfidentGNMax, opts PTROptions) (PTRResult, float64, error) {
	n := opts.Queries
	if n == 0 {
		n = len(proxy)
	}
	if n > len(proxy) {
		return PTRResult{}, 0, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "queries", Value: float64(n), Rule: fmt.Sprintf("must be at most the %d queries of the proxy votes", len(proxy))})
	}
	r, err := ptrRule(m, classes, n, opts)
	if err != nil {
		return r, 0, err
	}
	acct, err := newRDPAccount(m, teachers, classes, rdpOptions{Orders: []float64{r.Order}, Abstain: opts.Abstain})
	if err != nil {
		return r, 0, err
	}
	for i, c := range proxy[:n] {
		if err := acct.add(c, answerUnknown); err != nil {
			return r, 0, fmt.Errorf("query %d: %w", i+1, err)
		}
	}
	f, s, err := acct.ptrStatistic(ctx, r)
	if err != nil {
		return r, 0, err
	}
	return r, math.Erfc(-(r.Proposal-f-r.Margin*s)/(s*math.Sqrt2)) / 2, nil
}

// PTRQueries returns the most queries N, the first of proxy, whose PTR
// release under opts (its Queries ignored) passes on proxy with
// probability at least pass (PTRPassProbability), found by bisection (the
// probability falls as queries are added), and that probability; 0 when
// not even one query does.
func PTRQueries(ctx context.Context, proxy [][]int, teachers, classes int, m noisymax.ConfidentGNMax, opts PTROptions, pass float64) (int, float64, error) {
	if !(pass > 0 && pass < 1) {
		return 0, 0, fmt.Errorf("PATE PTR: %w", &accountant.ParamError{Name: "pass probability", Value: pass, Rule: "must be in (0, 1)"})
	}
	at := func(n int) (float64, error) {
		o := opts
		o.Queries = n
		_, p, err := PTRPassProbability(ctx, proxy, teachers, classes, m, o)
		return p, err
	}
	lo, hi, plo := 0, len(proxy)+1, 0.0
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		p, err := at(mid)
		if err != nil {
			return 0, 0, err
		}
		if p >= pass {
			lo, plo = mid, p
		} else {
			hi = mid
		}
	}
	return lo, plo, nil
}
