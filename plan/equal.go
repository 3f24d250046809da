package plan

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
)

// EqualTotals plans each request for the same total budget over the same
// number of queries: each mechanism's per-query parameter by Parameters
// (the plan darrm plan makes), so that every plan's total over queries,
// by the accounting that holds its release to the budget, is within it. A
// comparison of the plans' utilities is then one at equal totals: at equal
// per-query guarantees a one-bit pure-DP release composes like randomized
// response and Gaussian noise like zCDP, and their totals over 100 queries
// can differ eightfold (DESIGN.md, "Compare at equal totals"). Each
// request's own Budget is replaced by budget.
func EqualTotals(ctx context.Context, rs []Request, budget accountant.Guarantee, queries int) ([]Plan, error) {
	out := make([]Plan, len(rs))
	for i, r := range rs {
		r.Budget = budget
		pl, err := Parameters(ctx, r, queries)
		if err != nil {
			return nil, fmt.Errorf("%s at a total of %v over %d queries: %w", r.Mechanism.Name, budget, queries, err)
		}
		out[i] = pl
	}
	return out, nil
}
