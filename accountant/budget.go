package accountant

import (
	"fmt"

	"github.com/darrm/darrm/internal/param"
)

// Composition is how the per-query guarantees of a run compose into its
// total: by Method, with slack DeltaPrime, the δ' of general composition
// (Theorem 3.3.3) and optimal composition (Kairouz, Oh and Viswanath 2015,
// Thm 3.3).
type Composition struct {
	Method     Method
	DeltaPrime float64
}

// Validate checks the slack: δ' in (0, 1). Simple composition does not use
// it and still refuses it outside (0, 1), so that a slack given by mistake
// is never silently ignored. A bad value is a parameter error naming
// "delta'".
func (c Composition) Validate() error { return param.DeltaPrime(c.DeltaPrime) }

// Budget is the total privacy budget (ε, δ) that a run of queries, a plan
// or a ledger is held to: every total to publish of what it allows is
// within it, stated at its δ (Account.Publish). How the steps compose
// is not part of it: the total is the least of every valid composition,
// and the slack δ' of the analysis totals is the Account's.
type Budget struct {
	Guarantee
}

// Validate checks the budget, of a run, a plan or a ledger, whichever
// command gives it: ε > 0 and finite, δ in [0, 0.5] (param.GuaranteeDelta: a
// total at δ >= 1/2 says nothing). A bad value is a parameter error naming
// "budget eps" or "budget delta".
func (b Budget) Validate() error {
	if err := param.Positive("budget eps", b.Eps); err != nil {
		return err
	}
	return param.GuaranteeDelta("budget delta", b.Delta)
}

// CountLimit is the largest number of steps the accountant counts: every
// count up to it is an exact float64. A search for the most steps that fit
// a budget (MaxSteps, MaxRunSteps) in which this many fit
// returns a *BeyondCountError.
const CountLimit = 1 << 53

// BeyondCountError reports a budget within which more than CountLimit
// steps fit: the accountant counts no further, and no run of practical
// length reaches the budget's limit. It is a parameter error on the
// budget's ε (Param), which only a smaller budget turns into a count.
type BeyondCountError struct {
	Budget Budget
}

// Error names the count, its value and the rule, as Param gives them.
func (e *BeyondCountError) Error() string {
	name, value, rule := e.Param()
	return fmt.Sprintf("%s = %v: %s", name, value, rule)
}

// Param names the budget's ε, its value, and says that the budget limits
// no run of practical length.
func (e *BeyondCountError) Param() (name string, value any, rule string) {
	return "budget eps", e.Budget.Eps, fmt.Sprintf("more than %d steps fit within %v: the budget limits no run of practical length", CountLimit, e.Budget)
}
