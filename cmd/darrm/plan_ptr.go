package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/pate"
	"github.com/darrm/darrm/provenance"
)

// ptrPlanPass is the probability on the proxy votes with which the test
// of the queries plan --accounting ptr proposes passes. The expected
// labels, the pass probability times the queries' answers, are nearly
// flat from 0.9 to 0.98 (docs/pate.md): 0.97 keeps them and fails less
// where the private votes agree less than the proxy.
const ptrPlanPass = 0.97

// planPTR prints the proposal of a release by generalized PTR
// (aggregate --accounting ptr) of mechanism info, mech with the settings
// given, within the budget: the most queries whose test passes on the
// proxy votes (--votes) with probability ptrPlanPass (pate.PTRQueries),
// the plan's total, and the aggregate line that releases them. The
// proposal is fixed on proxy votes, since one chosen from the private
// votes would release something of them that no test accounts for.
func (f *planFlags) planPTR(cmd *cobra.Command, info setup.MechanismInfo, mech ensemble.Mechanism) error {
	fs := cmd.Flags()
	switch {
	case !setup.PTRTests(info):
		return cli.Usagef("--accounting ptr with --mechanism %s: generalized PTR plans %s on class counts (--classes)", info.Name, f.ms.PTRNames(" or "))
	case fs.Changed("queries") || fs.Changed("for") || fs.Changed("share") || fs.Changed("filter") || fs.Changed("min-precision"):
		return cli.Usagef("--accounting ptr plans the queries a PTR release proposes, on --votes, for the given settings: leave out --queries, --for, --share, --filter and --min-precision")
	case !fs.Changed("classes") || !fs.Changed("K"):
		return cli.Usagef("--accounting ptr needs --K and --classes of the votes to release")
	}
	for _, n := range info.Required {
		if n != "delta" && !fs.Changed(n) {
			return cli.Usagef("--accounting ptr with %s needs --%s: the test is of the settings given", info.Name, n)
		}
	}
	// The steps PTR tests, checked before the votes are read.
	m, _ := ensemble.Steps(mech, f.Classes)
	if err := m.CheckFor(0); err != nil {
		return cli.AsUsage(setup.Flagged(err, nil))
	}
	proxy, tuning, err := f.proxy(cmd, info.Name)
	if err != nil {
		return err
	}
	if !f.proxyHeader && !fs.Changed("partition") {
		return cli.Usagef("--accounting ptr: --votes %s has no metadata header, so the aggregate line the plan prints must state the data split that the release asserts, as aggregate takes it: "+
			"give --kind fixed --partition keyed-hash (teachers on keyed-hash shares: one record changes one vote), or the votes' header in a sidecar (darrm sidecar)", cli.InputName(f.Votes))
	}
	if proxy.K != f.K || proxy.Classes != f.Classes {
		return cli.Usagef("--votes %s: K = %d, classes = %d, but --K %d --classes %d", cli.InputName(f.Votes), proxy.K, proxy.Classes, f.K, f.Classes)
	}
	budget := accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}
	// Abstentions allowed, as aggregate reads counts under a stated K: the
	// bound tested covers more neighbours, never fewer.
	opts := pate.PTROptions{Budget: budget, Abstain: true}
	r, pass, err := pate.PTRQueries(cmd.Context(), setup.Memo(cmd), proxy.Counts, f.K, f.Classes, mech, opts, ptrPlanPass)
	if err != nil {
		return cli.AsUsage(setup.Flagged(err, setup.PTRFlagNames))
	}
	n := r.Queries
	if n == 0 {
		return cli.Usagef("--accounting ptr: not one query of --votes %s passes the test with probability %g within the budget (%g, %g): raise the budget or the noise", cli.InputName(f.Votes), ptrPlanPass, budget.Eps, budget.Delta)
	}
	// K is stated as the plan allowed abstentions (aggregateLine); the
	// per-query delta is the budget's unless --delta is given.
	words := append(f.aggregateLine(cmd, f.K, f.Classes, info.Name), settingArgs(info, mech, nil)...)
	words = append(words, "--budget-eps", cliout.Float(budget.Eps), "--budget-delta", cliout.Float(budget.Delta),
		"--accounting", "ptr", "--max-queries", strconv.Itoa(n), "--out", "labels.csv")
	rec := cliout.Record{
		field("accounting", "ptr"), field("argument", pate.PTRArgument), field("mechanism", string(info.Name)),
		field("budget_eps", budget.Eps), field("budget_delta", budget.Delta),
		field("queries", n), field("pass_probability", pass), field("pass_target", ptrPlanPass), field("proxy_queries", len(proxy.Counts)),
		field("publish_eps", report.BoundIn(f.Format, r.Publish.Eps)), field("publish_delta", report.BoundIn(f.Format, r.Publish.Delta)),
		field("test_eps", report.BoundIn(f.Format, r.Test.Eps)), field("test_delta", report.BoundIn(f.Format, r.Test.Delta)),
		field("order", r.Order), field("proposal_rdp", r.Proposal), field("tuning", tuning),
	}
	return writePlan(cmd, f.Format, rec, words, field("note", "the proposal: run aggregate with --max-queries "+strconv.Itoa(n)+" on the private votes; never choose it from them"))
}

// aggregateLine starts the aggregate line that a plan on proxy votes
// prints, to be run as printed: the votes to release read as --votes was
// (--private-votes too), K and C stated (class labels need them), the
// data split the release asserts when --votes has no metadata header
// (--partition), and the mechanism.
func (f *planFlags) aggregateLine(cmd *cobra.Command, k, classes int, name provenance.MechanismName) []string {
	words := append([]string{"darrm", "aggregate", "VOTES"}, votesReading(cmd)...)
	if f.proxyCounts {
		words = append(words, "--input-format", "counts")
	}
	words = append(words, "--K", strconv.Itoa(k), "--classes", strconv.Itoa(classes))
	if cmd.Flags().Changed("partition") {
		words = append(words, "--partition", f.Partition.String())
	}
	return append(words, "--mechanism", string(name))
}

// writePlan writes the record rec of a plan that releases by the
// aggregate line words: in JSON or CSV with the line as its field
// "aggregate", before the fields last; in a table, the line after it,
// continued across lines, not wrapped, to be run as printed.
func writePlan(cmd *cobra.Command, format cliout.Format, rec cliout.Record, words []string, last ...cliout.Field) error {
	if format != cliout.Table {
		rec = append(rec, field("aggregate", shellLine(words)))
	}
	rec = append(rec, last...)
	w := cmd.OutOrStdout()
	if err := cliout.WriteRecord(w, format, rec); err != nil || format != cliout.Table {
		return err
	}
	for i, word := range words {
		words[i] = shellWord(word)
	}
	_, err := fmt.Fprintf(w, "\nTo release them (VOTES: the votes to release, read as --votes was):\n%s\n", report.ShellLines(words, cliout.Width))
	return err
}

// field is a field of a plan's record.
func field(key string, val any) cliout.Field { return cliout.Field{Key: key, Val: val} }
