package accountant

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/enum"
)

// DefaultDeltaPrime is the slack δ' that darrm's general and optimal
// compositions use unless told otherwise: small next to the per-query δ of
// the thesis' settings (1e-5 per teacher), so totals stay meaningful.
const DefaultDeltaPrime = 1e-5

// RRComposition returns the composition by which the majority of K
// (ε, Δ)-DP teachers is taken to be (τε, λ)-DP for randomized response's
// p_const (Lemma B.1.1): General when Δ > 0, as the thesis does in App.
// B.4 (the proof of Lemma B.1.1 uses Theorem 3.3.3), and Simple for pure-DP
// teachers, where General's slack δ' would turn a pure guarantee into an
// approximate one.
func RRComposition(teacherDelta float64) Method {
	if teacherDelta > 0 {
		return General
	}
	return Simple
}

// Total is the privacy of a number of composed steps under one method.
type Total struct {
	Method     Method
	DeltaPrime float64   // the slack δ'; 0 for Simple
	Guarantee  Guarantee // the composed guarantee, unless Err is set
	// Err says why the method could not compose this many steps (e.g.
	// optimal composition beyond maxOptimalSteps).
	Err error
	// Bound says whether Guarantee is the composition or the teachers'
	// cap, once Capped has applied one; Queries is then the composition
	// (unless Err is set).
	Bound   Bound
	Queries Guarantee
	// Point, when set, is the point of the per-query privacy profile that
	// Method composed instead of the per-query guarantee (Account.Totals,
	// Account.Publish).
	Point *Guarantee
	// Cap, when set, is the teachers' cap that gives Guarantee (Bound is
	// TeachersBound), at the total δ of Account.Publish: Method and
	// DeltaPrime are then the cap's composition of the teachers.
	Cap *Cap
	// Filter says that Guarantee is the budget of a ledger's filter
	// Method, fixed before its first run (Account.Publish).
	Filter bool
	// Inexact, when set, says why the exact composition of the
	// dominating pairs, which the step has, was out of reach for this
	// total (Account.Publish): it is a looser bound that holds (RDP, a
	// composition of the guarantee), and a count it allows
	// (Account.MaxSteps) may be below the exact maximum.
	Inexact string
	// DeltaFrom says where the δ of a total to publish comes from
	// (Account.Publish).
	DeltaFrom DeltaOrigin
	// Argument, when set, names the argument that gives Guarantee for a
	// release accounted as a whole, where no composition of its steps
	// does (pate's "generalized PTR"), and ArgumentSource its source:
	// Name and Reference then say them.
	Argument, ArgumentSource string
}

// DeltaOrigin says where the δ of a total to publish comes from
// (Account.TotalDelta): DefaultDelta, the composition's δ of the per-step
// δ; BudgetDelta, the run's budget's; StatedDelta, the one the caller
// stated; LedgerDelta, a ledger's budget's.
// A DeltaOrigin prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type DeltaOrigin int

const (
	// DefaultDelta is 1 - (1-δ)^k·(1-δ') of the per-step δ over the k
	// steps, δ' the account's slack.
	DefaultDelta DeltaOrigin = iota
	// BudgetDelta is the δ of the run's budget.
	BudgetDelta
	// StatedDelta is the total δ the caller stated (Account.Delta).
	StatedDelta
	// LedgerDelta is the δ of a ledger's budget.
	LedgerDelta
)

var deltaOriginNames = enum.Names[DeltaOrigin]{What: "delta origin", List: []string{
	DefaultDelta: "default", BudgetDelta: "budget", StatedDelta: "total-delta", LedgerDelta: "ledger-budget"}}

// String returns the name of d.
func (d DeltaOrigin) String() string { return deltaOriginNames.String(d) }

// MarshalText returns the name of d.
func (d DeltaOrigin) MarshalText() ([]byte, error) { return []byte(deltaOriginNames.String(d)), nil }

// UnmarshalText sets d from its name.
func (d *DeltaOrigin) UnmarshalText(text []byte) error { return deltaOriginNames.Unmarshal(d, text) }

// Name is the method's name; "profile" for the composition of a point of
// the per-query privacy profile (Point); "teachers' cap" and the cap's
// rule for the cap (Cap); the filter's name and "budget" for a filter's
// budget (Filter); the argument's name for a release accounted as a
// whole (Argument).
func (t Total) Name() string {
	switch {
	case t.Argument != "":
		return t.Argument
	case t.Cap != nil:
		return "teachers' cap (" + t.Cap.Rule() + ")"
	case t.Filter:
		return t.Method.String() + " budget"
	case t.Point != nil:
		return "profile"
	}
	return t.Method.String()
}

// Reference names the result behind the total, as Method.Reference does.
func (t Total) Reference() string {
	switch {
	case t.Argument != "":
		return t.ArgumentSource
	case t.Cap != nil:
		return t.Cap.Reference()
	case t.Filter && t.Method == Simple:
		return "the budget of a privacy filter of simple composition, fixed before the first run (Rogers, Roth, Ullman and Vadhan 2016)"
	case t.Filter:
		ref, article := t.Method.Reference(), "a "
		if strings.ContainsRune("aeiou", rune(ref[0])) {
			article = "an "
		}
		return "the budget of " + article + ref + ", fixed before the first run"
	case t.Point != nil:
		return fmt.Sprintf("%s of the point (%s, %s) of the per-query privacy profile", t.Method.Reference(), decimal.FormatBound(t.Point.Eps), decimal.FormatBound(t.Point.Delta))
	}
	return t.Method.Reference()
}

// MarshalJSON writes the total with its name and reference (Name,
// Reference), the profile point it composed, if any ("profile_point"), the
// bound that won ("total_bound") and the composition over the queries
// ("queries"; null for the cap, a filter's budget or an argument's total
// to publish), and null
// eps and delta when no bound is known.
func (t Total) MarshalJSON() ([]byte, error) {
	type pair struct {
		Eps   float64 `json:"eps"`
		Delta float64 `json:"delta"`
	}
	type out struct {
		Method     string   `json:"method"`
		Point      *pair    `json:"profile_point,omitempty"`
		DeltaPrime *float64 `json:"delta_prime,omitempty"`
		Eps        *float64 `json:"eps"`
		Delta      *float64 `json:"delta"`
		Bound      Bound    `json:"total_bound"`
		Queries    *pair    `json:"queries"`
		Reference  string   `json:"reference"`
		Error      string   `json:"error,omitempty"`
	}
	o := out{Method: t.Name(), Reference: t.Reference(), Bound: t.Bound}
	if t.Point != nil {
		o.Point = &pair{t.Point.Eps, t.Point.Delta}
	}
	if t.Method.Slack() {
		o.DeltaPrime = &t.DeltaPrime
	}
	if t.Err != nil {
		o.Error = t.Err.Error()
	} else if t.Cap == nil && !t.Filter && t.Argument == "" {
		// A total to publish that is the cap or a filter's budget has no
		// composition over the queries beside it.
		q := t.Guarantee
		if t.Bound == TeachersBound {
			q = t.Queries
		}
		o.Queries = &pair{q.Eps, q.Delta}
	}
	if t.Err == nil || t.Bound == TeachersBound {
		o.Eps, o.Delta = &t.Guarantee.Eps, &t.Guarantee.Delta
	}
	return json.Marshal(o)
}

// allTotals returns the privacy of k composed steps under each method,
// loosest first: Simple, General and Optimal with slack deltaPrime. A
// method that cannot compose k steps has Err set; the others are still
// returned.
func allTotals(step Guarantee, k int, deltaPrime float64) []Total {
	var out []Total
	for _, m := range []Method{Simple, General, Optimal} {
		t := Total{Method: m}
		if m != Simple {
			t.DeltaPrime = deltaPrime
		}
		t.Guarantee, t.Err = Composition{Method: m, DeltaPrime: deltaPrime}.Compose(step, k)
		out = append(out, t)
	}
	return out
}
