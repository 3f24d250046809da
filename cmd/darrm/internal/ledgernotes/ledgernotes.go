// Package ledgernotes says on a darrm command's streams what using a
// privacy ledger found worth telling: its notes, a wait for its lock, a
// record it replaced, and its errors in the command's terms.
package ledgernotes

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/exitstatus"
	"github.com/darrm/darrm/cmd/darrm/internal/inputs"
	"github.com/darrm/darrm/ledger"
)

// Read reads the ledger at path whole (ledger.ReadOnly) and prints
// what reading it found worth telling.
func Read(cmd *cobra.Command, path string) (*ledger.Ledger, error) {
	l, err := ledger.ReadOnly(cmd.Context(), path, ledger.Options{})
	if err != nil {
		return nil, Error(err)
	}
	PrintNotes(cmd.ErrOrStderr(), path, l.Notes())
	return l, nil
}

// PrintReplaced says which record of an ensemble's ledger a command
// replaced.
func PrintReplaced(w io.Writer, prev *ledger.Record) error {
	_, err := fmt.Fprintf(w, "it replaces the record of ledger %s (id %.8s, %d lines, as of %s)\n", cliout.Escape(prev.Path), prev.LedgerID, prev.Lines, prev.Updated.Format("2006-01-02T15:04:05Z"))
	return err
}

// Waiting says on cmd's stderr that a run waits for the lock on a
// ledger or on its record (what: ledger.Options.Waiting).
func Waiting(cmd *cobra.Command) func(string) {
	return func(what string) {
		fmt.Fprintf(cmd.ErrOrStderr(), "darrm: waiting for the lock on %s: another darrm run is using it (interrupt to give up)\n", cliout.Escape(what))
	}
}

// PrintNotes prints what opening a ledger found worth telling.
func PrintNotes(w io.Writer, path string, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "darrm: ledger %s: %s\n", path, n)
	}
}

// Error says a ledger's error in the command's terms: a file that is
// another of darrm's (a vote file, a gamma) is named as what it is, a
// missing one with the close names, and a bad header parameter as its
// flag.
func Error(err error) error {
	if msg := inputs.NotLedger(err); msg != "" {
		return cli.Usagef("%s", msg)
	}
	return exitstatus.Flagged(err, nil)
}
