package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/plan"
)

// planPerDraw prints the plan of a mechanism charged per draw to a
// Gaussian-DP filter (plan.OnProxy), chosen on the proxy votes of
// --votes for the budget, at the least agreement --min-agreement with
// their plurality, and the aggregate line that releases with it: its
// settings and budget, never a number chosen from the private votes.
func (f *planFlags) planPerDraw(cmd *cobra.Command, info setup.MechanismInfo) error {
	fs := cmd.Flags()
	for _, n := range []string{"queries", "for", "share", "analyst", "filter", "min-precision", "delta"} {
		if fs.Changed(n) {
			return cli.Usagef("--%s: %s is planned on --votes for its Gaussian-DP filter's budget alone, which fixes no number of queries: leave it out", n, info.Name)
		}
	}
	for _, n := range info.Flags() {
		if fs.Changed(n) {
			return cli.Usagef("--%s is what the plan of %s chooses: leave it out", n, info.Name)
		}
	}
	if fs.Changed("accounting") && f.Accounting != setup.FilterAccounting {
		return cli.Usagef("--accounting %s with --mechanism %s: it is charged per draw to a Gaussian-DP filter (--accounting %s, its default)", f.Accounting, info.Name, setup.FilterAccounting)
	}
	if err := f.teachers(fs, info.Relation); err != nil {
		return err
	}
	proxy, tuning, err := f.proxy(cmd, info.Name)
	if err != nil {
		return err
	}
	switch {
	case !f.proxyHeader && !fs.Changed("partition"):
		return cli.Usagef("--votes %s has no metadata header, so the aggregate line the plan prints must state the data split that the release asserts, as aggregate takes it: "+
			"give --kind fixed --partition keyed-hash (teachers on keyed-hash shares: one record changes one vote), or the votes' header in a sidecar (darrm sidecar)", cli.InputName(f.Votes))
	case fs.Changed("K") && proxy.K != f.K:
		return cli.Usagef("--votes %s: K = %d, but --K %d", cli.InputName(f.Votes), proxy.K, f.K)
	case fs.Changed("classes") && proxy.Classes != f.Classes:
		return cli.Usagef("--votes %s: %d classes, but --classes %d", cli.InputName(f.Votes), proxy.Classes, f.Classes)
	}
	// The library reads 0 as its default (the flag's, stated in its
	// help): 0 given is out of range.
	if fs.Changed("min-agreement") && !(f.MinAgreement > 0 && f.MinAgreement < 1) {
		return cli.Usagef("--min-agreement = %v: must be in (0, 1)", f.MinAgreement)
	}
	budget := accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}
	p, err := plan.OnProxy(cmd.Context(), info.Defaults(), proxy, budget, f.MinAgreement, f.SimSeed)
	if err != nil {
		return cli.AsUsage(setup.Flagged(err, setup.WithFlags(setup.BudgetFlags, map[string]string{"min-agreement": "--min-agreement",
			"votes K": "--votes: K", "votes classes": "--votes: classes", "votes queries": "--votes: queries"})))
	}
	m := p.Mechanism
	line := append(f.aggregateLine(cmd, proxy.K, proxy.Classes, info.Name), "--levels", cliout.Floats(m.Levels), "--kappa", cliout.Float(m.Kappa))
	if m.GiveUp != 0 {
		line = append(line, "--give-up", cliout.Float(m.GiveUp))
	}
	if m.Sigma1 != 0 {
		line = append(line, "--threshold", cliout.Float(m.Threshold), "--sigma1", cliout.Float(m.Sigma1))
	}
	line = append(line, "--budget-eps", cliout.Float(budget.Eps), "--budget-delta", cliout.Float(budget.Delta), "--out", "labels.csv")
	var t1, s1 any
	if m.Sigma1 != 0 {
		t1, s1 = m.Threshold, m.Sigma1
	}
	total, err := (accountant.Account{Filter: new(accountant.GDPFilter), Budget: &accountant.Budget{Guarantee: budget}}).Publish(setup.Memo(cmd))
	if err != nil {
		return err
	}
	rec := cliout.Record{
		field("accounting", setup.FilterAccounting), field("argument", total.Name()+": "+total.Reference()), field("mechanism", string(info.Name)),
		field("levels", m.Levels), field("kappa", m.Kappa), field("give_up", m.GiveUp), field("threshold", t1), field("sigma1", s1),
		field("budget_eps", budget.Eps), field("budget_delta", budget.Delta), field("publish_eps", report.BoundIn(f.Format, total.Guarantee.Eps)), field("publish_delta", report.BoundIn(f.Format, total.Guarantee.Delta)),
		field("mu_budget_squared", p.MuBudget2), field("min_agreement", p.MinAgreement),
		field("expected_queries", p.Queries), field("expected_answered", p.Answered), field("expected_agreement", p.Agreement), field("expected_cost_per_query", p.Cost),
		field("low_consensus_top", p.LowTop), field("low_consensus_queries", p.LowQueries), field("low_consensus_agreement", p.LowAgreement),
		field("low_consensus_baseline", p.LowBaseline), field("low_consensus_baseline_mechanism", fmt.Sprintf("%s --threshold %s --sigma1 %s --sigma2 %s",
			p.Baseline.Name(), cliout.Float(p.Baseline.Threshold), cliout.Float(p.Baseline.Sigma1), cliout.Float(p.Baseline.Sigma2))),
		field("candidates", p.Candidates), field("feasible", p.Feasible), field("checked", p.Checked), field("sim_seed", p.Seed),
		field("proxy_queries", len(proxy.Counts)), field("tuning", tuning),
		field("note", "expected_* and low_consensus_* are estimates on the proxy votes (continuous noise of the deviations drawn, the best candidates checked again with fresh noise), not for publication as results on the private votes; "+
			"the guard: on the proxy's lowest-consensus fifth (plurality count <= low_consensus_top) the labels agree with the plurality at least as often as the baseline's; run aggregate with these settings on the private votes: the total to publish is the budget"),
	}
	return writePlan(cmd, f.Format, rec, line)
}
