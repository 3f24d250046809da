package accountant

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/roots"
)

// Account is what a release, or a ledger, has spent and what holds it:
// the one value that says the total to publish (Publish) and how many
// steps a budget allows (MaxSteps).
//
// A run is Steps steps of the mechanism Step describes, with further
// points Profile of its per-step privacy profile (each a guarantee it
// also meets), whose parameters are fixed before the first step (the
// steps' inputs may be chosen adaptively): every composition proven for
// parameters fixed in advance holds for it, and for that reason
// the count a budget allows is fixed before the first step too. A
// schedule (Before) is runs of different mechanisms in an order, each
// with its count, all fixed before the first step: the account is of
// them all, composed as chooseSchedule says.
//
// A ledger (Filter set) holds runs whose parameters may have been chosen
// after the outputs of earlier ones to Budget, by a filter fixed before
// its first run: what it released is guaranteed by that budget, not by a
// composition of the spends (a realised cost, not a guarantee; Rogers,
// Roth, Ullman and Vadhan 2016).
//
// The teachers' post-processing Cap, when there is one (fixed private
// teachers), is the only bound of both: the composition of per-query
// guarantees is not proved for fixed teachers (Cap).
type Account struct {
	// Step describes one step: its guarantee and, when known, its curves
	// (a Spend); Profile lists further points (ε_i, δ_i) of its privacy
	// profile. Steps is the number of steps of a run.
	Step    Spend
	Profile []Guarantee
	Steps   int
	// Before, for a schedule, are the runs fixed before the first step
	// that come before this one, in order: the account is then of all
	// of them (chooseSchedule).
	Before []Run
	// Filter, when not nil, makes the account a ledger's, with Budget
	// its budget: a version-4 ledger's Simple or ZCDPFilter, or the
	// method of the first part of a version-5 ledger's Filter (a union
	// with simple composition of pure points, whose guarantee is the
	// budget too).
	Filter *Method
	// Cap is the teachers' post-processing cap (TeacherCap), nil when
	// there is none; when set, the account's only bound.
	Cap *Cap
	// Budget, when not nil, is the total the steps are held to; the total
	// to publish is stated at its δ. Without one, a run states its total
	// at Delta, or, when Delta is nil, at the total δ of the per-step
	// guarantee's optimal composition with slack DeltaPrime
	// (TotalDelta).
	Budget *Budget
	Delta  *float64
	// DeltaPrime is the slack δ' of that default total δ and of the
	// analysis totals (Totals).
	DeltaPrime float64
	// CurveMissing says why a step that has dominating pairs beyond its
	// guarantee is described without them (more corner multisets than
	// are listed), so that a total of it that is not the exact
	// composition says that the exact composition was out of reach
	// (Total.Inexact); "" otherwise.
	CurveMissing string
}

// TotalDelta returns the total δ at which the account states its total
// and where it comes from: the budget's (a ledger's budget's for a
// ledger's account); else Delta; else 1 - (1-δ)^Steps·(1-DeltaPrime),
// the total δ of the optimal (and general) composition of the per-step
// (ε, δ) with slack DeltaPrime, as the thesis states its totals (Table
// 3.2), rounded up (with the runs Before's steps too).
func (a Account) TotalDelta() (float64, DeltaOrigin) {
	switch {
	case a.Budget != nil && a.Filter != nil:
		return a.Budget.Delta, LedgerDelta
	case a.Budget != nil:
		return a.Budget.Delta, BudgetDelta
	case a.Delta != nil:
		return *a.Delta, StatedDelta
	}
	keep := outward.Down(float64(a.Steps)*logKeepDown(a.Step.Delta), 1)
	for _, r := range a.Before {
		keep = outward.AddDown(keep, outward.Down(float64(r.Steps)*logKeepDown(r.Step.Delta), 1))
	}
	return totalDelta(keep, a.DeltaPrime), DefaultDelta
}

// check validates the account's values, as far as its use needs them.
func (a Account) check() error {
	if a.Cap != nil {
		if err := a.Cap.check(); err != nil {
			return err
		}
	}
	if a.Filter != nil {
		if a.Budget == nil {
			return errors.New("account: a ledger's account needs its budget")
		}
		if err := a.Budget.Validate(); err != nil {
			return err
		}
		switch *a.Filter {
		case RenyiFilter, AdvancedFilter, GDPFilter:
			// Filter.Check gives these parts a share of δ > 0.
			if !(a.Budget.Delta > 0) {
				return &param.Error{Name: "budget-delta", Value: a.Budget.Delta, Rule: fmt.Sprintf("must be > 0 for the %v", *a.Filter)}
			}
			return nil
		}
		return checkFilter(*a.Filter, a.Budget.Guarantee)
	}
	if err := a.Step.Check(); err != nil {
		return err
	}
	steps := a.Steps
	for _, r := range a.Before {
		if err := r.check(); err != nil {
			return fmt.Errorf("a run before: %w", err)
		}
		steps, _ = addSteps(steps, r.Steps)
	}
	if len(a.Before) > 0 && !(steps <= CountLimit) {
		return fmt.Errorf("a schedule of more than %d steps", CountLimit)
	}
	for _, p := range a.Profile {
		if err := checkStep("profile point ", p); err != nil {
			return err
		}
	}
	if a.Budget != nil {
		if err := a.Budget.Validate(); err != nil {
			return err
		}
	} else if a.Delta != nil {
		if err := param.Delta("total delta", *a.Delta); err != nil {
			return err
		}
	} else if err := param.DeltaPrime(a.DeltaPrime); err != nil {
		return err
	}
	return nil
}

// Publish returns the total to publish: the smallest ε, at the total δ
// of TotalDelta, among the guarantees that hold for what the account
// holds, with the result that gives it (Total.Name, Total.Reference). ε
// is compared only between totals at that δ: a pair with a smaller ε at a
// larger δ is not a tighter bound.
//
// Of a run of Steps steps it takes the least ε of: the per-step
// guarantee's simple composition (Theorem 3.3.2), when its δ is within;
// its optimal composition (Kairouz, Oh and Viswanath 2015, Thm 3.3;
// beyond maxOptimalSteps the general, Thm 3.4) with the slack that makes
// the total δ that δ; the same of every point of the profile, among them
// the per-step pure loss of a one-bit release's pairs (a point
// (ε_pure, 0)) and, for a pure point, its zCDP bound (Bun and Steinke
// 2016, Prop. 1.4); the RDP curve with the improved conversion; the exact
// composition of the dominating pairs (ComposeRun's Exact). Every one of
// these holds for the same steps at once, so the mechanism meets the
// smallest. With a teachers' cap (fixed private teachers) it is the cap
// at that δ alone (Cap: none of the compositions is proved for fixed
// teachers), and Err says so when the cap does not reach that δ.
//
// Of a ledger it is the budget its filter holds every release to; with a
// teachers' cap, the cap at the budget's δ alone, which a ledger whose
// budget it does not meet holds no label to (CapError).
//
// A total with Err set says that no guarantee reaches the total δ (a δ
// given below the per-step δ, for instance). Every total says where its δ
// comes from (Total.DeltaFrom).
func (a Account) Publish(m *Memo) (Total, error) {
	m = m.forCall()
	if err := a.check(); err != nil {
		return Total{}, fmt.Errorf("total to publish: %w", err)
	}
	delta, from := a.TotalDelta()
	if a.Filter != nil {
		c := newChooser(delta, math.Inf(-1))
		if a.Cap == nil {
			c.offer(Total{Method: *a.Filter, Guarantee: a.Budget.Guarantee, Filter: true})
		} else {
			c.offerCap(a.Cap)
			c.best.Err = a.Cap.Refusal(*a.Budget)
		}
		c.best.DeltaFrom = from
		return c.best, nil
	}
	if err := param.CountIn("steps", a.Steps, 1, CountLimit); err != nil {
		return Total{}, fmt.Errorf("total to publish: %w", err)
	}
	c := a.choose(m, a.Steps, delta, math.Inf(-1))
	switch {
	case !c.found && a.Cap != nil:
		return Total{DeltaFrom: from, Err: fmt.Errorf("no guarantee of %d steps of %v reaches a total delta of %g: the teachers are fixed models, "+
			"whose releases only their cap %v bounds (composing per-query guarantees is not proved for fixed teachers)", a.Steps, a.Step.Guarantee, delta, a.Cap.Guarantee)}, nil
	case !c.found:
		return Total{DeltaFrom: from, Err: fmt.Errorf("no guarantee of %d steps of %v reaches a total delta of %g", a.Steps, a.Step.Guarantee, delta)}, nil
	}
	switch {
	case c.best.Method == Exact || c.best.Cap != nil:
	case c.inexact != "":
		c.best.Inexact = "exact composition out of reach: " + c.inexact
	case a.CurveMissing != "":
		c.best.Inexact = "exact composition out of reach: " + a.CurveMissing
	}
	c.best.DeltaFrom = from
	return c.best, nil
}

// MaxSteps returns the largest number of steps of a run within its
// budget, by the total to publish of that many (Publish), and that total;
// Unlimited and the cap when the teachers' cap is within the budget; 0
// when not even one step fits, with a total whose Err is a *CapError
// when a teachers' cap, the only bound of fixed teachers, is not within
// the budget. Each total it compares holds for the steps
// at once and the count depends on the parameters alone, so it is fixed
// before the first step and any total that fits proves the run within
// budget. More than CountLimit steps that fit is a *BeyondCountError. The
// search, up to a hundred exact compositions, ends with ctx's error once
// ctx is done.
func (a Account) MaxSteps(ctx context.Context, m *Memo) (int, Total, error) {
	m = m.forCall()
	if a.Budget == nil || a.Filter != nil {
		return 0, Total{}, errors.New("max run steps: needs a run's account with a budget")
	}
	if err := a.check(); err != nil {
		return 0, Total{}, fmt.Errorf("max run steps: %w", err)
	}
	if one, before, ok := a.merged(); ok && before > 0 {
		n, t, err := one.MaxSteps(ctx, m)
		switch {
		case err != nil || n == Unlimited:
			return n, t, err
		case n <= before:
			return 0, Total{}, nil
		}
		return n - before, t, nil
	}
	budget := a.Budget.Guarantee
	if a.Cap != nil {
		if err := a.Cap.Refusal(*a.Budget); err != nil {
			return 0, Total{DeltaFrom: BudgetDelta, Err: err}, nil
		}
		c := newChooser(budget.Delta, math.Inf(-1))
		c.offerCap(a.Cap)
		c.best.DeltaFrom = BudgetDelta
		return Unlimited, c.best, nil
	}
	fits := func(k int) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		c := a.choose(m, k, budget.Delta, budget.Eps)
		return c.found && c.best.Guarantee.Eps <= budget.Eps, nil
	}
	if ok, err := fits(1); err != nil || !ok {
		return 0, Total{}, err
	}
	var n int
	var err error
	if guess := a.countGuess(ctx, m, budget); guess > 0 {
		n, err = roots.LastNear(1, guess, CountLimit, fits)
		if errors.Is(err, roots.ErrLimitFits) {
			err = &BeyondCountError{Budget: *a.Budget}
		}
	} else {
		n, err = lastFit(1, budget, fits)
	}
	if err != nil {
		return 0, Total{}, fmt.Errorf("max run steps: %w", err)
	}
	a.Steps = n
	t, err := a.Publish(m)
	return n, t, err
}

// Allowed returns the number of steps that the budget of a, the account
// of a release, allows, with their total to publish, which says by which
// result they fit; Unlimited and the teachers' cap when the cap is within
// the budget; 0 when none fits. The steps' parameters are fixed before
// the release, so the budget allows those whose total to publish is
// within it (MaxSteps: the least ε at the budget's δ of every composition
// valid for them); when more than CountLimit fit, the release is held to
// that many, a limit it never meets. The search ends with ctx's error
// once ctx is done.
func (a Account) Allowed(ctx context.Context, m *Memo) (int, Total, error) {
	m = m.forCall()
	n, t, err := a.MaxSteps(ctx, m)
	if errors.As(err, new(*BeyondCountError)) {
		n, a.Steps = CountLimit, CountLimit
		t, err = a.Publish(m)
	}
	if err != nil {
		return 0, Total{}, fmt.Errorf("budget: %w", err)
	}
	return n, t, nil
}

// Fits reports whether the Steps steps of a run fit its budget: the
// predicate on which MaxSteps searches.
func (a Account) Fits(m *Memo) (bool, error) {
	m = m.forCall()
	if a.Budget == nil || a.Filter != nil {
		return false, errors.New("run fits: needs a run's account with a budget")
	}
	if err := a.check(); err != nil {
		return false, fmt.Errorf("run fits: %w", err)
	}
	if err := param.CountIn("steps", a.Steps, 1, CountLimit); err != nil {
		return false, fmt.Errorf("run fits: %w", err)
	}
	c := a.choose(m, a.Steps, a.Budget.Delta, a.Budget.Eps)
	return c.found && c.best.Guarantee.Eps <= a.Budget.Eps, nil
}

// Totals returns, as analysis, the totals of a run's Steps steps that
// hold at once, each replaced by the teachers' cap when there is one
// (Total.Capped, which keeps the composition as Queries): the per-step
// guarantee's simple, general and optimal compositions with slack
// DeltaPrime (allTotals); for a step
// with curves, its RDP composition under the improved conversion and the
// exact composition of its dominating pairs at TotalDelta (ComposeRun);
// and, when a point of the profile composes to a smaller ε than the
// guarantee, the optimal composition of the best point (ComposeProfile).
// The one to publish is Publish's.
func (a Account) Totals(m *Memo) ([]Total, error) {
	m = m.forCall()
	if a.Filter != nil {
		return nil, errors.New("run totals: needs a run's account")
	}
	if err := param.CountIn("steps", a.Steps, 1, CountLimit); err != nil {
		return nil, fmt.Errorf("run totals: %w", err)
	}
	if a.Cap != nil {
		if err := a.Cap.check(); err != nil {
			return nil, fmt.Errorf("run totals: %w", err)
		}
	}
	if len(a.Before) > 0 {
		// A schedule's compositions are chooseSchedule's: its total to
		// publish is the least of them.
		t, err := a.Publish(m)
		return []Total{t.Capped(a.Cap)}, err
	}
	out := allTotals(a.Step.Guarantee, a.Steps, a.DeltaPrime)
	if a.Step.Kind != ApproxSpend {
		if delta, _ := a.TotalDelta(); delta > 0 {
			if all, err := ComposeRun(m, a.Step, a.Steps, delta, a.DeltaPrime, ImprovedConversion); err == nil {
				out = all
			}
		}
	}
	if g, p, err := ComposeProfile(a.Step.Guarantee, a.Profile, a.Steps, a.DeltaPrime); err == nil && p != a.Step.Guarantee {
		out = append(out, Total{Method: Optimal, DeltaPrime: a.DeltaPrime, Guarantee: g, Point: &p})
	}
	for i := range out {
		out[i] = out[i].Capped(a.Cap)
	}
	return out, nil
}

// chooser keeps the total with the least ε at total δ delta among those
// offered; once one has ε at most enough, later offers are skipped (a
// search that asks only whether some total fits).
type chooser struct {
	delta, enough float64
	best          Total
	found         bool
	// inexact says why the exact composition was out of reach, when it
	// was (Total.Inexact).
	inexact string
}

func newChooser(delta, enough float64) *chooser { return &chooser{delta: delta, enough: enough} }

// done reports whether a total at most enough was found.
func (c *chooser) done() bool { return c.found && c.best.Guarantee.Eps <= c.enough }

// offer considers t, and reports whether it was kept; a total whose δ
// exceeds the chooser's is not a total at it.
func (c *chooser) offer(t Total) bool {
	if t.Err != nil || !(t.Guarantee.Delta <= c.delta) || !(t.Guarantee.Eps >= 0) || c.done() {
		return false
	}
	if c.found && t.Guarantee.Eps >= c.best.Guarantee.Eps {
		return false
	}
	if t.Cap != nil {
		t.Bound = TeachersBound
	}
	c.best, c.found = t, true
	return true
}

// offerCap offers the teachers' cap c (nil: none) at the chooser's δ.
func (c *chooser) offerCap(cp *Cap) bool {
	if cp == nil {
		return false
	}
	at, ok := cp.at(c.delta)
	return ok && c.offer(Total{Method: at.Method, DeltaPrime: at.DeltaPrime, Guarantee: at.Guarantee, Cap: &at})
}

// choose offers every total of k steps of the run at total δ delta,
// cheap ones first, and stops once one is at most enough; of a schedule
// (Before), chooseSchedule's. With a teachers' cap it offers the cap
// alone: it is the only bound of fixed private teachers (Cap).
func (a Account) choose(m *Memo, k int, delta, enough float64) *chooser {
	if a.Cap != nil {
		c := newChooser(delta, enough)
		c.offerCap(a.Cap)
		return c
	}
	if len(a.Before) > 0 {
		if one, before, ok := a.merged(); ok {
			n, _ := addSteps(k, before)
			return one.choose(m, n, delta, enough)
		}
		return chooseSchedule(m, a.schedule(k), delta, enough)
	}
	c, hi := a.chooseBounds(m, k, delta, enough)
	if !(delta > 0) || c.done() {
		return c
	}
	return a.chooseExact(m, c, newRunCurves(m, a.Step, k, delta), hi)
}

// chooseBounds offers the totals of k steps that choose offers before
// the exact composition of the dominating pairs, cheap ones first,
// until one is at most enough, and returns where the search for the
// exact composition's ε starts: the RDP total's ε, else 1.
func (a Account) chooseBounds(m *Memo, k int, delta, enough float64) (*chooser, float64) {
	c := newChooser(delta, enough)
	points := a.points(m)
	// Simple composition of the guarantee and of each point: the totals
	// without a slack, the only ones at δ = 0.
	if g, err := composeSimple(a.Step.Guarantee, k); err == nil {
		c.offer(Total{Method: Simple, Guarantee: g})
	}
	for i := range points {
		if g, err := composeSimple(points[i], k); err == nil {
			c.offer(Total{Method: Simple, Guarantee: g, Point: &points[i]})
		}
	}
	if !(delta > 0) || c.done() {
		return c, 1
	}
	c.offer(slackTotal(a.Step.Guarantee, k, delta))
	for i := range points {
		if c.done() {
			return c, 1
		}
		t := slackTotal(points[i], k, delta)
		t.Point = &points[i]
		c.offer(t)
		if p := points[i]; p.Delta == 0 {
			// A pure step is (ε²/2)-zCDP (Bun and Steinke 2016, Prop. 1.4).
			if eps, _, err := ImprovedConversion.RhoToDP(outward.MulUp(float64(k), outward.Up(p.Eps*p.Eps/2, 2)), delta); err == nil {
				c.offer(Total{Method: Renyi, Guarantee: Guarantee{Eps: eps, Delta: delta}, Point: &points[i]})
			}
		}
	}
	if c.done() {
		return c, 1
	}
	r := runCurves{s: a.Step, k: k, memo: m}
	hi, ok := r.renyiEps(delta, ImprovedConversion)
	if ok {
		c.offer(Total{Method: Renyi, Guarantee: Guarantee{Eps: hi, Delta: delta}})
	} else {
		hi = 1
	}
	if e, ok := r.canonicalEps(delta); ok {
		c.offer(Total{Method: Exact, Guarantee: Guarantee{Eps: e, Delta: delta}})
	}
	return c, hi
}

// chooseExact continues choose with the exact composition of the
// dominating pairs, which the totals of chooseBounds did not decide:
// hi is where its search for ε starts.
func (a Account) chooseExact(m *Memo, c *chooser, r runCurves, hi float64) *chooser {
	delta, enough := c.delta, c.enough
	if r.epsAt != nil {
		if e, ok := r.epsAt(delta); ok {
			c.offer(Total{Method: Exact, Guarantee: Guarantee{Eps: e, Delta: delta}})
		} else {
			c.inexact = fmt.Sprintf("%d steps: more than %d randomized responses", r.k, maxOptimalSteps)
		}
	}
	if r.delta == nil {
		if r.missing != "" {
			c.inexact = r.missing
		}
		return c
	}
	if c.done() {
		return c
	}
	// The exact profile at the budget's ε itself: the bisection below
	// ends within a relative 1e-9 above its ε, which may be above a
	// budget that the profile meets. A search that asks only whether
	// some total fits needs no more: the profile decreases in ε.
	probe := enough
	if a.Budget != nil {
		probe = a.Budget.Eps
	}
	if probe > 0 && !math.IsInf(probe, 0) && !r.beyond(probe, delta) && r.delta(probe) <= delta {
		c.offer(Total{Method: Exact, Guarantee: Guarantee{Eps: probe, Delta: delta}})
	}
	if !math.IsInf(enough, -1) {
		return c
	}
	if e, ok := r.exactEps(delta, hi); ok {
		c.offer(Total{Method: Exact, Guarantee: Guarantee{Eps: e, Delta: delta}})
	} else {
		c.inexact = fmt.Sprintf("the bound of its evaluation's error is above the total delta %g", delta)
	}
	return c
}

// points returns the points of the step's profile to compose: Profile,
// and for a one-bit release whose pairs bound its privacy loss the pure
// point (ε_pure, 0) of those pairs, when it is not the guarantee itself
// or already among them.
func (a Account) points(m *Memo) []Guarantee {
	out := make([]Guarantee, 0, len(a.Profile)+1)
	for _, p := range a.Profile {
		if p != a.Step.Guarantee {
			out = append(out, p)
		}
	}
	if eps, ok := a.Step.pureEps(m); ok {
		p := Guarantee{Eps: eps}
		if p != a.Step.Guarantee && !containsPoint(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func containsPoint(ps []Guarantee, p Guarantee) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// slackTotal returns the optimal composition of k steps of g (beyond
// maxOptimalSteps the general) with the slack δ' at which its total δ,
// 1 - (1-δ)^k·(1-δ'), is at most delta; Err set when there is none.
func slackTotal(g Guarantee, k int, delta float64) Total {
	m := Optimal
	if k > maxOptimalSteps {
		m = General
	}
	slack := slackFor(g.Delta, k, delta)
	// slackFor rounds δ' down and Compose the total δ up: a few ulps
	// may remain above delta, which a slack lowered by a relative 2^-30
	// removes unless δ' is negligible beside the steps' δ.
	for range 4 {
		if !(slack > 0 && slack < 1) {
			break
		}
		t, err := Composition{Method: m, DeltaPrime: slack}.Compose(g, k)
		if err != nil {
			return Total{Method: m, Err: err}
		}
		if t.Delta <= delta {
			return Total{Method: m, DeltaPrime: slack, Guarantee: t}
		}
		slack = outward.Down(slack*(1-0x1p-30), 1)
	}
	return Total{Method: m, Err: fmt.Errorf("%d steps of %v: no slack gives a total delta of at most %g", k, g, delta)}
}
