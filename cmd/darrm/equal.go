package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/experiments/transfer"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/plan"
)

// totalFlags ask a comparison for one at equal totals: the total budget
// (darrm plan's --budget-eps and --budget-delta). Each mechanism's total
// is its total to publish, the least eps at the budget's delta of every
// composition valid for the run (accountant.Account.Publish), as darrm
// plan's is: --composition is hidden (setup.IgnoredComposition) and changes
// nothing, which a note says when it is given (given).
type totalFlags struct {
	setup.CompositionFlags
	BudgetEps   float64 `flag:"budget-eps"`
	BudgetDelta float64 `flag:"budget-delta"`
}

// given says whether a comparison at equal totals was asked for, and
// checks that its flags are complete: the budget, and the numbers of
// queries of the flag queries (each checked as every count of queries is,
// setup.CheckFlagRules). It notes on standard error that
// --composition, if given, changes nothing (setup.Ignored.Note).
func (t *totalFlags) given(cmd *cobra.Command, queries string, counts []int) (bool, error) {
	setup.IgnoredComposition.Note(cmd)
	fs := cmd.Flags()
	if !fs.Changed("budget-eps") && !fs.Changed("budget-delta") {
		return false, nil
	}
	if err := cli.RequireFlags(cmd, "budget-eps", "budget-delta"); err != nil {
		return false, err
	}
	if len(counts) == 0 {
		return false, cli.Usagef("--budget-eps compares at equal totals over a number of queries: give --%s", queries)
	}
	err := t.budget().Validate()
	if err == nil {
		err = t.Composition().Validate()
	}
	return true, cli.AsUsage(setup.Flagged(err, setup.BudgetFlags))
}

// ignoredDeltaPrime is --delta-prime of a comparison whose every total is
// at the budget's delta, with no teachers' cap (simulate, solve): the
// slack of no total it prints.
var ignoredDeltaPrime = setup.Ignored{Flag: "delta-prime", Why: "every total compared is at the budget's delta, the least eps of every composition valid for the run, and no teachers' cap is compared"}

// budget returns the total budget.
func (t *totalFlags) budget() accountant.Budget {
	return accountant.Budget{Guarantee: accountant.Guarantee{Eps: t.BudgetEps, Delta: t.BudgetDelta}}
}

// heading returns the heading of the comparison over queries queries.
func (t *totalFlags) heading(queries int) report.EqualTotals {
	return report.EqualTotals{BudgetEps: t.BudgetEps, BudgetDelta: t.BudgetDelta, Queries: queries}
}

// equalTotals compares gamma_opt of p and its baselines at equal totals
// over each of f.Queries queries (transfer.Candidates, transfer.CompareAtTotals).
func (f *solveFlags) equalTotals(cmd *cobra.Command, p resolve.Resolved, src optimal.Source, coeffs []float64, actuals []gamma.Actual) ([]report.SolveEqual, error) {
	lines := cliout.NewStages(cmd.ErrOrStderr())
	defer lines.Done()
	setup.PlanGamma(cmd, &src, lines)
	budget := f.Totals.budget()
	base := plan.Request{ReleaseSpec: ensemble.ReleaseSpec{Budget: &budget, DeltaPrime: f.Totals.DeltaPrime, Certificate: ensemble.Options{Workers: f.Workers, Memo: setup.Memo(cmd)}}}
	cs := transfer.Candidates(base, p.Problem, cmd.Flags().Changed("delta"), src, setup.RRComposition(f.RRComp, f.RRDelta, p.Delta))
	var out []report.SolveEqual
	for _, q := range f.Queries {
		compared, err := transfer.CompareAtTotals(cmd.Context(), cs, f.Totals.budget(), q, coeffs, actuals)
		if err != nil {
			return nil, cli.AsUsage(setup.Flagged(err, setup.BudgetFlags))
		}
		out = append(out, report.SolveEqualOf(f.Totals.heading(q), compared))
	}
	return out, nil
}

// equalTotals compares the mechanisms of mech at equal totals over each of
// f.BudgetQueries queries: each planned from the problem p of the flags,
// as darrm plan plans it, and simulated on the same teachers and seed
// (simulateAtTotals).
func (f *simulateFlags) equalTotals(cmd *cobra.Command, p resolve.Resolved, infos []setup.MechanismInfo, teachers []float64) ([]report.SimEqual, error) {
	budget := f.Totals.budget()
	base := plan.Request{ReleaseSpec: ensemble.ReleaseSpec{Budget: &budget, DeltaPrime: f.Totals.DeltaPrime, Certificate: ensemble.Options{Workers: f.Workers, Memo: setup.Memo(cmd)},
		Teachers: &accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}}, K: p.K, Classes: 2}
	lines := cliout.NewStages(cmd.ErrOrStderr())
	defer lines.Done()
	rs := make([]plan.Request, len(infos))
	for i, info := range infos {
		var src optimal.Source
		if info.Uses.Gamma {
			var err error
			if src, err = f.PlanSource(cmd, lines); err != nil {
				return nil, err
			}
		}
		rs[i] = base
		// The per-query delta given, else the thesis' default for each m
		// the plan tries (darrm-one-vote's: 0, pure).
		values := f.Settings(p.Problem, src)
		if !cmd.Flags().Changed("delta") {
			delete(values, "delta")
		}
		rs[i].Mechanism = info.With(cmd.Flags(), values)
	}
	var out []report.SimEqual
	for _, q := range f.BudgetQueries {
		rows, err := simulateAtTotals(cmd.Context(), rs, f.Totals.budget(), q, teachers, f.Queries, f.Seed)
		if errors.As(err, new(*optimal.SourceError)) {
			return nil, setup.GammaError(err, "")
		}
		if err != nil {
			return nil, cli.AsUsage(setup.Flagged(err, setup.BudgetFlags))
		}
		out = append(out, report.NewSimEqual(f.Totals.heading(q), rows))
	}
	return out, nil
}

// simulateAtTotals plans each request for budget over queries
// (plan.EqualTotals) and simulates each that fits at its plan's
// parameters, on the same teachers' probabilities p and seed
// (ensemble.Simulate, n queries): each mechanism's row of the comparison,
// with its neighbouring relation, its plan or why nothing fits, and, when
// it fits, what its aggregator is in words, its simulation and Pr[label =
// 1] at p (gamma.LabelOne).
func simulateAtTotals(ctx context.Context, rs []plan.Request, budget accountant.Budget, queries int, p []float64, n int, seed uint64) ([]report.SimEqualRow, error) {
	eqs, err := plan.EqualTotals(ctx, rs, budget, queries)
	if err != nil {
		return nil, err
	}
	out := make([]report.SimEqualRow, len(eqs))
	var aggs []ensemble.Aggregator
	var at []int // the row of each aggregator
	for i, e := range eqs {
		m := rs[i].Mechanism
		out[i] = report.SimEqualRow{Planned: report.NewPlanned(e), Relation: m.Relation()}
		if e.NoFit != nil {
			continue
		}
		agg, label, err := e.Plan.Request.Aggregator(ctx)
		if err != nil {
			return nil, err
		}
		out[i].Label = label
		aggs, at = append(aggs, agg.(ensemble.Aggregator)), append(at, i)
	}
	if len(aggs) == 0 {
		return out, nil
	}
	res, err := ensemble.Simulate(ctx, aggs, p, n, seed)
	if err != nil {
		return nil, err
	}
	for j, s := range res {
		r := &out[at[j]]
		r.Agree, r.Agreement, r.Lo, r.Hi, r.Exact = s.Agree, s.Rate, s.Lo, s.Hi, s.Exact
		if r.LabelOne, err = aggs[j].Gamma().LabelOne(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}
