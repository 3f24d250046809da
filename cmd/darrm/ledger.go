package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/report"
	"github.com/darrm/darrm/ledger"
)

func init() { subcommands = append(subcommands, newLedgerCmd) }

func newLedgerCmd() *cobra.Command {
	return newGroupCmd("ledger", "A persistent privacy budget for one teacher ensemble, across runs",
		newLedgerInitCmd(), newLedgerShowCmd())
}

func newLedgerInitCmd() *cobra.Command {
	f := struct {
		Ensemble    string            `flag:"ensemble" help:"name of the teacher ensemble the budget is for" required:""`
		Relation    ensemble.Relation `flag:"relation" help:"neighbouring relation: private-teachers (DaRRM, RR, subsampling) or one-vote (GNMax)"`
		BudgetEps   float64           `flag:"budget-eps" required:""`
		BudgetDelta float64           `flag:"budget-delta" required:""`
		DeltaPrime  float64           `flag:"delta-prime"`
	}{Relation: ensemble.PrivateTeachers}
	return newCmd("ledger-init", &cobra.Command{
		Use:   "init LEDGER --ensemble NAME --budget-eps E --budget-delta D",
		Short: "Create a ledger with a total budget",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			budget := accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}
			if err := ledger.Init(args[0], ledger.Header{Ensemble: f.Ensemble, Relation: f.Relation.String(), Budget: budget, DeltaPrime: f.DeltaPrime}); err != nil {
				return cli.AsUsage(err)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "ledger %s: ensemble %s, budget %v (%s relation, delta' = %g)\n", args[0], f.Ensemble, budget, f.Relation, f.DeltaPrime)
			return err
		},
	}, &f, nil)
}

func newLedgerShowCmd() *cobra.Command {
	var f struct {
		Format cliout.Format `flag:"format"`
	}
	return newCmd("", &cobra.Command{
		Use:   "show LEDGER",
		Short: "Print a ledger's budget, releases and total",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := openLedgerFile(args[0])
			if err != nil {
				return err
			}
			defer l.Close()
			doc, err := report.NewLedgerShow(args[0], l)
			if err != nil {
				return err
			}
			return doc.Write(cmd.OutOrStdout(), f.Format)
		},
	}, &f, nil)
}

// openLedgerFile opens a ledger; a corrupt one is bad input (exit 2).
func openLedgerFile(path string) (*ledger.Ledger, error) {
	l, err := ledger.Open(path)
	var ce *ledger.CorruptError
	if errors.As(err, &ce) {
		return nil, cli.AsUsage(err)
	}
	if err != nil {
		return nil, cli.Usagef("--ledger: %v", err)
	}
	return l, nil
}
