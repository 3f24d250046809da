package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
)

func init() { subcommands = append(subcommands, subcommand{"ledger", newLedgerCmd}) }

func newLedgerCmd(ms *setup.Mechanisms) *cobra.Command {
	return newGroupCmd("ledger", "A persistent privacy budget for one teacher ensemble, across runs",
		newLedgerInitCmd(ms), newLedgerShowCmd(), newLedgerVerifyCmd(), newLedgerAdoptCmd(), newLedgerUpgradeCmd(),
		newLedgerExportCmd(), newLedgerImportCmd(), newLedgerCheckpointCmd())
}

// ensembleFlags state the parameters of a teacher ensemble that a ledger
// binds, but its relation.
type ensembleFlags struct {
	Ensemble  string               `flag:"ensemble" help:"id of the teacher ensemble the budget is for"`
	K         int                  `flag:"K"`
	Eps       float64              `flag:"eps"`
	Delta     float64              `flag:"Delta"`
	Kind      provenance.Kind      `flag:"kind" help:"teachers: fixed (models) or per-query (mechanisms)"`
	Partition provenance.Partition `flag:"partition" help:"data split: keyed-hash, file-position or shared"`
}

// stated returns the parameters the flags state; those not given are
// left unstated (the teachers' guarantee needs --eps and --Delta both).
func (f *ensembleFlags) stated(cmd *cobra.Command) (provenance.Binding, error) {
	b := provenance.Binding{Ensemble: f.Ensemble, Teachers: provenance.Teachers{K: f.K, Kind: f.Kind, Partition: f.Partition}}
	eps, delta := cli.Given(cmd.Flags(), "eps", f.Eps), cli.Given(cmd.Flags(), "Delta", f.Delta)
	if (eps == nil) != (delta == nil) {
		return b, cli.Usagef("--eps and --Delta go together: they are each teacher's guarantee")
	}
	if eps != nil {
		b.Each = accountant.Guarantee{Eps: *eps, Delta: *delta}
	}
	return b, nil
}

func newLedgerShowCmd() *cobra.Command {
	return newLedgerReadCmd("ledger-show", "show LEDGER", "Print a ledger's budget, releases and total (it only reads the ledger)",
		func(cmd *cobra.Command, err error) error {
			fmt.Fprintf(cmd.ErrOrStderr(), "darrm: warning: %v\n", err)
			return nil
		},
		func(cmd *cobra.Command, path string, l *ledger.Ledger) (report.Document, error) {
			return report.NewLedgerShow(cmd.Context(), path, l)
		})
}

func newLedgerVerifyCmd() *cobra.Command {
	return newLedgerReadCmd("ledger-verify", "verify LEDGER", "Check every line of a ledger, its hash chain and totals, against your record",
		func(_ *cobra.Command, err error) error { return setup.LedgerError(err) },
		func(_ *cobra.Command, path string, l *ledger.Ledger) (report.Document, error) {
			return report.NewLedgerVerify(path, l)
		})
}

// newLedgerReadCmd is a command that reads a ledger without writing it
// and prints the document newDoc makes of it. A ledger its user's record
// refuses is passed to onRecordErr: reading needs no record, so show
// warns and goes on, while verify, which vouches for the ledger, fails.
// A ledger that a --witness refuses fails both: the check was asked for.
func newLedgerReadCmd(help, use, short string, onRecordErr func(*cobra.Command, error) error, newDoc func(*cobra.Command, string, *ledger.Ledger) (report.Document, error)) *cobra.Command {
	var f struct {
		Format      cliout.Format `flag:"format"`
		LockTimeout time.Duration `flag:"lock-timeout"`
	}
	cmd := newCmd(help, &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := setup.ReadLedger(cmd, args[0])
			if err != nil {
				return err
			}
			defer l.Close()
			if err := l.RecordErr(); err != nil {
				if err := onRecordErr(cmd, err); err != nil {
					return err
				}
			}
			doc, err := newDoc(cmd, ledger.Redact(args[0]), l)
			if err != nil {
				return err
			}
			return doc.Write(cmd.OutOrStdout(), f.Format)
		},
	}, &f)
	setup.AddWitnessFlag(cmd)
	return cmd
}

func newLedgerAdoptCmd() *cobra.Command {
	var f struct {
		LockTimeout time.Duration `flag:"lock-timeout"`
	}
	return newCmd("ledger-adopt", &cobra.Command{
		Use:   "adopt LEDGER",
		Short: "Record a ledger, as it is, as its ensemble's (to resolve a refusal on purpose)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prev, l, err := setup.LedgerOptions(cmd).Adopt(cmd.Context(), args[0])
			if err != nil {
				return setup.LedgerError(err)
			}
			defer l.Close()
			setup.PrintLedgerNotes(cmd.ErrOrStderr(), args[0], l.Notes())
			return report.LedgerAdopted(cmd.OutOrStdout(), args[0], l, prev)
		},
	}, &f)
}

func newLedgerUpgradeCmd() *cobra.Command {
	var f struct {
		ensembleFlags
		Replace     bool          `flag:"replace" help:"record it as the ensemble's, and the team's checkpoint of it, over another"`
		LockTimeout time.Duration `flag:"lock-timeout"`
	}
	cmd := newCmd("ledger-upgrade", &cobra.Command{
		Use:   "upgrade LEDGER",
		Short: "Turn a version-3 ledger into a version-4 one (read as version 5), keeping its spends",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := f.stated(cmd)
			if err != nil {
				return err
			}
			res, err := setup.LedgerOptions(cmd).Upgrade(cmd.Context(), args[0], b, f.Replace)
			if err != nil {
				return setup.LedgerError(err)
			}
			return report.LedgerUpgraded(cmd.OutOrStdout(), args[0], res)
		},
	}, &f)
	// The flags may only repeat the old ledger's binding.
	cli.SetDefaultText(cmd.Flags(), "the ledger's", "eps", "Delta", "kind", "partition")
	return cmd
}
