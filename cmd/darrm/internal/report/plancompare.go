package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/plan"
)

// PlanCompare is the document of darrm plan --votes without --mechanism:
// every mechanism that fits the proxy votes planned for the same budget
// and queries in one target (a run or a new ledger), each with its
// parameters under the names of the aggregate flags they feed, its
// expected correct and answered labels on the votes and its total, and
// the best (plan.Compare).
type PlanCompare struct {
	EqualTotals
	For  string           `json:"for"`
	Rows []PlanCompareRow `json:"mechanisms"`
	// Best is the mechanism with the most expected correct labels among
	// those whose expected precision reaches MinPrecision, "" when none
	// does.
	Best string `json:"best"`
	// MinPrecision is the least expected precision the best must reach.
	MinPrecision float64  `json:"min_precision"`
	Left         []string `json:"left_out,omitempty"`
	UtilityOn    string   `json:"utility_on"`
	Tuning       string   `json:"tuning"`
	// ThresholdNote says why Confident-GNMax's threshold is as low as
	// its least precision allows, and Thresholds what higher ones cost.
	ThresholdNote string `json:"threshold_note,omitempty"`
	Thresholds    string `json:"thresholds,omitempty"`
	// thresholdsOf is the mechanism whose thresholds they are.
	thresholdsOf string
}

// PlanCompareRow is one mechanism of PlanCompare: its plan (the total is
// the ledger's filter's for a plan for a ledger) and parameters, or why
// it has none.
type PlanCompareRow struct {
	Planned
	Threshold    *float64 `json:"threshold,omitempty"`
	Sigma1       *float64 `json:"sigma1,omitempty"`
	Sigma2       *float64 `json:"sigma2,omitempty"`
	LaplaceScale *float64 `json:"laplace_scale,omitempty"`
	TargetEps    *float64 `json:"target_eps,omitempty"`
	Delta        *float64 `json:"delta,omitempty"`
	// Settings are the planned mechanism's other settings that are
	// numbers, by their flags: those of a mechanism that none of the
	// fields above names (a program's own).
	Settings []Setting `json:"settings,omitempty"`
	Correct  float64   `json:"expected_correct"`
	Answered float64   `json:"expected_answered"`
	// LedgerSpent is what the planned labels spend of a new ledger's
	// budget by its filter (for a ledger only): a realised cost.
	LedgerSpent *Pair `json:"ledger_spent,omitempty"`
	// rounds are how a table rounds the settings, by flag (their tags).
	rounds map[string]rounding
}

// NewPlanCompare describes the comparison c for queries of budget in
// target t, whose best reaches
// minPrecision, tuned as tuning says.
func NewPlanCompare(c plan.Comparison, e EqualTotals, t plan.Target, minPrecision float64, tuning string) PlanCompare {
	d := PlanCompare{EqualTotals: e, For: t.String(), Left: c.Left, Tuning: tuning, MinPrecision: minPrecision}
	for i, s := range c.Plans {
		row := PlanCompareRow{Planned: NewPlanned(s)}
		if s.NoFit == nil {
			pl := s.Plan
			if t == plan.ForLedger {
				// A ledger publishes its total (its budget under a filter,
				// its declared use's composition), whatever its labels
				// spend of it (LedgerWhy): the spend is beside it, as analysis.
				p, g := pl.Count.LedgerPublish, pl.Count.LedgerTotal
				row.Publish = &Publish{Total: p}
				row.LedgerSpent = &Pair{Eps: g.Eps, Delta: g.Delta}
			}
			row.setParameters(pl)
			row.Correct, row.Answered, d.UtilityOn = pl.Utility.Correct, pl.Utility.Answered, pl.Utility.On
			if len(pl.Utility.Thresholds) > 0 {
				d.ThresholdNote, d.Thresholds, d.thresholdsOf = thresholdNote, thresholdsText(pl.Utility.Thresholds), string(s.Mechanism)
			}
		}
		if i == c.Best {
			d.Best = string(s.Mechanism)
		}
		d.Rows = append(d.Rows, row)
	}
	return d
}

// Setting is a setting of a mechanism that is a number, by the flag
// that takes it.
type Setting struct {
	Flag  string  `json:"flag"`
	Value float64 `json:"value"`
}

// setParameters sets the row's parameters from the plan's request: each
// setting that is a number by its flag, a threshold step's by the flags
// it is planned under (ensemble.Planned.Threshold), whatever the
// mechanism's JSON calls them.
func (r *PlanCompareRow) setParameters(pl plan.Plan) {
	q := pl.Request
	ns := numbers(q.Mechanism, ensemble.VotesOf(q.Mechanism, q.Classes))
	r.rounds = make(map[string]rounding, len(ns))
	for _, n := range ns {
		r.rounds[n.flag] = n.round
		switch n.flag {
		case "threshold":
			r.Threshold = new(n.v)
		case "sigma1":
			r.Sigma1 = new(n.v)
		case "sigma2":
			r.Sigma2 = new(n.v)
		case "laplace-scale":
			r.LaplaceScale = new(n.v)
		case "target-eps":
			r.TargetEps = new(n.v)
		case "delta":
		default:
			r.Settings = append(r.Settings, Setting{n.flag, n.v})
		}
	}
	if hasDelta(ns) {
		r.Delta = new(pl.Count.PerQuery.Delta)
	}
}

// parameters says the row's parameters, each as the aggregate flag that
// takes it, briefly (four digits, rounded toward more noise:
// number.text), separated by sep.
func (r PlanCompareRow) parameters(sep string) string {
	var out []string
	for _, p := range []struct {
		name string
		v    *float64
	}{{"threshold", r.Threshold}, {"sigma1", r.Sigma1}, {"sigma2", r.Sigma2}, {"laplace-scale", r.LaplaceScale}, {"target-eps", r.TargetEps}} {
		if p.v != nil {
			out = append(out, p.name+" "+number{p.name, *p.v, r.rounds[p.name]}.text(4))
		}
	}
	for _, s := range r.Settings {
		out = append(out, s.Flag+" "+number{s.Flag, s.Value, r.rounds[s.Flag]}.text(4))
	}
	return strings.Join(out, sep)
}

// Write prints the document in format f.
func (d PlanCompare) Write(w io.Writer, f cliout.Format) error {
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, d)
	case cliout.CSV:
		header := []string{"mechanism", "threshold", "sigma1", "sigma2", "laplace_scale", "target_eps", "delta", "expected_correct", "expected_answered",
			"publish_eps", "publish_delta", "publish_method", "best", "no_fit", "ledger_spent_eps", "ledger_spent_delta", "settings"}
		var rows [][]string
		for _, r := range d.Rows {
			var other []string
			for _, s := range r.Settings {
				other = append(other, s.Flag+"="+cliout.Float(s.Value))
			}
			row := []string{string(r.Mechanism), optFloat(r.Threshold), optFloat(r.Sigma1), optFloat(r.Sigma2), optFloat(r.LaplaceScale), optFloat(r.TargetEps), optFloat(r.Delta), "", "", "", "", "",
				fmt.Sprint(string(r.Mechanism) == d.Best), r.NoFit, "", "", strings.Join(other, " ")}
			if s := r.LedgerSpent; s != nil {
				row[14], row[15] = cliout.Float(s.Eps), cliout.Float(s.Delta)
			}
			if r.Fits() {
				row[7], row[8], row[9], row[10], row[11] = cliout.Float(r.Correct), cliout.Float(r.Answered), cliout.Float(r.Publish.Guarantee.Eps), cliout.Float(r.Publish.Guarantee.Delta), r.Publish.Name()
			}
			rows = append(rows, row)
		}
		return cliout.WriteCSV(w, header, rows)
	}
	target := "in one run held to the budget; each total is the least eps at its delta of every composition valid for the run, by the one that gives it"
	ledger := d.For == plan.ForLedger.String()
	// shared is the total every fitting mechanism's ledger publishes
	// when it is one (a filter's: the budget), nil when they differ: a
	// ledger that declares a mechanism's labels publishes their
	// composition, which is each mechanism's own.
	shared := d.sharedPublish()
	if ledger {
		target = "on a new ledger with the budget, whose total to publish is its budget; spent: what the labels spend of it by the filter (analysis)"
		if shared == nil {
			target = "each on a new ledger with the budget that declares its labels, whose total to publish is their composition, each its own; spent: what the labels spend of it by the filter (analysis)"
		}
	}
	t := cliout.NewText(w)
	t.Line("Every mechanism that fits the proxy votes, planned for a total of (%s, %s) over %d queries %s:",
		cliout.FloatN(d.BudgetEps, 6), cliout.FloatN(d.BudgetDelta, 3), d.Queries, target)
	var publish *Publish // a ledger's, when the same for every mechanism
	header := []string{"mechanism", "parameters", "correct", "answered", "total, by"}
	if ledger {
		header[4] = "spent, by"
	}
	var rows [][]string
	for _, r := range d.Rows {
		switch {
		case !r.Fits():
			rows = append(rows, []string{string(r.Mechanism), "no plan " + t.Note(string(r.Mechanism)+": "+r.NoFit), "", "", ""})
			continue
		case ledger && shared != nil && publish == nil:
			publish = r.Publish
			t.Line("  to publish: %s for every release on such a ledger, by its %s %s; why: %s",
				formatTotal(publish.Guarantee), publish.Name(), t.Note(publish.Reference()), publish.why())
		case ledger && shared == nil:
			t.Line("  to publish on %s's ledger: %s for every release on it, by its %s %s",
				r.Mechanism, formatTotal(r.Publish.Guarantee), r.Publish.Name(), t.Note(r.Publish.Reference()))
			publish = r.Publish
		}
		total := r.Publish.totalCell(t)
		if ledger {
			total = fmt.Sprintf("(%s, %s) %s", decimal.FormatBound(r.LedgerSpent.Eps), decimal.FormatBound(r.LedgerSpent.Delta), strings.TrimSuffix(r.Publish.Name(), " budget"))
		}
		rows = append(rows, []string{string(r.Mechanism), r.parameters("\n"), fmt.Sprintf("%.1f", r.Correct), fmt.Sprintf("%.1f", r.Answered), total})
	}
	if ledger && shared == nil && publish != nil {
		t.Line("  why: %s", publish.why())
	}
	t.Table(header, rows)
	for _, l := range d.Left {
		t.Line("  left out: %s", l)
	}
	if d.Thresholds != "" {
		t.Line("  %s: %s (%s)", d.thresholdsOf, d.Thresholds, d.ThresholdNote)
	}
	if d.UtilityOn != "" {
		t.Line("  correct, answered: expected labels on %s", d.UtilityOn)
	}
	t.Line("  %s", d.Tuning)
	switch {
	case d.Best == "" && d.MinPrecision > 0:
		t.Line("best: none: no mechanism's plan of %d queries reaches an expected precision of %v", d.Queries, d.MinPrecision)
	case d.Best == "":
		t.Line("best: none: no mechanism fits %d queries in the budget", d.Queries)
	}
	for _, r := range d.Rows {
		if string(r.Mechanism) == d.Best {
			t.Line("best: %s (%s), %.1f expected correct labels of %d queries", d.Best, r.parameters(", "), r.Correct, d.Queries)
		}
	}
	return t.Close()
}

// sharedPublish returns the total that every fitting mechanism's ledger
// publishes, when they publish one, nil when they differ (or none fits).
func (d PlanCompare) sharedPublish() *Publish {
	var shared *Publish
	for _, r := range d.Rows {
		switch {
		case !r.Fits():
		case shared == nil:
			shared = r.Publish
		case r.Publish.Guarantee != shared.Guarantee || r.Publish.Name() != shared.Name():
			return nil
		}
	}
	return shared
}
