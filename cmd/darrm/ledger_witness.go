package main

// This file keeps witnesses of ledgers outside their stores: darrm ledger
// checkpoint writes a ledger's state to a file a team keeps elsewhere,
// and --witness gives such a file, or a label file, to every command that
// opens a ledger, which refuses a ledger behind or forked from it.

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/ledger"
)

// witnessValue is --witness: the files given, each read as it is given
// (ledger.ReadWitness), so that a file that is no witness is refused with
// the flag before anything runs.
type witnessValue struct {
	files     []string
	witnesses []ledger.Witness
}

func (v *witnessValue) String() string { return strings.Join(v.files, ",") }

func (v *witnessValue) Type() string { return "file" }

// GetSlice returns the files, for the files an output must not be.
func (v *witnessValue) GetSlice() []string { return v.files }

func (v *witnessValue) Set(path string) error {
	w, err := ledger.ReadWitness(path)
	if err != nil {
		// The flag's error names the file already.
		msg := strings.TrimPrefix(strings.TrimPrefix(err.Error(), "witness "+path+": "), "witness: ")
		return fmt.Errorf("%s", msg)
	}
	v.files, v.witnesses = append(v.files, path), append(v.witnesses, w)
	return nil
}

// addWitnessFlag adds --witness to cmd, whose ledger book (ledgerOptions)
// then checks every ledger it opens against the witnesses given.
func addWitnessFlag(cmd *cobra.Command) {
	cmd.Flags().Var(&witnessValue{}, "witness", "a checkpoint or label file the ledger must extend (repeatable)")
}

// witnesses returns the witnesses given to cmd by --witness, if it has
// the flag.
func witnesses(cmd *cobra.Command) []ledger.Witness {
	if f := cmd.Flags().Lookup("witness"); f != nil {
		if v, ok := f.Value.(*witnessValue); ok {
			return v.witnesses
		}
	}
	return nil
}

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
			w, err := ledgerOptions(cmd).Checkpoint(cmd.Context(), args[0], f.Out)
			if err != nil {
				return ledgerError(err)
			}
			r := w.Record
			t := cliout.NewText(cmd.OutOrStdout())
			t.Line("ledger %s: checkpoint %s written: ensemble %s, ledger %.8s, %s, last line %.16s", ledger.Redact(args[0]), cliout.Escape(f.Out),
				cliout.Escape(r.Ensemble), r.LedgerID, plural.Of(r.Lines, "line", "lines"), r.Head)
			t.Line("keep it where the ledger's store cannot reach it (your repository, another machine), and give it to releases with --witness %s", shellWord(f.Out))
			return t.Close()
		},
	}, &f)
	addWitnessFlag(cmd)
	return cmd
}
