package main

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/plan"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func init() { subcommands = append(subcommands, subcommand{"plan", newPlanCmd}) }

type planFlags struct {
	setup.ProblemFlags
	setup.MechanismConfig
	setup.CompositionFlags
	setup.VoteFlags
	Format       cliout.Format     `flag:"format"`
	TargetEps    []float64         `flag:"target-eps"`
	BudgetEps    float64           `flag:"budget-eps" required:""`
	BudgetDelta  float64           `flag:"budget-delta" required:""`
	Queries      int               `flag:"queries" help:"plan the parameters with which this many queries fit"`
	Filter       accountant.Method `flag:"filter" help:"filter of a new ledger, as ledger init takes it" default:"declared use"`
	For          plan.Target       `flag:"for" help:"what --queries must fit: run, or ledger (a new ledger)"`
	Votes        string            `flag:"votes" help:"proxy votes to score the plan on (never the ones to release)"`
	VotesAre     string            `flag:"votes-are" help:"what --votes are: public or released (private is refused)"`
	PrivateVotes string            `flag:"private-votes" help:"the votes to be released, only to refuse them as --votes"`
	MinPrecision float64           `flag:"min-precision" help:"least precision of answered labels, in [0, 1)"`
	MinAgreement float64           `flag:"min-agreement" help:"progressive-gnmax: least label agreement with --votes" default:"0.9875"`
	SimSeed      uint64            `flag:"sim-seed" help:"progressive-gnmax: seed of the simulation on --votes"`
	Shares       []string          `flag:"share" help:"the new ledger's shares, as ledger init takes them: NAME=FRACTION"`
	Analyst      string            `flag:"analyst"`
	// The teachers' kind and partition, as their votes' header will state
	// them: fixed private teachers are bounded by their cap alone.
	Kind      provenance.Kind      `flag:"kind" help:"teachers: fixed (cap alone) or per-query" default:"per-query"`
	Partition provenance.Partition `flag:"partition" help:"fixed teachers: keyed-hash, file-position, shared"`
	// Accounting is aggregate's (--accounting): ptr plans the proposal of
	// a release by generalized PTR on --votes.
	Accounting string `flag:"accounting" help:"ptr: the proposal of a PTR release"`
	Mechanism  provenance.MechanismName
	// proxyHeader says that --votes has a metadata header (in the file or
	// a sidecar), which the votes to be released then have too.
	proxyHeader bool
	// proxyCounts says that --votes, without a metadata header, was read
	// as counts without --input-format (by a text file's start, or as a
	// NumPy array's default): the aggregate line says so, as its
	// --classes would read the votes as class labels.
	proxyCounts bool
	ms          *setup.Mechanisms
}

func newPlanCmd(ms *setup.Mechanisms) *cobra.Command {
	f := planFlags{Accounting: setup.DataIndependent, SimSeed: 1, ms: ms}
	cmd := newCmd("plan", &cobra.Command{
		Use:   "plan (--mechanism NAME | --votes PROXY --queries Q) --budget-eps E --budget-delta D [flags]",
		Short: "What a budget buys: the queries that fit, or the parameters for Q queries",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runPlan(cmd, &f) },
	}, &f)
	ms.BindSettings(cmd, votefile.TwoClass, votefile.ManyClasses)
	// A least precision is of the labels of a mechanism whose plan chooses
	// a threshold step on proxy votes.
	fl := cmd.Flags().Lookup("min-precision")
	fl.Usage = ms.Names(func(m setup.MechanismInfo) bool { return m.Defaults().Plan(m.Input).Threshold != nil }, ", ") + ": " + fl.Usage
	cmd.Flags().StringVar((*string)(&f.Mechanism), "mechanism", "", "aggregator, as aggregate takes it (none: compare all on --votes)")
	// Only fixed teachers have a partition that matters: no default.
	cli.SetDefaultText(cmd.Flags(), "none", "partition")
	setup.IgnoredComposition.Hide(cmd)
	return cmd
}

// runPlan builds the plan's request from the flags and asks the library
// for a count or for parameters (plan.Make).
func runPlan(cmd *cobra.Command, f *planFlags) error {
	fs := cmd.Flags()
	setup.IgnoredComposition.Note(cmd)
	if fs.Changed("private-votes") && f.Votes == "" {
		return cli.Usagef("--private-votes goes with --votes: it is read only to refuse proxy votes that are the private ones")
	}
	if !fs.Changed("mechanism") {
		if fs.Changed("share") || fs.Changed("analyst") {
			return cli.Usagef("--share and --analyst plan one mechanism for an analyst's share of a new ledger: give --mechanism")
		}
		if fs.Changed("accounting") {
			return cli.Usagef("--accounting plans one mechanism: give --mechanism")
		}
		return runCompare(cmd, f)
	}
	if info, err := f.ms.Lookup(f.Mechanism, votefile.ManyClasses); err == nil {
		if _, only := setup.PerDraw(info); only {
			return f.planPerDraw(cmd, info)
		}
	}
	if fs.Changed("min-agreement") || fs.Changed("sim-seed") {
		return cli.Usagef("--min-agreement and --sim-seed plan a mechanism charged per draw (--mechanism %s)", f.ms.PerDrawOnlyNames())
	}
	lines := cliout.NewStages(cmd.ErrOrStderr())
	defer lines.Done()
	r, info, err := f.request(cmd, lines)
	if err != nil {
		return err
	}
	switch f.Accounting {
	case setup.DataIndependent:
	case setup.PTRAccounting:
		return f.planPTR(cmd, info, r.Mechanism)
	default:
		return cli.Usagef("--accounting = %q: must be %s or %s", f.Accounting, setup.DataIndependent, setup.PTRAccounting)
	}
	doc := report.Plan{Chosen: fs.Changed("queries")}
	if doc.Analyst, r.Share, err = f.share(cmd); err != nil {
		return err
	}
	scored := scoredOnVotes(info)
	if f.Votes != "" && !scored {
		if many, err := f.ms.Lookup(f.Mechanism, votefile.ManyClasses); err == nil && scoredOnVotes(many) {
			return cli.Usagef("--votes scores the plans of %s on class counts: give --classes, the votes' classes (without it %s labels 0/1 votes, planned without --votes)", info.Name, info.Name)
		}
		return cli.Usagef("--votes scores the plans of %s (--classes); %s is planned without them", f.ms.Names(scoredOnVotes, ", "), info.Name)
	}
	if !doc.Chosen {
		for _, n := range info.Required {
			if n != "delta" && !fs.Changed(n) {
				return cli.Usagef("%s needs --%s to count the queries it fits (or --queries to plan it)", info.Name, n)
			}
		}
		if f.Votes != "" {
			return cli.Usagef("--votes scores a plan of parameters: give --queries")
		}
		if fs.Changed("for") {
			return cli.Usagef("--for says what a plan of --queries fits them to: give --queries (a count says both what one run and what a new ledger releases)")
		}
	} else if r.Share != 0 && f.For != plan.ForLedger {
		return cli.Usagef("--share plans for an analyst's share of a new ledger: give --for ledger")
	} else {
		r.For, r.Queries = f.For, f.Queries
		for _, n := range r.Chosen() {
			if fs.Changed(n) {
				return cli.Usagef("--%s is what a plan of --queries chooses: leave it out (or leave out --queries to count the queries it fits)", n)
			}
		}
		// A threshold is chosen on proxy votes, given or synthetic.
		if info.Defaults().Plan(info.Input).Threshold != nil || scored && f.Votes != "" {
			proxy, tuning, err := f.proxy(cmd, info.Name)
			if err != nil {
				return err
			}
			r.Proxy, r.MinPrecision, doc.Tuning = &proxy, f.MinPrecision, tuning
		}
	}
	if doc.Plan, err = plan.Make(cmd.Context(), r); err != nil {
		return f.planError(cmd, err)
	}
	if doc.Chosen {
		if err := planSharesAllow(cmd, doc.Plan, f.Shares); err != nil {
			return err
		}
		doc.LedgerInit = ledgerInitOf(cmd, info, doc.Plan, f.Shares)
	}
	lines.Done() // before the output: the solves of gamma_opt are over
	return doc.Write(cmd.OutOrStdout(), f.Format)
}

// planError says a library error in terms of the flags: the gamma
// source's (Error), and the per-query delta of a multi-class
// mechanism is --budget-delta's unless --delta is given
// (plan.ManyClasses).
func (f *planFlags) planError(cmd *cobra.Command, err error) error {
	if errors.As(err, new(*optimal.SourceError)) {
		return setup.GammaError(err, "")
	}
	delta := "--delta"
	if fs := cmd.Flags(); fs.Changed("classes") && !fs.Changed("delta") {
		delta = "--budget-delta (the per-query delta unless --delta is given)"
	}
	info, _ := f.ms.LookupFlag(cmd, f.Mechanism)
	names := setup.WithFlags(setup.BudgetFlags, setup.ProblemNames(info.Uses.Eps, "--eps"))
	return cli.AsUsage(setup.Flagged(err, setup.WithFlags(names, map[string]string{"min-precision": "--min-precision",
		"votes K": "--votes: K", "votes classes": "--votes: classes", "votes queries": "--votes: queries", "delta": delta})))
}

// request returns the plan's request from the flags, and the mechanism.
func (f *planFlags) request(cmd *cobra.Command, lines *cliout.Stages) (plan.Request, setup.MechanismInfo, error) {
	fs := cmd.Flags()
	info, err := f.ms.LookupFlag(cmd, f.Mechanism)
	if err != nil {
		return plan.Request{}, info, err
	}
	if err := f.ms.CheckInUse(cmd, "mechanism", info); err != nil {
		return plan.Request{}, info, err
	}
	// A flag of the problem that the mechanism does not take (--m of
	// gnmax on class counts) is refused as aggregate refuses it, not
	// dropped; those it needs the plan asks for, or chooses, itself.
	if err := f.ms.CheckSettings(cmd, info, info.Required); err != nil {
		return plan.Request{}, info, err
	}
	if !fs.Changed("K") {
		return plan.Request{}, info, cli.Usagef("--K: give the number of teachers (>= 1)")
	}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}}
	s := planValues(fs, f.M, f.Target, setup.RRComposition(f.RRComp, f.RRDelta, f.Delta))
	classes := 2
	switch {
	case info.Input == votefile.ManyClasses:
		if !fs.Changed("classes") {
			return plan.Request{}, info, cli.Usagef("--classes: give the number of classes of %s's votes", info.Name)
		}
		classes = f.Classes
		// The setting a plan chooses, when not given: set, it says that
		// the mechanism labels counts (ensemble.VotesOf).
		if fl := info.Defaults().Plan(info.Input).Flag; fl != "" && !fs.Changed(fl) {
			s[fl] = 1.0
		}
	case info.Uses.Eps:
		line, err := setup.OneVoteTarget(fs, f.TargetEps, nil)
		if err != nil {
			return plan.Request{}, info, err
		}
		s["target-eps"] = 1.0 // planned (--queries), else given
		if line.Eps != nil {
			s["target-eps"] = *line.Eps
		} else if !fs.Changed("queries") {
			return plan.Request{}, info, cli.Usagef("%s needs --target-eps to count the queries it fits (or --queries to plan it)", info.Name)
		}
	}
	if err := f.MechanismConfig.PlanGamma(cmd, f.ms, info, s, lines); err != nil {
		return plan.Request{}, info, err
	}
	r, err := requestOf(setup.Memo(cmd), fs, info, f.K, classes, accountant.Guarantee{Eps: f.Eps, Delta: f.Delta}, budget, s, f.Workers)
	if err != nil {
		return r, info, err
	}
	r.DeltaPrime = f.DeltaPrime
	if err := f.teachers(fs, info.Relation); err != nil {
		return r, info, err
	}
	r.Kind, r.Partition = f.Kind, f.Partition
	if fs.Changed("filter") {
		if err := planFilter(f.Filter, r.Budget.Guarantee); err != nil {
			return r, info, err
		}
		r.Filter = &f.Filter
	}
	return r, info, nil
}

// teachers checks --kind and --partition for a mechanism of relation: a
// partition goes with fixed teachers, whose cap depends on it, and keeps
// the relation, as the release that the plan is for requires
// (provenance.Check).
func (f *planFlags) teachers(fs *pflag.FlagSet, relation accountant.Relation) error {
	switch {
	case f.Kind == provenance.Fixed && !fs.Changed("partition"):
		return cli.Usagef("--partition: give the data split of fixed teachers (keyed-hash, file-position or shared): their cap, the only bound of their labels, depends on it")
	case fs.Changed("partition") && f.Kind != provenance.Fixed:
		return cli.Usagef("--partition goes with --kind fixed: only fixed teachers have a cap")
	case fs.Changed("partition"):
		return cli.AsUsage(setup.Flagged(provenance.Teachers{Relation: relation, Kind: f.Kind, Partition: f.Partition}.Holds(), nil))
	}
	return nil
}

// planValues returns the settings of a mechanism that a plan or a
// ledger's use resolves from the flags fs: m, the per-query delta if
// given, RR's composition comp, and the noise releases draw.
func planValues(fs *pflag.FlagSet, m, delta float64, comp accountant.Composition) setup.MechanismValues {
	s := setup.MechanismValues{"m": m, "rr-composition": comp, "noise": noisymax.DiscreteNoise}
	if fs.Changed("delta") {
		s["delta"] = delta
	}
	return s
}

// scoredOnVotes reports whether a plan of mechanism m scores its labels
// on proxy votes: m labels class counts, and its plan says how it scores
// a label (ensemble.Planned.Expect) or chooses a threshold step on them.
func scoredOnVotes(m setup.MechanismInfo) bool {
	p := m.Defaults().Plan(m.Input)
	return m.Input == votefile.ManyClasses && (p.Expect != nil || p.Threshold != nil)
}
