package report

import (
	"io"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/ledger"
)

// LedgerShow is the document of darrm ledger show: the ledger at Path,
// its budget, the spend of each run, and their Total by Composition.
type LedgerShow struct {
	Path        string
	Header      ledger.Header
	Spends      []ledger.Spend
	Total       accountant.Guarantee
	Composition string
}

// NewLedgerShow is the document of the open ledger l, read from path.
func NewLedgerShow(path string, l *ledger.Ledger) (LedgerShow, error) {
	total, method, err := l.Total()
	return LedgerShow{Path: path, Header: l.Header(), Spends: l.Spends(), Total: total, Composition: method}, err
}

// Write prints the document in format f: the ledger's fields, with a row
// per run when there is one.
func (d LedgerShow) Write(w io.Writer, f cliout.Format) error {
	h := d.Header
	common := cliout.Record{field("ledger", d.Path), field("ensemble", h.Ensemble), field("relation", h.Relation),
		field("budget_eps", h.Budget.Eps), field("budget_delta", h.Budget.Delta), field("delta_prime", h.DeltaPrime),
		field("total_eps", d.Total.Eps), field("total_delta", d.Total.Delta), field("composition", d.Composition)}
	if len(d.Spends) == 0 {
		return cliout.WriteRecord(w, f, common)
	}
	rows := make([]cliout.Record, len(d.Spends))
	for i, s := range d.Spends {
		rows[i] = cliout.Record{field("time", s.Time.Format("2006-01-02T15:04:05Z")), field("run", s.Run),
			field("mechanism", s.Mechanism), field("queries", s.Queries), field("eps", s.Eps), field("delta", s.Delta), field("final", s.Final)}
	}
	return cliout.WriteRecords(w, f, common, rows)
}
