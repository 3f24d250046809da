package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
)

// LedgerShow is the document of darrm ledger show: the ledger at Path,
// the ensemble it is bound to, its budget, its Balance (the total to
// publish: the budget its filter holds every release to, or the teachers'
// cap, with why (LedgerWhy); and what was spent so far, a realised cost),
// and the spend of each run, which Runs reads from the file as they are
// printed (so that a ledger of any length is shown in the memory of one
// run).
type LedgerShow struct {
	Path    string
	Header  ledger.Header
	Balance ledger.Balance
	// Runs calls its function with the spend of every run
	// (ledger.Ledger.Runs); HasRuns says that there is one.
	Runs    func(func(ledger.Spend) error) error
	HasRuns bool
	// Analysts is what each analyst spent, when a run names one or the
	// ledger gives shares (nil otherwise: the document is then as it was
	// before ledgers knew analysts).
	Analysts analysts
}

// NewLedgerShow is the document of the open ledger l, read from path.
func NewLedgerShow(ctx context.Context, path string, l *ledger.Ledger) (LedgerShow, error) {
	b, err := l.Balance()
	if err != nil {
		return LedgerShow{}, err
	}
	a, err := l.Analysts(ctx)
	if len(a) == 1 && a[0].Analyst == "" {
		a = nil // no run names an analyst
	}
	if err != nil {
		return LedgerShow{}, err
	}
	runs := func(each func(ledger.Spend) error) error { return l.Runs(ctx, each) }
	// A run: its lines may not be the ledger's (a ledger retired before
	// its first run holds a header and its end).
	errFound := errors.New("a run")
	err = runs(func(ledger.Spend) error { return errFound })
	if err != nil && !errors.Is(err, errFound) {
		return LedgerShow{}, err
	}
	return LedgerShow{Path: path, Header: l.Header(), Balance: b, Runs: runs, HasRuns: errors.Is(err, errFound), Analysts: a}, nil
}

// analysts are the sums of a ledger's spends per analyst: JSON's list of
// them, a line of text in a table or CSV.
type analysts []ledger.AnalystSpend

// String says each analyst's runs, labels, spend by the ledger's filter
// (rounded up, so that it never reads smaller than it is) and share.
func (as analysts) String() string {
	parts := make([]string, len(as))
	for i, a := range as {
		name := cliout.Escape(a.Analyst)
		if a.Analyst == "" {
			name = "(no analyst)"
		}
		parts[i] = fmt.Sprintf("%s: %s, %s, spent %s", name, plural.Of(a.Runs, "run", "runs"), plural.Of(a.Labels, "label", "labels"), formatTotal(a.Spent))
		if a.ShareBudget != nil {
			parts[i] += fmt.Sprintf(" of a share %v, %s", a.Share, shareText(a.ShareLabels, *a.ShareBudget))
		}
	}
	return strings.Join(parts, "; ")
}

// shareText says an analyst's share of a ledger: its labels, of a
// declared use (labels > 0), and its guarantee, against which the
// analyst's spend is stated (ledger.AnalystSpend).
func shareText(labels int, share accountant.Guarantee) string {
	if labels > 0 {
		return fmt.Sprintf("%s, %s", plural.Of(labels, "label", "labels"), formatTotal(share))
	}
	return formatTotal(share)
}

// Write prints the document in format f: the ledger's fields, with a row
// per run when there is one. The binding's fields are empty for a ledger
// of version 1, the cap's when there is no cap. Text from the file is
// escaped (a control character would act on a terminal), and a table
// rounds the totals up to six significant digits (they must not read
// smaller than they are); JSON and CSV hold them exactly.
func (d LedgerShow) Write(w io.Writer, f cliout.Format) error {
	h, b := d.Header, d.Balance
	text := cliout.Escape
	if f == cliout.JSON {
		text = func(s string) string { return s } // JSON escapes them itself
	}
	total := func(x float64) any { return BoundIn(f, x) }
	common := cliout.Record{field("ledger", text(d.Path)), field("version", h.Version), field("ensemble", text(h.Ensemble)), field("relation", text(h.Relation))}
	// absent adds a field the ledger has no value of: left out of JSON,
	// so that a key is there only with its value, an empty CSV cell, and
	// in a table the words why (table).
	absent := func(key, table string) {
		switch f {
		case cliout.JSON:
		case cliout.Table:
			common = append(common, field(key, table))
		default:
			common = append(common, field(key, ""))
		}
	}
	if t := h.Teachers; t != nil {
		common = append(common, field("K", t.K))
		if t.Eps == 0 && t.Delta == 0 && h.Relation == accountant.OneVote.String() {
			// Not 0-DP teachers: teachers with no guarantee, which the
			// one-vote relation does not need.
			absent("teachers_eps", provenance.NonPrivateOneVote)
			absent("teachers_Delta", provenance.NonPrivateOneVote)
		} else {
			common = append(common, field("teachers_eps", t.Eps), field("teachers_Delta", t.Delta))
		}
		common = append(common, field("kind", t.Kind.String()), field("partition", t.Partition.String()))
	} else {
		for _, k := range []string{"K", "teachers_eps", "teachers_Delta", "kind", "partition"} {
			absent(k, "")
		}
	}
	common = append(common, field("budget_eps", h.Budget.Eps), field("budget_delta", h.Budget.Delta), field("delta_prime", h.DeltaPrime))
	common = append(append(common, publishFields(f, b)...), spentFields(f, b)...)
	common = append(common, field("queries_eps", total(b.Queries.Eps)), field("queries_delta", total(b.Queries.Delta)))
	if c := b.Cap; c != nil {
		common = append(common, field("cap_eps", total(c.Eps)), field("cap_delta", total(c.Delta)), field("cap_rule", c.Rule()))
	} else {
		absent("cap_eps", "")
		absent("cap_delta", "")
		absent("cap_rule", "")
	}
	free := ""
	if b.Free {
		free = fmt.Sprintf("every further release from these teachers is free: their cap %s is within the budget", formatTotal(b.Cap.Guarantee))
	}
	common = append(common, field("free", b.Free), field("note", free))
	if d.Analysts != nil {
		var v any = d.Analysts
		if f != cliout.JSON {
			v = d.Analysts.String()
		}
		common = append(common, field("analysts", v))
	}
	if !d.HasRuns {
		return cliout.WriteRecord(w, f, common)
	}
	row := func(s ledger.Spend) cliout.Record {
		r := cliout.Record{field("time", s.Time.Format("2006-01-02T15:04:05Z")), field("run", text(s.Run))}
		if d.Analysts != nil {
			r = append(r, field("analyst", text(s.Analyst)))
		}
		return append(r, field("mechanism", text(string(s.Mechanism))), field("queries", s.Queries), field("eps", total(s.Eps)), field("delta", total(s.Delta)), field("final", s.Final))
	}
	var widths cliout.Widths
	if f == cliout.Table {
		if err := d.Runs(func(s ledger.Spend) error { widths.Add(row(s)); return nil }); err != nil {
			return err
		}
	}
	st, err := cliout.NewStream(w, f, common, widths)
	if err != nil {
		return err
	}
	if err := d.Runs(func(s ledger.Spend) error { return st.Row(row(s)) }); err != nil {
		return err
	}
	return st.Close()
}

// LedgerVerify is the document of darrm ledger verify: the ledger at
// Path, read and checked whole, and its balance.
type LedgerVerify struct {
	Path    string
	Version int
	Lines   int
	Runs    int
	Record  string
	Balance ledger.Balance
}

// NewLedgerVerify is the document of the ledger l, read from path with
// every line checked (ledger.Options.ReadOnly), whose record agrees with it.
func NewLedgerVerify(path string, l *ledger.Ledger) (LedgerVerify, error) {
	b, err := l.Balance()
	rec := "agrees"
	switch {
	case l.RecordedElse():
		rec = "names another ledger"
	case !l.Recorded():
		rec = "none"
	}
	return LedgerVerify{Path: path, Version: l.Version(), Lines: l.Lines(), Runs: l.RunCount(), Record: rec, Balance: b}, err
}

// Write prints the document in format f.
func (d LedgerVerify) Write(w io.Writer, f cliout.Format) error {
	path := d.Path
	if f != cliout.JSON {
		path = cliout.Escape(path)
	}
	b := d.Balance
	rec := cliout.Record{field("ledger", path), field("version", d.Version), field("lines", d.Lines), field("runs", d.Runs),
		field("checked", "every line, the hash chain and the totals each line carries"), field("record", d.Record)}
	return cliout.WriteRecord(w, f, append(append(rec, publishFields(f, b)...), spentFields(f, b)...))
}

// spentFields are the fields of what a ledger has spent, the same in
// ledger show and ledger verify, in format f (a table rounds it up:
// BoundIn): its ε and δ, which bound gives them and by which
// composition, or that its first release has yet to choose one.
func spentFields(f cliout.Format, b ledger.Balance) cliout.Record {
	composition := any(b.Composition)
	if b.FilterPending {
		composition = "chosen by its first release"
	}
	return cliout.Record{field("spent_eps", BoundIn(f, b.Total.Eps)), field("spent_delta", BoundIn(f, b.Total.Delta)),
		field("spent_bound", b.Bound.String()), field("composition", composition)}
}

// publishFields are the fields of a ledger's total to publish, the same
// in ledger show and ledger verify, in format f (a table rounds it up, as
// every total: BoundIn): its ε and δ, the result that gives it and why it
// is the one (LedgerPublish); without one (the teachers' cap not within
// the budget), no ε and δ, and why.
func publishFields(f cliout.Format, b ledger.Balance) cliout.Record {
	method, why := LedgerPublish(b)
	var rec cliout.Record
	switch {
	case b.Publish.Err == nil:
		rec = cliout.Record{field("publish_eps", BoundIn(f, b.Publish.Guarantee.Eps)), field("publish_delta", BoundIn(f, b.Publish.Guarantee.Delta))}
	case f != cliout.JSON:
		rec = cliout.Record{field("publish_eps", ""), field("publish_delta", "")}
	}
	return append(rec, field("publish_method", method), field("publish_why", why))
}

// formatTotal prints a privacy total for people: each number rounded up
// to six significant digits, so that it never reads smaller than it is.
func formatTotal(g accountant.Guarantee) string {
	return fmt.Sprintf("(%s, %s)-DP", decimal.FormatBound(g.Eps), decimal.FormatBound(g.Delta))
}

// BoundIn is a total as format f prints it: rounded up to six
// significant digits in a table (formatTotal), exact in JSON and CSV.
func BoundIn(f cliout.Format, x float64) any {
	if f == cliout.Table {
		return decimal.FormatBound(x)
	}
	return x
}

// SettingIn is a setting as format f prints it: in a table to six
// significant digits rounded up (a noise) or down (an eps to spend), so
// that the value copied from it keeps the guarantee computed for the
// exact one (decimal.Format); exact in JSON and CSV.
func SettingIn(f cliout.Format, x float64, up bool) any {
	if f == cliout.Table {
		return decimal.Format(x, 6, up, 0)
	}
	return x
}

// Allowed writes a count of labels a budget allows for people: n of them,
// or, at accountant.CountLimit, that the accountant counts no further (no
// run of practical length reaches the budget).
func Allowed(n int, one, many string) string {
	if n >= accountant.CountLimit {
		return fmt.Sprintf("2^53 %s or more (the most the accountant counts)", many)
	}
	return plural.Of(n, one, many)
}

// LedgerPublish names a ledger's total to publish (ledger.Balance.Publish)
// and says why it is the one (LedgerWhy), also on a ledger whose first
// release chooses its filter and none has run (Balance.FilterPending):
// its budget, which that filter will hold every release to.
func LedgerPublish(b ledger.Balance) (name, why string) {
	if b.FilterPending && b.Publish.Cap == nil {
		return "ledger's budget", "the filter that the ledger's first release chooses for its labels, before it runs and from them alone, " +
			"holds every release charged to it, however each was chosen, to the budget fixed before the first run: " +
			"the budget is the guarantee from the first label on; what the releases have spent is a realised cost (analysis)"
	}
	return b.Publish.Name(), LedgerWhy(b.Publish)
}

// LedgerWhy says in one line why t, a ledger's total to publish
// (ledger.Balance.Publish), is the one to publish, the same in every
// command that prints it: a filter's guarantee is its budget, fixed
// before the first run, not the sum spent so far; a declared use's is the
// composition of every step it allows; or, for fixed private teachers,
// the teachers' cap, their only bound, and why it allows no label when it
// is not within the budget.
func LedgerWhy(t accountant.Total) string {
	switch {
	case t.Err != nil:
		return t.Err.Error()
	case t.Argument != "":
		// The one ledger total an argument names (ledger.Balance): runs
		// of version 3 past the budget.
		return "the ledger's runs of version 3, which took a run when general or optimal composition said it fitted, " +
			"spent more than the budget by simple composition, the ledger's filter: no filter held them to the budget, so it is no guarantee " +
			"of them; their simple composition is a guarantee of runs whose sizes and settings were fixed before the first, and, of runs chosen " +
			"from earlier labels, their realised total, which no filter stands behind; no release fits any more"
	case t.Cap != nil:
		return "the teachers are fixed models: their cap bounds every release from them, however many, and is their only bound " +
			"(composing per-query guarantees is not proved for fixed teachers); it is within the ledger's budget at its delta and holds " +
			"from the first label on; what the releases have spent is a realised cost (analysis)"
	}
	if !t.Filter {
		// A declared use's: the composition of every step it allows,
		// fixed at init (ledger.NewUseHeader).
		return fmt.Sprintf("the ledger's declared use fixed every step's privacy before the first run; this composes every step it allows "+
			"as one run (%s): a stop at any count is post-processing of it, queries chosen adaptively are covered; "+
			"what the releases have spent is a realised cost (analysis)", t.Name())
	}
	return fmt.Sprintf("the ledger's filter (%v) holds every release charged to it, however each was chosen, to the budget fixed before the first run: "+
		"the budget is the guarantee from the first label on; what the releases have spent is a realised cost (analysis)", t.Method)
}
