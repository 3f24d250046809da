package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
)

// Publish is a total to publish (accountant.Account.Publish) as a summary
// states it: the ledger's when its δ is a ledger budget's (source
// "ledger": every release from the ensemble so far, by the budget its
// filter holds them to, or the teachers' cap), else the run's (source
// "run"), with the method and the theorem that give it, and where its δ
// comes from (accountant.Total.DeltaFrom: "budget", "total-delta" for
// --total-delta, "default" for 1-(1-δ)^Q·(1-δ') of the per-query δ over
// the Q labels, or "ledger-budget"). Null eps and delta: no label was
// released (None), or no total reaches the δ asked for (error says why).
type Publish struct {
	accountant.Total
	// None says that no label was released: there is nothing to publish.
	None bool
	read json.RawMessage
}

// source is "ledger" for a ledger's total, else "run".
func (p Publish) source() string {
	if p.DeltaFrom == accountant.LedgerDelta {
		return "ledger"
	}
	return "run"
}

// known reports whether the total has an ε and a δ to publish.
func (p Publish) known() bool { return p.Err == nil && !p.None }

// method is the name of the result that gives the total (Total.Name),
// "" when it has none (known).
func (p Publish) method() string {
	if !p.known() {
		return ""
	}
	return p.Name()
}

// why says why a ledger's total is the one to publish (LedgerWhy); "" for
// a run's.
func (p Publish) why() string {
	if p.source() != "ledger" || !p.known() {
		return ""
	}
	return LedgerWhy(p.Total)
}

// MarshalJSON writes the total with every key of the summary's schema;
// a total read from a summary (UnmarshalJSON), as it was read.
func (p Publish) MarshalJSON() ([]byte, error) {
	if p.read != nil {
		return p.read, nil
	}
	o := struct {
		Source    string                 `json:"source"`
		Eps       *float64               `json:"eps"`
		Delta     *float64               `json:"delta"`
		Method    string                 `json:"method"`
		Reference string                 `json:"reference"`
		DeltaFrom accountant.DeltaOrigin `json:"delta_from"`
		Error     string                 `json:"error"`
		Why       string                 `json:"why"`
		Note      string                 `json:"note"`
	}{Source: p.source(), DeltaFrom: p.DeltaFrom, Why: p.why()}
	switch {
	case p.Err != nil:
		o.Error = p.Err.Error()
	case p.known():
		o.Eps, o.Delta, o.Method, o.Reference, o.Note = &p.Guarantee.Eps, &p.Guarantee.Delta, p.Name(), p.Reference(), p.Inexact
	}
	return json.Marshal(o)
}

// Total is an analysis total of a release as its summary states it: its
// method's name (accountant.Total.Name), the point of the profile it
// composed, delta', eps and delta, the bound that won, the composition
// over the queries, the theorem, or why there is none; every key there,
// null when it does not apply.
type Total struct {
	accountant.Total
	read json.RawMessage
}

// MarshalJSON writes the total with every key of the summary's schema;
// a total read from a summary (UnmarshalJSON), as it was read.
func (t Total) MarshalJSON() ([]byte, error) {
	if t.read != nil {
		return t.read, nil
	}
	o := struct {
		Method     string           `json:"method"`
		Point      *Pair            `json:"profile_point"`
		DeltaPrime *float64         `json:"delta_prime"`
		Eps        *float64         `json:"eps"`
		Delta      *float64         `json:"delta"`
		Bound      accountant.Bound `json:"total_bound"`
		Queries    *Pair            `json:"queries"`
		Reference  string           `json:"reference"`
		Error      string           `json:"error"`
	}{Method: t.Name(), Point: pairOf(t.Point), DeltaPrime: t.deltaPrime(), Eps: t.eps(), Delta: t.delta(), Bound: t.Bound, Queries: t.queries(), Reference: t.Reference()}
	if t.Err != nil {
		o.Error = t.Err.Error()
	}
	return json.Marshal(o)
}

// deltaPrime is the slack of the total's method, nil for one without.
func (t Total) deltaPrime() *float64 {
	if !t.Method.Slack() {
		return nil
	}
	return &t.DeltaPrime
}

// eps and delta are the total's, nil when no bound is known.
func (t Total) eps() *float64 {
	if t.Err != nil && t.Bound != accountant.TeachersBound {
		return nil
	}
	return &t.Guarantee.Eps
}

func (t Total) delta() *float64 {
	if t.eps() == nil {
		return nil
	}
	return &t.Guarantee.Delta
}

// queries is the composition over the queries, nil for the cap or a
// filter's budget to publish, or when it failed.
func (t Total) queries() *Pair {
	switch {
	case t.Err != nil || t.Cap != nil || t.Filter:
		return nil
	case t.Bound == accountant.TeachersBound:
		return pairOf(&t.Queries)
	}
	return pairOf(&t.Guarantee)
}

// Pair is an (eps, delta) in a summary's JSON.
type Pair struct {
	Eps   float64 `json:"eps"`
	Delta float64 `json:"delta"`
}

// pairOf is g as a Pair, nil for nil.
func pairOf(g *accountant.Guarantee) *Pair {
	if g == nil {
		return nil
	}
	return &Pair{g.Eps, g.Delta}
}

// A summary's totals are the accountant's values, written in the
// summary's schema; read back from a summary's JSON (a program that
// decodes it), each keeps what it read, which it writes again as read.

// UnmarshalJSON keeps the total's JSON as read.
func (p *Publish) UnmarshalJSON(b []byte) error { return keep(&p.read, b) }

// UnmarshalJSON keeps the total's JSON as read.
func (t *Total) UnmarshalJSON(b []byte) error { return keep(&t.read, b) }

// UnmarshalJSON keeps the total's JSON as read.
func (t *AllowedTotal) UnmarshalJSON(b []byte) error { return keep(&t.read, b) }

// keep sets *raw to a copy of the JSON value b, which it checks.
func keep(raw *json.RawMessage, b []byte) error {
	if !json.Valid(b) {
		return fmt.Errorf("report: a total's JSON is not valid: %.40q", b)
	}
	*raw = append(json.RawMessage(nil), b...)
	return nil
}

// newTotals returns the totals ts as a summary states them.
func newTotals(ts []accountant.Total) []Total {
	if len(ts) == 0 {
		return nil
	}
	out := make([]Total, len(ts))
	for i, t := range ts {
		out[i] = Total{Total: t}
	}
	return out
}

// analysisRole labels the totals that are not the one to publish.
const analysisRole = "analysis: each total holds for these labels; publish the one under publish"

// Budget is a total budget that limits a release: the queries it
// allows (-1 when the teachers' cap is within it, Unlimited), and the
// total to publish by which they fit (AllowedBy), or why none does when
// it is known (Why: fixed teachers' cap over the budget).
type Budget struct {
	accountant.Budget
	MaxQueries int           `json:"max_queries"`
	Unlimited  bool          `json:"unlimited"`
	AllowedBy  *AllowedTotal `json:"allowed_by"`
	Why        string        `json:"why"`
	Stopped    bool          `json:"stopped"`
	// Filter says that the budget is a Gaussian-DP filter's, which
	// charges each draw of a release charged per draw and stops it when
	// the next query's draws might not fit: it fixes no number of queries
	// in advance (MaxQueries 0, AllowedBy null).
	Filter bool `json:"filter"`
}

// AllowedTotal is a total that a budget allows, and the result that
// gives it.
type AllowedTotal struct {
	accountant.Total
	read json.RawMessage
}

// MarshalJSON writes the total's eps and delta, method and theorem; a
// total read from a summary (UnmarshalJSON), as it was read.
func (t AllowedTotal) MarshalJSON() ([]byte, error) {
	if t.read != nil {
		return t.read, nil
	}
	return json.Marshal(struct {
		Eps       float64 `json:"eps"`
		Delta     float64 `json:"delta"`
		Method    string  `json:"method"`
		Reference string  `json:"reference"`
	}{t.Guarantee.Eps, t.Guarantee.Delta, t.Name(), t.Reference()})
}

// newBudget is the budget of the release done, of which the budget
// stopped the last stopped queries (0: it did not stop it).
func newBudget(done ensemble.Released, stopped int) *Budget {
	b := done.Account.Budget
	if b == nil {
		return nil
	}
	out := &Budget{Budget: *b, MaxQueries: done.MaxQueries, Unlimited: done.MaxQueries == accountant.Unlimited, Stopped: stopped > 0, Filter: done.Account.Filter != nil}
	switch {
	case out.Filter:
	case done.MaxQueries != 0:
		out.AllowedBy = &AllowedTotal{Total: done.Allows}
	case done.Allows.Err != nil:
		out.Why = done.Allows.Err.Error()
	}
	return out
}

// theName is the name of the result behind a total (Total.Name), as a
// sentence says it after "by": a budget or a cap with its article ("by
// the gdp-filter budget"), a composition or an argument without ("by
// exact", "by generalized PTR").
func theName(name string) string {
	if strings.HasSuffix(name, "budget") || strings.HasPrefix(name, "teachers' cap") {
		return "the " + name
	}
	return name
}
