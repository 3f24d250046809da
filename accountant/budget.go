package accountant

import (
	"math"

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
// is never silently ignored. A bad value is a *ParamError naming
// "delta'".
func (c Composition) Validate() error { return param.OpenUnit("delta'", c.DeltaPrime) }

// Budget is a total privacy budget and how a run of queries is held to
// it: the total Guarantee, which the Composition of the queries'
// guarantees must stay within.
type Budget struct {
	Guarantee
	Composition
}

// Validate checks the budget: ε > 0 and finite, δ in [0, 1), and its
// Composition (Composition.Validate). A bad value is a *ParamError naming
// "budget eps", "budget delta" or "delta'", as MaxSteps names them.
func (b Budget) Validate() error {
	if !(b.Eps > 0) || math.IsInf(b.Eps, 0) {
		return &ParamError{Name: "budget eps", Value: b.Eps, Rule: "must be > 0 and finite"}
	}
	if err := param.Delta("budget delta", b.Delta); err != nil {
		return err
	}
	return b.Composition.Validate()
}
