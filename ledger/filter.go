package ledger

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/provenance"
)

// filterAllowance is what one filter allows a new ledger open to any use
// whose releases are labels of one declared kind (ChooseFilter).
type filterAllowance struct {
	Filter accountant.Filter
	// Labels is the number of labels the budget allows by Filter
	// (accountant.Filter.MaxSteps), accountant.CountLimit when the
	// accountant counts no further (more fit: the budget limits no run of
	// practical length), which is more than any count it returns.
	Labels int
	// Total is the total of the labels expected (FilterChoice.Expected)
	// by Filter (accountant.Filter.Total), Fits whether it is within the
	// budget.
	Total accountant.Guarantee
	Fits  bool
	// Err says why Filter cannot hold these labels under the budget
	// (accountant.Filter.Charge); the other fields are then zero.
	Err error
}

// FilterChoice is what each filter a ledger open to any use may take
// (accountant.Budget.OpenFilters) allows a declared use of a new ledger, and the
// filter kept.
type FilterChoice struct {
	// Filter allows the most labels of the use, the earlier in
	// Allowances of those that allow as many: the one Init should fix
	// unless the caller names another.
	Filter accountant.Filter
	// Allowances are what each filter allows, in OpenFilters' order.
	Allowances []filterAllowance
	// Expected is the number of labels the caller expects to release (0:
	// not said).
	Expected int
}

// ChooseFilter returns what each filter a ledger open to any use may take
// allows a new ledger bound to b with budget, whose releases will be
// labels that step describes (expected of them, if > 0), and the filter
// that allows the most. A filter's halting rule must be fixed before the
// first run: chosen here, from a use declared before any release and the
// public budget and relation, it depends on no output, as it must; chosen
// after runs (from what they spent) it would not be a filter any theorem
// covers, so a ledger's filter never changes (Upgrade keeps it too).
func ChooseFilter(m *accountant.Memo, b provenance.Binding, budget accountant.Budget, step accountant.Spend, expected int) (FilterChoice, error) {
	if err := checkBudget(budget); err != nil {
		return FilterChoice{}, err
	}
	// A label's δ is a per-query δ, in the range of every one.
	if err := param.GuaranteeDelta("delta", step.Delta); err != nil {
		return FilterChoice{}, fmt.Errorf("ledger: the labels declared: %w", err)
	}
	if err := step.Check(); err != nil {
		return FilterChoice{}, fmt.Errorf("ledger: the labels declared: %w", err)
	}
	if one, err := (accountant.Sequence{}).AddSpend(step, 1); err != nil || one.Check() != nil {
		// No filter composes a label whose sums overflow float64 (ε² at
		// ε = 1e308): it is no budget's to hold.
		return FilterChoice{}, paramError("eps", formatG(step.Eps), "too large: one label's sums overflow float64")
	}
	if _, err := (accountant.Sequence{}).AddSpend(step, expected); err != nil || expected < 0 {
		return FilterChoice{}, paramError("queries", fmt.Sprint(expected), "must be >= 0 (0: not said), and at most as many labels as the accountant counts")
	}
	if m == nil {
		// The candidates' counts and totals compose the same labels: a
		// memo of this call's own.
		m = new(accountant.Memo)
	}
	all, keep, err := budget.OpenFilters(m, b.Relation, &step)
	c := FilterChoice{Expected: expected}
	for _, f := range all {
		a := filterAllowance{Filter: f.Filter, Labels: f.Steps, Err: f.Err}
		if a.Err == nil && expected > 0 {
			a.Total, a.Fits, a.Err = expectedTotal(m, f.Filter, budget.Guarantee, step, expected)
		}
		if a.Err != nil {
			a = filterAllowance{Filter: f.Filter, Err: a.Err}
		}
		c.Allowances = append(c.Allowances, a)
	}
	if err != nil {
		// The budget's part that a label exceeds, its eps otherwise.
		name, value := "budget eps", budget.Eps
		if step.Delta > budget.Delta {
			name, value = "budget delta", budget.Delta
		}
		return c, fmt.Errorf("ledger: %w: %w", &param.Error{Name: name, Value: value, Rule: fmt.Sprintf("no filter holds one label of %v within the budget %v", step.Guarantee, budget)}, err)
	}
	c.Filter = all[keep].Filter
	return c, nil
}

// expectedTotal returns the total of expected labels that step describes
// by filter f, and whether they fit the budget.
func expectedTotal(m *accountant.Memo, f accountant.Filter, budget accountant.Guarantee, step accountant.Spend, expected int) (accountant.Guarantee, bool, error) {
	ch, err := f.Charge(m, step, budget)
	if err != nil {
		return accountant.Guarantee{}, false, err
	}
	seq, err := f.Add(accountant.Sequence{}, ch, expected)
	if err != nil {
		return accountant.Guarantee{}, false, err
	}
	return f.Total(seq, budget)
}

// NamedFilter returns the filter of a ledger open to any use whose first
// part is the method named, of those accountant.Budget.OpenFilters offers for
// the relation, budget and the labels step describes (nil: none
// declared); an error names the methods it offers.
func NamedFilter(m *accountant.Memo, b provenance.Binding, budget accountant.Budget, step *accountant.Spend, named accountant.Method) (accountant.Filter, error) {
	// The labels declared choose only the Rényi filter's order and the
	// advanced filter's slack, and those two are offered only with them:
	// every other filter is offered the same without them, so it is found
	// here without what each candidate allows of the labels (a search
	// each, 35 of them when δ_B > 0).
	if m == nil {
		m = new(accountant.Memo) // of this call's own
	}
	if step == nil || step.Check() == nil {
		if all, _, err := budget.OpenFilters(m, b.Relation, nil); err == nil {
			for _, c := range all {
				if c.Filter.Parts[0].Method == named {
					return c.Filter, nil
				}
			}
		}
	}
	all, _, err := budget.OpenFilters(m, b.Relation, step)
	if err != nil && all == nil {
		return accountant.Filter{}, fmt.Errorf("ledger: %w", err)
	}
	var names []string
	for _, c := range all {
		if c.Filter.Parts[0].Method == named {
			return c.Filter, nil
		}
		names = append(names, c.Filter.Parts[0].Method.String())
	}
	rule := fmt.Sprintf("this budget's filters are %v", names)
	if step == nil {
		rule += " (declare the labels to choose an order or slack for the others)"
	}
	return accountant.Filter{}, paramError("filter", named.String(), rule)
}

// filterAccepts reports whether a version-4 ledger's filter f can hold a
// step that s describes: its zCDP filter sums the steps' zCDP slopes
// (accountant.Sequence.AddSpend, accountant.Sequence.FilterTotal), and a step
// without one, which the sums count as curveless, it cannot compose.
func filterAccepts(f accountant.Method, s accountant.Spend) error {
	if err := s.Check(); err != nil {
		return err
	}
	if f != accountant.ZCDPFilter {
		return nil
	}
	one, err := accountant.Sequence{}.AddSpend(s, 1)
	if err != nil {
		return err
	}
	if one.Curveless > 0 {
		return fmt.Errorf("a step of %v is (eps, delta)-DP with delta > 0 and no zCDP curve: the %v cannot compose it (the %v filter can)", s.Guarantee, accountant.ZCDPFilter, accountant.Simple)
	}
	return nil
}
