package report

import (
	"fmt"
	"io"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/ledger"
)

// LedgerShow is the document of darrm ledger show: the ledger at Path,
// its budget, the spend of each run, and their Total by Composition.
type LedgerShow struct {
	Path        string
	Version     int
	Header      ledger.Header
	Spends      []ledger.Spend
	Total       accountant.Guarantee
	Composition string
}

// NewLedgerShow is the document of the open ledger l, read from path.
func NewLedgerShow(path string, l *ledger.Ledger) (LedgerShow, error) {
	total, method, err := l.Total()
	return LedgerShow{Path: path, Version: l.FormatVersion(), Header: l.Header(), Spends: l.Spends(), Total: total, Composition: method}, err
}

// Write prints the document in format f: the ledger's fields, with a row
// per run when there is one. Text from the file is escaped (a control
// character would act on the terminal), and a table rounds the totals up
// to six significant digits; JSON and CSV hold them exactly.
func (d LedgerShow) Write(w io.Writer, f cliout.Format) error {
	h := d.Header
	text := cliout.Escape
	if f == cliout.JSON {
		text = func(s string) string { return s } // JSON escapes them itself
	}
	total := func(x float64) any {
		if f == cliout.Table {
			return cliout.FloatUp(x, 6)
		}
		return x
	}
	common := cliout.Record{field("ledger", text(d.Path)), field("version", d.Version), field("ensemble", text(h.Ensemble)), field("relation", text(h.Relation)),
		field("budget_eps", h.Budget.Eps), field("budget_delta", h.Budget.Delta), field("delta_prime", h.DeltaPrime),
		field("total_eps", total(d.Total.Eps)), field("total_delta", total(d.Total.Delta)), field("composition", d.Composition)}
	if len(d.Spends) == 0 {
		return cliout.WriteRecord(w, f, common)
	}
	rows := make([]cliout.Record, len(d.Spends))
	for i, s := range d.Spends {
		rows[i] = cliout.Record{field("time", s.Time.Format("2006-01-02T15:04:05Z")), field("run", text(s.Run)),
			field("mechanism", text(s.Mechanism)), field("queries", s.Queries), field("eps", s.Eps), field("delta", s.Delta), field("final", s.Final)}
	}
	return cliout.WriteRecords(w, f, common, rows)
}

// formatTotal prints a privacy total for people: each number rounded up
// to six significant digits, so that it never reads smaller than it is.
func formatTotal(g accountant.Guarantee) string {
	return fmt.Sprintf("(%s, %s)-DP", cliout.FloatUp(g.Eps, 6), cliout.FloatUp(g.Delta, 6))
}
