package report

// This file holds what the ledger commands that make, change or move a
// ledger say: init (the filters' choice or the schedule, then the ledger
// made), adopt, upgrade, and export and import.

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
)

// replaced says which record of an ensemble's ledger a command
// replaced.
func replaced(t *cliout.Text, prev *ledger.Record) {
	t.Line("it replaces ledger %s (id %.8s, %s as your record had it on %s), retired where it still is: its last line now says so, and no release charges it", cliout.Escape(prev.Path), prev.LedgerID, plural.Of(prev.Lines, "line", "lines"), prev.Updated.Format("2006-01-02T15:04:05Z"))
}

// LedgerInitialized says that ledger init made the ledger path with header h,
// bound to b, what it will publish for every release charged to it
// (its balance's Publish) and why, and which record of the ensemble's
// ledger it replaced, if any.
func LedgerInitialized(w io.Writer, path string, b provenance.Binding, h ledger.Header, bal ledger.Balance, prev *ledger.Record) error {
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
	name, why := LedgerPublish(bal)
	t.Line("to publish: %v for every release charged to it, by %s; why: %s", bal.Publish.Guarantee, theName(name), why)
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
				n, err := h.ShareAllows(nil, h.Use[0].Step, f) // of a declared use: its counts alone
				if err != nil {
					return err
				}
				all, counts := 0, h.Use[0].Counts()
				for _, r := range h.Use {
					all += r.Labels
					if r.Counts() != counts {
						counts = "steps"
					}
				}
				share = fmt.Sprintf("%q %v: %d of its declared use's %s", name, f, n, plural.Of(all, strings.TrimSuffix(counts, "s"), counts))
			}
			shares = append(shares, share)
		}
		t.Line("shares: %s; each analyst's releases are held to their share, an allocation inside the budget, not a guarantee: analysts who adapt to each other's labels share the one budget, which the ledger publishes", strings.Join(shares, ", "))
	}
	if prev != nil {
		replaced(t, prev)
	}
	return t.Close()
}

// FilterChoice is what ledger init says, before its summary, of the
// labels declared for the new ledger at Path: what the use declared
// allows composed exactly (a --mechanism's, counted in Run), what each
// filter allows of them (Choice), and what the ledger, Header, keeps: the
// declared use, else the filter that allows more, or the one --filter
// names (Named). Say words why a filter cannot hold them in terms of
// the flags that gave them. For fixed private teachers (a Cap, within the
// budget: ledger init refuses one that is not) it says first that every
// label is free and the counts are analysis.
type FilterChoice struct {
	Path   string
	Labels string // the labels declared, in words
	Run    *ledger.UseRun
	Choice ledger.FilterChoice
	Header ledger.Header
	Cap    *accountant.Cap
	Named  bool
	Say    func(error) string
}

// Write prints the choice for people.
func (d FilterChoice) Write(w io.Writer) error {
	h, c, named := d.Header, d.Cap, d.Named
	filter := accountant.Filter{Parts: h.Parts}
	choice, labels, path := d.Choice, d.Labels, ledger.Redact(d.Path)
	one, many := "label", "labels"
	if d.Run != nil {
		one, many = useUnit(*d.Run)
	}
	expected := choice.Expected
	if expected > 0 {
		labels += fmt.Sprintf(", %s expected", plural.Of(expected, one, many))
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
	if d.Run != nil {
		width = max(width, len(accountant.Exact.String())+1)
		row(fmt.Sprintf("  %-*s  ", width, accountant.Exact.String()+":"), fmt.Sprintf("allows %s: the declared use's steps composed exactly, as one run "+
			"(valid for queries chosen adaptively and a stop at any time; other settings are then refused)", Allowed(d.Run.Labels, one, many)))
	}
	said := map[string]bool{} // why filters cannot hold them, said once
	for _, a := range choice.Allowances {
		name := fmt.Sprintf("  %-*s  ", width, a.Filter.String()+":")
		var cell string
		switch {
		case a.Err != nil:
			why := strings.Replace(d.Say(a.Err), "the filter "+a.Filter.String(), "the filter", 1)
			cell = "cannot hold them: " + why
			if said[why] {
				cell = "cannot hold them, for the reason above"
			}
			said[why] = true
		case expected == 0:
			cell = "allows " + Allowed(a.Labels, one, many)
		default:
			fits := "within the budget"
			if !a.Fits {
				fits = "over the budget"
			}
			cell = fmt.Sprintf("allows %s; the %d expected spend (%s, %s), %s", Allowed(a.Labels, one, many), expected,
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

// LedgerSchedule says, before ledger init's summary, the runs of the
// schedule that the ledger path (header h) keeps, in order, each with its
// count, composed exactly as one run.
func LedgerSchedule(w io.Writer, path string, h ledger.Header) error {
	t := cliout.NewText(w)
	t.Line("ledger %s: a schedule of %d runs, in this order, composed exactly as one run:", ledger.Redact(path), len(h.Use))
	for i, r := range h.Use {
		one, many := useUnit(r)
		t.Line("  %d. %s: %s", i+1, cliout.Escape(r.String()), Allowed(r.Labels, one, many))
	}
	t.Line("  kept: %v, the schedule declared: a release out of its order, or with other settings, is refused", accountant.Exact)
	return t.Close()
}

// useUnit names what run counts: labels, or releases each accounted as a
// whole (ledger.UseRun.Accounting), each one step.
func useUnit(r ledger.UseRun) (one, many string) {
	if r.Accounting != "" {
		return "release", "releases"
	}
	return "label", "labels"
}

// LedgerAdopted says that ledger adopt recorded l, at path, as its ensemble's
// ledger, and which record it replaced, if any.
func LedgerAdopted(w io.Writer, path string, l *ledger.Ledger, prev *ledger.Record) error {
	path = ledger.Redact(path)
	t := cliout.NewText(w)
	here := path
	if !ledger.IsURL(path) {
		here, _ = filepath.Abs(path)
	}
	t.Line("ledger %s is now the recorded ledger of ensemble %s: %s, last line %.16s", path, cliout.Escape(l.Header().Ensemble), plural.Of(l.Lines(), "line", "lines"), l.Head())
	switch {
	case prev == nil:
		t.Line("there was no record of the ensemble before")
	case prev.LedgerID != l.Header().ID && prev.Path == here:
		t.Line("it replaces ledger %.8s, which your record had in this place (%s on %s): this ledger took its place, so there is none to retire", prev.LedgerID, plural.Of(prev.Lines, "line", "lines"), prev.Updated.Format("2006-01-02T15:04:05Z"))
	case prev.LedgerID != l.Header().ID:
		// Retired by Adopt, where it still was.
		replaced(t, prev)
	case prev.Lines == l.Lines() && prev.Head == l.Head():
		t.Line("your record had it so already")
	default:
		// This ledger, another copy or an older state of it: what the
		// record knew beyond its lines is forgotten.
		t.Line("your record had this ledger with %s, last line %.16s, on %s: what it counted beyond these lines is forgotten", plural.Of(prev.Lines, "line", "lines"), prev.Head, prev.Updated.Format("2006-01-02T15:04:05Z"))
	}
	return t.Close()
}

// LedgerUpgraded says what ledger upgrade did to the ledger path.
func LedgerUpgraded(w io.Writer, path string, res ledger.UpgradeResult) error {
	path = ledger.Redact(path)
	t := cliout.NewText(w)
	if res.Current {
		// A ledger of version 4 is released on as it is: its rule is
		// kept, and it is not of this darrm's version.
		which := "the current one"
		if res.From < ledger.Version {
			which = "which this darrm releases on as it is"
		}
		if res.SchemaFrom > 0 {
			t.Line("ledger %s is of version %d, %s: its lines need no upgrade", path, res.From, which)
			t.Line("its database's darrm schema was upgraded from version %d to version %d: a darrm of before now refuses its ledgers (docs/aggregate.md, \"A team: one ledger in PostgreSQL\")", res.SchemaFrom, res.SchemaTo)
		} else {
			t.Line("ledger %s is of version %d, %s: there is nothing to upgrade", path, res.From, which)
		}
		if ledger.IsURL(path) {
			switch {
			case res.GuardMade:
				t.Line("its database now has darrm's guard against DDL: no role but a superuser changes darrm's tables (ALTER TABLE, CREATE OR REPLACE FUNCTION), not even their owner, %s", cliout.Escape(res.TablesOwner))
			case res.Guarded:
				t.Line("its database has darrm's guard against DDL: no role but a superuser changes darrm's tables")
			default:
				t.Line("its database has no guard against DDL: their owner, %s, can change darrm's tables without firing their triggers; a superuser makes the guard by running this command", cliout.Escape(res.TablesOwner))
			}
		}
		return t.Close()
	}
	t.Line("ledger %s upgraded from version %d to version %d: the spends of %s carried over; filter %v, kept from version %d (a ledger's filter is fixed before its first run: another is a new ledger's choice, darrm ledger init --filter); the old file is kept as %s",
		path, res.From, res.To, plural.Of(res.Runs, "run", "runs"), res.Filter, res.From, res.Backup)
	if res.Previous != nil {
		replaced(t, res.Previous)
	}
	return t.Close()
}

// LedgerMoved says that the ledger at From was moved (How: "exported
// to", "imported into") to To, where it was read back whole with Lines
// lines, Runs runs and Balance, and what follows (Then).
type LedgerMoved struct {
	From, To, How, Then string
	Lines, Runs         int
	Balance             ledger.Balance
}

// Write prints the document for people.
func (d LedgerMoved) Write(w io.Writer) error {
	b := d.Balance
	bound := b.Composition.String()
	if b.Bound == accountant.TeachersBound {
		bound = "teachers' cap (" + b.Cap.Rule() + ")"
	}
	t := cliout.NewText(w)
	t.Line("ledger %s %s %s: %s, %s, every line checked; spent %s", ledger.Redact(d.From), d.How, ledger.Redact(d.To),
		plural.Of(d.Lines, "line", "lines"), plural.Of(d.Runs, "run", "runs"), b.Total.String()+" by "+bound)
	t.Line("%s", d.Then)
	return t.Close()
}
