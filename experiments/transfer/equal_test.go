package transfer

import (
	"context"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/plan"
)

// TestRunEqual: at equal totals every mechanism's parameter is the one
// plan.Make chooses for the budget over Q queries, which the
// release's own count (plan.Make without Queries) fits within the budget; the labels'
// accuracy is a mean over the redraws, in [0, 1], with a spread.
func TestRunEqual(t *testing.T) {
	ctx := context.Background()
	b := syntheticImages()
	tt := trainSynthetic(t, accountant.Disjoint)
	// gamma_opt solved without a cache: in the one-vote relation the
	// greatest private gamma (gamma.OneVoteOpt).
	var opt optimal.Source
	p := EqualParams{Budget: accountant.Budget{Guarantee: accountant.Guarantee{Eps: 4, Delta: 1e-5}},
		Delta: 1e-5, Queries: []int{10, 100}, Redraws: 3, Seed: 1}
	if testing.Short() {
		// Under -short at a smaller size: one Q, 3 (its searches still
		// compose runs of 2 and 3 labels by a transform, 18 times).
		p.Queries = []int{3}
	}
	res, err := RunEqual(ctx, b.Test, tt, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(p.Queries)*len(EqualMechanisms) {
		t.Fatalf("%d results, want %d", len(res), len(p.Queries)*len(EqualMechanisms))
	}
	base := plan.Request{ReleaseSpec: ensemble.ReleaseSpec{Budget: &p.Budget}}
	for i, r := range res {
		q := p.Queries[i/len(EqualMechanisms)]
		if r.Mechanism != EqualMechanisms[i%len(EqualMechanisms)] || r.Queries != q || r.Plan.NoFit != nil {
			t.Fatalf("result %d: %s at Q %d (no fit %v), want %s at %d", i, r.Mechanism, r.Queries, r.Plan.NoFit, EqualMechanisms[i%len(EqualMechanisms)], q)
		}
		r1 := oneVoteRequests(base, K, p.Delta, opt)[i%len(EqualMechanisms)]
		r1.Queries = q
		want, err := plan.Make(ctx, r1)
		if err != nil {
			t.Fatal(err)
		}
		if r.Plan.Plan.Value != want.Value {
			t.Errorf("Q %d %s: %s = %v, plan.Make %v", q, r.Mechanism, r.Plan.Plan.Parameter, r.Plan.Plan.Value, want.Value)
		}
		counted := r.Plan.Plan.Request
		counted.Queries = 0 // a count at the planned parameters
		pc, err := plan.Make(ctx, counted)
		if err != nil {
			t.Fatal(err)
		}
		c := pc.Count
		if c.Run < q || !c.Total.Guarantee.Within(p.Budget.Guarantee) {
			t.Errorf("Q %d %s: %d queries fit, total %v: want >= %d within %v", q, r.Mechanism, c.Run, c.Total.Guarantee, q, p.Budget)
		}
		if !(r.AccuracyMean >= 0 && r.AccuracyMean <= 1 && r.AccuracyStd >= 0) {
			t.Errorf("Q %d %s: accuracy %v ± %v", q, r.Mechanism, r.AccuracyMean, r.AccuracyStd)
		}
	}
	if _, err := RunEqual(ctx, b.Test, tt, EqualParams{Budget: p.Budget, Delta: 1e-5, Queries: []int{121}, Redraws: 1}, opt); err == nil {
		t.Error("121 queries of 120 public images: no error")
	}
}
