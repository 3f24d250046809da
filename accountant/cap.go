package accountant

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/param"
)

// Shares says how the training data of an ensemble's teachers relate, as
// far as the teacher-level cap (TeacherCap) is concerned: Disjoint (the
// zero value: a record changes one teacher's data) or Shared (it may
// change any number).
// A Shares prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type Shares int

const (
	// Disjoint shares: each record is in at most one teacher's share, and
	// which one depends on that record alone (for example a keyed hash of
	// its identity). Adding or removing a record then changes the data of
	// one teacher and of no other.
	Disjoint Shares = iota
	// Shared data: a record may be in several teachers' data, or its share
	// may depend on other records (shares cut by position in a file, where
	// adding a record moves every later one): any number of teachers may
	// see their data change.
	Shared
)

var sharesNames = enum.Names[Shares]{What: "shares", List: []string{Disjoint: "disjoint", Shared: "shared"}}

// String returns the name of s.
func (s Shares) String() string { return sharesNames.String(s) }

// MarshalText returns the name of s.
func (s Shares) MarshalText() ([]byte, error) { return []byte(sharesNames.String(s)), nil }

// UnmarshalText sets s from its name.
func (s *Shares) UnmarshalText(text []byte) error { return sharesNames.Unmarshal(s, text) }

// Cap is the teacher-level post-processing cap of an ensemble of fixed
// teachers (TeacherCap): a guarantee of the K trained models together, and
// so of every output computed from them, whatever the mechanism and
// however many queries.
//
// It is also the only bound of releases from fixed private teachers: an
// account with a Cap (Account.Cap) is never bounded by the composition
// of its per-query guarantees. Those guarantees (the thesis' Lemma 3.4.4)
// assume each query's votes independent (ε, Δ)-DP coins, which teachers
// drawn anew for each query give; a fixed teacher votes on every query
// with the same model, so its vote vector is one (ε, Δ)-DP mechanism and,
// given earlier labels, its next vote need not be (ε, Δ)-DP (up to 2ε).
// No proof that the per-query guarantees still compose is known, so a
// budget that the cap does not meet allows no label (CapError).
type Cap struct {
	// Guarantee is the cap.
	Guarantee
	// K teachers, each Teacher-DP, with data related as Shares.
	K       int
	Teacher Guarantee
	Shares  Shares
	// Method is the composition of the K teachers that gave Guarantee,
	// with slack DeltaPrime (0 for Simple), when Shares is Shared.
	Method     Method
	DeltaPrime float64
}

// Rule names the argument behind the cap: "parallel" for disjoint shares,
// else the composition's name.
func (c Cap) Rule() string {
	if c.Shares == Disjoint {
		return "parallel"
	}
	return c.Method.String()
}

// Reference says the argument behind the cap, for output that must say
// which result produced a number.
func (c Cap) Reference() string {
	if c.Shares == Disjoint {
		return "post-processing of the teachers' models; parallel composition over disjoint shares (McSherry 2009)"
	}
	return fmt.Sprintf("post-processing of the teachers' models; %d-fold %s", c.K, c.Method.Reference())
}

// MarshalJSON writes the cap as darrm's outputs show it: eps, delta, the
// rule and its reference, and what it was computed from.
func (c Cap) MarshalJSON() ([]byte, error) {
	type out struct {
		Eps          float64  `json:"eps"`
		Delta        float64  `json:"delta"`
		Rule         string   `json:"rule"`
		DeltaPrime   *float64 `json:"delta_prime,omitempty"`
		Reference    string   `json:"reference"`
		K            int      `json:"K"`
		TeacherEps   float64  `json:"teacher_eps"`
		TeacherDelta float64  `json:"teacher_Delta"`
		Shares       Shares   `json:"shares"`
	}
	o := out{Eps: c.Eps, Delta: c.Delta, Rule: c.Rule(), Reference: c.Reference(), K: c.K, TeacherEps: c.Teacher.Eps, TeacherDelta: c.Teacher.Delta, Shares: c.Shares}
	if c.Shares == Shared && c.Method != Simple {
		o.DeltaPrime = &c.DeltaPrime
	}
	return json.Marshal(o)
}

// TeacherCap returns the teacher-level post-processing cap of k fixed
// teachers (trained models), each (ε, Δ)-DP = teacher with respect to one
// record of the training data, whose data are related as shares.
//
// Every label released from fixed teachers' votes is a function of the k
// models and of randomness and public queries independent of the training
// data, so the whole sequence of releases, of any length and by any
// mechanism, is post-processing of the tuple of models (Dwork and Roth,
// "The Algorithmic Foundations of Differential Privacy", 2014, Prop. 2.1)
// and has the tuple's guarantee:
//
//   - Disjoint: adding or removing one record changes one teacher's share
//     and no other's, because each record's share depends on that record
//     alone; the other models do not change in distribution, so the tuple
//     is (ε, Δ)-DP (parallel composition: McSherry, "Privacy Integrated
//     Queries", SIGMOD 2009). The cap is
//     teacher itself. A share that depends on other records (cut by file
//     position) breaks this: one added record can move every later one.
//   - Shared: the tuple is the k-fold composition of the teachers, each
//     trained with its own randomness; the cap is the tightest (tighter) of
//     simple composition (Theorem 3.3.2), general composition (Theorem
//     3.3.3) and optimal composition (Kairouz, Oh and Viswanath 2015, Thm
//     3.3) with slack deltaPrime, each rounded outward. Pure-DP teachers
//     (Δ = 0) get simple composition only, which keeps the cap pure, as
//     the slack δ' of the others would not.
//
// Teachers that answer each query with a fresh mechanism, and non-private
// teachers (PATE's one-vote relation, where the teachers are not private at
// all), have no such cap: the caller must not ask for one.
func TeacherCap(teacher Guarantee, k int, shares Shares, deltaPrime float64) (Cap, error) {
	if err := checkSimple(teacher, k); err != nil {
		return Cap{}, fmt.Errorf("teacher cap: %w", err)
	}
	c := Cap{K: k, Teacher: teacher, Shares: shares}
	switch shares {
	case Disjoint:
		c.Guarantee = teacher
		return c, nil
	case Shared:
	default:
		return Cap{}, fmt.Errorf("teacher cap: %w", &param.SettingError{Name: "shares", Value: shares.String(), Rule: "must be disjoint or shared"})
	}
	if err := param.DeltaPrime(deltaPrime); err != nil {
		return Cap{}, fmt.Errorf("teacher cap: %w", err)
	}
	methods := []Method{Simple, General, Optimal}
	if teacher.Delta == 0 {
		methods = methods[:1] // pure DP stays pure (as RRComposition)
	}
	first := true
	for _, m := range methods {
		if m == Optimal && k > maxOptimalSteps {
			continue
		}
		g, err := Composition{Method: m, DeltaPrime: deltaPrime}.Compose(teacher, k)
		if err != nil {
			return Cap{}, fmt.Errorf("teacher cap: %w", err)
		}
		if first || tighter(g, c.Guarantee) {
			c.Guarantee, c.Method, c.DeltaPrime = g, m, 0
			if m != Simple {
				c.DeltaPrime = deltaPrime
			}
		}
		first = false
	}
	return c, nil
}

// Within reports whether g meets budget: ε and δ both within it.
func (g Guarantee) Within(budget Guarantee) bool {
	return g.Eps <= budget.Eps && g.Delta <= budget.Delta
}

// tighter reports whether a is to be shown rather than b, when a
// mechanism has both guarantees, in a table of analysis (the cap shown):
// a pair with δ < 1 before a vacuous one (δ >= 1); then
// the smaller ε; then the smaller δ. Pairs at different δ are only partly
// ordered, so this is no choice of the tighter bound: the total to
// publish compares ε at one δ (Account.Publish).
func tighter(a, b Guarantee) bool {
	if va, vb := a.Delta >= 1, b.Delta >= 1; va != vb {
		return vb
	}
	if a.Eps != b.Eps {
		return a.Eps < b.Eps
	}
	return a.Delta < b.Delta
}

// Bound says which of two bounds a reported total is: QueriesBound (the
// composition of the queries) or TeachersBound (the teacher-level cap).
// A Bound prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type Bound int

const (
	// QueriesBound is the composition of the released queries'
	// guarantees.
	QueriesBound Bound = iota
	// TeachersBound is the teacher-level cap (TeacherCap).
	TeachersBound
)

var boundNames = enum.Names[Bound]{What: "bound", List: []string{QueriesBound: "queries", TeachersBound: "teachers"}}

// String returns the name of b.
func (b Bound) String() string { return boundNames.String(b) }

// MarshalText returns the name of b.
func (b Bound) MarshalText() ([]byte, error) { return []byte(boundNames.String(b)), nil }

// UnmarshalText sets b from its name.
func (b *Bound) UnmarshalText(text []byte) error { return boundNames.Unmarshal(b, text) }

// Total returns the total of releases whose composition over the
// queries is queries, from teachers with cap c (nil: none), and which of
// the two it is: the composition without a cap; with one (fixed private
// teachers) the cap, whatever the composition, since composing
// per-query guarantees is not proved for fixed teachers (Cap), except
// that nothing released (queries zero) has spent nothing. The total to
// publish is Account.Publish's.
func (c *Cap) Total(queries Guarantee) (Guarantee, Bound) {
	if c == nil || queries == (Guarantee{}) {
		return queries, QueriesBound
	}
	return c.Guarantee, TeachersBound
}

// Capped returns t with the cap c (nil: none) applied, by Cap.Total: its
// Guarantee becomes the composition or the cap, Bound says which, and
// Queries keeps the composition, as analysis.
func (t Total) Capped(c *Cap) Total {
	t.Queries, t.Bound = t.Guarantee, QueriesBound
	if c == nil {
		return t
	}
	t.Guarantee, t.Bound = c.Guarantee, TeachersBound
	return t
}

// Unlimited is what Account.MaxSteps returns when any number
// of steps fits (the teachers' cap meets the budget).
const Unlimited = -1

// CapError says why a budget allows no release from fixed private
// teachers: their cap, the only bound of such releases (Cap), is not
// within it at its δ.
type CapError struct {
	Cap    Cap
	Budget Budget
}

// Error says why, with the cap at the budget's δ where it has one, and
// what a team can do instead.
func (e *CapError) Error() string {
	shown := e.Cap.Guarantee
	if at, ok := e.Cap.at(e.Budget.Delta); ok {
		shown = at.Guarantee
	}
	return fmt.Sprintf("the teachers are fixed models, whose releases only their cap %s bounds, and it is not within the budget (%g, %g): "+
		"composing per-query guarantees is not proved for fixed teachers (each query's guarantee assumes fresh teachers; "+
		"given earlier labels a fixed teacher's next vote need not be (eps, Delta)-DP); "+
		"use teachers that are a fresh mechanism per query (kind per-query) or a budget the teachers' cap fits",
		fmt.Sprintf("(%s, %s)", decimal.FormatBound(shown.Eps), decimal.FormatBound(shown.Delta)), e.Budget.Eps, e.Budget.Delta)
}

// Refusal returns the *CapError of a budget that the cap c (nil: none)
// does not meet, which then allows no release from c's teachers; nil when
// it meets it or there is none.
func (c *Cap) Refusal(budget Budget) error {
	if c == nil || c.Fits(budget.Guarantee) {
		return nil
	}
	return &CapError{Cap: *c, Budget: budget}
}

// check checks c's teachers, from which its bound at any δ is computed
// (at), and its guarantee, which Total states: the zero Cap, of no
// teachers, would otherwise fit every budget, stating (0, 0).
func (c Cap) check() error {
	if err := checkStep("teacher ", c.Teacher); err != nil {
		return fmt.Errorf("teacher cap: %w", err)
	}
	if err := param.Count("K", c.K, 1); err != nil {
		return fmt.Errorf("teacher cap: %w", err)
	}
	if !sharesNames.Named(c.Shares) {
		return fmt.Errorf("teacher cap: %w", &param.SettingError{Name: "shares", Value: c.Shares.String(), Rule: "must be disjoint or shared"})
	}
	if err := checkStep("cap ", c.Guarantee); err != nil {
		return fmt.Errorf("teacher cap: %w", err)
	}
	return nil
}

// at returns the cap at total δ delta: the guarantee of the teachers'
// models with the least ε whose δ is at most delta, and whether there is
// one. Disjoint shares: the teacher's guarantee (parallel composition).
// Shared data: the least of the K-fold simple composition and the
// K-fold optimal composition (general beyond maxOptimalSteps) with the
// slack that makes its total δ delta; each holds for the tuple of models
// (TeacherCap).
func (c Cap) at(delta float64) (Cap, bool) {
	if c.Shares == Disjoint {
		c.Guarantee, c.Method, c.DeltaPrime = c.Teacher, Simple, 0
		return c, c.Teacher.Delta <= delta
	}
	best := newChooser(delta, math.Inf(-1))
	if g, err := composeSimple(c.Teacher, c.K); err == nil {
		best.offer(Total{Method: Simple, Guarantee: g})
	}
	if delta > 0 {
		best.offer(slackTotal(c.Teacher, c.K, delta))
	}
	if !best.found {
		return c, false
	}
	c.Guarantee, c.Method, c.DeltaPrime = best.best.Guarantee, best.best.Method, best.best.DeltaPrime
	return c, true
}

// Fits reports whether the cap, at the budget's δ, is within it: then
// every release from the teachers is within it.
func (c Cap) Fits(budget Guarantee) bool {
	at, ok := c.at(budget.Delta)
	return ok && at.Eps <= budget.Eps
}
