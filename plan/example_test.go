package plan_test

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/plan"
)

// How many Confident-GNMax queries (T = 200, σ1 = 150, σ2 = 40, discrete
// noise, 250 teachers, 10 classes) a budget of (2, 1e-5) buys: in one run
// held to it, as darrm aggregate --budget-eps 2 --budget-delta 1e-5 is, and
// in a run charged to a new ledger of that budget.
func ExampleMake() {
	r := plan.Request{
		ReleaseSpec: ensemble.ReleaseSpec{
			Mechanism: ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}},
			Budget:    &accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}},
		},
		K: 250, Classes: 10,
	}
	pl, err := plan.Make(context.Background(), r) // no Queries: a count
	if err != nil {
		fmt.Println(err)
		return
	}
	c := pl.Count
	fmt.Printf("one run: %d queries, eps %.4f by %v\n", c.Run, c.Total.Guarantee.Eps, c.Total.Method)
	fmt.Printf("a new ledger: %d queries by the %v\n", c.Ledger, c.Filter)
	// Output:
	// one run: 194 queries, eps 1.9981 by exact
	// a new ledger: 194 queries by the exact
}
