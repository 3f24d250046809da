package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/plan"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func init() { subcommands = append(subcommands, newPlanCmd) }

type planFlags struct {
	problemFlags
	mechanismFlags
	compositionFlags
	classFlags
	voteFlags
	Format       cliout.Format     `flag:"format"`
	TargetEps    []float64         `flag:"target-eps"`
	BudgetEps    float64           `flag:"budget-eps" required:""`
	BudgetDelta  float64           `flag:"budget-delta" required:""`
	Queries      int               `flag:"queries" help:"plan the parameters with which this many queries fit"`
	Filter       accountant.Method `flag:"filter" help:"filter of a new ledger: zcdp-filter or simple" default:"chosen as above"`
	For          plan.Target       `flag:"for" help:"what --queries must fit: run, or ledger (a new ledger)"`
	Votes        string            `flag:"votes" help:"proxy votes to score the plan on (never the ones to release)"`
	VotesAre     string            `flag:"votes-are" help:"what --votes are: public or released (private is refused)"`
	PrivateVotes string            `flag:"private-votes" help:"the votes to be released, only to refuse them as --votes"`
	MinPrecision float64           `flag:"min-precision" help:"confident-gnmax: least precision of answered labels, in [0, 1)"`
	Mechanism    provenance.MechanismName
}

func newPlanCmd() *cobra.Command {
	var f planFlags
	cmd := newCmd("plan", &cobra.Command{
		Use:   "plan (--mechanism NAME | --votes PROXY --queries Q) --budget-eps E --budget-delta D [flags]",
		Short: "What a budget buys: the queries that fit, or the parameters for Q queries",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runPlan(cmd, &f) },
	}, &f)
	cmd.Flags().StringVar((*string)(&f.Mechanism), "mechanism", "", "aggregator, as aggregate takes it (none: compare all on --votes)")
	hideComposition(cmd)
	return cmd
}

// runPlan builds the plan's request from the flags and asks the library
// for a count (plan.Queries) or for parameters (plan.Parameters,
// plan.OnProxy).
func runPlan(cmd *cobra.Command, f *planFlags) error {
	fs := cmd.Flags()
	compositionIgnored(cmd)
	if fs.Changed("private-votes") && f.Votes == "" {
		return cli.Usagef("--private-votes goes with --votes: it is read only to refuse proxy votes that are the private ones")
	}
	if !fs.Changed("mechanism") {
		return runCompare(cmd, f)
	}
	lines := cliout.NewStages(cmd.ErrOrStderr())
	defer lines.Done()
	r, info, err := f.request(cmd, lines)
	if err != nil {
		return err
	}
	doc := report.Plan{Chosen: fs.Changed("queries")}
	scored := info.Input == votefile.ManyClasses && (info.Name == provenance.ConfidentGNMax || info.Name == provenance.GNMax)
	if f.Votes != "" && !scored {
		return cli.Usagef("--votes scores the plans of confident-gnmax and gnmax (--classes); %s is planned without them", info.Name)
	}
	if !doc.Chosen {
		for _, s := range info.Needs {
			if n := s.Flag(); n != "delta" && !fs.Changed(n) {
				return cli.Usagef("%s needs --%s to count the queries it fits (or --queries to plan it)", info.Name, n)
			}
		}
		if f.Votes != "" {
			return cli.Usagef("--votes scores a plan of parameters: give --queries")
		}
		if fs.Changed("for") {
			return cli.Usagef("--for says what a plan of --queries fits them to: give --queries (a count says both what one run and what a new ledger releases)")
		}
		c, err := plan.Queries(cmd.Context(), r)
		if err != nil {
			return f.planError(cmd, err)
		}
		doc.Plan = plan.Plan{Request: r, Count: c}
		lines.Done() // before the output: the solves of gamma_opt are over
		return doc.Write(cmd.OutOrStdout(), f.Format)
	}
	r.For = f.For
	for _, s := range plan.Chosen(r) {
		if n := s.Flag(); fs.Changed(n) {
			return cli.Usagef("--%s is what a plan of --queries chooses: leave it out (or leave out --queries to count the queries it fits)", n)
		}
	}
	if info.Name == provenance.ConfidentGNMax || scored && f.Votes != "" {
		proxy, tuning, err := f.proxy(cmd, false)
		if err != nil {
			return err
		}
		doc.Tuning = tuning
		if doc.Plan, err = plan.OnProxy(cmd.Context(), r, f.Queries, proxy, plan.ConfidentOptions{MinPrecision: f.MinPrecision}); err != nil {
			return f.planError(cmd, err)
		}
		doc.LedgerInit = ledgerInitOf(cmd, doc.Plan)
		lines.Done() // before the output: the solves of gamma_opt are over
		return doc.Write(cmd.OutOrStdout(), f.Format)
	}
	if doc.Plan, err = plan.Parameters(cmd.Context(), r, f.Queries); err != nil {
		return f.planError(cmd, err)
	}
	doc.LedgerInit = ledgerInitOf(cmd, doc.Plan)
	lines.Done() // before the output: the solves of gamma_opt are over
	return doc.Write(cmd.OutOrStdout(), f.Format)
}

// planPassed are the flags of a plan that ledger init takes as they are:
// the slack of the ledger's header and how the mechanism's noise is found.
var planPassed = []string{"delta-prime", "prior", "gamma", "no-solve", "cache-dir", "no-cache", "workers", "rr-composition", "rr-delta-prime", "gnmax-search"}

// ledgerInitOf returns, for a plan p for a ledger, the darrm ledger init
// that declares its labels as a new ledger's use: the budget, the filter
// if --filter named one, the mechanism with its settings (the planned one
// at its exact value), K and the classes or the teachers' guarantee, which
// the votes' header must then state too, the planned queries, and the
// flags planPassed as given. Run as printed, with LEDGER the new ledger's
// file and VOTES the votes to be released (whose header binds the
// ledger), it fixes the filter the plan counted, which allows the planned
// labels. Its words, each quoted for a POSIX shell; nil for another plan.
func ledgerInitOf(cmd *cobra.Command, p plan.Plan) []string {
	r := p.Request
	if r.For != plan.ForLedger {
		return nil
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	args := []string{"darrm", "ledger", "init", "LEDGER", "--votes", "VOTES", "--budget-eps", num(r.Budget.Eps), "--budget-delta", num(r.Budget.Delta)}
	if r.Filter != nil {
		args = append(args, "--filter", r.Filter.String())
	}
	args = append(args, "--mechanism", string(r.Mechanism.Name), "--K", strconv.Itoa(r.Problem.K))
	g := r.Mechanism.GNMax
	switch name := r.Mechanism.Name; {
	case name == provenance.LNMax:
		args = append(args, "--classes", strconv.Itoa(r.Classes), "--laplace-scale", num(r.Mechanism.LNMax.Scale))
	case r.Mechanism.Input == votefile.ManyClasses:
		args = append(args, "--classes", strconv.Itoa(r.Classes))
		if g.Confident() {
			args = append(args, "--threshold", num(g.Threshold), "--sigma1", num(g.Sigma1))
		}
		args = append(args, "--sigma2", num(g.Sigma2), "--delta", num(r.Problem.TargetDelta))
	case name == provenance.DaRRMOneVote:
		args = append(args, "--target-eps", num(r.Problem.Eps))
		if r.Problem.TargetDelta != 0 {
			args = append(args, "--delta", num(r.Problem.TargetDelta))
		}
	default:
		args = append(args, "--m", num(r.Problem.M), "--eps", num(r.Problem.Eps), "--Delta", num(r.Problem.Delta))
		if !r.DefaultDelta {
			args = append(args, "--delta", num(r.Problem.TargetDelta))
		}
	}
	fs := cmd.Flags()
	for _, n := range planPassed {
		if fl := fs.Lookup(n); fl != nil && fl.Changed {
			if fl.Value.Type() == "bool" {
				args = append(args, "--"+n+"="+fl.Value.String())
			} else {
				args = append(args, "--"+n, fl.Value.String())
			}
		}
	}
	args = append(args, "--queries", strconv.Itoa(p.Queries))
	for i, a := range args {
		args[i] = shellWord(a)
	}
	return args
}

// shellWord quotes s for a POSIX shell when it needs it, for a command
// that darrm prints to be run.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// comparedSettings are the flags of one mechanism's parameters, which a
// comparison plans for each mechanism.
var comparedSettings = []string{"threshold", "sigma1", "sigma2", "laplace-scale", "target-eps", "m", "eps", "Delta"}

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
	for _, n := range comparedSettings {
		if fs.Changed(n) {
			return cli.Usagef("--%s is one mechanism's: a comparison plans each mechanism's parameters (give --mechanism to plan or count one)", n)
		}
	}
	proxy, tuning, err := f.proxy(cmd, true)
	if err != nil {
		return err
	}
	lines := cliout.NewStages(cmd.ErrOrStderr())
	defer lines.Done()
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}}
	base := plan.ManyClasses(plan.Request{
		Mechanism: ensemble.Mechanism{GNMax: noisymax.ConfidentGNMax{Noise: noisymax.DiscreteNoise}},
		Budget:    budget, DeltaPrime: f.DeltaPrime, Options: ensemble.Options{Workers: f.Workers}, For: f.For,
	}, "", f.K, proxy.Classes, cli.Given(fs, "delta", f.Target))
	if proxy.Classes == 2 {
		mech, err := f.mechanismFlags.Parse(cmd, "mechanism", []provenance.MechanismName{provenance.DaRRMOneVote})
		if err != nil {
			return err
		}
		if base.Gamma, err = mech.PlanSource(cmd, lines); err != nil {
			return err
		}
	}
	if fs.Changed("filter") {
		if err := accountant.CheckFilter(f.Filter, budget.Guarantee); err != nil {
			return cli.AsUsage(flagErr(err, nil))
		}
		base.Filter = &f.Filter
	}
	c, err := plan.Compare(cmd.Context(), base, f.Queries, proxy, plan.ConfidentOptions{MinPrecision: f.MinPrecision})
	if err != nil {
		return f.planError(cmd, err)
	}
	lines.Done() // before the output: the solves of gamma_opt are over
	e := report.EqualTotals{BudgetEps: f.BudgetEps, BudgetDelta: f.BudgetDelta, Queries: f.Queries}
	return report.NewPlanCompare(c, e, f.For, f.MinPrecision, tuning).Write(cmd.OutOrStdout(), f.Format)
}

// planError says a library error in terms of the flags: the gamma
// source's (Error), and the per-query delta of a multi-class
// mechanism is --budget-delta's unless --delta is given
// (plan.ManyClasses).
func (f *planFlags) planError(cmd *cobra.Command, err error) error {
	if errors.As(err, new(*optimal.SourceError)) {
		return sourceError(err, "")
	}
	delta := "--delta"
	if fs := cmd.Flags(); fs.Changed("classes") && !fs.Changed("delta") {
		delta = "--budget-delta (the per-query delta unless --delta is given)"
	}
	names := withFlags(budgetFlags, problemNames(f.Mechanism == provenance.DaRRMOneVote, "--eps"))
	return cli.AsUsage(flagErr(err, withFlags(names, map[string]string{"laplace scale": "--laplace-scale", "min-precision": "--min-precision",
		"votes K": "--votes: K", "votes classes": "--votes: classes", "votes queries": "--votes: queries", "delta": delta})))
}

// request returns the plan's request from the flags, and the mechanism.
func (f *planFlags) request(cmd *cobra.Command, lines *cliout.Stages) (plan.Request, ensemble.MechanismInfo, error) {
	fs := cmd.Flags()
	info, err := lookupMechanism(cmd, f.Mechanism)
	if err != nil {
		return plan.Request{}, info, err
	}
	in := info.Input
	if !fs.Changed("K") {
		return plan.Request{}, info, cli.Usagef("--K: give the number of teachers (>= 1)")
	}
	base := plan.Request{
		Mechanism:  ensemble.Mechanism{LNMax: noisymax.LNMax{Scale: f.LaplaceScale}},
		Budget:     accountant.Budget{Guarantee: accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}},
		DeltaPrime: f.DeltaPrime,
		Options:    ensemble.Options{Workers: f.Workers},
	}
	var r plan.Request
	switch {
	case in == votefile.ManyClasses:
		if !fs.Changed("classes") {
			return r, info, cli.Usagef("--classes: give the number of classes of %s's votes", info.Name)
		}
		base.Mechanism.GNMax = noisymax.ConfidentGNMax{Threshold: f.Threshold, Sigma1: f.Sigma1, Sigma2: f.Sigma2, Noise: noisymax.DiscreteNoise}
		r = plan.ManyClasses(base, info.Name, f.K, f.Classes, cli.Given(fs, "delta", f.Target))
	case info.OwnTarget():
		line, err := ensemble.OneVoteTarget(givenTargetEps(cmd.Flags(), f.TargetEps), nil)
		if err != nil {
			return r, info, targetEpsError(err)
		}
		eps := 1.0 // planned (--queries), else given
		if line.Eps != nil {
			eps = *line.Eps
		} else if !fs.Changed("queries") {
			return r, info, cli.Usagef("%s needs --target-eps to count the queries it fits (or --queries to plan it)", info.Name)
		}
		r = plan.TwoClass(base, info.Name, constraints.Problem{K: f.K, M: 1, Eps: eps, TargetDelta: f.Target}, fs.Changed("delta"))
	default:
		r = plan.TwoClass(base, info.Name, constraints.Problem{K: f.K, M: f.M, Eps: f.Eps, Delta: f.Delta, TargetDelta: f.Target}, fs.Changed("delta"))
	}
	if info.Gamma {
		mech, err := f.mechanismFlags.Check(cmd, []ensemble.MechanismInfo{info})
		if err != nil {
			return r, info, err
		}
		if r.Gamma, err = mech.PlanSource(cmd, lines); err != nil {
			return r, info, err
		}
	}
	r.Mechanism.RR, r.Mechanism.GNMaxSearch = rrComposition(f.RRComp, f.RRDelta, r.Problem.Delta), f.GNMaxSearch
	if fs.Changed("filter") {
		if err := accountant.CheckFilter(f.Filter, r.Budget.Guarantee); err != nil {
			return r, info, cli.AsUsage(flagErr(err, nil))
		}
		r.Filter = &f.Filter
	}
	return r, info, nil
}

// proxy reads the proxy votes of --votes, refusing private ones, and says
// how they were used; 0/1 votes only for a comparison (two classes).
func (f *planFlags) proxy(cmd *cobra.Command, compare bool) (plan.Proxy, string, error) {
	switch {
	case f.Votes == "":
		return plan.Proxy{}, "", cli.Usagef("confident-gnmax is planned on proxy votes: give --votes FILE (votes on public or already released data) and --votes-are")
	case f.VotesAre == "private":
		return plan.Proxy{}, "", cli.Usagef("--votes-are private: refused: choosing parameters on the private votes is itself a release of them, whose cost a plan does not charge (Papernot and Steinke 2022, Rényi DP of hyperparameter tuning); give votes on public data, or votes already released")
	case f.VotesAre != "public" && f.VotesAre != "released":
		return plan.Proxy{}, "", cli.Usagef("--votes-are %q: must be public or released (private is refused)", f.VotesAre)
	}
	in, closer, err := f.OpenVotes(cmd, "--votes", f.Votes)
	if err != nil {
		return plan.Proxy{}, "", err
	}
	defer closer.Close()
	name := cli.InputName(f.Votes)
	if in.Input() == votefile.TwoClass && !compare {
		return plan.Proxy{}, "", cli.Usagef("--votes %s holds 0/1 votes: confident-gnmax is planned on class counts or indices (--classes, --input-format counts)", name)
	}
	p, err := plan.ReadProxy(in, name)
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
			return plan.Proxy{}, "", cli.AsUsage(flagErr(err, nil))
		}
	}
	tuning := fmt.Sprintf("tuned on %s votes (%s), not on the private votes: no privacy charged for the tuning", f.VotesAre, name)
	return p, tuning, nil
}
