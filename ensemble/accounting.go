package ensemble

import (
	"context"
	"errors"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/votefile"
)

// Budget is a total privacy budget that limits one release, with the
// number of queries it allows.
type Budget struct {
	accountant.Budget
	// MaxQueries is the number of queries the budget allows:
	// accountant.Unlimited when the teachers' cap is within it,
	// accountant.CountLimit when more than that fit. Allows is the total
	// to publish of that many, which says by which result they fit (the
	// cap, when MaxQueries is Unlimited); zero when none fits.
	MaxQueries int
	Allows     accountant.Total
}

// Accounting is the privacy of a release, computed for every mechanism
// alike: the per-query guarantee, the teacher-level cap on every total
// (or why there is none), the slack of the totals, the budget, if any,
// that limits the queries answered, and the total δ at which a release
// without a budget states its total (nil: accountant.Account's default).
type Accounting struct {
	PerQuery    Privacy
	Cap         *accountant.Cap
	CapNote     string
	Composition accountant.Composition
	Budget      *Budget
	TotalDelta  *float64
}

// NewAccounting returns the accounting of a release of per-query
// guarantee priv from the ensemble that b states (its cap, votefile.Binding.Cap),
// with the slack of composition c, under budget (nil: none). The queries'
// parameters are fixed before the release, so the budget allows the
// queries whose total to publish is within it
// (accountant.Account.MaxSteps: the least ε at the budget's δ of every
// composition valid for them). The budget's search ends with ctx's error
// once ctx is done.
func NewAccounting(ctx context.Context, priv Privacy, b votefile.Binding, c accountant.Composition, budget *accountant.Guarantee) (Accounting, error) {
	a := Accounting{PerQuery: priv, Composition: c}
	if err := c.Validate(); err != nil {
		return a, err
	}
	var err error
	if a.Cap, a.CapNote, err = b.Cap(c.DeltaPrime); err != nil {
		return a, fmt.Errorf("teachers' cap: %w", err)
	}
	if budget != nil {
		a.Budget = &Budget{Budget: accountant.Budget{Guarantee: *budget, Composition: c}}
		a.Budget.MaxQueries, a.Budget.Allows, err = a.Account(0).MaxSteps(ctx)
		if errors.As(err, new(*accountant.BeyondCountError)) {
			// No run reaches the count: the release is held to it all the
			// same, a limit it never meets.
			a.Budget.MaxQueries = accountant.CountLimit
			a.Budget.Allows, err = a.Publish(accountant.CountLimit)
		}
		if err != nil {
			return a, fmt.Errorf("budget: %w", err)
		}
	}
	return a, nil
}

// Account returns the accountant's account of labels released labels:
// the per-query description and profile, the cap, the budget and the
// total δ without one.
func (a Accounting) Account(labels int) accountant.Account {
	acc := accountant.Account{Step: a.PerQuery.Step(), Profile: a.PerQuery.Profile, Steps: labels, Cap: a.Cap,
		Delta: a.TotalDelta, DeltaPrime: a.Composition.DeltaPrime}
	if a.Budget != nil {
		acc.Budget = &a.Budget.Guarantee
	}
	return acc
}

// Publish returns the total to publish of labels released labels
// (accountant.Account.Publish).
func (a Accounting) Publish(labels int) (accountant.Total, error) { return a.Account(labels).Publish() }

// Limit returns the number of queries to answer: the budget's, or -1 for
// all of them.
func (a Accounting) Limit() int {
	if a.Budget == nil || a.Budget.MaxQueries == accountant.Unlimited {
		return -1
	}
	return a.Budget.MaxQueries
}

// Totals returns, as analysis, the total privacy of labels labels under
// simple, general and optimal composition with the slack of the
// accounting (accountant.Totals), the compositions of the mechanism's
// curves at the total δ of the total to publish (accountant.ComposeRun)
// and, when the mechanism knows points of its privacy profile that
// compose more tightly, optimal composition at the best of them
// (accountant.ProfileTotal); each the smaller of the composition and the
// teachers' cap, judged against the budget (accountant.Total.Capped);
// none for no labels.
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
		if delta := a.Account(labels).TotalDelta(); delta > 0 {
			if all, err := accountant.ComposeRun(s, labels, delta, deltaPrime, accountant.ImprovedConversion); err == nil {
				out = all
			}
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
