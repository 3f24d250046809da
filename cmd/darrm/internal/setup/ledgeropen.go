package setup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/votefile"
)

// ReadLedger reads the ledger at path whole (ledger.Open with Options.ReadOnly) and
// prints what reading it found worth telling.
func ReadLedger(cmd *cobra.Command, path string) (*ledger.Ledger, error) {
	opts := LedgerOptions(cmd)
	opts.ReadOnly = true
	l, err := ledger.Open(cmd.Context(), path, opts)
	if err != nil {
		return nil, LedgerError(err)
	}
	PrintLedgerNotes(cmd.ErrOrStderr(), path, l.Notes())
	return l, nil
}

// LedgerOptions is the command's book of ledgers: your records in the state
// folder (statedir.Default), a wait for the lock on a ledger or on its
// record said on cmd's stderr (ledger.LedgerOptions.Waiting), and a ledger lost
// during a run (its server's connection) ending the command's context,
// so that a release stops at once (ledger.LedgerOptions.Lost), and every ledger
// checked against the command's --witness files (ledger.LedgerOptions.Witnesses),
// the charges of its steps composed in the run's memo (Memo).
func LedgerOptions(cmd *cobra.Command) ledger.Options {
	// Every command that opens a ledger has --lock-timeout.
	wait, err := cmd.Flags().GetDuration("lock-timeout")
	if err != nil {
		wait = ledger.DefaultLockTimeout
	}
	dir := os.Getenv(WitnessDirEnv)
	if f := cmd.Flags().Lookup("witness-dir"); f != nil && f.Changed {
		dir = f.Value.String()
	}
	return ledger.Options{
		Witnesses:  witnesses(cmd),
		WitnessDir: dir,
		Waiting: func(what string) {
			who := "another darrm run is using it"
			if strings.HasPrefix(what, "the tables of ") {
				who = "another session holds a lock on them, or the server is slow"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "darrm: waiting for the lock on %s: %s (giving up after %v, --lock-timeout; interrupt to give up now)\n", cliout.Escape(what), who, wait)
		},
		Lost:        func(err error) { cli.Stop(cmd, err) },
		LockTimeout: wait,
		Memo:        Memo(cmd),
	}
}

// WarnPassword warns, once for each, of the PostgreSQL ledgers that a
// command that opens ledgers (it has --lock-timeout) names by a URL that
// holds a password (ledger.HasPassword): in --ledger or as an argument.
func WarnPassword(cmd *cobra.Command, args []string) {
	if cmd.Flags().Lookup("lock-timeout") == nil {
		return
	}
	if f := cmd.Flags().Lookup("ledger"); f != nil {
		args = append([]string{f.Value.String()}, args...)
	}
	seen := map[string]bool{}
	for _, a := range args {
		if ledger.HasPassword(a) && !seen[a] {
			seen[a] = true
			PrintLedgerNotes(cmd.ErrOrStderr(), a, []string{"warning: its URL holds a password, which other users of this machine can read while darrm runs (ps) and your shell keeps in its history: put it in ~/.pgpass or PGPASSWORD instead (docs/aggregate.md, \"A team\")"})
		}
	}
}

// WithoutLedger refuses an empty --ledger, and --analyst or --witness
// without --ledger: they name who charges the ledger and what it must
// extend, and there is none.
func WithoutLedger(cmd *cobra.Command, ledger string) error {
	switch fs := cmd.Flags(); {
	case ledger == "" && fs.Changed("ledger"):
		// An unset variable in a script (--ledger "$LEDGER") must not
		// release labels that no ledger counts.
		return cli.Usagef("--ledger \"\": names no ledger: give a ledger file or postgres://...?ledger=NAME, or drop --ledger to release without one")
	case ledger != "":
	case fs.Changed("analyst"):
		return cli.Usagef("--analyst names who charges --ledger: give --ledger, or drop --analyst")
	case fs.Changed("witness"):
		return cli.Usagef("--witness is a state --ledger must extend: give --ledger, or drop --witness")
	}
	return nil
}

// PrintLedgerNotes prints what opening the ledger at location found worth
// telling.
func PrintLedgerNotes(w io.Writer, location string, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "darrm: ledger %s: %s\n", cliout.Escape(ledger.Redact(location)), cliout.Escape(n))
	}
}

// LedgerError says a ledger's error in the command's terms: a file that is
// another of darrm's (a vote file, a gamma) is named as what it is, a
// missing one with the close names, a bad header parameter as its flag,
// the option that replaces an ensemble's record on purpose
// (ledger.Options.Replace) as --replace, and the filter of a ledger
// that would take labels refused as ledger init's --filter.
func LedgerError(err error) error {
	if msg := NotLedger(err); msg != "" {
		return cli.Usagef("%s", msg)
	}
	var (
		re *ledger.RecordError
		fe *ledger.FilterError
	)
	switch {
	case errors.As(err, &re) && re.Command != "":
		err = &worded{err, strings.Replace(err.Error(), re.Error(), re.Say("run the same darrm ledger "+re.Command+" command with --replace"), 1)}
	case errors.As(err, &fe):
		err = &worded{err, strings.Replace(err.Error(), fe.Error(), fe.Say(fmt.Sprintf("a ledger made with darrm ledger init --filter %v", accountant.Simple)), 1)}
	}
	return Flagged(err, BudgetFlags)
}

// worded is err said in the command's words.
type worded struct {
	err error
	msg string
}

func (e *worded) Error() string { return e.msg }
func (e *worded) Unwrap() error { return e.err }

// witnessValue is --witness: the files given, each read as it is given
// (ledger.ReadWitness), so that a file that is no witness is refused with
// the flag before anything runs.
type witnessValue struct {
	files     []string
	witnesses []ledger.Witness
	// seeded are the label files among them whose labels were drawn from
	// a seeded generator (WarnSeeded).
	seeded []string
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
	if seededLabels(path) {
		v.seeded = append(v.seeded, path)
	}
	return nil
}

// seededLabels reports whether the file at path is a label file whose
// header says that its labels were drawn from a seeded generator
// (votefile.LabelMeta.ForRelease false).
func seededLabels(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	lr, err := votefile.NewLabelReader(f, path)
	return err == nil && lr.Meta() != nil && !lr.Meta().ForRelease
}

// WarnSeeded says, for every --witness of cmd that is a label file of a
// seeded run (for_release false), that it is not for release: a command
// that reads labels never offers them for publication, and the total to
// publish of a ledger is not theirs.
func WarnSeeded(cmd *cobra.Command) {
	f := cmd.Flags().Lookup("witness")
	if f == nil {
		return
	}
	if v, ok := f.Value.(*witnessValue); ok {
		for _, path := range v.seeded {
			cliout.Note(cmd.ErrOrStderr())(fmt.Sprintf("witness %s: NOT FOR RELEASE: its labels were drawn from a seeded generator (their header's for_release is false), "+
				"so anyone who knows the seed can remove their noise: publish nothing of them; the ledger's total to publish is not theirs", path))
		}
	}
}

// AddWitnessFlag adds --witness to cmd, whose ledger book (LedgerOptions)
// then checks every ledger it opens against the witnesses given.
func AddWitnessFlag(cmd *cobra.Command) {
	cmd.Flags().Var(&witnessValue{}, "witness", "a checkpoint or label file the ledger must extend (repeatable)")
	addWitnessDirFlag(cmd)
}

// WitnessDirEnv is the environment variable that names a team's witness
// folder (ledger.Options.WitnessDir) for every command, when no
// --witness-dir does: set it once for every analyst of a team.
const WitnessDirEnv = "DARRM_WITNESS_DIR"

// addWitnessDirFlag adds --witness-dir, a team's witness folder
// (ledger.Options.WitnessDir), to a command that takes --witness; every
// other command that opens or makes ledgers takes the folder from
// $DARRM_WITNESS_DIR alone.
func addWitnessDirFlag(cmd *cobra.Command) {
	cmd.Flags().String("witness-dir", "", "a team's folder of checkpoints, checked and left ($"+WitnessDirEnv+")")
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
