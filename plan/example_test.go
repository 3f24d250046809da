package plan_test

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noisymax"
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

// Which of GNMax and LNMax labels more of 100 queries at a total of
// (2, 1e-5), on proxy votes of 250 teachers over 10 classes (votes that
// do not depend on the private data: here 60 made-up count vectors; from
// a file, ReadProxy): each mechanism's noise is planned for the same
// total, and its labels scored on the proxy votes.
func ExampleCompare() {
	p := plan.Proxy{K: 250, Classes: 10, Name: "made-up proxy votes"}
	for i := range 60 {
		c := make([]int, 10)
		top := 90 + 2*i
		c[i%10], c[(i+1)%10], c[(i+2)%10] = top, (250-top)/2, 250-top-(250-top)/2
		p.Counts = append(p.Counts, c)
	}
	base := plan.Request{
		ReleaseSpec: ensemble.ReleaseSpec{Budget: &accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}},
		K:           250, Classes: 10, Queries: 100, Proxy: &p,
	}
	gnmax := ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Noise: noisymax.DiscreteNoise}
	c, err := plan.Compare(context.Background(), base, []ensemble.Mechanism{gnmax, ensemble.LNMax{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range c.Plans {
		fmt.Printf("%s: %s %.6g, %.1f correct of 100\n", e.Mechanism, e.Plan.Flag, e.Plan.Value, e.Plan.Utility.Correct)
	}
	fmt.Println("best:", c.Plans[c.Best].Mechanism)
	// Output:
	// gnmax: sigma2 28.21, 89.6 correct of 100
	// lnmax: laplace-scale 28.0029, 82.9 correct of 100
	// best: gnmax
}
