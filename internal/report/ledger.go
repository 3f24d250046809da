package report

import (
	"fmt"
	"io"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/ledger"
)

// LedgerShow is the document of darrm ledger show: the ledger at Path,
// the ensemble it is bound to, its budget, the spend of each run, and
// their Total by Composition, or the teachers' cap when that is smaller
// (Balance).
type LedgerShow struct {
	Path        string
	Header      ledger.Header
	Spends      []ledger.Spend
	Total       accountant.Guarantee
	Composition string
	Balance     ledger.Balance
}

// NewLedgerShow is the document of the open ledger l, read from path.
func NewLedgerShow(path string, l *ledger.Ledger) (LedgerShow, error) {
	b, err := l.Balance()
	return LedgerShow{Path: path, Header: l.Header(), Spends: l.Spends(), Total: b.Total, Composition: b.Composition, Balance: b}, err
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
	total := func(x float64) any {
		if f == cliout.Table {
			return accountant.FormatBound(x)
		}
		return x
	}
	common := cliout.Record{field("ledger", text(d.Path)), field("version", h.Version), field("ensemble", text(h.Ensemble)), field("relation", text(h.Relation))}
	if t := h.Teachers; t != nil {
		common = append(common, field("K", t.K), field("teachers_eps", t.Eps), field("teachers_Delta", t.Delta), field("kind", t.Kind.String()), field("partition", t.Partition.String()))
	} else {
		common = append(common, field("K", ""), field("teachers_eps", ""), field("teachers_Delta", ""), field("kind", ""), field("partition", ""))
	}
	common = append(common, field("budget_eps", h.Budget.Eps), field("budget_delta", h.Budget.Delta), field("delta_prime", h.DeltaPrime),
		field("total_eps", total(d.Total.Eps)), field("total_delta", total(d.Total.Delta)), field("total_bound", b.Bound.String()), field("composition", d.Composition),
		field("queries_eps", total(b.Queries.Eps)), field("queries_delta", total(b.Queries.Delta)))
	if c := b.Cap; c != nil {
		common = append(common, field("cap_eps", total(c.Eps)), field("cap_delta", total(c.Delta)), field("cap_rule", c.Rule()))
	} else {
		common = append(common, field("cap_eps", ""), field("cap_delta", ""), field("cap_rule", ""))
	}
	free := ""
	if b.Free {
		free = fmt.Sprintf("every further release from these teachers is free: their cap %s is within the budget", formatTotal(b.Cap.Guarantee))
	}
	common = append(common, field("free", b.Free), field("note", free))
	if len(d.Spends) == 0 {
		return cliout.WriteRecord(w, f, common)
	}
	rows := make([]cliout.Record, len(d.Spends))
	for i, s := range d.Spends {
		rows[i] = cliout.Record{field("time", s.Time.Format("2006-01-02T15:04:05Z")), field("run", text(s.Run)),
			field("mechanism", text(s.Mechanism)), field("queries", s.Queries), field("eps", total(s.Eps)), field("delta", total(s.Delta)), field("final", s.Final)}
	}
	return cliout.WriteRecords(w, f, common, rows)
}

// formatTotal prints a privacy total for people: each number rounded up
// to six significant digits, so that it never reads smaller than it is.
func formatTotal(g accountant.Guarantee) string {
	return fmt.Sprintf("(%s, %s)-DP", accountant.FormatBound(g.Eps), accountant.FormatBound(g.Delta))
}
