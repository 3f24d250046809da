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

// checkAccounting refuses --accounting, --max-queries and --fallback where
// they do not apply, before anything is read: PTR tests PATE's
// data-dependent cost, of the mechanisms setup.PTRTests says, within a
// budget, and reads the votes twice (the test, then the labels),
// so not from standard input.
func (f *aggregateFlags) checkAccounting(cmd *cobra.Command, info setup.MechanismInfo, budget *accountant.Budget, name string) error {
	fs := cmd.Flags()
	if fs.Changed("max-queries") && f.MaxQueries < 1 {
		return cli.Usagef("--max-queries = %d: must be >= 1 (the first queries to release)", f.MaxQueries)
	}
	charged, only := setup.PerDraw(info)
	if only && !fs.Changed("accounting") {
		f.Accounting = setup.FilterAccounting // its only accounting
	}
	switch f.Accounting {
	case setup.DataIndependent, setup.FilterAccounting:
		if fs.Changed("fallback") {
			return cli.Usagef("--fallback goes with --accounting ptr: it is what a PTR release whose test failed labels")
		}
		switch {
		case f.Accounting == setup.DataIndependent && only:
			return cli.Usagef("--accounting %s with --mechanism %s: its draws are chosen from its earlier outputs, so no composition fixed in advance counts them: it is charged per draw to a Gaussian-DP filter (--accounting %s, its default)",
				setup.DataIndependent, info.Name, setup.FilterAccounting)
		case f.Accounting == setup.DataIndependent:
		case !charged:
			return cli.Usagef("--accounting %s with --mechanism %s: each draw charged to a Gaussian-DP filter before it is drawn is the accounting of %s on class counts", setup.FilterAccounting, info.Name, f.ms.PerDrawNames())
		case budget == nil:
			by := "--accounting " + setup.FilterAccounting
			if only && !fs.Changed("accounting") {
				by = "--mechanism " + string(info.Name) // its only accounting, not asked for
			}
			return cli.Usagef("%s needs --budget-eps and --budget-delta: the budget of the Gaussian-DP filter that each draw is charged to, the total to publish", by)
		}
		return nil
	case setup.PTRAccounting:
	default:
		return cli.Usagef("--accounting = %q: must be %s, %s or %s", f.Accounting, setup.DataIndependent, setup.PTRAccounting, setup.FilterAccounting)
	}
	switch {
	case !setup.PTRTests(info):
		return cli.Usagef("--accounting ptr with --mechanism %s: generalized PTR tests PATE's data-dependent cost, of %s on class counts",
			info.Name, f.ms.PTRNames(" or "))
	case budget == nil:
		return cli.Usagef("--accounting ptr needs --budget-eps and --budget-delta: the test and the proposal split the budget, and its total is published")
	case name == cli.Std:
		return cli.Usagef("--accounting ptr reads the votes twice, for the test and then for the labels: give VOTES as a file, not standard input")
	}
	return nil
}

// releasePTR releases the labels of spec by generalized PTR
// (pate.ReleasePTR) within budget, its proposal the first --max-queries
// queries of the votes, or every query, never a number chosen from them:
// it reads the votes named name once for the test's counts, and spec's
// reader labels them. With --ledger it opens the ledger into spec, for
// the caller to read and close, and refuses a release its declared use
// does not hold (setup.PTRUseRefused) before anything is charged.
func (f *aggregateFlags) releasePTR(cmd *cobra.Command, name string, spec *ensemble.ReleaseSpec, budget accountant.Guarantee) (ensemble.Released, *report.PTR, error) {
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
	plan, err := pate.PlanPTR(spec.Certificate.Memo, spec.Mechanism, in.Classes(), opts)
	if err != nil {
		return ensemble.Released{}, nil, setup.Flagged(err, setup.PTRFlagNames)
	}
	if err := f.ptrLedger(cmd, spec, in.Classes(), budget, opts.Queries, plan); err != nil {
		return ensemble.Released{}, nil, err
	}
	done, r, err := pate.ReleasePTR(cmd.Context(), *spec, counts, plan)
	if err != nil && !errors.Is(err, ensemble.ErrTestFailed) {
		return done, nil, setup.Flagged(err, setup.PTRFlagNames)
	}
	summary := report.NewPTR(r, budget)
	failed := &setup.PTRFailed{Plan: summary, Publish: done.Publish, Ledger: ledger.Redact(f.Ledger), Seeded: spec.Options.Experiment}
	switch {
	case err != nil:
		return done, summary, failed
	case done.Result.Released == 0:
		// The ledger had no room for the total: nothing drawn, nothing
		// charged, the proposal stopped by the budget (exit 4).
		summary.Passed = nil
		return done, summary, nil
	case !r.Pass:
		// The fallback's labels: the summary says so, and the run exits
		// as a failed test does (4).
		failed.Fallback = done.Result.Released
		return done, summary, failed
	}
	return done, summary, nil
}

// ptrLedger opens --ledger, if given, into spec for a release by
// generalized PTR of the plan for votes of classes classes, its proposal
// queries within budget: a ledger whose use is declared must declare it,
// the release described as the run it must be (setup.PTRUseRefused),
// before anything is drawn or charged.
func (f *aggregateFlags) ptrLedger(cmd *cobra.Command, spec *ensemble.ReleaseSpec, classes int, budget accountant.Guarantee, queries int, plan pate.PTRResult) error {
	l, err := f.openLedger(cmd)
	if err != nil || l == nil {
		return ledgerStep(err)
	}
	spec.Ledger = l
	run, err := setup.PTRRun(spec.Mechanism, classes, budget, queries, plan)
	if err != nil {
		return err
	}
	return ledgerStep(setup.PTRUseRefused(l, ledger.Redact(f.Ledger), *run))
}

// ledgerStep says err, if not nil, as the error of a release's ledger
// (ensemble.StepLedger).
func ledgerStep(err error) error {
	if err == nil {
		return nil
	}
	return &ensemble.ReleaseError{Step: ensemble.StepLedger, Err: err}
}
