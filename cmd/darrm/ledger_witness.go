package main

// This file keeps witnesses of ledgers outside their stores: darrm ledger
// checkpoint writes a ledger's state to a file a team keeps elsewhere,
// which --witness (setup.AddWitnessFlag) gives to every command that
// opens a ledger.

import (
	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/ledger"
)

func newLedgerCheckpointCmd() *cobra.Command {
	var f struct {
		Out string `flag:"out" help:"the checkpoint file: new, or an earlier checkpoint of the ledger" required:""`
	}
	cmd := newCmd("ledger-checkpoint", &cobra.Command{
		Use:   "checkpoint LEDGER --out FILE",
		Short: "Write a ledger's state now to a file to keep elsewhere, a witness for --witness",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cli.IsStdout(f.Out) {
				return cli.Usagef("--out %s: a checkpoint is a file, kept where the ledger's store cannot reach it: name one", f.Out)
			}
			w, err := setup.LedgerOptions(cmd).Checkpoint(cmd.Context(), args[0], f.Out)
			if err != nil {
				return setup.LedgerError(err)
			}
			r := w.Record
			t := cliout.NewText(cmd.OutOrStdout())
			t.Line("ledger %s: checkpoint %s written: ensemble %s, ledger %.8s, %s, last line %.16s", ledger.Redact(args[0]), cliout.Escape(f.Out),
				cliout.Escape(r.Ensemble), r.LedgerID, plural.Of(r.Lines, "line", "lines"), r.Head)
			t.Line("keep it where the ledger's store cannot reach it (your repository, another machine), and give it to releases with --witness %s", shellWord(f.Out))
			return t.Close()
		},
	}, &f)
	setup.AddWitnessFlag(cmd)
	return cmd
}
