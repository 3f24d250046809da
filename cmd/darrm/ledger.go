package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/report"
	"github.com/darrm/darrm/ledger"
)

func init() { subcommands = append(subcommands, newLedgerCmd) }

func newLedgerCmd() *cobra.Command {
	return newGroupCmd("ledger", "A persistent privacy budget for one teacher ensemble, across runs",
		`ledger creates and shows privacy ledgers. A ledger holds the total budget of
one teacher ensemble and every release charged to it; "darrm aggregate
--ledger FILE" refuses labels beyond the budget and records each release on
disk (fsync) before its labels leave the process. Concurrent runs on one
ledger are serialised by a file lock. Totals use optimal composition when
every label had the same guarantee, heterogeneous general composition
otherwise (or simple composition when smaller). See docs/aggregate.md.`,
		newLedgerInitCmd(), newLedgerShowCmd())
}

func newLedgerInitCmd() *cobra.Command {
	var (
		name, relation string
		budget         accountant.Guarantee
		deltaPrime     float64
	)
	cmd := &cobra.Command{
		Use:     "init LEDGER --ensemble NAME --budget-eps E --budget-delta D",
		Short:   "Create a ledger with a total budget",
		Example: "  darrm ledger init mnist58.ledger --ensemble mnist58-k11 --budget-eps 10 --budget-delta 1e-3",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireFlags(cmd, "ensemble", "budget-eps", "budget-delta"); err != nil {
				return err
			}
			if relation != ensemble.PrivateTeachers.String() && relation != ensemble.OneVote.String() {
				return usageErrorf("--relation %q: must be %v (DaRRM, RR, subsampling) or %v (GNMax)", relation, ensemble.PrivateTeachers, ensemble.OneVote)
			}
			h := ledger.Header{Ensemble: name, Relation: relation, Budget: budget, DeltaPrime: deltaPrime}
			if err := ledger.Init(args[0], h); err != nil {
				return &usageError{err}
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "ledger %s: ensemble %s, budget %v (%s relation, delta' = %g)\n", args[0], name, budget, relation, deltaPrime)
			return err
		},
	}
	fs := cmd.Flags()
	flagBudgetEps.add(fs, &budget.Eps)
	flagBudgetDelta.add(fs, &budget.Delta)
	flagDeltaPrime.add(fs, &deltaPrime)
	fs.StringVar(&name, "ensemble", "", "name of the teacher ensemble the budget is for")
	fs.StringVar(&relation, "relation", ensemble.PrivateTeachers.String(), "neighbouring relation: private-teachers (DaRRM, RR, subsampling) or one-vote (GNMax)")
	return cmd
}

func newLedgerShowCmd() *cobra.Command {
	var format formatFlag
	cmd := &cobra.Command{
		Use:   "show LEDGER",
		Short: "Print a ledger's budget, releases and total",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := format.parse()
			if err != nil {
				return err
			}
			l, err := openLedgerFile(args[0])
			if err != nil {
				return err
			}
			defer l.Close()
			h := l.Header()
			total, method, err := l.Total()
			if err != nil {
				return err
			}
			var rows []cliout.Record
			for _, s := range l.Spends() {
				rows = append(rows, cliout.Record{{Key: "time", Val: s.Time.Format("2006-01-02T15:04:05Z")}, {Key: "run", Val: s.Run},
					{Key: "mechanism", Val: s.Mechanism}, {Key: "queries", Val: s.Queries}, {Key: "eps", Val: s.Eps}, {Key: "delta", Val: s.Delta}, {Key: "final", Val: s.Final}})
			}
			common := cliout.Record{{Key: "ledger", Val: args[0]}, {Key: "ensemble", Val: h.Ensemble}, {Key: "relation", Val: h.Relation},
				{Key: "budget_eps", Val: h.Budget.Eps}, {Key: "budget_delta", Val: h.Budget.Delta}, {Key: "delta_prime", Val: h.DeltaPrime},
				{Key: "total_eps", Val: total.Eps}, {Key: "total_delta", Val: total.Delta}, {Key: "composition", Val: method}}
			if len(rows) == 0 {
				return cliout.WriteRecord(cmd.OutOrStdout(), f, common)
			}
			return cliout.WriteRecords(cmd.OutOrStdout(), f, common, rows)
		},
	}
	format.add(cmd)
	return cmd
}

// openLedgerFile opens a ledger; a corrupt one is bad input (exit 2).
func openLedgerFile(path string) (*ledger.Ledger, error) {
	l, err := ledger.Open(path)
	var ce *ledger.CorruptError
	if errors.As(err, &ce) {
		return nil, &usageError{err}
	}
	if err != nil {
		return nil, usageErrorf("--ledger: %v", err)
	}
	return l, nil
}

// openLedger opens the ledger of a release, starts its spend and returns
// the number of queries it may answer: at most limit (none when < 0) and
// what the ledger's budget allows.
func openLedger(path, mechanism string, priv ensemble.Privacy, limit int) (*ledger.Ledger, int, error) {
	l, err := openLedgerFile(path)
	if err != nil {
		return nil, 0, err
	}
	if err := l.Begin(mechanism, priv.Relation.String(), priv.Guarantee); err != nil {
		l.Close()
		return nil, 0, &usageError{err}
	}
	allowed, err := l.Allowance(priv.Guarantee, limit)
	if err != nil {
		l.Close()
		return nil, 0, err
	}
	return l, allowed, nil
}

// ledgerOut is the ledger's state after a release, for the summary.
func ledgerOut(path string, l *ledger.Ledger, step accountant.Guarantee) (*report.Ledger, error) {
	total, method, err := l.Total()
	if err != nil {
		return nil, err
	}
	left, err := l.Allowance(step, -1)
	if err != nil {
		return nil, err
	}
	h := l.Header()
	return &report.Ledger{Path: path, Ensemble: h.Ensemble, Relation: h.Relation, Budget: h.Budget, Total: total, Composition: method, QueriesLeft: left}, nil
}
