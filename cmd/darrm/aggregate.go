package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func init() { subcommands = append(subcommands, subcommand{"aggregate", newAggregateCmd}) }

type aggregateFlags struct {
	setup.ProblemFlags
	setup.MechanismConfig
	setup.CompositionFlags
	setup.ClassFlags
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
}

func newAggregateCmd() *cobra.Command {
	f := aggregateFlags{Out: "-", Accounting: setup.DataIndependent}
	cmd := newCmd("aggregate", &cobra.Command{
		Use:   "aggregate [VOTES] [flags]",
		Short: "Release one private majority label per query from K teachers' votes",
		Args:  cli.MaxArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runAggregate(cmd, &f, args) },
		// Check names the argument so in its errors.
		Annotations: map[string]string{"input": "the vote file"},
	}, &f)
	cmd.Flags().StringVar((*string)(&f.Mechanism), "mechanism", string(ensemble.DaRRM{}.Name()), "aggregator (the list above)")
	// A release's teachers are the votes' header's, or given: no default.
	cli.SetDefaultText(cmd.Flags(), "the header's", "eps", "Delta")
	setup.HideComposition(cmd)
	setup.AddWitnessFlag(cmd)
	return cmd
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
// spec -> ensemble.Release -> report. It chooses the reader (0/1 votes,
// or multi-class votes) and the settings of the aggregator, and the
// library does the rest.
func runAggregate(cmd *cobra.Command, f *aggregateFlags, args []string) error {
	start := time.Now()
	name := cli.InputArg(args)
	input := cli.InputName(name)
	if cli.IsStdoutFile(f.Out, cmd.OutOrStdout()) {
		f.Out = cli.Std // e.g. /dev/stdout: write to it, never replace it
	}
	setup.CompositionIgnored(cmd)
	budget, totalDelta, err := f.budget(cmd)
	if err != nil {
		return err
	}
	in, file, err := f.OpenVotes(cmd, "VOTES", name)
	if err != nil {
		return err
	}
	defer file.Close()
	info, err := setup.LookupMechanism(f.Mechanism, in.Input())
	if err != nil {
		return cli.Usagef("--%v (multi-class votes: --input-format counts, --classes C, or a metadata header that states them)", err)
	}
	if err := setup.CheckMechanismSettings(cmd, info, nil); err != nil {
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
	if f.Accounting == setup.PTRAccounting {
		// PTR's own: the test and the proposal split the budget, and
		// --max-queries is the proposal.
		spec.Budget, spec.MaxQueries = nil, 0
	}
	p := rel.Problem.Problem
	if info.Input == votefile.ManyClasses {
		p = constraints.Problem{K: in.K(), TargetDelta: f.Target}
	}
	lines := cliout.NewStages(cmd.ErrOrStderr())
	src, _ := values["gamma"].(optimal.Source)
	f.startRelease(cmd, name, info, &spec, &src, p, lines)
	var notStored error
	src.OnNotStored = func(err error) { notStored = err }
	values["gamma"] = src
	spec.Mechanism = info.With(cmd.Flags(), values)
	if f.Accounting == setup.FilterAccounting {
		spec.Mechanism, _ = ensemble.ChargedPerDraw(spec.Mechanism, accountant.Guarantee{}) // checkAccounting: it has one
	}
	var led *runLedger
	if f.Ledger != "" {
		opts := setup.LedgerOptions(cmd)
		opts.Analyst = f.Analyst
		led = &runLedger{open: func(ctx context.Context) (*ledger.Ledger, error) { return ledger.Open(ctx, f.Ledger, opts) }, name: ledger.Redact(f.Ledger)}
		defer led.close()
		spec.Ledger = led
	}
	var (
		done   ensemble.Released
		tested *report.PTR
	)
	if f.Accounting == setup.PTRAccounting {
		done, tested, err = f.releasePTR(cmd, name, spec, budget.Guarantee)
	} else {
		done, err = ensemble.Release(cmd.Context(), spec)
	}
	lines.Done()
	setup.WarnNotStored(cmd, notStored)
	if led != nil && led.begun {
		setup.PrintLedgerNotes(cmd.ErrOrStderr(), f.Ledger, led.Notes())
	}
	if err != nil && !errors.Is(err, setup.ErrBudget) {
		return f.MechanismConfig.ReleaseError(err, input)
	}
	// What is left, err, is an outcome that exits 4 after the summary: a
	// PTR test that failed, or a ledger with no room for a PTR release's
	// total (nothing drawn).
	stop := err
	if led != nil && led.begun {
		st, err := led.BalanceFor(led.step)
		led.close()
		if err != nil {
			return setup.LedgerError(err)
		}
		rel.LedgerStatus = &st
	}
	rel.Released = done
	rel.Input, rel.Output, rel.Votes, rel.Sink, rel.Seed = input, cli.OutputName(f.Out), in, spec.Sink, cli.Given(cmd.Flags(), "seed", f.Seed)
	rel.LedgerPath, rel.Analysis, rel.Elapsed, rel.PTR, rel.Memo = ledger.Redact(f.Ledger), f.Analysis, time.Since(start), tested, setup.Memo(cmd)
	out, err := report.NewSummary(rel)
	if err != nil {
		return err
	}
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

// runLedger is the ledger of a release (ensemble.Ledger), opened only when
// the release begins its run on it (Begin), after the aggregator is built
// and accounted for: a solve of gamma_opt, which may take minutes, then
// holds no lock on a ledger that other analysts wait for (--lock-timeout),
// and a release refused before it leaves the ledger and its record as
// they were.
type runLedger struct {
	*ledger.Ledger
	open func(ctx context.Context) (*ledger.Ledger, error)
	// ptr is a release accounted as a whole by generalized PTR
	// (--accounting ptr), described as the run of a declared use it must
	// be (its step still to be set), which a ledger whose use is declared
	// matches (setup.PTRUseRefused); nil for a release per query. name is the
	// ledger as given, without a password.
	ptr  *ledger.UseRun
	name string
	// begun says that the run has begun on the ledger, charged step by
	// step (a PTR release's total as one).
	begun bool
	step  accountant.Spend
}

// Begin opens the ledger and begins the run on it.
func (r *runLedger) Begin(ctx context.Context, mechanism provenance.MechanismName, b provenance.Binding, step accountant.Spend, limit int) (int, error) {
	l, err := r.open(ctx)
	if err != nil {
		return 0, err
	}
	r.Ledger = l
	if r.ptr != nil {
		release := *r.ptr
		release.Mechanism, release.Step = mechanism, step
		if err := setup.PTRUseRefused(l, r.name, release); err != nil {
			return 0, err
		}
	}
	n, err := l.Begin(ctx, mechanism, b, step, limit)
	r.begun, r.step = err == nil, step
	return n, err
}

// close closes the ledger, if it was opened.
func (r *runLedger) close() {
	if r.Ledger != nil {
		r.Ledger.Close()
		r.Ledger = nil
	}
}

// spec returns the release of the votes of in by mechanism info as the
// flags say, without its budget and its mechanism, whose settings it
// returns: for a two-class one, the problem of the flags, K and the
// teachers' guarantee of the votes (their header, else --eps and
// --Delta), or, for a mechanism whose target is the release's own
// (--target-eps), the one-vote problem of that target; for a multi-class
// one, its flags, checked, whose noise is the discrete one releases draw.
// It returns too the report to be, which the caller completes.
func (f *aggregateFlags) spec(cmd *cobra.Command, info setup.MechanismInfo, in votefile.Reader, input string) (ensemble.ReleaseSpec, report.Release, setup.MechanismValues, error) {
	rel := report.Release{Mechanism: info.Name, HeaderFile: f.HeaderFile()}
	spec := ensemble.ReleaseSpec{Votes: in, Header: f.CheckedHeader()}
	mech := &f.MechanismConfig
	settings := setup.MechanismValues{"delta": f.Target, "noise": noisymax.DiscreteNoise}
	var err error
	switch {
	case info.Input == votefile.TwoClass:
		if err = mech.Check(cmd, info); err != nil {
			return spec, rel, settings, err
		}
		fs := cmd.Flags()
		if info.OwnTarget() {
			rel.Teachers = provenance.TeacherGuarantee{FromFlags: true}
		} else if rel.Teachers, err = f.CheckedHeader().ReleaseTeachers(provenance.Stated{Eps: cli.Given(fs, "eps", f.Eps), Delta: cli.Given(fs, "Delta", f.Delta),
			Calibrated: ensemble.Mechanisms().Calibrated(in.Meta())}); err != nil {
			return spec, rel, settings, fmt.Errorf("%s: %w (--eps, --Delta)", input, err)
		}
		if rel.Problem, err = f.params(cmd, info, in.K(), input, rel.Teachers); err != nil {
			return spec, rel, settings, err
		}
		p := rel.Problem.Problem
		var src optimal.Source
		if info.Gamma {
			if src, err = mech.Source(setup.Memo(cmd), info); err != nil {
				return spec, rel, settings, err
			}
		}
		settings = mech.Settings(p, src)
		if !info.OwnTarget() {
			spec.Teachers = &accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}
		}
	case cmd.Flags().Changed("sigma2"): // the GNMax family (setup.CheckMechanismSettings)
		if err := info.With(cmd.Flags(), settings).Validate(); err != nil {
			return spec, rel, settings, setup.Flagged(err, nil)
		}
	}
	return spec, rel, settings, nil
}

// params returns the problem: K from the vote file (which the caller
// checked against --K) and the rest from the flags or, with --gamma, from
// what the gamma file states (as darrm verify does): for a mechanism whose
// target is the release's own, the one-vote problem of --target-eps and
// --delta; otherwise the teachers' eps and Delta of t, with --m and
// --delta.
func (f *aggregateFlags) params(cmd *cobra.Command, info setup.MechanismInfo, k int, input string, t provenance.TeacherGuarantee) (resolve.Resolved, error) {
	line := f.Stated(cmd)
	eps := "--eps"
	tab, tabName := f.GammaTable()
	if info.OwnTarget() {
		var err error
		if line, err = setup.OneVoteTarget(cmd.Flags(), f.TargetEps, line.TargetDelta); err != nil {
			return resolve.Resolved{}, err
		}
		if line.Eps == nil && (tab == nil || tab.Eps == nil) {
			return resolve.Resolved{}, cli.Usagef("%s needs the release's eps: give --target-eps (and --delta, 0 unless given)", info.Name)
		}
	} else {
		line.Eps, line.Delta = &t.Eps, &t.Delta
		if !t.FromFlags {
			eps = "eps " + cliout.Float(t.Eps) + " of the metadata header of " + input
		}
	}
	if tab != nil {
		if kg := tab.Gamma.K(); kg != k {
			return resolve.Resolved{}, cli.Usagef("--gamma %s is for K = %d teachers but %s has %d votes per row", tabName, kg, input, k)
		}
		return f.ParamsNamed(k, eps, line, resolve.FromTable(*tab))
	}
	return f.ParamsNamed(k, eps, line)
}

// startRelease completes spec with the sink of the labels (in the votes'
// format unless --out-format says), the randomness of a release from
// name, and the progress of each step on lines, the solve of
// the gamma of src for problem p among them.
func (f *aggregateFlags) startRelease(cmd *cobra.Command, name string, info setup.MechanismInfo, spec *ensemble.ReleaseSpec, src *optimal.Source, p constraints.Problem, lines *cliout.Stages) {
	spec.Sink = ensemble.LabelSink{Path: f.Out, Stdout: cmd.OutOrStdout(), Format: f.OutFormat}
	if spec.Sink.Format == votefile.FormatAuto {
		spec.Sink.Format = votefile.LabelFormat(f.Out, spec.Votes.Format())
	}
	if seed := cli.Given(cmd.Flags(), "seed", f.Seed); seed != nil {
		spec.Random = noise.NewSeededSource(*seed)
	}
	spec.Certificate = f.MechanismConfig.Watch(cmd, src, info, p, lines)
	// The bytes read are the votes' own: of an .npz archive's array they
	// are its uncompressed bytes, which the archive's size does not
	// measure, so its progress counts queries.
	total := cli.InputSize(name)
	if f.Array != "" {
		total = -1
	}
	spec.Options = ensemble.ReleaseOptions{Partition: f.Partition, Experiment: spec.Random != nil, Progress: func(n int, b int64) {
		done := int64(n)
		if total > 0 {
			done = b
		}
		lines.At("releasing labels", total).Set(done)
	}}
}
