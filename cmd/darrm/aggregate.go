package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func init() { subcommands = append(subcommands, subcommand{"aggregate", newAggregateCmd}) }

type aggregateFlags struct {
	setup.ProblemFlags
	setup.MechanismConfig
	setup.CompositionFlags
	Format      cliout.Format        `flag:"format"`
	TargetEps   []float64            `flag:"target-eps"`
	Seed        uint64               `flag:"seed"`
	BudgetEps   float64              `flag:"budget-eps"`
	BudgetDelta float64              `flag:"budget-delta"`
	TotalDelta  float64              `flag:"total-delta" help:"delta of the total to publish, in [0, 0.5]" default:"by composition"`
	Analysis    bool                 `flag:"analysis" help:"also print every total that holds, as a table (analysis)"`
	Ledger      string               `flag:"ledger"`
	Analyst     string               `flag:"analyst"`
	LockTimeout time.Duration        `flag:"lock-timeout"`
	Out         string               `flag:"out" help:"file for the labels, written atomically (- for stdout)"`
	OutFormat   votefile.Format      `flag:"out-format" help:"labels: csv, jsonl or npy (auto: by --out's extension)"`
	Partition   provenance.Partition `flag:"partition" help:"data split: keyed-hash, file-position or shared" default:"the header's"`
	Accounting  string               `flag:"accounting" help:"ptr: generalized PTR; gdp-filter: per draw"`
	MaxQueries  int                  `flag:"max-queries" help:"release the first N queries (ptr: its proposal)" default:"every query"`
	Fallback    bool                 `flag:"fallback" help:"with --accounting ptr: on a failed test, label data-independently"`
	setup.VoteFlags
	Mechanism provenance.MechanismName
	ms        *setup.Mechanisms
}

func newAggregateCmd(ms *setup.Mechanisms) *cobra.Command {
	f := aggregateFlags{Out: "-", Accounting: setup.DataIndependent, ms: ms}
	cmd := newCmd("aggregate", &cobra.Command{
		Use:   "aggregate [VOTES] [flags]",
		Short: "Release one private majority label per query from K teachers' votes",
		Args:  cli.MaxArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runAggregate(cmd, &f, args) },
		// Check names the argument so in its errors.
		Annotations: map[string]string{"input": "the vote file"},
	}, &f)
	ms.BindSettings(cmd, votefile.TwoClass, votefile.ManyClasses)
	cmd.Long = mechanismsHelp(cmd.Long, ms)
	cmd.Flags().StringVar((*string)(&f.Mechanism), "mechanism", string(ms.Default().Name), "aggregator (the list above)")
	// A release's teachers are the votes' header's, or given: no default.
	cli.SetDefaultText(cmd.Flags(), "the header's", "eps", "Delta")
	setup.IgnoredComposition.Hide(cmd)
	setup.AddWitnessFlag(cmd)
	return cmd
}

// mechanismsHelp returns the help long with its line "Mechanisms
// (--mechanism): MECHANISMS." listing the mechanisms of ms by the votes
// they label, the default marked, wrapped as the help files are: a
// mechanism a program registers is listed beside darrm's.
func mechanismsHelp(long string, ms *setup.Mechanisms) string {
	const marker, width = "Mechanisms (--mechanism): MECHANISMS.", 92
	var two, many []string
	for _, m := range ms.All() {
		switch {
		case m.Input == votefile.ManyClasses:
			many = append(many, string(m.Name))
		case m.Name == ms.Default().Name:
			two = append(two, string(m.Name)+" (default)")
		default:
			two = append(two, string(m.Name))
		}
	}
	text := fmt.Sprintf("Mechanisms (--mechanism): two-class votes: %s; multi-class votes: %s.", strings.Join(two, ", "), strings.Join(many, ", "))
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) > width:
			lines, line = append(lines, line), w
		default:
			line += " " + w
		}
	}
	return strings.Replace(long, marker, strings.Join(append(lines, line), "\n"), 1)
}

// budget returns the budget the flags give, if any, and the total delta
// of a release without one (--total-delta), if given; --analyst or
// --witness without --ledger is refused here, with the flags that go
// together.
func (f *aggregateFlags) budget(cmd *cobra.Command) (*accountant.Budget, *float64, error) {
	fs := cmd.Flags()
	if err := setup.WithoutLedger(cmd, f.Ledger); err != nil {
		return nil, nil, err
	}
	total := cli.Given(fs, "total-delta", f.TotalDelta)
	switch eps, delta := fs.Changed("budget-eps"), fs.Changed("budget-delta"); {
	case (eps || delta) && total != nil:
		return nil, nil, cli.Usagef("--total-delta goes without a budget: a release with --budget-eps and --budget-delta states its total at --budget-delta")
	case eps && delta:
		budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}}
		if err := budget.Validate(); err != nil {
			return nil, nil, cli.AsUsage(setup.Flagged(err, setup.BudgetFlags))
		}
		return &budget, nil, nil
	case eps || delta:
		return nil, nil, cli.Usagef("--budget-eps and --budget-delta go together: a budget must bound both")
	}
	return nil, total, nil
}

// runAggregate releases the labels of the vote file args names: flags ->
// spec -> ensemble.Prepare -> the ledger opened -> Prepared.Label ->
// report. It chooses the reader (0/1 votes, or multi-class votes) and the
// settings of the mechanism, and the library does the rest.
func runAggregate(cmd *cobra.Command, f *aggregateFlags, args []string) error {
	start := time.Now()
	name := cli.InputArg(args)
	input := cli.InputName(name)
	if cli.IsStdoutFile(f.Out, cmd.OutOrStdout()) {
		f.Out = cli.Std // e.g. /dev/stdout: write to it, never replace it
	}
	setup.IgnoredComposition.Note(cmd)
	budget, totalDelta, err := f.budget(cmd)
	if err != nil {
		return err
	}
	in, file, err := f.OpenVotes(cmd, "VOTES", name)
	if err != nil {
		return err
	}
	defer file.Close()
	info, err := f.ms.Lookup(f.Mechanism, in.Input())
	switch {
	case err == nil:
	case f.ms.Names(func(m setup.MechanismInfo) bool { return m.Name == f.Mechanism }, "") == "":
		return cli.Usagef("--%v", err) // no mechanism of that name, of either kind of votes
	case in.Input() == votefile.ManyClasses && cmd.Flags().Changed("classes") && in.Classes() == 2:
		// As sidecar reads --classes 2, a user may take it for 0/1 votes.
		return cli.Usagef("--%v (--classes 2 reads class labels for the multi-class mechanisms; 0/1 votes are read without --classes, and a NumPy array of them takes its metadata header from a sidecar: darrm sidecar VOTES --classes 2 ...)", err)
	default:
		return cli.Usagef("--%v (multi-class votes: --input-format counts, --classes C, or a metadata header that states them)", err)
	}
	if err := f.ms.CheckSettings(cmd, info, nil); err != nil {
		return err
	}
	if err := f.checkAccounting(cmd, info, budget, name); err != nil {
		return err
	}
	if cmd.Flags().Changed("K") && f.K != in.K() {
		return cli.Usagef("--K = %d but %s has K = %d teachers", f.K, input, in.K())
	}
	spec, rel, values, err := f.spec(cmd, info, in, input)
	if err != nil {
		return err
	}
	spec.Budget, spec.DeltaPrime, spec.TotalDelta, spec.MaxQueries = budget, f.DeltaPrime, totalDelta, f.MaxQueries
	lines := cliout.NewStages(cmd.ErrOrStderr())
	var notStored error
	if err := f.startRelease(cmd, name, info, &spec, values, rel.Problem.Problem, lines, func(err error) { notStored = err }); err != nil {
		return err
	}
	var (
		done   ensemble.Released
		tested *report.PTR
		led    *ledger.Ledger
	)
	if f.Accounting == setup.PTRAccounting {
		// PTR's own: the test and the proposal split the budget, and
		// --max-queries is the proposal.
		spec.Budget, spec.MaxQueries = nil, 0
		done, tested, err = f.releasePTR(cmd, name, &spec, budget.Guarantee)
		led, _ = spec.Ledger.(*ledger.Ledger)
	} else {
		done, led, err = f.release(cmd, spec)
	}
	lines.Done()
	setup.WarnNotStored(cmd, notStored)
	if led != nil {
		defer led.Close()
		if done.Charged != nil {
			setup.PrintLedgerNotes(cmd.ErrOrStderr(), f.Ledger, led.Notes())
		}
	}
	if err != nil && !errors.Is(err, setup.ErrBudget) {
		return f.MechanismConfig.ReleaseError(err, input)
	}
	// What is left, err, is an outcome that exits 4 after the summary: a
	// PTR test that failed, or a ledger with no room for a PTR release's
	// total (nothing drawn).
	stop := err
	if led != nil && done.Charged != nil {
		st, err := led.BalanceFor(*done.Charged)
		if err != nil {
			return setup.LedgerError(err)
		}
		rel.LedgerStatus = &st
	}
	rel.Released = done
	rel.Input, rel.Output, rel.Votes, rel.Sink, rel.Seed = input, cli.OutputName(f.Out), in, spec.Sink, cli.Given(cmd.Flags(), "seed", f.Seed)
	rel.LedgerPath, rel.Analysis, rel.Elapsed, rel.PTR, rel.Memo = ledger.Redact(f.Ledger), f.Analysis, time.Since(start), tested, setup.Memo(cmd)
	out := report.NewAggregate(rel)
	w := cmd.OutOrStdout()
	if spec.Sink.ToStdout() {
		w = cmd.ErrOrStderr()
	}
	if err := out.Write(w, f.Format); err != nil {
		return err
	}
	if stop != nil {
		return stop
	}
	if stopped := rel.Stopped(); stopped != "" {
		return fmt.Errorf("%w: %s", setup.ErrBudget, stopped)
	}
	return nil
}

// release builds, binds and accounts for the release of spec
// (ensemble.Prepare: a solve of gamma_opt, which may take minutes, holds
// no lock on a ledger that other analysts wait for, --lock-timeout), then
// opens --ledger, if given, and writes the labels charged to it
// (ensemble.Prepared.Label): a release refused before it leaves the
// ledger and its record as they were. A ledger that the run would refuse
// whatever it releases is refused before the solve, read without its
// lock (ledger.Options.CheckRun). It returns the ledger opened, for the
// caller to read and close.
func (f *aggregateFlags) release(cmd *cobra.Command, spec ensemble.ReleaseSpec) (ensemble.Released, *ledger.Ledger, error) {
	if f.Ledger != "" {
		opts := setup.LedgerOptions(cmd)
		opts.Analyst = f.Analyst
		// What the votes' header states, as a release states it.
		b, _ := spec.Header.Check(provenance.Stated{})
		if err := opts.CheckRun(cmd.Context(), f.Ledger, b); err != nil {
			return ensemble.Released{}, nil, ledgerStep(err)
		}
	}
	p, err := ensemble.Prepare(cmd.Context(), spec)
	if err != nil {
		return p.Released, nil, err
	}
	var l ensemble.Ledger
	led, err := f.openLedger(cmd)
	if err != nil {
		return p.Released, nil, ledgerStep(err)
	}
	if led != nil {
		l = led
	}
	done, err := p.Label(cmd.Context(), l)
	return done, led, err
}

// openLedger opens --ledger for a run, charged by --analyst; nil without
// one.
func (f *aggregateFlags) openLedger(cmd *cobra.Command) (*ledger.Ledger, error) {
	if f.Ledger == "" {
		return nil, nil
	}
	opts := setup.LedgerOptions(cmd)
	opts.Analyst = f.Analyst
	return ledger.Open(cmd.Context(), f.Ledger, opts)
}
