package ensemble

import (
	"context"
	"errors"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// Accounting is the privacy of a release, computed for every mechanism
// alike: the per-query guarantee, the teacher-level cap on every total
// (or why there is none), the slack of the totals, the budget, if any,
// that limits the queries released, and the total δ at which a release
// without a budget states its total (nil: accountant.Account's default).
type Accounting struct {
	PerQuery    Privacy
	Cap         *accountant.Cap
	CapNote     string
	Composition accountant.Composition
	// Budget is the total budget that limits the release (nil: none).
	// MaxQueries is the number of queries it allows:
	// accountant.Unlimited when the teachers' cap is within it,
	// accountant.CountLimit when more than that fit. Allows is the total
	// to publish of that many, which says by which result they fit (the
	// cap, when MaxQueries is Unlimited); zero when none fits.
	Budget     *accountant.Budget
	MaxQueries int
	Allows     accountant.Total
	TotalDelta *float64
}

// NewAccounting returns the accounting of a release of per-query
// guarantee priv from the ensemble that b states (its cap, provenance.Binding.Cap),
// with the slack of composition c, under budget (nil: none). The queries'
// parameters are fixed before the release, so the budget allows the
// queries whose total to publish is within it
// (accountant.Account.MaxSteps: the least ε at the budget's δ of every
// composition valid for them). The budget's search ends with ctx's error
// once ctx is done.
func NewAccounting(ctx context.Context, priv Privacy, b provenance.Binding, c accountant.Composition, budget *accountant.Guarantee) (Accounting, error) {
	a := Accounting{PerQuery: priv, Composition: c}
	if err := c.Validate(); err != nil {
		return a, err
	}
	var err error
	if a.Cap, a.CapNote, err = b.Cap(c.DeltaPrime); err != nil {
		return a, fmt.Errorf("teachers' cap: %w", err)
	}
	if budget != nil {
		a.Budget = &accountant.Budget{Guarantee: *budget, Composition: c}
		a.MaxQueries, a.Allows, err = a.Account(0).MaxSteps(ctx)
		if errors.As(err, new(*accountant.BeyondCountError)) {
			// No run reaches the count: the release is held to it all the
			// same, a limit it never meets.
			a.MaxQueries = accountant.CountLimit
			a.Allows, err = a.Publish(accountant.CountLimit)
		}
		if err != nil {
			return a, fmt.Errorf("budget: %w", err)
		}
		a.Allows = a.inexact(a.Allows)
	}
	return a, nil
}

// inexact returns t, saying that the exact composition was out of reach
// when the per-query description lacks the curve its mechanism has
// (Privacy.CurveMissing) and t is not the teachers' cap.
func (a Accounting) inexact(t accountant.Total) accountant.Total {
	if m := a.PerQuery.CurveMissing; m != "" && t.Inexact == "" && t.Cap == nil && t.Err == nil && t.Method != accountant.Exact {
		t.Inexact = "exact composition out of reach: " + m
	}
	return t
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
// (accountant.Account.Publish), saying when the exact composition was out
// of reach.
func (a Accounting) Publish(labels int) (accountant.Total, error) {
	t, err := a.Account(labels).Publish()
	return a.inexact(t), err
}

// Limit returns the number of queries to release: the budget's, or -1 for
// all of them.
func (a Accounting) Limit() int {
	if a.Budget == nil || a.MaxQueries == accountant.Unlimited {
		return -1
	}
	return a.MaxQueries
}

// Totals returns, as analysis, the totals of labels labels that hold at
// once, each beside the teachers' cap against the budget
// (accountant.Account.Totals); none for no labels.
func (a Accounting) Totals(labels int) []accountant.Total {
	if labels == 0 {
		return nil
	}
	out, err := a.Account(labels).Totals()
	if err != nil {
		return nil
	}
	return out
}
