package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/experiments/transfer"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/plan"
	"github.com/darrm/darrm/provenance"
)

// Planned is a mechanism's plan in a comparison at equal totals
// (plan.EqualTotals): the parameter chosen for the total budget over the
// queries, the per-query guarantee it gives, and its total to publish,
// in the JSON object aggregate states its own in (Publish), with its
// method and theorem; or, when nothing fits, why (NoFit).
type Planned struct {
	Mechanism     provenance.MechanismName `json:"mechanism"`
	Parameter     string                   `json:"planned"`
	Value         float64                  `json:"value"`
	PerQueryEps   float64                  `json:"per_query_eps"`
	PerQueryDelta float64                  `json:"per_query_delta"`
	Publish       *Publish                 `json:"publish,omitempty"`
	NoFit         string                   `json:"no_fit,omitempty"`
	// round is how a table rounds Value (its setting's tag).
	round rounding
}

// NewPlanned describes e, a mechanism's plan at a total.
func NewPlanned(e plan.Equal) Planned {
	if e.NoFit != nil {
		return Planned{Mechanism: e.Mechanism, NoFit: e.NoFit.Error()}
	}
	c := e.Plan.Count
	return Planned{Mechanism: e.Mechanism, Parameter: e.Plan.Flag, Value: e.Plan.Value, round: flagRounding(e.Plan.Request.Mechanism, e.Plan.Flag),
		PerQueryEps: c.PerQuery.Eps, PerQueryDelta: c.PerQuery.Delta,
		Publish: &Publish{Total: c.Total}}
}

// totalCell is the cell of a table that says the total to publish, p,
// with its method, whose theorem is a note of t: rounded up
// (decimal.FormatBound), never below the JSON's.
func (p Publish) totalCell(t *cliout.Text) string {
	return fmt.Sprintf("(%s, %s) %s %s", decimal.FormatBound(p.Guarantee.Eps), decimal.FormatBound(p.Guarantee.Delta), p.Name(), t.Note("total by "+p.Name()+": "+p.Reference()))
}

// Fits says whether the mechanism has a plan.
func (p Planned) Fits() bool { return p.NoFit == "" }

// columns are the plan's cells of a table row: the parameter (rounded
// toward more noise, number.text), the per-query guarantee (rounded up,
// as the total) and the total with its method, whose theorem (or why
// nothing fits) is a note of t.
func (p Planned) columns(t *cliout.Text) []string {
	if !p.Fits() {
		return []string{"does not fit " + t.Note(string(p.Mechanism)+": "+p.NoFit), "", ""}
	}
	return []string{fmt.Sprintf("%s %s", p.Parameter, number{p.Parameter, p.Value, p.round}.text(4)),
		fmt.Sprintf("(%s, %s)", decimal.FormatBound(p.PerQueryEps), decimal.FormatBound(p.PerQueryDelta)),
		p.Publish.totalCell(t)}
}

// plannedHeader are the headers of columns, which plannedNote explains.
var plannedHeader = []string{"planned", "per query", "total, by"}

// plannedNote explains the columns of plannedHeader, under each table
// that has them.
const plannedNote = "  planned: the setting that darrm plan chose so that the queries fit the total; per query: " +
	"each label's (eps, delta); total, by: the total to publish over the queries, and the composition that gives it"

// EqualTotals is the heading of a comparison at equal totals: the budget
// and the queries. Each plan's total is its total to publish: the least
// eps at the budget's delta of every composition valid for the run
// (accountant.Account.Publish), whatever composition a flag names.
type EqualTotals struct {
	BudgetEps   float64 `json:"budget_eps"`
	BudgetDelta float64 `json:"budget_delta"`
	Queries     int     `json:"queries"`
}

// Title says which comparison follows, and how its totals are chosen.
func (e EqualTotals) Title() string {
	return fmt.Sprintf("Comparison at equal totals: every mechanism planned (darrm plan) for a total of (%s, %s) over %d queries; "+
		"each total is the least eps at delta %s of every composition valid for the run, by the one that gives it",
		cliout.FloatN(e.BudgetEps, 6), cliout.FloatN(e.BudgetDelta, 3), e.Queries, cliout.FloatN(e.BudgetDelta, 3))
}

// best returns the index of the best candidate by score (higher is
// better) among those ok admits, and of the runner-up; -1 for none.
func best(n int, score func(i int) float64, ok func(i int) bool) (first, second int) {
	first, second = -1, -1
	for i := range n {
		if !ok(i) {
			continue
		}
		switch {
		case first < 0 || score(i) > score(first):
			first, second = i, first
		case second < 0 || score(i) > score(second):
			second = i
		}
	}
	return first, second
}

// SolveEqual is solve's comparison at equal totals: each compared noise
// function sampled by the mechanism planned for the total, and measured as
// Compare measures them, at its own plan's parameters.
type SolveEqual struct {
	EqualTotals
	Rows []SolveEqualRow `json:"mechanisms"`
	// Winners name, for each actual distribution, the noise function of
	// least expected error, and the runner-up.
	Winners []Winner `json:"winners"`
}

// SolveEqualRow is one noise function of SolveEqual.
type SolveEqualRow struct {
	Name string `json:"name"` // gamma_<name>, as in Compare
	Planned
	Utility        float64               `json:"objective"`
	SurrogateError float64               `json:"surrogate_error"`
	Errors         []gamma.ErrorEstimate `json:"expected_errors,omitempty"`
	// Accuracy is, for each actual distribution that fixes every p_i,
	// Pr[label = 1]: the labels' accuracy when the true label is 1 and p_i
	// is teacher i's accuracy.
	Accuracy []Accuracy `json:"accuracy,omitempty"`
}

// Accuracy is Pr[label = 1] under fixed teachers' probabilities.
type Accuracy struct {
	Actual string  `json:"actual"`
	Value  float64 `json:"value"`
}

// Winner says which mechanism wins a comparison, by which measure and
// with which value, and the runner-up's; Tied says that the runner-up has
// the same value. Tied and Note are in every winner's JSON (false, ""),
// as docs/transfer.md lists them.
type Winner struct {
	By       string  `json:"by"`
	Winner   string  `json:"winner"`
	Value    float64 `json:"value"`
	RunnerUp string  `json:"runner_up,omitempty"`
	// RunnerValue is nil without a runner-up: with one it is stated, 0
	// too (omitempty on a number left out a runner-up's value of 0).
	RunnerValue *float64 `json:"runner_up_value,omitempty"`
	Tied        bool     `json:"tied"`
	// Note qualifies the win, e.g. a margin within the measurement's
	// spread.
	Note string `json:"note"`
}

// NewSolveEqual measures the winners of rows: least expected error under
// each actual distribution.
func NewSolveEqual(e EqualTotals, rows []SolveEqualRow) SolveEqual {
	out := SolveEqual{EqualTotals: e, Rows: rows}
	if len(rows) == 0 {
		return out
	}
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = "gamma_" + r.Name
	}
	var actuals []string
	for _, r := range rows {
		if r.Fits() {
			for _, e := range r.Errors {
				actuals = append(actuals, e.Actual)
			}
			break
		}
	}
	if !slices.ContainsFunc(rows, SolveEqualRow.Fits) {
		out.Winners = []Winner{{}}
	}
	for a, actual := range actuals {
		out.Winners = append(out.Winners, newWinner("E err "+actual, names, func(i int) float64 { return rows[i].Errors[a].Mean }, true, func(i int) bool { return rows[i].Fits() }))
	}
	return out
}

// SolveEqualOf is solve's comparison at the total e of the candidates cs
// planned and measured for it (plan.CompareAtTotals).
func SolveEqualOf(e EqualTotals, cs []transfer.Compared) SolveEqual {
	rows := make([]SolveEqualRow, len(cs))
	for i, c := range cs {
		m := c.Measurement
		rows[i] = SolveEqualRow{Name: c.Name, Planned: NewPlanned(c.Equal), Utility: m.Utility, SurrogateError: m.SurrogateError, Errors: m.Errors}
		for _, a := range m.LabelOne {
			rows[i].Accuracy = append(rows[i].Accuracy, Accuracy{Actual: a.Actual, Value: a.Value})
		}
	}
	return NewSolveEqual(e, rows)
}

// newWinner returns the winner by value, value(i) of candidate i, among
// those ok admits: the largest value, or the smallest when lower is
// better.
func newWinner(by string, names []string, value func(i int) float64, lower bool, ok func(i int) bool) Winner {
	score := value
	if lower {
		score = func(i int) float64 { return -value(i) }
	}
	f, s := best(len(names), score, ok)
	if f < 0 {
		return Winner{By: by}
	}
	w := Winner{By: by, Winner: names[f], Value: value(f)}
	if s >= 0 {
		rv := value(s)
		w.RunnerUp, w.RunnerValue, w.Tied = names[s], &rv, rv == value(f)
	}
	return w
}

// write prints the comparison as a table.
func (s SolveEqual) write(t *cliout.Text) {
	header := append([]string{"mechanism"}, plannedHeader...)
	header = append(header, "utility", "surrogate err")
	var fixed []string
	for _, r := range s.Rows {
		if r.Fits() {
			for _, e := range r.Errors {
				header = append(header, "E err "+e.Actual)
			}
			for _, a := range r.Accuracy {
				fixed = append(fixed, a.Actual)
				header = append(header, "Pr[label=1] "+a.Actual)
			}
			break
		}
	}
	var rows [][]string
	for _, r := range s.Rows {
		row := append([]string{fmt.Sprintf("gamma_%s (%s)", r.Name, r.Mechanism)}, r.columns(t)...)
		if r.Fits() {
			row = append(row, g6(r.Utility), g6(r.SurrogateError))
			for _, e := range r.Errors {
				row = append(row, errorCell(e))
			}
			for _, a := range r.Accuracy {
				row = append(row, cliout.FloatN(a.Value, 3))
			}
		}
		rows = append(rows, row)
	}
	notes := []string{"  utility, surrogate err, E err: as in the comparison above, at the planned setting"}
	if len(fixed) > 0 {
		notes = append(notes, fmt.Sprintf("  Pr[label=1]: the labels' accuracy when the true label is 1 and p_i = %s is each teacher's accuracy", strings.Join(fixed, ", ")))
	}
	writeEqual(t, s.EqualTotals, header, rows, s.Winners, notes...)
}

// writeEqual prints a comparison at equal totals e: its title, the rows
// under header (those of a plan that does not fit padded with empty
// cells), plannedNote and the notes, and who wins.
func writeEqual(t *cliout.Text, e EqualTotals, header []string, rows [][]string, winners []Winner, notes ...string) {
	t.Line("")
	t.Line("%s:", e.Title())
	for i := range rows {
		for len(rows[i]) < len(header) {
			rows[i] = append(rows[i], "")
		}
	}
	t.Table(header, rows)
	t.Line(plannedNote)
	for _, n := range notes {
		t.Line("%s", n)
	}
	for _, win := range winners {
		writeWinner(t, e, win)
	}
}

// writeWinner says plainly who wins at equal totals.
func writeWinner(t *cliout.Text, e EqualTotals, win Winner) {
	at := fmt.Sprintf("at equal totals (%s, %s) over %d queries", cliout.FloatN(e.BudgetEps, 6), cliout.FloatN(e.BudgetDelta, 3), e.Queries)
	switch {
	case win.Winner == "" && win.By != "":
		t.Line("%s, by %s: nothing fits the budget, so nothing wins", at, win.By)
	case win.Winner == "":
		t.Line("%s: nothing fits the budget, so nothing wins", at)
	case win.RunnerUp == "":
		t.Line("%s, by %s: %s (%s) is the only one that fits", at, win.By, win.Winner, cliout.FloatN(win.Value, 4))
	case win.Tied:
		t.Line("%s, by %s: %s and %s tie (%s)", at, win.By, win.Winner, win.RunnerUp, cliout.FloatN(win.Value, 4))
	default:
		note := ""
		if win.Note != "" {
			note = "; " + win.Note
		}
		v, r := apart(win.Value, *win.RunnerValue)
		t.Line("%s, by %s: %s wins (%s against %s for %s%s)", at, win.By, win.Winner, v, r, win.RunnerUp, note)
	}
}

// apart formats a and b, which differ, to four significant digits, or to
// as many more as it takes to show them different: at four, 0.99998
// against 0.99997 read "1 against 1".
func apart(a, b float64) (string, string) {
	for n := 4; ; n++ {
		x, y := cliout.FloatN(a, n), cliout.FloatN(b, n)
		if x != y || n == 17 {
			return x, y
		}
	}
}

// errorCell formats an expected error as Compare's table does.
func errorCell(e gamma.ErrorEstimate) string {
	if e.Exact {
		return cliout.FloatN(e.Mean, 4)
	}
	return fmt.Sprintf("%.4g ± %.1g", e.Mean, e.StdErr)
}

// SimEqual is simulate's comparison at equal totals: each mechanism
// planned for the total, simulated on the same teachers.
type SimEqual struct {
	EqualTotals
	Rows []SimEqualRow `json:"mechanisms"`
	// Winners name, in each relation, the mechanism of the highest exact
	// agreement with the majority.
	Winners []Winner `json:"winners"`
}

// SimEqualRow is one mechanism of SimEqual: its plan and, when it fits,
// its simulation at the plan's parameters.
type SimEqualRow struct {
	Planned
	Label     string              `json:"label,omitempty"`
	Relation  accountant.Relation `json:"relation"`
	Agree     int                 `json:"agree"`
	Agreement float64             `json:"agreement"`
	Lo        float64             `json:"ci95_lo"`
	Hi        float64             `json:"ci95_hi"`
	Exact     float64             `json:"exact_agreement"`
	// LabelOne is Pr[label = 1] exactly: the labels' accuracy when the
	// true label is 1 and the teachers' probabilities of voting 1 are their
	// accuracies.
	LabelOne float64 `json:"exact_label_one"`
}

// NewSimEqual returns the comparison of rows, with the winner of each
// relation by exact agreement.
func NewSimEqual(e EqualTotals, rows []SimEqualRow) SimEqual {
	out := SimEqual{EqualTotals: e, Rows: rows}
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = string(r.Mechanism)
	}
	var relations []accountant.Relation
	for _, r := range rows {
		if !slices.Contains(relations, r.Relation) {
			relations = append(relations, r.Relation)
		}
	}
	for _, rel := range relations {
		out.Winners = append(out.Winners, newWinner(fmt.Sprintf("exact agreement, %v relation", rel), names,
			func(i int) float64 { return rows[i].Exact }, false, func(i int) bool { return rows[i].Fits() && rows[i].Relation == rel }))
	}
	return out
}

// write prints the comparison as a table.
func (s SimEqual) write(t *cliout.Text) {
	header := append(append([]string{"mechanism", "relation"}, plannedHeader...), "agreement", "95% interval", "exact", "Pr[label=1]")
	var rows [][]string
	notes := []string{"  agreement: the share of labels equal to the majority of the votes, with its 95% interval; exact: its expectation",
		"  Pr[label=1]: exact; the labels' accuracy when the true label is 1 and each teacher's p is its accuracy"}
	for _, r := range s.Rows {
		row := append([]string{string(r.Mechanism), r.Relation.String()}, r.columns(t)...)
		if r.Fits() {
			row = append(row, fmt.Sprintf("%.4f", r.Agreement), fmt.Sprintf("[%.4f, %.4f]", r.Lo, r.Hi), fmt.Sprintf("%.4f", r.Exact), fmt.Sprintf("%.4f", r.LabelOne))
			notes = append(notes, fmt.Sprintf("  %s: %s", r.Mechanism, r.Label))
		}
		rows = append(rows, row)
	}
	writeEqual(t, s.EqualTotals, header, rows, s.Winners, notes...)
}

// TransferEqual is transfer's comparison at equal totals: each mechanism
// planned for the total, its labels' accuracy at its plan.
type TransferEqual struct {
	EqualTotals
	Rows []TransferEqualRow `json:"mechanisms"`
	// Winners name the mechanism of the highest mean accuracy.
	Winners []Winner `json:"winners"`
}

// TransferEqualRow is one mechanism of TransferEqual.
type TransferEqualRow struct {
	Planned
	AccuracyMean float64 `json:"accuracy_mean"`
	AccuracyStd  float64 `json:"accuracy_std"`
}

// NewTransferEqual returns the comparisons at equal totals of res, one
// for each number of queries, in the order of res, at the total budget.
func NewTransferEqual(budget accountant.Guarantee, res []transfer.EqualResult) []TransferEqual {
	var out []TransferEqual
	for _, r := range res {
		if len(out) == 0 || out[len(out)-1].Queries != r.Queries {
			out = append(out, TransferEqual{EqualTotals: EqualTotals{BudgetEps: budget.Eps, BudgetDelta: budget.Delta, Queries: r.Queries}})
		}
		e := &out[len(out)-1]
		// The row is named as the comparison names it: "rr" is
		// darrm-one-vote with randomized response's gamma.
		pl := r.Plan
		pl.Mechanism = provenance.MechanismName(r.Mechanism)
		e.Rows = append(e.Rows, TransferEqualRow{Planned: NewPlanned(pl), AccuracyMean: r.AccuracyMean, AccuracyStd: r.AccuracyStd})
	}
	for i := range out {
		rows := out[i].Rows
		names := make([]string, len(rows))
		for j, r := range rows {
			names[j] = string(r.Mechanism)
		}
		w := newWinner("mean accuracy", names, func(j int) float64 { return rows[j].AccuracyMean }, false, func(j int) bool { return rows[j].Fits() })
		if w.RunnerUp != "" && !w.Tied {
			a, b := rows[slices.Index(names, w.Winner)], rows[slices.Index(names, w.RunnerUp)]
			if w.Value-*w.RunnerValue <= max(a.AccuracyStd, b.AccuracyStd) {
				w.Note = "a margin within one standard deviation of the redraws: not a clear win"
			}
		}
		out[i].Winners = []Winner{w}
	}
	return out
}

// write prints the comparison as a table.
func (s TransferEqual) write(t *cliout.Text) {
	header := append(append([]string{"mechanism"}, plannedHeader...), "accuracy")
	var rows [][]string
	for _, r := range s.Rows {
		row := append([]string{string(r.Mechanism)}, r.columns(t)...)
		if r.Fits() {
			row = append(row, fmt.Sprintf("%.3f (%.3f)", r.AccuracyMean, r.AccuracyStd))
		}
		rows = append(rows, row)
	}
	writeEqual(t, s.EqualTotals, header, rows, s.Winners, "  accuracy: the mean accuracy of the labels over the redraws of the queries (its standard deviation)")
}
