package pate_test

import (
	"context"
	"fmt"
	"log"

	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/pate"
	"github.com/darrm/darrm/votefile"
)

// PATE's account of GNMax on the class counts of 250 teachers that do
// not share data (the one-vote relation), held in memory: its Rényi
// bounds, data-independent and data-dependent on these votes (which
// agree strongly), and the total to publish of a release of the 30
// queries, the least of every valid composition of GNMax's per-query
// guarantee (AccountResult.Publish; no smooth-sensitivity draw is made).
func ExampleAccount() {
	counts := make([][]int, 30)
	for i := range counts {
		counts[i] = []int{200 - 3*i, 50 + 3*i}
	}
	meta := &votefile.Meta{Ensemble: "pate-example", K: 250, Classes: 2, Layout: votefile.LayoutCounts,
		Relation: "one-vote", Kind: "fixed", Partition: "keyed-hash",
		Teachers: []votefile.TeacherGroup{{Count: 250, Source: votefile.TeacherSource{Method: "none"}}}}
	in, err := votefile.ReadRows(counts, meta)
	if err != nil {
		log.Fatal(err)
	}
	res, err := pate.Account(context.Background(), in, pate.AccountOptions{
		Mechanism: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40},
		Delta:     1e-5,
	})
	if err != nil {
		log.Fatal(err)
	}
	r := res.Result
	fmt.Printf("%d queries: data-independent eps %.3f, data-dependent eps %.3f at delta 1e-5\n", r.Queries, r.Independent.Eps, r.Dependent.Eps)
	total, err := res.Publish()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("to publish: %v by %s\n", total.Guarantee, total.Name())
	// Output:
	// 30 queries: data-independent eps 0.948, data-dependent eps 0.876 at delta 1e-5
	// to publish: (0.700373, 1e-05)-DP by exact
}
