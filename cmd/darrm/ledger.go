package main

import (
	"errors"
	"fmt"
	"io"

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
		newLedgerInitCmd(), newLedgerShowCmd(), newLedgerAdoptCmd(), newLedgerUpgradeCmd())
}

func newLedgerInitCmd() *cobra.Command {
	f := struct {
		Ensemble    string            `flag:"ensemble" help:"name of the teacher ensemble the budget is for" required:""`
		Relation    ensemble.Relation `flag:"relation" help:"neighbouring relation: private-teachers (DaRRM, RR, subsampling) or one-vote (GNMax)"`
		BudgetEps   float64           `flag:"budget-eps" required:""`
		BudgetDelta float64           `flag:"budget-delta" required:""`
		DeltaPrime  float64           `flag:"delta-prime"`
		Replace     bool              `flag:"replace" help:"record this ledger as the ensemble's even though your record names another: the ensemble's budget starts again (only on purpose)"`
	}{Relation: ensemble.PrivateTeachers}
	return newCmd("ledger-init", &cobra.Command{
		Use:   "init LEDGER --ensemble NAME --budget-eps E --budget-delta D",
		Short: "Create a ledger with a total budget",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			budget := accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}
			h := ledger.Header{Ensemble: f.Ensemble, Relation: f.Relation.String(), Budget: budget, DeltaPrime: f.DeltaPrime}
			if err := ledger.Init(args[0], h, ledger.InitOptions{Replace: f.Replace}); err != nil {
				return ledgerError(err)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "ledger %s: ensemble %s, budget %v (%s relation, delta' = %g)\n",
				args[0], cliout.Escape(f.Ensemble), budget, f.Relation, f.DeltaPrime)
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
		Short: "Print a ledger's budget, releases and total (it only reads the ledger)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := ledger.ReadOnly(cmd.Context(), args[0], ledger.Options{})
			if err != nil {
				return ledgerError(err)
			}
			defer l.Close()
			printNotes(cmd.ErrOrStderr(), args[0], l.Notes())
			doc, err := report.NewLedgerShow(args[0], l)
			if err != nil {
				return err
			}
			return doc.Write(cmd.OutOrStdout(), f.Format)
		},
	}, &f, nil)
}

func newLedgerAdoptCmd() *cobra.Command {
	var f struct{}
	return newCmd("ledger-adopt", &cobra.Command{
		Use:   "adopt LEDGER",
		Short: "Record a ledger, as it is now, as its ensemble's ledger (to resolve a refusal on purpose)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prev, l, err := ledger.Adopt(cmd.Context(), args[0], ledger.Options{Waiting: waitingFor(cmd)})
			if err != nil {
				return ledgerError(err)
			}
			defer l.Close()
			printNotes(cmd.ErrOrStderr(), args[0], l.Notes())
			w := cmd.OutOrStdout()
			h := l.Header()
			fmt.Fprintf(w, "ledger %s is now the recorded ledger of ensemble %s: %d lines, last line %.16s\n", args[0], cliout.Escape(h.Ensemble), l.Lines(), l.Head())
			if prev == nil {
				_, err = fmt.Fprintln(w, "there was no record of the ensemble before")
			} else {
				_, err = fmt.Fprintf(w, "it replaces the record of ledger %s (id %.8s, %d lines, as of %s)\n", cliout.Escape(prev.Path), prev.LedgerID, prev.Lines, prev.Updated.Format("2006-01-02T15:04:05Z"))
			}
			return err
		},
	}, &f, nil)
}

func newLedgerUpgradeCmd() *cobra.Command {
	var f struct {
		Ensemble string `flag:"ensemble" help:"name of the teacher ensemble to bind the ledger to (default: the name in the version-1 ledger)"`
		Replace  bool   `flag:"replace" help:"record the upgraded ledger as the ensemble's even though your record names another (only on purpose)"`
	}
	return newCmd("ledger-upgrade", &cobra.Command{
		Use:   "upgrade LEDGER",
		Short: "Turn a version-1 ledger into a version-2 one, carrying its spends over",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := ledger.InitOptions{Options: ledger.Options{Waiting: waitingFor(cmd)}, Replace: f.Replace}
			res, err := ledger.Upgrade(cmd.Context(), args[0], ledger.Header{Ensemble: f.Ensemble}, opts)
			if err != nil {
				return ledgerError(err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "ledger %s upgraded to version %d: the spends of %d runs carried over; the version-1 file is kept as %s\n",
				args[0], ledger.Version, res.Runs, res.Backup)
			return err
		},
	}, &f, nil)
}

// waitingFor says on cmd's stderr that a run waits for a ledger's lock.
func waitingFor(cmd *cobra.Command) func(string) {
	return func(path string) {
		fmt.Fprintf(cmd.ErrOrStderr(), "darrm: waiting for the lock on ledger %s: another darrm run is using it (interrupt to give up)\n", path)
	}
}

// printNotes prints what opening a ledger found worth telling.
func printNotes(w io.Writer, path string, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "darrm: ledger %s: %s\n", path, n)
	}
}

// ledgerError maps the ledger's errors onto exit statuses: a file that is
// no ledger, a damaged or version-1 one, one that its record refuses, a
// release of another relation and a bad parameter are bad input (2, the parameter named as its flag); an
// I/O failure (permission, a full disk) is a failure (1).
func ledgerError(err error) error {
	var (
		pe *ledger.ParamError
		ce *ledger.CorruptError
		ne *ledger.NotLedgerError
		ve *ledger.VersionError
		re *ledger.RecordError
		xe *ledger.RelationError
	)
	switch {
	case errors.As(err, &pe):
		return cli.Usagef("--%s = %s: %s", pe.Name, pe.Value, pe.Rule)
	case errors.As(err, &ce), errors.As(err, &ne), errors.As(err, &ve), errors.As(err, &re), errors.As(err, &xe):
		return cli.AsUsage(err)
	}
	return err
}
