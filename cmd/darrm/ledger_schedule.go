package main

// This file reads the schedule a new ledger declares (ledger init
// --schedule): runs of mechanisms in a fixed order, each with its count,
// so that every step's privacy is fixed before the first and the ledger
// composes them exactly, as one run (ledger.NewUseHeader).

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
)

// scheduleRuns reads the schedule file path: one run per line, in order,
// each the run's flags as ledger init's --mechanism takes them and its
// count as --queries (the last run may omit it: it then takes every label
// the budget allows after the others); blank lines and lines starting
// with # are skipped. Each run is built as --mechanism builds its use,
// for the ensemble b and the votes read by --votes (nil: none), of
// classes classes, creatable asked before a gamma is solved
// (ledgerUseFlags.creatable).
func scheduleRuns(cmd *cobra.Command, ms *setup.Mechanisms, creatable func() error, path string, b provenance.Binding, budget accountant.Budget, votes *votesRead, classes int) ([]ledger.UseRun, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, cli.Usagef("--schedule: %v", err)
	}
	defer file.Close()
	var runs []ledger.UseRun
	var last int
	sc := bufio.NewScanner(file)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func(err error) error {
			return cli.Usagef("--schedule %s: line %d: %v", path, n, err)
		}
		if last > 0 && runs[len(runs)-1].Labels == 0 {
			return nil, bad(fmt.Errorf("line %d has no --queries: only the last run may take the rest of the budget", last))
		}
		u := ledgerUseFlags{ms: ms, creatable: creatable}
		sub := &cobra.Command{Use: "run", SilenceErrors: true, SilenceUsage: true}
		sub.SetContext(cmd.Context())
		sub.SetErr(cmd.ErrOrStderr())
		u.bind(sub)
		sub.Flags().StringVar((*string)(&u.Mechanism), "mechanism", "", "")
		if err := sub.Flags().Parse(strings.Fields(line)); err != nil {
			return nil, bad(cli.FlagValueError(err))
		}
		switch {
		case sub.Flags().NArg() > 0:
			return nil, bad(fmt.Errorf("%q is not a flag: a run is its flags, e.g. --mechanism gnmax --sigma2 40 --delta 1e-5 --queries 20", sub.Flags().Arg(0)))
		case u.Mechanism == "":
			return nil, bad(fmt.Errorf("no --mechanism: each run names its mechanism"))
		case sub.Flags().Changed("step-eps") || sub.Flags().Changed("step-delta"):
			return nil, bad(fmt.Errorf("--step-eps names no mechanism a release could be matched to"))
		case sub.Flags().Changed("queries") && u.Queries < 1:
			return nil, bad(fmt.Errorf("--queries = %d: a run's count must be >= 1 (omit it on the last run to take the rest of the budget)", u.Queries))
		}
		if cmd.Flags().Changed("classes") {
			// ledger init's --classes: the runs' votes are many-class.
			sub.Flags().Int("classes", classes, "")
			sub.Flags().Set("classes", fmt.Sprint(classes))
		}
		run, _, err := u.mechanismStep(sub, b, budget, votes, classes)
		if err != nil {
			return nil, bad(err)
		}
		run.Labels, last = u.Queries, n
		runs = append(runs, *run)
	}
	if err := sc.Err(); err != nil {
		return nil, cli.Usagef("--schedule %s: %v", path, err)
	}
	if len(runs) == 0 {
		return nil, cli.Usagef("--schedule %s: no runs: give one per line, e.g. --mechanism gnmax --sigma2 40 --delta 1e-5 --queries 20", path)
	}
	return runs, nil
}

// ledgerInitSchedule is ledger init of the ledger path with --schedule:
// a ledger whose use is the schedule's runs, in order, composed exactly
// as one run. The labels are the schedule's, so the flags that declare
// them, and --filter, which would open the ledger to any use, are
// refused with it.
func ledgerInitSchedule(cmd *cobra.Command, path string, f *ledgerInitFlags, b provenance.Binding, budget accountant.Budget, votes *votesRead) error {
	for _, n := range append([]string{"mechanism", "step-eps", "step-delta", "filter"}, f.use.flagNames()...) {
		if cmd.Flags().Changed(n) && !(n == "classes" || n == "cache-dir" || n == "no-cache" || n == "workers" || n == "no-solve") {
			return cli.Usagef("--schedule and --%s exclude each other: each run of the schedule gives its own settings on its line", n)
		}
	}
	runs, err := scheduleRuns(cmd, f.use.ms, f.use.creatable, f.Schedule, b, budget, votes, f.Classes)
	if err != nil {
		return err
	}
	h, err := ledger.NewUseHeader(cmd.Context(), setup.Memo(cmd), b, budget, f.DeltaPrime, runs)
	if err != nil {
		return cli.AsUsage(setup.Flagged(err, map[string]string{"queries": "--schedule's --queries"}))
	}
	return initLedger(cmd, path, f, b, h, nil, func() error { return report.LedgerSchedule(cmd.OutOrStdout(), path, h) })
}

// initLedger creates the ledger at path with the header h and the
// analysts' shares of --share, each of which must allow a step of its use
// or of the labels declared (step, nil for none: sharesAllow), says how
// its runs are held (say), and prints the ledger as read back.
func initLedger(cmd *cobra.Command, path string, f *ledgerInitFlags, b provenance.Binding, h ledger.Header, step *accountant.Spend, say func() error) error {
	var err error
	if h.Shares, err = parseShares(f.Shares); err != nil {
		return err
	}
	if err := sharesAllow(setup.Memo(cmd), h, step); err != nil {
		return err
	}
	opts := setup.LedgerOptions(cmd)
	opts.Replace = f.Replace
	prev, err := ledger.Create(cmd.Context(), path, h, opts)
	if err != nil {
		return setup.LedgerError(err)
	}
	if err := say(); err != nil {
		return err
	}
	opts.ReadOnly = true
	l, err := ledger.Open(cmd.Context(), path, opts)
	if err != nil {
		return setup.LedgerError(err)
	}
	defer l.Close()
	bal, err := l.Balance()
	if err != nil {
		return err
	}
	return report.LedgerInitialized(cmd.OutOrStdout(), path, b, l.Header(), bal, prev)
}
