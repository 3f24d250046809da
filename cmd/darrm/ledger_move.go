package main

// This file moves ledgers between the stores that keep their lines:
// darrm ledger export writes a ledger (one kept in PostgreSQL) to a file,
// darrm ledger import moves a ledger file into PostgreSQL.

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/plural"
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
			book := ledgerOptions(cmd)
			if err := book.Export(cmd.Context(), args[0], args[1]); err != nil {
				return ledgerError(err)
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
			book := ledgerOptions(cmd)
			if err := book.Import(cmd.Context(), args[0], args[1]); err != nil {
				return ledgerError(err)
			}
			return ledgerMoved(cmd, book, args[0], args[1], "imported into",
				"your record of its ensemble names it now: release there (a release on "+ledger.Redact(args[0])+" is refused)")
		},
	}, &f)
}

// ledgerMoved reads the ledger at to, which from was moved (how) to, as
// ledger verify reads it, and says what it holds and what follows (then).
func ledgerMoved(cmd *cobra.Command, opts ledger.Options, from, to, how, then string) error {
	opts.ReadOnly = true
	l, err := ledger.Open(cmd.Context(), to, opts)
	if err != nil {
		return ledgerError(err)
	}
	defer l.Close()
	b, err := l.Balance()
	if err != nil {
		return err
	}
	bound := b.Composition.String()
	if b.Bound == accountant.TeachersBound {
		bound = "teachers' cap (" + b.Cap.Rule() + ")"
	}
	return movedText(cmd.OutOrStdout(), ledger.Redact(from), ledger.Redact(to), how, then, l, b.Total.String()+" by "+bound)
}

func movedText(w io.Writer, from, to, how, then string, l *ledger.Ledger, spent string) error {
	t := cliout.NewText(w)
	t.Line("ledger %s %s %s: %s, %s, every line checked; spent %s", from, how, to,
		plural.Of(l.Lines(), "line", "lines"), plural.Of(l.RunCount(), "run", "runs"), spent)
	t.Line("%s", then)
	return t.Close()
}
