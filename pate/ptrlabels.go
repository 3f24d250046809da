package pate

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/outward"
)

// labelsPTR returns the plan of the PTR release that made the labels of
// opts, when their header says it was accounted as a whole by generalized
// PTR (nil when it says nothing of it): ptrRule's plan from the budget
// the header states, the mechanism and the n queries labelled (a release
// whose test passed labels its whole proposal, the first queries of the
// votes), which must publish the total the header states. The plan is a
// function of the settings alone, so the account recomputes what
// aggregate published without its test.
func labelsPTR(mo *memo, opts AccountOptions, classes, n int) (*PTRResult, error) {
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
	r, err := ptrRule(mo, opts.GNMax(), classes, proposed, PTROptions{Budget: budget, Fallback: t.FallbackOf > 0})
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
