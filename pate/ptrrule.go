package pate

import (
	"fmt"
	"math"
	"strconv"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/votefile"
)

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
func ptrRule(mo *memo, m noisymax.Steps, classes, queries int, opts PTROptions) (PTRResult, error) {
	key := ptrRuleKey{m: m, classes: classes, queries: queries, budget: opts.Budget, fallback: opts.Fallback}
	r, ok := mo.rules.get(key)
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
		if r, err = ptrRule(mo, m, classes, queries, plain); err == nil {
			err = ptrFallback(mo, &r, m, opts.Budget.Delta*ptrShareTest)
		}
	} else {
		r, err = newPTRRule(mo, m, classes, queries, opts, true)
	}
	if err != nil {
		return r, err
	}
	mo.rules.put(key, r, 1)
	return r, nil
}

// ptrRuleKey is what a plan of ptrRule is a function of: the settings.
type ptrRuleKey struct {
	m                noisymax.Steps
	classes, queries int
	budget           accountant.Guarantee
	fallback         bool
}

// maxRules bounds the plans of ptrRule a memo keeps. A plan is a function
// of the settings alone and costs up to a second of CPU (most of it
// ptrSigma's search), and a caller asks for the same plan again: a plan
// on proxy votes reports the N its search ended on, and a program (or a
// test) that plans with the same settings again needs it each time (a
// search of N adds about ten).
const maxRules = 256

// newPTRRule computes ptrRule's plan without a fallback; without withTest
// all of it but the test's own guarantee and the total to publish (Test
// and Publish, left 0), which PTRQueries' search needs of none but the
// plan it returns: the least conversion over the orders, whose Rényi DP
// at the best order took most of a plan's CPU, is then computed only
// where the conversion at the bound's order, which is at least that
// least, exceeds the budget's ε.
func newPTRRule(mo *memo, m noisymax.Steps, classes, queries int, opts PTROptions, withTest bool) (PTRResult, error) {
	b := opts.Budget
	if err := param.Positive("budget eps", b.Eps); err != nil {
		return PTRResult{}, fmt.Errorf("PATE PTR: %w", err)
	}
	if !(b.Delta > 0 && b.Delta < 0.5) {
		return PTRResult{}, fmt.Errorf("PATE PTR: %w", &param.Error{Name: "budget delta", Value: b.Delta, Rule: "must be in (0, 0.5): the test may pass falsely with a probability the delta holds"})
	}
	if queries < 1 {
		return PTRResult{}, fmt.Errorf("PATE PTR: %w", &param.Error{Name: "queries", Value: queries, Rule: "must be >= 1"})
	}
	if queries > accountant.CountLimit {
		// As a plan refuses it (plan.Make): a count the accountant does
		// not count exactly was planned, 2^60 queries with the rest.
		return PTRResult{}, fmt.Errorf("PATE PTR: %w", &param.Error{Name: "queries", Value: queries, Rule: fmt.Sprintf("must be in [1, %d], the counts the accountant counts exactly", accountant.CountLimit)})
	}
	rho, err := m.RunSlope(queries, queries)
	if err != nil {
		return PTRResult{}, err
	}
	r := PTRResult{Queries: queries}
	if r.Order, err = ptrOrder(mo, b, m, classes); err != nil {
		return r, err
	}
	deltaTest := b.Delta * ptrShareTest
	if !(deltaTest > 0) {
		// Said of δ, where the floor below said "eps must be at least +Inf".
		return r, fmt.Errorf("PATE PTR: %w", &param.Error{Name: "budget delta", Value: b.Delta, Rule: "too small: the test's share of it, delta/50, is 0 in floating point"})
	}
	if r.Margin, r.FalsePass, err = falsePassMargin(b.Delta - deltaTest); err != nil {
		return r, err
	}
	// The test alone converts, at any noise, to at least its Rényi DP of
	// 0 converted: a budget below that allows no σ, which the search
	// below would learn only at ptrSigmaMax, after hours of bounds.
	orders := ptrTestOrders(r.Order)
	if floor := ptrTestFloor(orders, deltaTest); floor > b.Eps {
		return r, fmt.Errorf("PATE PTR: %w", &param.Error{Name: "budget eps", Value: b.Eps, Rule: fmt.Sprintf("must be at least %v: the test alone is no better than (%v, %v)-DP at any noise (Rényi DP 0 converted at its share of the budget's delta, delta/50); raise it, or the budget's delta", floor, floor, deltaTest)})
	}
	// Nor does any noise leave room for a proposal where a Rényi DP of 0
	// at the order converts above the budget: the proposal's and the
	// test's convert to more.
	if e, err := accountant.ImprovedConversion.ConvertRDP(0, r.Order, b.Delta); err == nil && e >= b.Eps {
		return r, fmt.Errorf("PATE PTR: %w", &param.Error{Name: "budget eps", Value: b.Eps, Rule: fmt.Sprintf("leaves no room for a proposal at any noise: at the order %v the budget gives, a Rényi DP of 0 converts to %v at the budget's delta; raise it", r.Order, e)})
	}
	r.Sigma = ptrSigma(mo, r.Margin, r.Order, r.Order*rho*ptrStandIn)
	for {
		// Where even the lower bounds of the test's Rényi DP convert
		// above the budget, so do its bounds: σ is raised without them,
		// through the same steps, to the same σ.
		if r.Sigma < ptrSigmaMax && ptrTestAbove(r.Sigma, orders, deltaTest, b.Eps) {
			r.Sigma *= 1.05
			continue
		}
		if r.TestRDP, err = ptrTestRDP(mo, r.Sigma, r.Margin, r.Order); err != nil {
			return r, err
		}
		if !withTest {
			if u, err := accountant.ImprovedConversion.ConvertRDP(r.TestRDP, r.Order, deltaTest); err == nil && u <= b.Eps {
				break
			}
		}
		if r.Test, err = ptrTestGuarantee(mo, r.Sigma, r.Margin, r.Order, deltaTest); err != nil {
			return r, err
		}
		if r.Test.Eps <= b.Eps || r.Sigma >= ptrSigmaMax {
			break
		}
		// The rule's σ makes the test too costly on its own: more noise.
		r.Sigma *= 1.05
	}
	if r.Test.Eps > b.Eps {
		return r, fmt.Errorf("PATE PTR: %w", &param.Error{Name: "budget eps", Value: b.Eps, Rule: fmt.Sprintf("is below the test's own guarantee (%v, %v) at the most noise tried, sigma = %.6g: raise it", r.Test.Eps, r.Test.Delta, r.Sigma)})
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
		return r, fmt.Errorf("PATE PTR: %w", &param.Error{Name: "budget eps", Value: b.Eps, Rule: fmt.Sprintf("leaves no room for a proposal: the test's cost at order %v (Rényi DP %v) converts to %v at the budget's delta %v; raise it", r.Order, r.TestRDP, cost, b.Delta)})
	}
	return r, nil
}

// PlanPTR returns the plan of a PTR release of the first opts.Queries
// queries (>= 1) by m, Confident-GNMax or GNMax, over classes classes
// (ptrFamily), every field of PTRResult but Pass: a function of the
// settings alone, so that the total a release publishes, and a ledger
// charges it, is known before any vote is read (a ledger's declared use
// of PTR releases counts them by it), and the release (ReleasePTR) draws
// its test as the plan says. memo keeps what the plan computes for the
// calls that ask again (accountant.Memo; nil: nothing kept).
func PlanPTR(memo *accountant.Memo, m ensemble.Mechanism, classes int, opts PTROptions) (PTRResult, error) {
	// As the votes state classes (a plan of 0 or 2^31 classes was made).
	if err := votefile.CheckClasses(classes); err != nil {
		return PTRResult{}, fmt.Errorf("PATE PTR: %w", err)
	}
	g, err := ptrFamily(m, classes)
	if err != nil {
		return PTRResult{}, err
	}
	r, err := ptrRule(memoIn(memo), g, classes, opts.Queries, opts)
	if err != nil {
		return r, err
	}
	r.planned = ptrPlanned{mech: g, classes: classes, budget: opts.Budget, abstain: opts.Abstain}
	return r, nil
}

// ptrFamily returns the settings of the steps of m, of the GNMax family on
// the class counts of votes of classes classes (ensemble.Steps),
// which PTR tests, its noise the discrete Gaussian unless set, as a
// release draws it.
func ptrFamily(m ensemble.Mechanism, classes int) (noisymax.Steps, error) {
	g, ok := ensemble.Steps(m, classes)
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
func ptrFallback(mo *memo, r *PTRResult, m noisymax.Steps, deltaTest float64) error {
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
		return ptrLeastConversion(mo, r.Sigma, r.Margin, orders, lower, deltaTest, slope)
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
func ptrOrder(mo *memo, b accountant.Guarantee, m noisymax.Steps, classes int) (float64, error) {
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
		if smoothConditionsHold(mo, m.Sigma2, classes, order, m.Noise) {
			return order, nil
		}
		if order = 1 + math.Floor(4*top*math.Pow(2, -float64(k)/2))/4; order <= 1 {
			return 0, fmt.Errorf("PATE PTR: %w", &param.SettingError{Name: "sigma2", Value: strconv.FormatFloat(m.Sigma2, 'g', -1, 64),
				Rule: fmt.Sprintf("conditions C5 and C6 of the data-dependent bound fail for C = %d at every order the rule tries for the budget (%v, %v), %v down to 1: lower it, or change the budget", classes, b.Eps, b.Delta, 1+top)})
		}
	}
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
func ptrSigma(mo *memo, z, order, a float64) float64 {
	obj := func(s float64) float64 {
		r, err := ptrBitRDP(mo, s, z, order, ptrSearchWidth)
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
// mech (ptrFamily, ptrRule) and the account of those queries at its order
// (ptrAccount), whose test is yet to be drawn. Without withTest the plan
// is newPTRRule's without the test's guarantee, and without a fallback.
func ptrPlan(mo *memo, counts [][]int, teachers, classes int, mech ensemble.Mechanism, opts PTROptions, what string, withTest bool) (PTRResult, *rdpAccount, error) {
	m, err := ptrFamily(mech, classes)
	if err != nil {
		return PTRResult{}, nil, err
	}
	n := opts.Queries
	if n == 0 {
		n = len(counts)
	}
	if err := ptrProposed(counts, n, what); err != nil {
		return PTRResult{}, nil, err
	}
	var r PTRResult
	if withTest {
		r, err = ptrRule(mo, m, classes, n, opts)
	} else {
		r, err = newPTRRule(mo, m, classes, n, opts, false)
	}
	if err != nil {
		return r, nil, err
	}
	acct, err := ptrAccount(mo, counts, n, teachers, classes, m, r.Order, opts.Abstain, what)
	return r, acct, err
}

// ptrAccount returns the account, at the order of a plan, of the first n
// queries of counts (what names them in errors) by m, whose test is yet
// to be drawn.
func ptrAccount(mo *memo, counts [][]int, n, teachers, classes int, m noisymax.Steps, order float64, abstain bool, what string) (*rdpAccount, error) {
	if err := ptrProposed(counts, n, what); err != nil {
		return nil, err
	}
	acct, err := newRDPAccount(m, teachers, classes, rdpOptions{Orders: []float64{order}, Abstain: abstain, memo: mo})
	if err != nil {
		return nil, err
	}
	for i, c := range counts[:n] {
		if err := acct.add(c, answerUnknown); err != nil {
			return nil, fmt.Errorf("query %d: %w", i+1, err)
		}
	}
	return acct, nil
}

// ptrProposed reports whether counts (what names them) hold the n
// queries proposed.
func ptrProposed(counts [][]int, n int, what string) error {
	if n > len(counts) {
		return fmt.Errorf("PATE PTR: %w", &param.Error{Name: "queries", Value: n, Rule: fmt.Sprintf("must be at most the %d queries of the %s", len(counts), what)})
	}
	return nil
}
