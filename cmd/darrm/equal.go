package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/plan"
	"github.com/darrm/darrm/votefile"
)

// totalFlags ask a comparison for one at equal totals: the total budget
// (darrm plan's --budget-eps and --budget-delta) and the composition that
// holds each mechanism's release to it.
type totalFlags struct {
	compositionFlags
	BudgetEps   float64 `flag:"budget-eps"`
	BudgetDelta float64 `flag:"budget-delta"`
}

// given says whether a comparison at equal totals was asked for, and
// checks that its flags are complete: the budget, and the numbers of
// queries of the flag queries.
func (t *totalFlags) given(cmd *cobra.Command, queries string, counts []int) (bool, error) {
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
	for _, q := range counts {
		if q < 1 {
			return false, cli.Usagef("--%s %d: must be >= 1", queries, q)
		}
	}
	if err := plan.CheckBudget(t.budget()); err != nil {
		return false, cli.AsUsage(flagError(err, nil))
	}
	return true, t.checkDeltaPrime()
}

// budget returns the total budget.
func (t *totalFlags) budget() accountant.Guarantee {
	return accountant.Guarantee{Eps: t.BudgetEps, Delta: t.BudgetDelta}
}

// heading returns the heading of the comparison over queries queries.
func (t *totalFlags) heading(queries int) report.EqualTotals {
	return report.EqualTotals{BudgetEps: t.BudgetEps, BudgetDelta: t.BudgetDelta, Queries: queries, Composition: t.Method.String()}
}

// planGamma returns the noise function of a plan's mechanism for each
// problem the plan tries: gamma_opt from the cache, solved on demand
// unless --no-solve (optimal.Source). A --gamma file is refused: it is
// for one problem, and a plan tries many.
func (s mechanisms) planGamma(cmd *cobra.Command) (plan.GammaSource, error) {
	if s.table != nil {
		return nil, cli.Usagef("--gamma: a plan solves gamma_opt for each value it tries; leave --gamma out")
	}
	src := optimal.Source{Prior: s.Prior, CacheOnly: s.NoSolve, Options: optimal.Options{Workers: s.Workers}}
	var err error
	if src.Cache, err = s.Cache.open(); err != nil {
		return nil, err
	}
	return sourceGamma(cmd, src, s.sourceError), nil
}

// sourceGamma returns the plan's gamma source of src, whose errors
// explain says in terms of the flags.
func sourceGamma(cmd *cobra.Command, src optimal.Source, explain func(error) error) plan.GammaSource {
	return func(ctx context.Context, p constraints.Problem) (gamma.Gamma, error) {
		l, err := loadGamma(ctx, cmd, src, p)
		if err != nil {
			return nil, explain(err)
		}
		return l.Gamma, nil
	}
}

// compared is a noise function of solve's comparison with the mechanism
// that samples it: the request a plan chooses the mechanism's parameter
// in, and the noise function at a plan's parameters.
type compared struct {
	name  string
	r     plan.Request
	gamma func(ctx context.Context, pl plan.Plan) (gamma.Gamma, error)
}

// equalTotals compares gamma_opt of p and its baselines at equal totals
// over each of f.Queries queries: each noise function sampled by the
// mechanism that releases with it, planned for the total (plan.EqualTotals),
// and measured at its plan's parameters as solve's comparison measures it.
func (f *solveFlags) equalTotals(cmd *cobra.Command, p gamma.Resolved, src optimal.Source, coeffs []float64, actuals []gamma.Actual) ([]report.SolveEqual, error) {
	ctx := cmd.Context()
	cs := f.comparedMechanisms(cmd, p, sourceGamma(cmd, src, func(err error) error { return err }))
	rs := make([]plan.Request, len(cs))
	for i, c := range cs {
		rs[i] = c.r
	}
	var out []report.SolveEqual
	for _, q := range f.Queries {
		eqs, err := plan.EqualTotals(ctx, rs, f.Totals.budget(), q)
		if err != nil {
			return nil, cli.AsUsage(flagError(err, nil))
		}
		rows := make([]report.SolveEqualRow, len(cs))
		for i, e := range eqs {
			rows[i] = report.SolveEqualRow{Name: cs[i].name, Planned: report.NewPlanned(rs[i].Mechanism.Name, e)}
			if e.NoFit != nil {
				continue
			}
			g, err := cs[i].gamma(ctx, e.Plan)
			if err != nil {
				return nil, err
			}
			if rows[i].Errors, err = gamma.ExpectedErrors(g, actuals); err != nil {
				return nil, err
			}
			rows[i].Utility, rows[i].SurrogateError = gamma.Utility(g, coeffs), gamma.SurrogateError(g, coeffs)
			for _, a := range actuals {
				if !a.Fixed() {
					continue
				}
				pi, err := a.Sample(p.K, nil)
				if err != nil {
					return nil, err
				}
				one, err := gamma.LabelOne(g, pi)
				if err != nil {
					return nil, err
				}
				rows[i].Accuracy = append(rows[i].Accuracy, report.Accuracy{Actual: a.String(), Value: one})
			}
		}
		out = append(out, report.NewSolveEqual(f.Totals.heading(q), rows))
	}
	return out, nil
}

// comparedMechanisms returns the noise functions solve compares for p,
// each with the mechanism that releases with it: in the one-vote relation
// plan.OneVote's (gamma_opt, GNMax, whose label is scored as with
// continuous noise of the same sigma2, and RR); in the private-teachers
// relation gamma_opt (darrm), and
// the mechanisms of the baselines (subsample, dsub when Delta = delta = 0,
// rr), each planned by its allowance m.
func (f *solveFlags) comparedMechanisms(cmd *cobra.Command, p gamma.Resolved, opt plan.GammaSource) []compared {
	base := plan.Request{Classes: 2, Method: f.Totals.Method, DeltaPrime: f.Totals.DeltaPrime,
		Options: ensemble.Options{Workers: f.Workers}, Gamma: opt}
	sampled := func(ctx context.Context, pl plan.Plan) (gamma.Gamma, error) {
		agg, _, err := plan.Aggregator(ctx, pl.Request)
		if err != nil {
			return nil, err
		}
		return agg.(ensemble.Aggregator).Gamma(), nil
	}
	with := func(name votefile.MechanismName, in votefile.Input, q constraints.Problem) plan.Request {
		r := base
		r.Mechanism = ensemble.Mechanism{Name: name, Input: in, RRComposition: f.RRComp.For(q.Delta), RRDeltaPrime: f.RRDelta}
		r.Problem = q
		return r
	}
	if p.Relation == accountant.OneVote {
		// GNMax is not pure DP: its per-query delta is --delta, else the
		// budget's, as darrm plan's without --delta.
		delta := p.TargetDelta
		if delta == 0 {
			delta = f.Totals.BudgetDelta
		}
		base.Budget = f.Totals.budget()
		rs := plan.OneVote(base, p.K, delta)
		return []compared{
			{"opt", rs[0], sampled},
			{"gnmax", rs[1], func(_ context.Context, pl plan.Plan) (gamma.Gamma, error) { return gamma.GNMax(p.K, pl.Value) }},
			{"rr", rs[2], sampled},
		}
	}
	teachers := func(name votefile.MechanismName) plan.Request {
		r := with(name, votefile.TwoClass, p.Problem)
		r.DefaultDelta = !cmd.Flags().Changed("delta")
		return r
	}
	cs := []compared{{"opt", teachers(votefile.DaRRM), sampled}, {"sub", teachers(votefile.Subsample), sampled}}
	if p.Delta == 0 && p.TargetDelta == 0 {
		cs = append(cs, compared{"dsub", teachers(votefile.DSub), sampled})
	}
	return append(cs, compared{"rr", teachers(votefile.RR), sampled})
}

// equalTotals compares the mechanisms names at equal totals over each of
// f.BudgetQueries queries: each planned for the total (plan.EqualTotals)
// from the problem p of the flags, as darrm plan plans it, and simulated
// at its plan's parameters on the same teachers and seed.
func (f *simulateFlags) equalTotals(cmd *cobra.Command, p gamma.Resolved, names []votefile.MechanismName, mech mechanisms, teachers []float64) ([]report.SimEqual, error) {
	ctx := cmd.Context()
	rs := make([]plan.Request, len(names))
	relations := make([]accountant.Relation, len(names))
	for i, n := range names {
		r := plan.Request{
			Mechanism: ensemble.Mechanism{Name: n, Input: votefile.TwoClass, RRComposition: mech.RRComp.For(p.Delta), RRDeltaPrime: mech.RRDelta, GNMaxSearch: mech.GNMaxSearch},
			Problem:   p.Problem, DefaultDelta: !cmd.Flags().Changed("delta"), Classes: 2,
			Method: f.Totals.Method, DeltaPrime: f.Totals.DeltaPrime, Options: ensemble.Options{Workers: f.Workers},
		}
		info, err := ensemble.LookupMechanism(n, votefile.TwoClass)
		if err != nil {
			return nil, cli.Usagef("--mechanisms %v", err)
		}
		relations[i] = info.Relation
		if n == votefile.DaRRMOneVote {
			// Its target is the release's own (eps, delta): pure unless
			// --delta says otherwise, as in darrm plan.
			delta := 0.0
			if cmd.Flags().Changed("delta") {
				delta = p.TargetDelta
			}
			r.Problem, r.DefaultDelta = constraints.NewOneVote(p.K, p.M*p.Eps, delta), false
		}
		if info.Gamma {
			if r.Gamma, err = mech.planGamma(cmd); err != nil {
				return nil, err
			}
		}
		rs[i] = r
	}
	var out []report.SimEqual
	for _, q := range f.BudgetQueries {
		eqs, err := plan.EqualTotals(ctx, rs, f.Totals.budget(), q)
		if err != nil {
			return nil, cli.AsUsage(flagError(err, nil))
		}
		rows := make([]report.SimEqualRow, len(eqs))
		var aggs []ensemble.Aggregator
		var at []int // the row of each aggregator
		for i, e := range eqs {
			rows[i] = report.SimEqualRow{Planned: report.NewPlanned(names[i], e), Relation: relations[i]}
			if e.NoFit != nil {
				continue
			}
			agg, label, err := plan.Aggregator(ctx, e.Plan.Request)
			if err != nil {
				return nil, err
			}
			rows[i].Label = label
			aggs, at = append(aggs, agg.(ensemble.Aggregator)), append(at, i)
		}
		if len(aggs) > 0 {
			res, err := ensemble.Simulate(ctx, aggs, teachers, f.Queries, f.Seed)
			if err != nil {
				return nil, err
			}
			for j, s := range res {
				r := &rows[at[j]]
				r.Agree, r.Agreement, r.Lo, r.Hi, r.Exact = s.Agree, s.Rate, s.Lo, s.Hi, s.Exact
				if r.LabelOne, err = gamma.LabelOne(aggs[j].Gamma(), teachers); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, report.NewSimEqual(f.Totals.heading(q), rows))
	}
	return out, nil
}
