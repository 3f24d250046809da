package plan

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// Equal is one mechanism of a comparison at equal totals (EqualTotals,
// Compare): its name, its plan, or why no value of its parameter fits.
type Equal struct {
	Mechanism provenance.MechanismName
	Plan      Plan
	// NoFit says why not even the least generous value of the parameter
	// fits the queries in the budget (a parameter error naming
	// budget-eps and the smallest budget that fits), nil when Plan is set.
	NoFit error
}

// EqualTotals plans each request for the same total budget over the same
// number of queries: each mechanism's per-query parameter by parameters
// (the plan darrm plan makes), so that every plan's total over queries,
// by the accounting that holds its release to the budget, is within it. A
// comparison of the plans' utilities is then one at equal totals: at equal
// per-query guarantees a one-bit pure-DP release composes like randomized
// response and Gaussian noise like zCDP, and their totals over 100 queries
// can differ eightfold (docs/transfer.md, "Which bound wins": 7.80 for
// DaRRM against 0.985 for GNMax by exact composition). Each
// request's own Budget, its total and composition, is replaced by
// budget. A mechanism that nothing
// fits is reported in its Equal; any other error ends the comparison.
func EqualTotals(ctx context.Context, rs []Request, budget accountant.Budget, queries int) ([]Equal, error) {
	// A bad budget is an error of the comparison, not a budget that
	// nothing fits.
	if err := budget.Validate(); err != nil {
		return nil, err
	}
	out := make([]Equal, len(rs))
	memo := new(accountant.Memo) // of the requests that bring none
	for i, r := range rs {
		r.Budget = &budget
		if r.Certificate.Memo == nil {
			r.Certificate.Memo = memo
		}
		if r.Mechanism == nil {
			return nil, fmt.Errorf("request %d of %d: %w", i+1, len(rs), errNoMechanism)
		}
		out[i].Mechanism = r.Mechanism.Name()
		pl, err := parameters(ctx, r, queries)
		switch {
		case fitsNot(err):
			out[i].NoFit = err
		case err != nil:
			return nil, fmt.Errorf("%s at a total of %v over %d queries: %w", r.Mechanism.Name(), budget, queries, err)
		default:
			out[i].Plan = pl
		}
	}
	return out, nil
}
