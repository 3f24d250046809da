package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/ledger"
)

// ReadTable reads the gamma file name (- for standard input), which role
// names on the command line (OpenInput), for k teachers (0: the file's;
// gamma.ReadTable): its errors name the file, after the flag for a
// flag's, and the --K that k came from.
func ReadTable(cmd *cobra.Command, role, name string, k int) (gamma.Table, error) {
	in, err := OpenInput(cmd, role, name, wantGamma)
	if err != nil {
		return gamma.Table{}, err
	}
	defer in.Close()
	tab, err := gamma.ReadTable(in, k)
	if err != nil && k > 0 {
		return tab, cli.Usagef("%s: %v, for --K %d", label(role, name), err, k)
	} else if err != nil {
		return tab, cli.Usagef("%s: %v", label(role, name), err)
	}
	return tab, nil
}

// NotLedger says, for an error of a ledger that is no ledger, what the
// file is instead: missing (with the paths close to it), or another file
// of darrm's; "" otherwise.
func NotLedger(err error) string {
	var (
		ce *ledger.CorruptError
		ne *ledger.NotLedgerError
	)
	switch {
	case errors.As(err, &ne) && ledger.IsURL(ne.Path):
		// A ledger in PostgreSQL: its message says what to fix.
	case errors.As(err, &ne) && errors.Is(err, fs.ErrNotExist):
		if near := cli.Near(ne.Path); len(near) > 0 {
			return fmt.Sprintf("%v; did you mean %s?", err, strings.Join(near, " or "))
		}
	case errors.As(err, &ne):
		if err := wantLedger.Check("ledger", ne.Path, SniffPath(ne.Path)); err != nil {
			return err.Error()
		}
	case errors.As(err, &ce) && ce.Line == 1 && !ledger.IsURL(ce.Path):
		if err := wantLedger.Check("ledger", ce.Path, SniffPath(ce.Path)); err != nil {
			return err.Error()
		}
	}
	return ""
}
