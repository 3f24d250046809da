package plan

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
)

// Target is what a plan of parameters fits its queries to: one run
// (ForRun) or a new ledger (ForLedger).
// A Target prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type Target int

const (
	// ForRun fits the queries to one run held to the budget (darrm
	// aggregate --budget-eps): the composition of steps fixed before the
	// first, which may be exact.
	ForRun Target = iota
	// ForLedger fits them to a new ledger with the budget: the filter
	// that darrm ledger init fixes for these labels declared as its use
	// (ledger.ChooseFilter), or Request.Filter, must allow them. A filter
	// holds runs chosen one after the other, so it allows fewer queries
	// than one run fixed in advance.
	ForLedger
)

var targetNames = enum.Names[Target]{List: []string{ForRun: "run", ForLedger: "ledger"}, Or: true}

// String returns the name of t.
func (t Target) String() string { return targetNames.String(t) }

// MarshalText returns the name of t.
func (t Target) MarshalText() ([]byte, error) { return []byte(targetNames.String(t)), nil }

// UnmarshalText sets t from its name.
func (t *Target) UnmarshalText(text []byte) error { return targetNames.Unmarshal(t, text) }

// ledgerCount returns the header of a new ledger bound to b with r's
// budget whose labels priv describes, the labels it allows to r's
// analyst (r.Share of it, ledger.Header.ShareAllows; all of them without
// a share) and all the labels it allows, as darrm ledger init makes it
// for these labels declared: their declared use, composed exactly as one
// run (ledger.NewUseHeader), or with r.Filter that filter, open to any
// use. An error says why it cannot hold them.
func ledgerCount(ctx context.Context, b provenance.Binding, r Request, priv ensemble.Privacy) (ledger.Header, int, int, error) {
	budget := *r.Budget
	if c, _, err := b.Cap(accountant.DefaultDeltaPrime); err != nil || c != nil {
		// Fixed private teachers: their cap alone, as ledger init and a
		// release on the ledger hold them (ledger.CheckCap); a share of
		// every label is every label.
		h := ledger.NewHeader(b, budget, accountant.DefaultDeltaPrime, accountant.Filter{})
		if err == nil {
			err = ledger.CheckCap(b, budget, accountant.DefaultDeltaPrime)
		}
		if err != nil {
			return h, 0, 0, err
		}
		return h, accountant.Unlimited, accountant.Unlimited, nil
	}
	var h ledger.Header
	var all int
	if r.Filter == nil {
		run := ledger.UseRun{Mechanism: r.Mechanism.Name(), Step: priv.Spend, Profile: priv.Profile}
		var err error
		if h, err = ledger.NewUseHeader(ctx, r.Certificate.Memo, b, budget, accountant.DefaultDeltaPrime, []ledger.UseRun{run}); err != nil {
			return h, 0, 0, err
		}
		all = h.Use[0].Labels
	} else {
		f, err := ledger.NamedFilter(r.Certificate.Memo, b, budget, &priv.Spend, *r.Filter)
		h = ledger.NewHeader(b, budget, accountant.DefaultDeltaPrime, f)
		if err != nil {
			h.Filter = *r.Filter
			return h, 0, 0, err
		}
		if _, err := f.Charge(r.Certificate.Memo, priv.Spend, budget.Guarantee); err != nil {
			return h, 0, 0, &unheldError{fmt.Errorf("plan: ledger (%v): %w", f, err)}
		}
		if all, err = f.MaxSteps(r.Certificate.Memo, accountant.Sequence{}, priv.Spend, budget.Guarantee); err != nil {
			return h, 0, 0, fmt.Errorf("plan: ledger (%v): %w", f, err)
		}
	}
	if r.Share == 0 {
		return h, all, all, nil
	}
	n, err := h.ShareAllows(r.Certificate.Memo, priv.Spend, r.Share)
	if err != nil {
		return h, 0, all, fmt.Errorf("plan: ledger (%v), a share %v of it: %w", h.Filter, r.Share, err)
	}
	return h, n, all, nil
}

// share is the fraction of a new ledger that r plans for: r.Share, or
// the whole ledger (1) without one.
func (r Request) share() float64 {
	if r.Share == 0 {
		return 1
	}
	return r.Share
}

// unheldError says that the filter a plan fits its queries to cannot hold
// the step a value of the parameter describes (the Gaussian-DP filter
// certifies discrete Gaussian noise up to a sigma): that value is beyond
// what the ledger takes, as a noise scale beyond the samplers' is beyond
// the mechanism's range, and the search stays within what it holds.
type unheldError struct{ err error }

func (e *unheldError) Error() string { return e.err.Error() }

func (e *unheldError) Unwrap() error { return e.err }

// noLedgerFit returns the error for a budget on whose new ledger not even
// queries queries of r, the least generous value x of k searched, fit: a
// parameter error that says what that value allows, and why when no filter
// holds it, on the budget's δ where no budget ε would fit them
// (deltaBinds), else on its ε.
func noLedgerFit(ctx context.Context, r Request, queries int, k knob, x float64) error {
	agg, _, err := r.Aggregator(ctx)
	if err != nil {
		return err
	}
	priv := agg.Privacy()
	b := bindingOf(agg, r)
	h, n, _, err := ledgerCount(ctx, b, r, priv)
	of := "on a new ledger of this budget"
	if r.Share != 0 {
		of = fmt.Sprintf("in a share %v of a new ledger of this budget", r.Share)
	}
	rule := fmt.Sprintf("not even %s %s: the least generous %s searched, %v (per query %v), allows %d (filter %v)", fitWords(queries), of, k.setting, k.value(x), priv.Guarantee, n, h.Filter)
	if err != nil {
		rule = fmt.Sprintf("not even %s %s: at the least generous %s searched, %v (per query %v): %v", fitWords(queries), of, k.setting, k.value(x), priv.Guarantee, err)
	} else if deltaBinds(ctx, r, b, h, queries, priv) {
		return &deltaNoFitError{&param.Error{Name: "budget-delta", Value: r.Budget.Delta,
			Rule: rule + ", whatever budget-eps: their deltas alone exceed budget-delta (raise it, or lower each query's, --delta)"}}
	}
	return &param.Error{Name: "budget-eps", Value: r.Budget.Eps, Rule: rule}
}

// deltaBinds reports whether the budget's δ alone keeps queries queries of
// priv off a new ledger, of header h, that composes simply (its filter and
// every part of it Simple): whether they do not fit at a budget ε of
// MaxFloat64 either (as budgetNoFit asks of a cap), where each step may be
// charged at the point of its privacy profile of least δ (a pure point
// where it has one), so that no ε would fit more. Of other filters it
// says nothing (false).
func deltaBinds(ctx context.Context, r Request, b provenance.Binding, h ledger.Header, queries int, priv ensemble.Privacy) bool {
	if h.Filter != accountant.Simple {
		return false
	}
	for _, p := range h.Parts {
		if p.Method != accountant.Simple {
			return false
		}
	}
	wide := *r.Budget
	wide.Eps = math.MaxFloat64
	r.Budget = &wide
	_, n, _, err := ledgerCount(ctx, b, r, priv)
	return err == nil && n < queries
}
