package plan

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
)

// Target is what a plan of parameters fits its queries to: one run
// (ForRun) or a new ledger (ForLedger).
// A Target prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type Target = enum.Value[targetTable]

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

var targetNames = enum.Names[Target]{Type: "Target", List: []string{ForRun: "run", ForLedger: "ledger"}, Or: true}

// targetTable gives Target its names (enum.Value).
type targetTable struct{}

func (targetTable) Names() *enum.Names[Target] { return &targetNames }

// ledgerCount returns the filter of a new ledger bound to b with r's
// budget whose labels step describes, and the labels it allows: r.Filter
// if set, else the filter that allows the most (ledger.ChooseFilter, as
// ledger init chooses it for these labels declared). An error says why
// no filter (or not r.Filter) can hold them.
func ledgerCount(b provenance.Binding, r Request, step accountant.Spend) (accountant.Method, int, error) {
	budget := r.Budget.Guarantee
	if r.Filter != nil {
		f := *r.Filter
		if err := accountant.CheckFilter(f, budget); err != nil {
			return f, 0, err
		}
		if err := accountant.FilterAccepts(f, step); err != nil {
			return f, 0, err
		}
		n, err := accountant.MaxFilterSteps(f, accountant.Sequence{}, step, budget)
		if err != nil {
			return f, 0, fmt.Errorf("plan: ledger (%v): %w", f, err)
		}
		return f, n, nil
	}
	c, err := ledger.ChooseFilter(b, budget, step, 0)
	if err != nil {
		return c.Filter, 0, err
	}
	for _, a := range c.Allowances {
		if a.Filter == c.Filter {
			return c.Filter, a.Labels, nil
		}
	}
	return c.Filter, 0, fmt.Errorf("plan: ledger.ChooseFilter chose %v without an allowance for it", c.Filter)
}

// noLedgerFit returns the error for a budget on whose new ledger not even
// queries queries of r, the least generous value x of k searched, fit: a
// ParamError on the budget's ε that says what that value allows, and why
// when no filter holds it.
func noLedgerFit(ctx context.Context, r Request, queries int, k knob, x float64) error {
	agg, _, err := Aggregator(ctx, r)
	if err != nil {
		return err
	}
	priv := agg.Privacy()
	f, n, err := ledgerCount(bindingOf(agg), r, priv.Spend)
	rule := fmt.Sprintf("not even %s on a new ledger of this budget: the least generous %s searched, %v (per query %v), allows %d (filter %v)", fitWords(queries), k.setting, k.value(x), priv.Guarantee, n, f)
	if err != nil {
		rule = fmt.Sprintf("not even %s on a new ledger of this budget: at the least generous %s searched, %v (per query %v): %v", fitWords(queries), k.setting, k.value(x), priv.Guarantee, err)
	}
	return &accountant.ParamError{Name: "budget-eps", Value: r.Budget.Eps, Rule: rule}
}

// ledgerPublish returns what a new ledger with filter f and budget
// publishes for every release charged to it, as the ledger itself says it
// (ledger.Balance.Publish: accountant.Account.Publish of a filter): its
// budget, the teachers' cap aside, which a plan does not assume.
func ledgerPublish(f accountant.Method, budget accountant.Budget) (accountant.Total, error) {
	return accountant.Account{Filter: &f, Budget: &budget}.Publish()
}
