package accountant

import "fmt"

// A privacy filter holds steps whose parameters may be chosen adaptively,
// each after seeing the outputs of the ones before, to a budget fixed in
// advance: a step is taken only if the running total, with it, stays
// within the budget. Its halting rule must be fixed before the first
// step; a rule that takes a step when any one of several compositions
// says it fits is not a filter any of them proves valid. So a filter is
// one Method, chosen when the budget is set, and only these two are
// proven for adaptively chosen parameters:
//
//   - ZCDPFilter: Σρ_i <= ρ_B, for steps with a zCDP slope (Spend.Rho).
//     For each order α the Rényi filter Σρ_iα <= ρ_Bα is valid (Feldman
//     and Zrnic 2021); the rule is the same event for every α,
//     so the whole interaction is ρ_B-zCDP, and (ε_B, δ_B)-DP with ρ_B
//     the largest slope whose improved conversion at δ_B is ε_B (Canonne,
//     Kamath and Steinke 2020, Prop. 12).
//   - Simple: Σε_i <= ε_B and Σδ_i <= δ_B, for any (ε_i, δ_i) steps
//     (Rogers, Roth, Ullman and Vadhan 2016: simple composition is a
//     valid filter).
//
// Heterogeneous and optimal composition (Kairouz, Oh and Viswanath 2015,
// Thm 3.5) assume the parameters fixed in advance and are not filters.

// CheckFilter reports whether f is a filter for budget: Simple, or
// ZCDPFilter with budget.Delta > 0 (a zCDP bound gives no pure DP).
func CheckFilter(f Method, budget Guarantee) error {
	switch f {
	case Simple:
		return nil
	case ZCDPFilter:
		if !(budget.Delta > 0) {
			return &ParamError{Name: "budget-delta", Value: budget.Delta, Rule: "must be > 0 for the zcdp-filter (use the simple filter for a pure-DP budget)"}
		}
		return nil
	}
	return fmt.Errorf("filter %v: must be %v or %v (the compositions proven for adaptively chosen parameters)", f, Simple, ZCDPFilter)
}

// FilterAccepts reports whether filter f can hold a step that s
// describes: the zCDP filter needs a zCDP slope.
func FilterAccepts(f Method, s Spend) error {
	if err := s.Check(); err != nil {
		return err
	}
	if _, ok := s.Rho(); f == ZCDPFilter && !ok {
		return fmt.Errorf("a step of %v is (eps, delta)-DP with delta > 0 and no zCDP curve: the %v cannot compose it (the %v filter can)", s.Guarantee, ZCDPFilter, Simple)
	}
	return nil
}

// FilterTotal returns the total of the steps seq under filter f with the
// budget, and whether it is within the budget (the filter's halting rule):
// Simple (Σε_i, Σδ_i); ZCDPFilter (ε, budget.Delta), ε the improved
// conversion of seq.Rho at budget.Delta. The empty sequence is (0, 0).
func FilterTotal(f Method, seq Sequence, budget Guarantee) (Guarantee, bool, error) {
	if err := CheckFilter(f, budget); err != nil {
		return Guarantee{}, false, err
	}
	if err := seq.Check(); err != nil {
		return Guarantee{}, false, err
	}
	if seq.Steps == 0 {
		return Guarantee{}, true, nil
	}
	if f == Simple {
		g := seq.simple()
		return g, g.Within(budget), nil
	}
	if seq.Curveless > 0 {
		return Guarantee{}, false, fmt.Errorf("%d of the %d steps have no zCDP curve: the %v cannot compose them", seq.Curveless, seq.Steps, ZCDPFilter)
	}
	eps, _, err := RhoToDP(seq.Rho, budget.Delta, ImprovedConversion)
	if err != nil {
		return Guarantee{}, false, err
	}
	g := Guarantee{Eps: eps, Delta: budget.Delta}
	return g, g.Within(budget), nil
}
