package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/internal/report"
	"github.com/darrm/darrm/ledger"
)

func init() { subcommands = append(subcommands, newAggregateCmd) }

type aggregateFlags struct {
	problemFlags
	mechanismFlags
	compositionFlags
	pateFlags
	Format      cliout.Format   `flag:"format"`
	Seed        uint64          `flag:"seed"`
	BudgetEps   float64         `flag:"budget-eps"`
	BudgetDelta float64         `flag:"budget-delta"`
	Ledger      string          `flag:"ledger"`
	Out         string          `flag:"out" help:"file for the labels, written atomically; a device or FIFO is written through (- for standard output)"`
	OutFormat   ensemble.Format `flag:"out-format" help:"labels as csv or jsonl (auto: the format of the votes)"`
	multiInputFlags
	Mechanism string
}

func newAggregateCmd() *cobra.Command {
	f := aggregateFlags{Out: "-"}
	cmd := newCmd("aggregate", &cobra.Command{
		Use:   "aggregate [VOTES] [flags]",
		Short: "Release one private majority label per query from K teachers' votes",
		Args:  cli.MaxArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runAggregate(cmd, &f, args) },
		// checkOutputs names the argument so in its errors.
		Annotations: map[string]string{"input": "the vote file"},
	}, &f, map[string]string{"budget-method": "composition", "rr-method": "rr-composition", "gnmax-sigma": "gnmax-search"})
	cmd.Flags().StringVar(&f.Mechanism, "mechanism", "darrm", "aggregator: "+strings.Join(ensemble.Mechanisms, ", ")+"; for multi-class votes (--input-format counts or --classes): "+strings.Join(ensemble.MultiMechanisms, ", "))
	return cmd
}

// parse checks the flags and returns the budget, if any, and the
// mechanism.
func (f *aggregateFlags) parse(cmd *cobra.Command) (budget *accountant.Guarantee, mech mechanisms, err error) {
	if err := f.checkDeltaPrime(); err != nil {
		return nil, mech, err
	}
	switch eps, delta := cmd.Flags().Changed("budget-eps"), cmd.Flags().Changed("budget-delta"); {
	case eps && delta:
		budget = &accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}
	case eps || delta:
		return nil, mech, cli.Usagef("--budget-eps and --budget-delta go together: a budget must bound both")
	}
	mech, err = f.mechanismFlags.parse(cmd, "mechanism", []string{f.Mechanism})
	return budget, mech, err
}

func runAggregate(cmd *cobra.Command, f *aggregateFlags, args []string) error {
	start := time.Now()
	fs := cmd.Flags()
	name := cli.InputArg(args)
	if cli.IsStdoutFile(f.Out, cmd.OutOrStdout()) {
		f.Out = cli.Std // e.g. /dev/stdout: write to it, never replace it
	}
	file, err := cli.OpenInputContext(cmd.Context(), cmd.InOrStdin(), name)
	if err != nil {
		return err
	}
	defer file.Close()
	vf, multi, err := f.openVotes(cmd, file, cli.InputName(name))
	if err != nil {
		return err
	}
	if multi {
		return runAggregateMulti(cmd, f, name, vf, start)
	}
	if slices.Contains(ensemble.MultiMechanisms, f.Mechanism) && f.Mechanism != "gnmax" {
		return cli.Usagef("--mechanism %s needs multi-class votes: --input-format counts, --classes C, or a metadata header that states them", f.Mechanism)
	}
	for _, fl := range []string{"sigma2", "sigma1", "threshold", "laplace-scale"} {
		if fs.Changed(fl) {
			return cli.Usagef("--%s applies to multi-class votes (--input-format counts, --classes C, or a metadata header that states them); binary gnmax calibrates sigma from --m, --eps and --delta", fl)
		}
	}
	inBudget, mech, err := f.parse(cmd)
	if err != nil {
		return err
	}
	votes, err := vf.Votes(ensemble.ReadOptions{Format: f.InFormat, Header: f.Header, ID: f.ID})
	if fe := (*ensemble.FormatError)(nil); errors.As(err, &fe) {
		return cli.Usagef("%v", err)
	} else if err != nil {
		return err
	}
	teachers, err := ensemble.ReleaseTeachers(votes.Meta(), cli.Given(fs, "eps", f.Eps), cli.Given(fs, "Delta", f.Delta))
	if err != nil {
		return fmt.Errorf("%s: %w (--eps, --Delta)", cli.InputName(name), err)
	}
	p, err := f.params(cmd, mech, votes.K(), cli.InputName(name), teachers)
	if err != nil {
		return err
	}
	agg, label, err := mech.newAggregator(cmd, f.Mechanism, p.Params)
	if err != nil {
		return err
	}
	binding, err := ensemble.ReleaseBinding(votes, agg)
	if err != nil {
		return fmt.Errorf("%s: %w (--mechanism)", cli.InputName(name), err)
	}
	teacherCap, capNote, err := binding.Cap(f.DeltaPrime)
	if err != nil {
		return err
	}
	priv := agg.Privacy()
	limit := -1
	var budget *report.Budget
	if inBudget != nil {
		if limit, err = accountant.MaxStepsCapped(priv.Guarantee, *inBudget, f.Method, f.DeltaPrime, teacherCap); err != nil {
			return cli.Usagef("budget: %v", err)
		}
		budget = report.NewBudget(*inBudget, f.Method, f.DeltaPrime, limit)
	}
	run, limit, err := f.startRelease(cmd, name, votes.Format(), binding, priv.Guarantee, limit)
	if err != nil {
		return err
	}
	defer run.close()
	sink, led, seed := run.sink, run.ledger, run.seed
	res, err := ensemble.ReleaseTo(cmd.Context(), votes, agg, run.src, sink, limit, run.opts)
	run.prog.Done()
	if fe := (*ensemble.FormatError)(nil); errors.As(err, &fe) {
		return cli.Usagef("%v", err) // malformed votes are bad input
	} else if err != nil {
		return err
	}

	out, err := report.NewAggregate(report.Release{Problem: p, Mechanism: f.Mechanism, Label: label, Aggregator: agg,
		Input: cli.InputName(name), Output: cli.OutputName(f.Out), Votes: votes, Teachers: teachers, Sink: sink, Result: res,
		Budget: budget, DeltaPrime: f.DeltaPrime, Cap: teacherCap, CapNote: capNote, Seed: seed, Ledger: led, LedgerPath: f.Ledger, Elapsed: time.Since(start)})
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if sink.ToStdout() {
		w = cmd.ErrOrStderr()
	}
	if err := out.Write(w, f.Format); err != nil {
		return err
	}
	if res.Unanswered > 0 {
		return fmt.Errorf("%w: answered %d of %s, %d left unanswered; %s holds the %d answered",
			errBudget, res.Answered, plural.Of(res.Answered+res.Unanswered, "query", "queries"), res.Unanswered, cli.OutputName(f.Out), res.Answered)
	}
	return nil
}

// params returns the problem: K from the vote file, the teachers' eps and
// Delta of t, the rest from the flags or, with --gamma, from what the gamma
// file states (as darrm verify does).
func (f *aggregateFlags) params(cmd *cobra.Command, mech mechanisms, k int, input string, t ensemble.TeacherGuarantee) (gamma.Problem, error) {
	if cmd.Flags().Changed("K") && f.K != k {
		return gamma.Problem{}, cli.Usagef("--K = %d but %s has %d votes per row", f.K, input, k)
	}
	line := f.stated(cmd)
	line.Eps, line.Delta = &t.Eps, &t.Delta
	eps := "--eps"
	if t.Source == ensemble.FromHeader {
		eps = "eps " + cliout.Float(t.Eps) + " of the metadata header of " + input
	}
	if mech.table != nil {
		if kg := mech.table.Gamma.K(); kg != k {
			return gamma.Problem{}, cli.Usagef("--gamma %s is for K = %d teachers but %s has %d votes per row", mech.tableName, kg, input, k)
		}
		return f.paramsNamed(k, eps, line, mech.table.Stated)
	}
	return f.paramsNamed(k, eps, line)
}

// release is what a release writes to, charges and draws from: the label
// sink, the ledger (nil without --ledger), the randomness and its seed,
// and the progress line with the release's options.
type release struct {
	sink   ensemble.LabelSink
	ledger *ledger.Ledger
	src    *ensemble.Source
	seed   *uint64
	prog   *cliout.Progress
	opts   ensemble.ReleaseOptions
}

// startRelease opens the sink of the labels (in votes' format unless
// --out-format says), the ledger bound to b, charged step per query, which
// may lower limit, and the randomness of a release from name. Call close
// at the end.
func (f *aggregateFlags) startRelease(cmd *cobra.Command, name string, votes ensemble.Format, b ensemble.Binding, step accountant.Guarantee, limit int) (*release, int, error) {
	r := &release{sink: ensemble.LabelSink{Path: f.Out, Stdout: cmd.OutOrStdout(), Format: f.OutFormat}, src: ensemble.NewSource()}
	if r.sink.Format == ensemble.FormatAuto {
		r.sink.Format = votes
	}
	if f.Ledger != "" {
		var err error
		opts := ledger.Options{Waiting: waitingFor(cmd)}
		if r.ledger, limit, err = ledger.OpenRun(cmd.Context(), f.Ledger, f.Mechanism, b, step, limit, opts); err != nil {
			return nil, 0, ledgerError(err)
		}
		printNotes(cmd.ErrOrStderr(), f.Ledger, r.ledger.Notes())
		r.sink.Ledger = r.ledger
	}
	if r.seed = cli.Given(cmd.Flags(), "seed", f.Seed); r.seed != nil {
		r.src = ensemble.NewSeededSource(*r.seed)
		fmt.Fprintf(cmd.ErrOrStderr(), "darrm: warning: --seed %d: %s\n", *r.seed, report.NotForRelease)
	}
	total := cli.InputSize(name)
	r.prog = cliout.NewProgress(cmd.ErrOrStderr(), total, "releasing labels")
	r.opts = ensemble.ReleaseOptions{Experiment: r.seed != nil, Progress: func(n int, b int64) {
		if total > 0 {
			r.prog.Set(b)
		} else {
			r.prog.Set(int64(n))
		}
	}}
	return r, limit, nil
}

// close closes the ledger.
func (r *release) close() {
	if r.ledger != nil {
		r.ledger.Close()
	}
}
