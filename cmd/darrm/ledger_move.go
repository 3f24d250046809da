package main

// This file moves ledgers between the stores that keep their lines:
// darrm ledger export writes a ledger (one kept in PostgreSQL) to a file,
// darrm ledger import moves a ledger file into PostgreSQL.

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ledger"
)

func newLedgerExportCmd() *cobra.Command {
	var f struct {
		LockTimeout time.Duration `flag:"lock-timeout"`
	}
	return newCmd("ledger-export", &cobra.Command{
		Use:   "export LEDGER FILE",
		Short: "Write a ledger (one kept in PostgreSQL) to a new ledger file that verifies offline",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			book := setup.LedgerOptions(cmd)
			if err := book.Export(cmd.Context(), args[0], args[1]); err != nil {
				return setup.LedgerError(err)
			}
			return ledgerMoved(cmd, book, args[0], args[1], "exported to", "a copy for reading: releases go to the ledger itself")
		},
	}, &f)
}

func newLedgerImportCmd() *cobra.Command {
	var f struct {
		LockTimeout time.Duration `flag:"lock-timeout"`
	}
	return newCmd("ledger-import", &cobra.Command{
		Use:   "import FILE URL",
		Short: "Move a ledger file into PostgreSQL, with its chain, for a team to share",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			book := setup.LedgerOptions(cmd)
			if err := book.Import(cmd.Context(), args[0], args[1]); err != nil {
				return setup.LedgerError(err)
			}
			return ledgerMoved(cmd, book, args[0], args[1], "imported into",
				"your record of its ensemble names it now, and "+ledger.Redact(args[0])+" is ended: release there (every release on the file is refused)")
		},
	}, &f)
}

// ledgerMoved reads the ledger at to, which from was moved (how) to, as
// ledger verify reads it, and says what it holds and what follows (then).
func ledgerMoved(cmd *cobra.Command, opts ledger.Options, from, to, how, then string) error {
	opts.ReadOnly = true
	l, err := ledger.Open(cmd.Context(), to, opts)
	if err != nil {
		return setup.LedgerError(err)
	}
	defer l.Close()
	b, err := l.Balance()
	if err != nil {
		return err
	}
	return report.LedgerMoved{From: from, To: to, How: how, Then: then, Lines: l.Lines(), Runs: l.RunCount(), Balance: b}.Write(cmd.OutOrStdout())
}
