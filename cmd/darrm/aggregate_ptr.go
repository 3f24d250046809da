package main

import (
	"cmp"
	"errors"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/pate"
)

// checkAccounting refuses --accounting and --max-queries where they do not
// apply, before anything is read: PTR tests PATE's data-dependent cost,
// of confident-gnmax or gnmax on class counts, within a budget, and reads
// the votes twice (the test, then the labels), so not from standard input.
func (f *aggregateFlags) checkAccounting(cmd *cobra.Command, info setup.MechanismInfo, budget *accountant.Budget, name string) error {
	fs := cmd.Flags()
	switch f.Accounting {
	case setup.DataIndependent:
		if fs.Changed("max-queries") {
			return cli.Usagef("--max-queries = %d goes with --accounting ptr: it is the proposal of a PTR release (a budget limits a data-independent one)", f.MaxQueries)
		}
		if fs.Changed("fallback") {
			return cli.Usagef("--fallback goes with --accounting ptr: it is what a PTR release whose test failed labels")
		}
		return nil
	case setup.PTRAccounting:
	default:
		return cli.Usagef("--accounting = %q: must be %s or %s", f.Accounting, setup.DataIndependent, setup.PTRAccounting)
	}
	switch {
	case !setup.PTRTests(info):
		return cli.Usagef("--accounting ptr with --mechanism %s: generalized PTR tests PATE's data-dependent cost, of %s on class counts",
			info.Name, setup.PTRNames())
	case budget == nil:
		return cli.Usagef("--accounting ptr needs --budget-eps and --budget-delta: the test and the proposal split the budget, and its total is published")
	case fs.Changed("max-queries") && f.MaxQueries < 1:
		return cli.Usagef("--max-queries = %d: must be >= 1", f.MaxQueries)
	case name == cli.Std:
		return cli.Usagef("--accounting ptr reads the votes twice, for the test and then for the labels: give VOTES as a file, not standard input")
	}
	return nil
}

// releasePTR releases the labels of spec by generalized PTR
// (pate.ReleasePTR) within budget, its proposal the first --max-queries
// queries of the votes, or every query, never a number chosen from them:
// it reads the votes named name once for the test's counts, and spec's
// reader labels them.
func (f *aggregateFlags) releasePTR(cmd *cobra.Command, name string, spec ensemble.ReleaseSpec, budget accountant.Guarantee) (ensemble.Released, *report.PTR, error) {
	in, file, err := f.OpenVotes(cmd, "VOTES", name)
	if err != nil {
		return ensemble.Released{}, nil, err
	}
	var counts [][]int
	for in.Next() {
		counts = append(counts, append([]int(nil), in.Query().Counts...))
	}
	err = in.Err()
	file.Close()
	if err != nil {
		return ensemble.Released{}, nil, err
	}
	// The proposal: every query when --max-queries is not given.
	opts := pate.PTROptions{Budget: budget, Queries: cmp.Or(f.MaxQueries, len(counts)), Abstain: in.MayAbstain(), Fallback: f.Fallback}
	if led, ok := spec.Ledger.(*runLedger); ok {
		// The release as the run of a declared use it must be.
		settings, err := setup.PTRSettings(spec.Mechanism, in.Classes())
		if err != nil {
			return ensemble.Released{}, nil, err
		}
		led.ptr = &ledger.UseRun{Accounting: setup.PTRAccounting, Queries: opts.Queries, Budget: &budget, Settings: settings}
	}
	plan, err := pate.PlanPTR(spec.Certificate.Memo, spec.Mechanism, in.Classes(), opts)
	if err != nil {
		return ensemble.Released{}, nil, setup.Flagged(err, setup.PTRFlagNames)
	}
	done, r, err := pate.ReleasePTR(cmd.Context(), spec, counts, plan)
	switch {
	case errors.Is(err, ensemble.ErrTestFailed) && done.Result.Released > 0:
		// The fallback's labels: the summary says the test failed, and
		// the queries left are stopped as by a budget (exit 4).
		if !errors.Is(err, ensemble.ErrBudget) {
			err = nil
		}
		return done, report.NewPTR(r, budget), err
	case errors.Is(err, ensemble.ErrTestFailed):
		return done, nil, &setup.PTRFailed{Plan: report.NewPTR(r, budget), Publish: done.Publish, Ledger: ledger.Redact(f.Ledger), Seeded: spec.Options.Experiment}
	case errors.Is(err, ensemble.ErrBudget) && done.Result.Released+done.Result.StoppedByBudget == 0:
		return done, nil, err // a ledger without room for the total: nothing drawn
	case err != nil && !errors.Is(err, ensemble.ErrBudget):
		return done, nil, setup.Flagged(err, setup.PTRFlagNames)
	}
	return done, report.NewPTR(r, budget), err
}
