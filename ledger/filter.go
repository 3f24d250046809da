package ledger

import (
	"errors"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// filters are the compositions a ledger may hold its runs to its budget
// by (accountant.CheckFilter), in the order ChooseFilter reports them.
var filters = [...]accountant.Method{accountant.ZCDPFilter, accountant.Simple}

// filterAllowance is what one filter allows a new ledger whose releases
// are labels of one declared kind (ChooseFilter).
type filterAllowance struct {
	Filter accountant.Method
	// Labels is the number of labels the budget allows by Filter
	// (accountant.MaxFilterSteps), accountant.CountLimit when the
	// accountant counts no further (more fit: the budget limits no run of
	// practical length), which is more than any count it returns.
	Labels int
	// Total is the total of the labels expected (FilterChoice.Expected)
	// by Filter, Fits whether it is within the budget.
	Total accountant.Guarantee
	Fits  bool
	// Err says why Filter cannot hold these labels under the budget
	// (accountant.CheckFilter, accountant.FilterAccepts); the other
	// fields are then zero.
	Err error
}

// FilterChoice is what each filter allows a declared use of a new ledger,
// and the filter chosen for it.
type FilterChoice struct {
	// Filter allows the most labels of the use: the one Init should fix
	// unless the caller names one (DefaultFilter when both allow as
	// many).
	Filter accountant.Method
	// Allowances are what each filter allows, the zCDP filter first.
	Allowances []filterAllowance
	// Tie says that more than one filter allows the most labels: Filter
	// is then the default.
	Tie bool
	// Expected is the number of labels the caller expects to release (0:
	// not said).
	Expected int
}

// ChooseFilter returns what each filter allows a new ledger bound to b
// with budget, whose releases will be labels that step describes
// (expected of them, if > 0), and the filter that allows the most. A
// filter's halting rule must be fixed before the first run: chosen here,
// from a use declared before any release, it depends on no output, as it
// must; chosen after runs (from what they spent) it would not be a filter
// any theorem covers, so a ledger's filter never changes (Upgrade keeps
// it too).
func ChooseFilter(b provenance.Binding, budget accountant.Guarantee, step accountant.Spend, expected int) (FilterChoice, error) {
	if err := checkBudget(accountant.Budget{Guarantee: budget}); err != nil {
		return FilterChoice{}, err
	}
	// A label's δ is a per-query δ, in the range of every one.
	if err := accountant.CheckDelta("delta", step.Delta); err != nil {
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
	c := FilterChoice{Filter: DefaultFilter(b, budget), Expected: expected}
	most := -1
	for _, f := range filters {
		a := filterAllowance{Filter: f}
		if a.Err = accountant.CheckFilter(f, budget); a.Err == nil {
			a.Err = accountant.FilterAccepts(f, step)
		}
		if a.Err == nil {
			a.Labels, a.Err = maxFilterSteps(f, accountant.Sequence{}, step, budget)
		}
		if a.Err == nil && expected > 0 {
			seq, _ := accountant.Sequence{}.AddSpend(step, expected)
			a.Total, a.Fits, a.Err = accountant.FilterTotal(f, seq, budget)
		}
		switch {
		case a.Err != nil:
			a = filterAllowance{Filter: f, Err: a.Err}
		case a.Labels > most:
			c.Filter, most, c.Tie = f, a.Labels, false
		case a.Labels == most:
			c.Tie = true
			if f == DefaultFilter(b, budget) {
				c.Filter = f
			}
		}
		c.Allowances = append(c.Allowances, a)
	}
	if most < 0 {
		return c, fmt.Errorf("ledger: no filter holds labels of %v under the budget %v: %w", step.Guarantee, budget, c.Allowances[0].Err)
	}
	return c, nil
}

// maxFilterSteps is accountant.MaxFilterSteps with a budget that fits
// more steps than the accountant counts (*accountant.BeyondCountError)
// allowing accountant.CountLimit: a filter that allows that many allows
// more than one that allows any count below it, and a use it allows so
// many of is a reason to keep it, not to refuse it.
func maxFilterSteps(f accountant.Method, spent accountant.Sequence, step accountant.Spend, budget accountant.Guarantee) (int, error) {
	n, err := accountant.MaxFilterSteps(f, spent, step, budget)
	if errors.As(err, new(*accountant.BeyondCountError)) {
		return accountant.CountLimit, nil
	}
	return n, err
}
