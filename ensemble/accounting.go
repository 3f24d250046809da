package ensemble

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// Budget is a total privacy budget that limits one release, with the
// number of queries it allows.
type Budget struct {
	accountant.Budget
	// MaxQueries is the number of queries the budget allows:
	// accountant.Unlimited when the teachers' cap is within it.
	MaxQueries int
}

// Accounting is the privacy of a release, computed for every mechanism
// alike: the per-query guarantee, the teacher-level cap on every total
// (or why there is none), the composition of the totals, and the budget,
// if any, that limits the queries answered.
type Accounting struct {
	PerQuery    Privacy
	Cap         *accountant.Cap
	CapNote     string
	Composition accountant.Composition
	Budget      *Budget
}

// NewAccounting returns the accounting of a release of per-query
// guarantee priv from the ensemble that b states (its cap, provenance.Binding.Cap),
// with the slack of composition c, under budget (nil: none) held by c.
// The queries' parameters are fixed before the release, so the budget is
// held by the tightest composition valid for them
// (accountant.MaxRunSteps: the exact composition of a described
// mechanism's dominating pairs, its RDP curve, or its guarantee's); under
// optimal composition, a mechanism that knows points of its privacy
// profile (Privacy.Profile) by the tightest of them
// (accountant.MaxStepsProfile).
func NewAccounting(priv Privacy, b provenance.Binding, c accountant.Composition, budget *accountant.Guarantee) (Accounting, error) {
	a := Accounting{PerQuery: priv, Composition: c}
	if err := c.Validate(); err != nil {
		return a, err
	}
	method, deltaPrime := c.Method, c.DeltaPrime
	var err error
	if a.Cap, a.CapNote, err = b.Cap(deltaPrime); err != nil {
		return a, fmt.Errorf("teachers' cap: %w", err)
	}
	if budget != nil {
		limit, err := accountant.MaxRunSteps(priv.Step(), accountant.Budget{Guarantee: *budget, Composition: c}, a.Cap)
		if method == accountant.Optimal && len(priv.Profile) > 0 && err == nil && limit != accountant.Unlimited {
			var p int
			p, err = accountant.MaxStepsProfile(priv.Guarantee, priv.Profile, *budget, deltaPrime, a.Cap)
			limit = max(limit, p)
		}
		if err != nil {
			return a, fmt.Errorf("budget: %w", err)
		}
		a.Budget = &Budget{Budget: accountant.Budget{Guarantee: *budget, Composition: c}, MaxQueries: limit}
	}
	return a, nil
}

// Limit returns the number of queries to answer: the budget's, or -1 for
// all of them.
func (a Accounting) Limit() int {
	if a.Budget == nil || a.Budget.MaxQueries == accountant.Unlimited {
		return -1
	}
	return a.Budget.MaxQueries
}

// Totals returns the total privacy of labels labels under simple,
// general and optimal composition (accountant.Totals) and, when the
// mechanism knows points of its privacy profile that compose more tightly,
// optimal composition at the best of them (accountant.ProfileTotal); each
// the smaller of the composition and the teachers' cap, judged against
// the budget (accountant.Total.Capped); none for no labels.
func (a Accounting) Totals(labels int) []accountant.Total {
	if labels == 0 {
		return nil
	}
	var budget *accountant.Guarantee
	if a.Budget != nil {
		budget = &a.Budget.Guarantee
	}
	deltaPrime := a.Composition.DeltaPrime
	out := accountant.Totals(a.PerQuery.Guarantee, labels, deltaPrime)
	if s := a.PerQuery.Step(); s.Kind != accountant.ApproxSpend {
		// The curves' totals at the budget's δ, else at δ'.
		delta := deltaPrime
		if budget != nil && budget.Delta > 0 {
			delta = budget.Delta
		}
		if all, err := accountant.ComposeRun(s, labels, delta, deltaPrime, accountant.ImprovedConversion); err == nil {
			out = all
		}
	}
	if t, ok := accountant.ProfileTotal(a.PerQuery.Guarantee, a.PerQuery.Profile, labels, deltaPrime); ok {
		out = append(out, t)
	}
	for i := range out {
		out[i] = out[i].Capped(a.Cap, budget)
	}
	return out
}
