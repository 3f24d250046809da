package main

// This file declares the labels a new ledger will pay for (ledger init
// --mechanism, --step-eps), so that ledger init fixes the filter that
// allows the most of them.

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/pate"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// ledgerUseFlags declare the labels a new ledger will pay for, so that
// ledger init shows what each filter allows of them and fixes the one
// that allows more (ledger.ChooseFilter): a mechanism with its per-query
// settings, as aggregate and plan take them (the teachers' K and (eps,
// Delta) are the ledger's binding), or a per-query (eps, delta) step;
// and how many labels are expected.
type ledgerUseFlags struct {
	setup.MechanismConfig
	M         float64   `flag:"m"`
	Target    float64   `flag:"delta"`
	TargetEps []float64 `flag:"target-eps"`
	StepEps   float64   `flag:"step-eps"`
	StepDelta float64   `flag:"step-delta"`
	Queries   int       `flag:"queries" help:"labels (or PTR releases) you expect (with --mechanism or --step-eps)"`
	// Accounting ptr declares releases by generalized PTR (aggregate
	// --accounting ptr), each of the proposal MaxQueries within the
	// budget (ReleaseEps, ReleaseDelta), as aggregate's --max-queries,
	// --budget-eps and --budget-delta give them.
	Accounting   string  `flag:"accounting" help:"ptr: generalized PTR; gdp-filter: per draw"`
	MaxQueries   int     `flag:"max-queries" help:"release the first N queries (ptr: its proposal)" default:"every query"`
	ReleaseEps   float64 `flag:"release-eps" help:"with --accounting ptr: each release's --budget-eps"`
	ReleaseDelta float64 `flag:"release-delta" help:"with --accounting ptr: each release's --budget-delta"`
	Mechanism    provenance.MechanismName
	ms           *setup.Mechanisms
	creatable    func() error // before a gamma's solve: ledger.Options.CheckCreate of the ledger to make
}

// bind defines u's flags in cmd, the settings of the mechanisms among
// them (setup.Mechanisms.BindSettings).
func (u *ledgerUseFlags) bind(cmd *cobra.Command) {
	setup.BindFlags(cmd, u)
	u.ms.BindSettings(cmd, votefile.TwoClass, votefile.ManyClasses)
}

// ledgerUse is a use of a new ledger declared by its flags: the labels,
// in words, and what each filter allows of them.
type ledgerUse struct {
	Labels string
	// Run is the use a --mechanism declares, its count still to be chosen
	// (ledger.NewUseHeader); nil for --step-eps, which names no
	// mechanism a release could be matched to.
	Run *ledger.UseRun
	// Step describes one label declared.
	Step   accountant.Spend
	Choice ledger.FilterChoice
	// Names maps the library's names of the labels' parameters to the
	// flags that gave them, to say why a filter cannot hold them.
	Names      map[string]string
	filtersErr error // why no filter holds one label: the error if the use does not either
}

// flagNames returns the flags that describe the labels declared: the
// settings of the mechanisms among them.
func (u *ledgerUseFlags) flagNames() []string {
	return append(append([]string{"classes", "queries"}, u.ms.SettingFlags()...), "cache-dir", "no-cache", "workers",
		"accounting", "max-queries", "release-eps", "release-delta")
}

// usePTRFlags are the flags of a declared use of releases by generalized
// PTR, and the library's names of the parameters they give.
var usePTRFlags = map[string]string{"budget eps": "--release-eps", "budget delta": "--release-delta", "queries": "--max-queries"}

// votesRead is what aggregate takes from a vote file besides the
// ensemble's binding: the kind of votes, which resolves the mechanism,
// and their number of classes.
type votesRead struct {
	Input   votefile.Input
	Classes int
}

// declared returns the use that the flags declare for a ledger bound to
// b with budget, nil when they declare none: labels of the vote file read
// by --votes (nil: none), as aggregate releases them, or of votes of
// classes classes (--classes; 0: two-class). With --votes, --classes
// reads the votes.
func (u *ledgerUseFlags) declared(cmd *cobra.Command, b provenance.Binding, budget accountant.Budget, votes *votesRead, classes int) (*ledgerUse, error) {
	fs := cmd.Flags()
	mech, step := fs.Changed("mechanism"), fs.Changed("step-eps") || fs.Changed("step-delta")
	switch {
	case mech && step:
		return nil, cli.Usagef("--mechanism and --step-eps exclude each other: declare the labels by their mechanism or by their per-query (eps, delta)")
	case step && fs.Changed("accounting"):
		return nil, cli.Usagef("--accounting declares releases of a --mechanism: --step-eps declares labels of a per-query (eps, delta), which no release could be matched to")
	case step && !fs.Changed("step-eps"):
		return nil, cli.Usagef("--step-delta goes with --step-eps: the per-query (eps, delta) of the labels declared")
	case !mech && !step:
		for _, n := range u.flagNames() {
			if fs.Changed(n) && !(votes != nil && n == "classes") {
				return nil, cli.Usagef("--%s describes the labels the ledger will pay for: declare them with --mechanism (or --step-eps)", n)
			}
		}
		return nil, nil
	}
	var s accountant.Spend
	var run *ledger.UseRun
	var labels string
	// The declared label's eps and delta are the flags' that gave them:
	// --step-eps and --step-delta, or a mechanism's settings, no flag.
	names := setup.BudgetFlags
	if step {
		g := accountant.Guarantee{Eps: u.StepEps, Delta: u.StepDelta}
		s, labels = accountant.ApproxStep(g), fmt.Sprintf("labels of %v each", g)
		names = setup.WithFlags(setup.BudgetFlags, map[string]string{"eps": "--step-eps", "delta": "--step-delta"})
	} else {
		var err error
		if run, labels, err = u.mechanismStep(cmd, b, budget, votes, classes); err != nil {
			return nil, err
		}
		s = run.Step
	}
	// Without --filter a declared mechanism is held by its use composed
	// exactly (ledger.NewUseHeader), as plan counts it, not by a filter.
	c, err := ledger.ChooseFilter(setup.Memo(cmd), b, budget, s, u.Queries)
	if err != nil && (run == nil || fs.Changed("filter")) {
		return nil, cli.AsUsage(setup.Flagged(err, names))
	}
	return &ledgerUse{Labels: labels, Run: run, Step: s, Choice: c, Names: names, filtersErr: err}, nil
}

// say says why a filter cannot hold the labels declared, naming the flags
// that gave them.
func (u *ledgerUse) say(err error) string {
	if said, ok := setup.FlagSaid(err, u.Names); ok {
		return said
	}
	return err.Error()
}

// mechanismStep returns the use of --mechanism (the description of one
// label and the points of its privacy profile; its count 0),
// built as aggregate builds it (plan.Request.Aggregator) for the teachers that b
// binds, and the labels in words. With votes (--votes), the mechanism is
// resolved for their kind and classes, as aggregate resolves it; else for
// votes of classes classes (two-class votes when --classes is not given).
func (u *ledgerUseFlags) mechanismStep(cmd *cobra.Command, b provenance.Binding, budget accountant.Budget, votes *votesRead, classes int) (*ledger.UseRun, string, error) {
	fs := cmd.Flags()
	var info setup.MechanismInfo
	var err error
	switch {
	case votes == nil:
		info, err = u.ms.LookupFlag(cmd, u.Mechanism)
	default:
		classes = votes.Classes
		if info, err = u.ms.Lookup(u.Mechanism, votes.Input); err != nil {
			err = cli.Usagef("--%v (the votes of --votes, as their metadata header or the reading flags state them)", err)
		}
	}
	if err == nil {
		err = u.ms.CheckInUse(cmd, "mechanism", info)
	}
	if err != nil {
		return nil, "", err
	}
	if _, only := setup.PerDraw(info); only || u.Accounting == setup.FilterAccounting {
		return nil, "", cli.Usagef("--mechanism %s charged per draw: a declared use counts a fixed sequence of steps, composed exactly, and a run whose draws each follow from the outputs before it is no fixed sequence (a fixed count cannot count an adaptive run): "+
			"charge its releases to a ledger open to any use, whose Gaussian-DP filter charges each draw (ledger init --filter gdp-filter)", info.Name)
	}
	ptr, err := u.ptrAccounting(fs, info)
	if err != nil {
		return nil, "", err
	}
	s := planValues(fs, u.M, u.Target, setup.RRComposition(u.RRComp, u.RRDelta, b.Each.Delta))
	switch {
	case info.Input == votefile.ManyClasses:
		if classes == 0 {
			return nil, "", cli.Usagef("--classes: give the number of classes of %s's votes", info.Name)
		}
	case info.Uses.Eps:
		line, err := setup.OneVoteTarget(fs, u.TargetEps, nil)
		if err != nil {
			return nil, "", err
		}
		if line.Eps == nil {
			return nil, "", cli.Usagef("%s needs the per-query eps of its labels: give one --target-eps", info.Name)
		}
		s["target-eps"] = *line.Eps
	default:
		classes = 2
	}
	if u.creatable != nil && info.Uses.Gamma {
		if err := u.creatable(); err != nil {
			return nil, "", err
		}
	}
	lines := cliout.NewStages(cmd.ErrOrStderr())
	defer lines.Done()
	if err := u.PlanGamma(cmd, u.ms, info, s, lines); err != nil {
		return nil, "", err
	}
	if info.Uses.Eps {
		classes = 2
	}
	r, err := requestOf(setup.Memo(cmd), fs, info, b.K, classes, b.Each, budget, s, u.Workers)
	if err != nil {
		return nil, "", err
	}
	agg, _, err := r.Aggregator(cmd.Context())
	if errors.As(err, new(*optimal.SourceError)) {
		return nil, "", setup.GammaError(err, "")
	}
	if err != nil {
		return nil, "", cli.AsUsage(setup.Flagged(err, setup.ProblemNames(info.Uses.Eps, "--eps")))
	}
	priv := agg.Privacy()
	if priv.Relation != b.Relation {
		return nil, "", cli.Usagef("--mechanism %s releases in the %v relation; this ledger is for the %v relation", info.Name, priv.Relation, b.Relation)
	}
	if ptr {
		return u.ptrRun(r.Certificate.Memo, info, r.Mechanism, classes)
	}
	return &ledger.UseRun{Mechanism: info.Name, Step: priv.Spend, Profile: priv.Profile}, fmt.Sprintf("%s labels, each %v", info.Name, priv.Guarantee), nil
}

// ptrAccounting reports whether the flags declare releases by
// generalized PTR of mechanism info (--accounting ptr), and refuses
// --accounting, --max-queries, --release-eps and --release-delta where
// they do not apply, before any work: as aggregate --accounting ptr
// takes them, a proposal and a budget of a mechanism that PTR tests
// (setup.PTRTests).
func (u *ledgerUseFlags) ptrAccounting(fs *pflag.FlagSet, info setup.MechanismInfo) (bool, error) {
	switch u.Accounting {
	case "", setup.DataIndependent:
		for _, n := range []string{"max-queries", "release-eps", "release-delta"} {
			if fs.Changed(n) {
				return false, cli.Usagef("--%s goes with --accounting ptr: it sets each release of a use of PTR releases", n)
			}
		}
		return false, nil
	case setup.PTRAccounting:
	default:
		return false, cli.Usagef("--accounting = %q: must be %s or %s", u.Accounting, setup.DataIndependent, setup.PTRAccounting)
	}
	switch {
	case !setup.PTRTests(info):
		return false, cli.Usagef("--accounting ptr with --mechanism %s: generalized PTR tests PATE's data-dependent cost, of %s on class counts",
			info.Name, u.ms.PTRNames(" or "))
	case !fs.Changed("max-queries") || !fs.Changed("release-eps") || !fs.Changed("release-delta"):
		return false, cli.Usagef("--accounting ptr declares releases of a proposal within a budget, fixed now: give --max-queries, --release-eps and --release-delta, as aggregate takes --max-queries, --budget-eps and --budget-delta")
	case u.MaxQueries < 1:
		return false, cli.Usagef("--max-queries = %d: must be >= 1", u.MaxQueries)
	}
	return true, nil
}

// ptrRun returns the use of releases by generalized PTR of mech, info's
// settings, on votes of classes classes (aggregate --accounting ptr): each
// release one step, the total it publishes (pate.PlanPTR of the proposal
// and the budget, as pate.ReleasePTR plans it), a function of the
// settings alone, so that the ledger composes the releases exactly, as it
// composes labels; and the releases in words.
func (u *ledgerUseFlags) ptrRun(memo *accountant.Memo, info setup.MechanismInfo, mech ensemble.Mechanism, classes int) (*ledger.UseRun, string, error) {
	budget := accountant.Guarantee{Eps: u.ReleaseEps, Delta: u.ReleaseDelta}
	r, err := pate.PlanPTR(memo, mech, classes, pate.PTROptions{Budget: budget, Queries: u.MaxQueries})
	if err != nil {
		return nil, "", cli.AsUsage(setup.Flagged(err, usePTRFlags))
	}
	run, err := setup.PTRRun(mech, classes, budget, u.MaxQueries, r)
	return run, fmt.Sprintf("%s releases by generalized PTR of the first %d queries within %v, each charged its total %v", info.Name, u.MaxQueries, budget, r.Publish), err
}
