package transfer

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/plan"
)

// EqualParams is the protocol of a comparison at equal totals: one total
// budget over each number of queries Q, held by its composition.
type EqualParams struct {
	// Budget is the total budget, DeltaPrime the slack of the analysis
	// totals (0: accountant.DefaultDeltaPrime).
	Budget     accountant.Budget
	DeltaPrime float64
	// Delta is GNMax's per-query delta (> 0); darrm-one-vote and RR are
	// pure.
	Delta   float64
	Queries []int
	Redraws int
	Seed    uint64
	// Memo keeps the plans and compositions for the calls that ask again
	// (accountant.Memo); nil: one of the run's own.
	Memo *accountant.Memo
}

// EqualMechanisms are the mechanisms compared at equal totals, in the
// order of Candidates in the one-vote relation (oneVoteRequests): all
// on the non-private teachers, whose totals have no cap.
var EqualMechanisms = []string{"darrm-one-vote", "gnmax", "rr"}

// EqualResult is one mechanism at one Q of a comparison at equal totals:
// its plan for the total (or why nothing fits) and, when it fits, the
// accuracy of its labels at the plan's parameters.
type EqualResult struct {
	Mechanism    string
	Queries      int
	Plan         plan.Equal
	AccuracyMean float64
	AccuracyStd  float64
}

// oneVoteRequests returns the requests of darrm solve --compare in the
// one-vote relation for k teachers on two classes (Candidates), each
// a copy of base, GNMax's at the per-query delta (> 0).
func oneVoteRequests(base plan.Request, k int, delta float64, src ensemble.GammaSource) []plan.Request {
	cs := Candidates(base, constraints.NewOneVote(k, base.Budget.Eps, delta), true, src, accountant.Composition{})
	rs := make([]plan.Request, len(cs))
	for i, c := range cs {
		rs[i] = c.Request
	}
	return rs
}

// RunEqual compares the mechanisms of oneVoteRequests at equal totals: for
// each Q, each planned for the total budget over Q queries
// (plan.EqualTotals, the plan darrm plan makes; darrm-one-vote's gamma_opt
// from src), its labels drawn, at the plan's parameters, for the same
// Redraws sets of Q public images as Run draws, from the non-private
// teachers' votes, and scored against the true labels.
func RunEqual(ctx context.Context, test *datasets.Dataset, t *Teachers, p EqualParams, src ensemble.GammaSource) ([]EqualResult, error) {
	if err := (Params{M: 1, Queries: p.Queries, Redraws: p.Redraws}).Validate(test.Len()); err != nil {
		return nil, fmt.Errorf("transfer: %w", err)
	}
	k := t.NonPrivate.Config.K
	// Every Q plans, builds and counts the same mechanisms again: one memo
	// for the run at least.
	memo := p.Memo
	if memo == nil {
		memo = new(accountant.Memo)
	}
	base := plan.Request{ReleaseSpec: ensemble.ReleaseSpec{Budget: &p.Budget, DeltaPrime: p.DeltaPrime, Certificate: ensemble.Options{Memo: memo}}}
	rs := oneVoteRequests(base, k, p.Delta, src)
	queries := queriesOf(t.NonPrivate.Votes(test))
	var out []EqualResult
	for _, q := range p.Queries {
		eqs, err := plan.EqualTotals(ctx, rs, p.Budget, q)
		if err != nil {
			return nil, fmt.Errorf("transfer: %w", err)
		}
		for i, e := range eqs {
			res := EqualResult{Mechanism: EqualMechanisms[i], Queries: q, Plan: e}
			if e.NoFit == nil {
				agg, _, err := e.Plan.Request.Aggregator(ctx)
				if err != nil {
					return nil, fmt.Errorf("transfer: %s: %w", res.Mechanism, err)
				}
				// After Run's mechanisms: each its own noise.
				if res.AccuracyMean, res.AccuracyStd, err = measure(ctx, test, queries, q, p.Redraws, p.Seed, len(Mechanisms)+i, agg.Answer); err != nil {
					return nil, err
				}
			}
			out = append(out, res)
		}
	}
	return out, nil
}
