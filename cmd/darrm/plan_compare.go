package main

// This file compares every mechanism that fits proxy votes (darrm plan
// --votes without --mechanism) and reads the proxy votes.

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/plan"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// runCompare asks the library for the comparison of every mechanism that
// fits the proxy votes of --votes (plan.Compare) for --queries of the
// budget, and prints it.
func runCompare(cmd *cobra.Command, f *planFlags) error {
	fs := cmd.Flags()
	switch {
	case f.Votes == "":
		return cli.Usagef("--mechanism: give the aggregator to plan, or proxy votes (--votes FILE --votes-are public) and --queries to compare every mechanism that fits them")
	case !fs.Changed("queries"):
		return cli.Usagef("--votes without --mechanism compares the mechanisms' plans for a number of queries: give --queries (or --mechanism to plan one)")
	case !fs.Changed("K"):
		return cli.Usagef("--K: give the number of teachers (>= 1)")
	}
	for _, n := range f.ms.Chosen() {
		if fs.Changed(n) {
			return cli.Usagef("--%s is one mechanism's: a comparison plans each mechanism's parameters (give --mechanism to plan or count one)", n)
		}
	}
	// Every mechanism compared is in the one-vote relation (plan.Compare).
	if err := f.teachers(fs, accountant.OneVote); err != nil {
		return err
	}
	proxy, tuning, err := f.proxy(cmd, "")
	if err != nil {
		return err
	}
	lines := cliout.NewStages(cmd.ErrOrStderr())
	defer lines.Done()
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}}
	base := plan.Request{ReleaseSpec: ensemble.ReleaseSpec{Budget: &budget, Certificate: ensemble.Options{Workers: f.Workers, Memo: setup.Memo(cmd)}}, K: f.K, Classes: proxy.Classes}
	base.DeltaPrime, base.For, base.Queries, base.Proxy = f.DeltaPrime, f.For, f.Queries, &proxy
	base.Kind, base.Partition = f.Kind, f.Partition
	var src optimal.Source // the gamma of a mechanism of 0/1 votes, on two classes
	if proxy.Classes == 2 {
		var sampling []setup.MechanismInfo // those of 0/1 votes compared that sample a gamma
		for _, info := range f.ms.All() {
			if info.Input == votefile.TwoClass && info.Uses.Gamma && info.Relation == accountant.OneVote {
				sampling = append(sampling, info)
			}
		}
		if err := f.MechanismConfig.Check(cmd, f.ms, sampling...); err != nil {
			return err
		}
		if src, err = f.PlanSource(cmd, lines); err != nil {
			return err
		}
	}
	ms := compared(f.ms, fs, f.Target, budget.Delta, src)
	if fs.Changed("filter") {
		if err := planFilter(f.Filter, budget.Guarantee); err != nil {
			return err
		}
		base.Filter = &f.Filter
	}
	base.MinPrecision = f.MinPrecision
	c, err := plan.Compare(cmd.Context(), base, ms)
	if err != nil {
		return f.planError(cmd, err)
	}
	lines.Done() // before the output: the solves of gamma_opt are over
	e := report.EqualTotals{BudgetEps: f.BudgetEps, BudgetDelta: f.BudgetDelta, Queries: f.Queries}
	return report.NewPlanCompare(c, e, f.For, f.MinPrecision, tuning).Write(cmd.OutOrStdout(), f.Format)
}

// proxy reads the proxy votes of --votes that mechanism of is planned on
// ("" for a comparison), refusing private ones, and says how they were
// used; 0/1 votes only for a comparison (two classes).
func (f *planFlags) proxy(cmd *cobra.Command, of provenance.MechanismName) (plan.Proxy, string, error) {
	switch {
	case f.Votes == "":
		return plan.Proxy{}, "", cli.Usagef("%s is planned on proxy votes: give --votes FILE (votes that do not depend on the private data: synthetic, or of teachers trained on public data) and --votes-are", of)
	case f.VotesAre == "private":
		return plan.Proxy{}, "", cli.Usagef("--votes-are private: refused: choosing parameters on the private votes is itself a release of them, whose cost a plan does not charge (Papernot and Steinke 2022, Rényi DP of hyperparameter tuning); give votes that do not depend on the private data, or votes released under DP")
	case f.VotesAre != "public" && f.VotesAre != "released":
		return plan.Proxy{}, "", cli.Usagef("--votes-are %q: must be public or released (private is refused)", f.VotesAre)
	}
	in, closer, err := f.OpenVotes(cmd, "--votes", f.Votes)
	if err != nil {
		return plan.Proxy{}, "", err
	}
	defer closer.Close()
	f.proxyHeader = in.Meta() != nil
	f.proxyCounts = !f.proxyHeader && in.Layout() == votefile.LayoutCounts && !cmd.Flags().Changed("input-format")
	name := cli.InputName(f.Votes)
	if in.Input() == votefile.TwoClass && of != "" {
		return plan.Proxy{}, "", cli.Usagef("--votes %s holds 0/1 votes: %s is planned on class counts or indices (--classes, --input-format counts)", name, of)
	}
	p, err := plan.ReadProxy(cmd.Context(), in, name)
	if err != nil {
		return plan.Proxy{}, "", fmt.Errorf("--votes %s: %w", name, err)
	}
	if f.PrivateVotes != "" {
		// --meta is the header of --votes: the private votes take theirs
		// from their own sidecar, if any.
		meta := f.Meta
		f.Meta = ""
		private, closer, err := f.OpenVotes(cmd, "--private-votes", f.PrivateVotes)
		f.Meta = meta
		if err != nil {
			return plan.Proxy{}, "", err
		}
		defer closer.Close()
		if err := p.CheckNotPrivate(private); err != nil {
			return plan.Proxy{}, "", cli.AsUsage(setup.Flagged(err, nil))
		}
		if pm, vm := private.Meta(), in.Meta(); pm != nil && vm != nil && pm.Ensemble == vm.Ensemble {
			return plan.Proxy{}, "", cli.Usagef("--votes %s and --private-votes %s are votes of one ensemble, %s: the same teachers' votes on other queries depend on the private data they were trained on, so they are no public proxy of it (tune on votes of teachers trained on public data)", name, cli.InputName(f.PrivateVotes), cliout.Escape(vm.Ensemble))
		}
	}
	tuning := fmt.Sprintf("tuned on %s votes (%s), not on the private votes: no privacy charged for the tuning, which holds if they do not depend on the private data (the same teachers' votes on other queries do)", f.VotesAre, name)
	return p, tuning, nil
}

// compared returns every registered mechanism, each once, with the
// settings of the flags fs that a comparison does not plan: the per-query
// delta given, else the budget's (budgetDelta), the noise releases draw,
// and the gamma source src; a mechanism that labels vote counts is bound
// for them.
func compared(reg *setup.Mechanisms, fs *pflag.FlagSet, delta, budgetDelta float64, src optimal.Source) []ensemble.Mechanism {
	values := planValues(fs, 0, delta, accountant.Composition{})
	if !fs.Changed("delta") {
		values["delta"] = budgetDelta
	}
	values["gamma"], values["target-eps"] = src, 1.0
	var ms []ensemble.Mechanism
	seen := map[provenance.MechanismName]bool{}
	for _, in := range []votefile.Input{votefile.ManyClasses, votefile.TwoClass} {
		for _, info := range reg.All() {
			if info.Input == in && !seen[info.Name] {
				seen[info.Name] = true
				ms = append(ms, info.With(fs, values))
			}
		}
	}
	return ms
}
