package main

// This file says on a darrm command's streams what using a
// privacy ledger found worth telling: its notes, a wait for its lock, a
// record it replaced, and its errors in the command's terms.

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
)

// readLedger reads the ledger at path whole (ledger.Open with Options.ReadOnly) and
// prints what reading it found worth telling.
func readLedger(cmd *cobra.Command, path string) (*ledger.Ledger, error) {
	opts := ledgerOptions(cmd)
	opts.ReadOnly = true
	l, err := ledger.Open(cmd.Context(), path, opts)
	if err != nil {
		return nil, ledgerError(err)
	}
	printLedgerNotes(cmd.ErrOrStderr(), path, l.Notes())
	return l, nil
}

// printReplaced says which record of an ensemble's ledger a command
// replaced.
func printReplaced(t *cliout.Text, prev *ledger.Record) {
	t.Line("it replaces ledger %s (id %.8s, %d lines as your record had it on %s), retired where it still is: its last line now says so, and no release charges it", cliout.Escape(prev.Path), prev.LedgerID, prev.Lines, prev.Updated.Format("2006-01-02T15:04:05Z"))
}

// ledgerOptions is the command's book of ledgers: your records in the state
// folder (ledger.StateDir), a wait for the lock on a ledger or on its
// record said on cmd's stderr (ledger.Options.Waiting), and a ledger lost
// during a run (its server's connection) ending the command's context,
// so that a release stops at once (ledger.Options.Lost), and every ledger
// checked against the command's --witness files (ledger.Options.Witnesses).
func ledgerOptions(cmd *cobra.Command) ledger.Options {
	// Every command that opens a ledger has --lock-timeout.
	wait, err := cmd.Flags().GetDuration("lock-timeout")
	if err != nil {
		wait = ledger.DefaultLockTimeout
	}
	return ledger.Options{
		Witnesses: witnesses(cmd),
		Waiting: func(what string) {
			who := "another darrm run is using it"
			if strings.HasPrefix(what, "the tables of ") {
				who = "another session holds a lock on them, or the server is slow"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "darrm: waiting for the lock on %s: %s (giving up after %v, --lock-timeout; interrupt to give up now)\n", cliout.Escape(what), who, wait)
		},
		Lost:        func(err error) { cli.Stop(cmd, err) },
		LockTimeout: wait,
	}
}

// warnPassword warns, once for each, of the PostgreSQL ledgers that a
// command that opens ledgers (it has --lock-timeout) names by a URL that
// holds a password (ledger.HasPassword): in --ledger or as an argument.
func warnPassword(cmd *cobra.Command, args []string) {
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
			printLedgerNotes(cmd.ErrOrStderr(), a, []string{"warning: its URL holds a password, which other users of this machine can read while darrm runs (ps) and your shell keeps in its history: put it in ~/.pgpass or PGPASSWORD instead (docs/aggregate.md, \"A team\")"})
		}
	}
}

// withoutLedger refuses an empty --ledger, and --analyst or --witness
// without --ledger: they name who charges the ledger and what it must
// extend, and there is none.
func withoutLedger(cmd *cobra.Command, ledger string) error {
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

// printLedgerNotes prints what opening the ledger at location found worth
// telling.
func printLedgerNotes(w io.Writer, location string, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "darrm: ledger %s: %s\n", ledger.Redact(location), n)
	}
}

// ledgerError says a ledger's error in the command's terms: a file that is
// another of darrm's (a vote file, a gamma) is named as what it is, a
// missing one with the close names, a bad header parameter as its flag,
// the option that replaces an ensemble's record on purpose
// (ledger.Options.Replace) as --replace, and the filter of a ledger
// that would take labels refused as ledger init's --filter.
func ledgerError(err error) error {
	if msg := notLedger(err); msg != "" {
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
	return flagErr(err, budgetFlags)
}

// worded is err said in the command's words.
type worded struct {
	err error
	msg string
}

func (e *worded) Error() string { return e.msg }
func (e *worded) Unwrap() error { return e.err }

// ledgerInitialized says that ledger init made the ledger path with header h,
// bound to b, what it will publish for every release charged to it
// (its balance's Publish) and why, and which record of the ensemble's
// ledger it replaced, if any.
func ledgerInitialized(w io.Writer, path string, b provenance.Binding, h ledger.Header, bal ledger.Balance, prev *ledger.Record) error {
	path = ledger.Redact(path)
	t := cliout.NewText(w)
	held := "held by filter " + h.Filter.String()
	switch {
	case h.Use != nil:
		held = "its declared use composed exactly, as one run"
	case h.FirstRunFilter:
		held = "held by the filter its first release chooses for its labels, as init chooses one for labels declared"
	}
	t.Line("ledger %s: bound to %s; budget %v (delta' = %g), %s", path, cliout.Escape(b.String()), h.Budget, h.DeltaPrime, held)
	name, why := report.LedgerPublish(bal)
	t.Line("to publish: %v for every release charged to it, by the %s; why: %s", bal.Publish.Guarantee, name, why)
	if len(h.Shares) > 0 {
		names := make([]string, 0, len(h.Shares))
		for name := range h.Shares {
			names = append(names, name)
		}
		slices.Sort(names)
		var shares []string
		for _, name := range names {
			f := h.Shares[name]
			share := fmt.Sprintf("%q %v of the budget", name, f)
			if h.Use != nil {
				n, err := h.ShareAllows(h.Use[0].Step, f)
				if err != nil {
					return err
				}
				all := 0
				for _, r := range h.Use {
					all += r.Labels
				}
				share = fmt.Sprintf("%q %v: %d of its declared use's %s", name, f, n, plural.Of(all, "label", "labels"))
			}
			shares = append(shares, share)
		}
		t.Line("shares: %s; each analyst's releases are held to their share, an allocation inside the budget, not a guarantee: analysts who adapt to each other's labels share the one budget, which the ledger publishes", strings.Join(shares, ", "))
	}
	if prev != nil {
		printReplaced(t, prev)
	}
	return t.Close()
}

// ledgerFilterChoice says, before ledger init's summary, what the use
// declared allows composed exactly (a --mechanism's, counted in use.Run)
// and what each filter allows the labels declared for the ledger path
// (use), and what the ledger, h, keeps: the declared use, else the
// filter that allows more, or the one --filter names (named). Why a
// filter cannot hold them names the flags that gave them. For fixed
// private teachers (a cap c, within the budget: ledger init refuses one
// that is not) it says first that every label is free and the counts
// are analysis.
func ledgerFilterChoice(w io.Writer, path string, use *ledgerUse, h ledger.Header, c *accountant.Cap, named bool) error {
	filter := accountant.Filter{Parts: h.Parts}
	choice, labels, path := use.Choice, use.Labels, ledger.Redact(path)
	expected := choice.Expected
	if expected > 0 {
		labels += fmt.Sprintf(", %s expected", plural.Of(expected, "label", "labels"))
	}
	t := cliout.NewText(w)
	t.Line("ledger %s: for %s:", path, cliout.Escape(labels))
	if c != nil {
		t.Line("  every label is free: the teachers are fixed models whose cap %v, their only bound, is within the budget; "+
			"the counts below compose per-query guarantees, which holds for per-query teachers only (analysis)", c.Guarantee)
	}
	width := 0
	for _, a := range choice.Allowances {
		width = max(width, len(a.Filter.String())+1)
	}
	row := func(name, cell string) {
		// A table of two columns within cliout.Width: the text wraps in
		// its own column, not under the filters' names (wrapping the
		// whole line would collapse the names' padding).
		for i, l := range cliout.Wrap(cell, cliout.Width-len(name)) {
			if i > 0 {
				name = strings.Repeat(" ", len(name))
			}
			t.Line("%s%s", name, l)
		}
	}
	if use.Run != nil {
		width = max(width, len(accountant.Exact.String())+1)
		row(fmt.Sprintf("  %-*s  ", width, accountant.Exact.String()+":"), fmt.Sprintf("allows %s: the declared use's steps composed exactly, as one run "+
			"(valid for queries chosen adaptively and a stop at any time; other settings are then refused)", report.Allowed(use.Run.Labels, "label", "labels")))
	}
	for _, a := range choice.Allowances {
		name := fmt.Sprintf("  %-*s  ", width, a.Filter.String()+":")
		var cell string
		switch {
		case a.Err != nil:
			why := a.Err.Error()
			if said, ok := flagSaid(a.Err, use.Names); ok {
				why = said
			}
			cell = "cannot hold them: " + why
		case expected == 0:
			cell = "allows " + report.Allowed(a.Labels, "label", "labels")
		default:
			fits := "within the budget"
			if !a.Fits {
				fits = "over the budget"
			}
			cell = fmt.Sprintf("allows %s; the %d expected spend (%s, %s), %s", report.Allowed(a.Labels, "label", "labels"), expected,
				decimal.FormatBound(a.Total.Eps), decimal.FormatBound(a.Total.Delta), fits)
		}
		row(name, cell)
	}
	// The labels the filter kept and the best allow: a filter named that
	// allows as many as the best is not said to allow fewer.
	allows := map[string]int{}
	for _, a := range choice.Allowances {
		allows[a.Filter.String()] = a.Labels
	}
	why := "it allows the most labels (the first listed of those that allow as many)"
	switch {
	case h.Use != nil:
		why = "the use declared: a filter allows no more, as it must hold any use"
	case named && allows[filter.String()] < allows[choice.Filter.String()]:
		why = fmt.Sprintf("named by --filter (%v allows more)", choice.Filter)
	case named:
		why = "named by --filter"
	}
	if h.Use != nil {
		t.Line("  kept: %v, %s; the use and its count are fixed now, before the first run", accountant.Exact, why)
		return t.Close()
	}
	t.Line("  kept: %v, %s; a ledger's filter is fixed now, before its first run", filter, why)
	return t.Close()
}

// ledgerAdopted says that ledger adopt recorded l, at path, as its ensemble's
// ledger, and which record it replaced, if any.
func ledgerAdopted(w io.Writer, path string, l *ledger.Ledger, prev *ledger.Record) error {
	path = ledger.Redact(path)
	t := cliout.NewText(w)
	t.Line("ledger %s is now the recorded ledger of ensemble %s: %d lines, last line %.16s", path, cliout.Escape(l.Header().Ensemble), l.Lines(), l.Head())
	if prev == nil {
		t.Line("there was no record of the ensemble before")
	} else {
		printReplaced(t, prev)
	}
	return t.Close()
}

// ledgerUpgraded says what ledger upgrade did to the ledger path.
func ledgerUpgraded(w io.Writer, path string, res ledger.UpgradeResult) error {
	path = ledger.Redact(path)
	t := cliout.NewText(w)
	if res.Current {
		t.Line("ledger %s is of version %d, the current one: there is nothing to upgrade", path, ledger.Version)
		return t.Close()
	}
	t.Line("ledger %s upgraded from version %d to version %d: the spends of %s carried over; filter %v, kept from version %d (a ledger's filter is fixed before its first run: another is a new ledger's choice, darrm ledger init --filter); the old file is kept as %s",
		path, res.From, ledger.Version, plural.Of(res.Runs, "run", "runs"), res.Filter, res.From, res.Backup)
	if res.Previous != nil {
		printReplaced(t, res.Previous)
	}
	return t.Close()
}
