package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/report"
)

// binaryOnlyFlags are aggregate's flags that only the binary mechanisms
// take: a multi-class release refuses them rather than ignore them.
var binaryOnlyFlags = []string{"m", "eps", "Delta", "gamma", "no-solve", "prior", "rr-composition", "rr-delta-prime", "gnmax-search"}

// runAggregateMulti releases labels of multi-class votes (counts or class
// indices) by gnmax, confident-gnmax or lnmax.
func runAggregateMulti(cmd *cobra.Command, f *aggregateFlags, name string, vf *ensemble.VoteFile, start time.Time) error {
	fs := cmd.Flags()
	input := cli.InputName(name)
	if err := f.checkMech(cmd, f.Mechanism); err != nil {
		return err
	}
	for _, fl := range binaryOnlyFlags {
		if fs.Changed(fl) {
			return cli.Usagef("--%s applies to the binary mechanisms (0/1 votes); %s is private in the one-vote relation, whatever the teachers' own guarantee", fl, f.Mechanism)
		}
	}
	if f.Mechanism == "lnmax" {
		if fs.Changed("delta") {
			return cli.Usagef("--delta: lnmax is (2/b, 0)-DP per query, pure DP: there is no delta to choose")
		}
	} else if err := cli.RequireFlags(cmd, "delta"); err != nil {
		return err
	}
	if err := f.checkDeltaPrime(); err != nil {
		return err
	}
	var inBudget *accountant.Guarantee
	switch eps, delta := fs.Changed("budget-eps"), fs.Changed("budget-delta"); {
	case eps && delta:
		inBudget = &accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}
	case eps || delta:
		return cli.Usagef("--budget-eps and --budget-delta go together: a budget must bound both")
	}
	in, err := f.multiInputFlags.multi(cmd, vf, input)
	if err != nil {
		return err
	}
	if fs.Changed("K") && f.K != in.K() {
		return cli.Usagef("--K = %d but %s has K = %d teachers", f.K, input, in.K())
	}
	agg, err := f.aggregator(cmd, f.Mechanism, in.K(), in.Classes(), f.Target)
	if err != nil {
		return err
	}
	binding, err := ensemble.MultiBinding(in, agg)
	if err != nil {
		return fmt.Errorf("%s: %w (--mechanism)", input, err)
	}
	_, capNote, err := binding.Cap(f.DeltaPrime)
	if err != nil {
		return err
	}
	priv := agg.Privacy()
	limit := -1
	var budget *report.Budget
	if inBudget != nil {
		if limit, err = accountant.MaxSteps(priv.Guarantee, *inBudget, f.Method, f.DeltaPrime); err != nil {
			return cli.Usagef("budget: %v", err)
		}
		budget = report.NewBudget(*inBudget, f.Method, f.DeltaPrime, limit)
	}
	run, limit, err := f.startRelease(cmd, name, in.Format(), binding, priv.Guarantee, limit)
	if err != nil {
		return err
	}
	defer run.close()
	sink, led, seed := run.sink, run.ledger, run.seed
	res, err := ensemble.ReleaseMultiTo(cmd.Context(), in, agg, run.src, sink, limit, run.opts)
	run.prog.Done()
	if fe := (*ensemble.FormatError)(nil); errors.As(err, &fe) {
		return cli.Usagef("%v", err)
	} else if err != nil {
		return err
	}
	out, err := report.NewAggregateMulti(report.MultiRelease{Mechanism: f.Mechanism, Aggregator: agg, Input: input, Output: cli.OutputName(f.Out),
		Votes: in, Sink: sink, Result: res, Budget: budget, DeltaPrime: f.DeltaPrime, CapNote: capNote, Seed: seed,
		Ledger: led, LedgerPath: f.Ledger, Elapsed: time.Since(start)})
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
		return fmt.Errorf("%w: released %d of %d queries, %d not released; %s holds the %d released", errBudget, res.Answered, res.Answered+res.Unanswered, res.Unanswered, cli.OutputName(f.Out), res.Answered)
	}
	return nil
}
