package accountant

import (
	"errors"
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/roots"
)

// MaxSteps returns the largest k such that k composed copies of step are
// within budget b (total ε <= b.Eps and total δ <= b.Delta) under the
// composition c, method c.Method with slack c.DeltaPrime (ignored by Simple), or under simple composition:
// the steps satisfy both totals at once, and simple composition, the only
// one without the slack δ', is the one that fits a pure-DP budget (δ = 0).
// It is e.g. the number of queries Q a budget allows, and 0 when not even
// one step fits; a *BeyondCountError when more than CountLimit fit.
// Optimal composition takes at most maxOptimalSteps steps; beyond them
// general composition, never below it, bounds them. The total ε and δ of
// all three methods grow with k, so the answer is found by exponential and
// binary search over exact evaluations of Compose.
func (c Composition) MaxSteps(step Guarantee, b Budget) (int, error) {
	budget, m, deltaPrime := b.Guarantee, c.Method, c.DeltaPrime
	wrap := func(err error) error { return fmt.Errorf("max steps (%v): %w", m, err) }
	if err := checkStep("", step); err != nil {
		return 0, wrap(err)
	}
	if err := b.Validate(); err != nil {
		return 0, wrap(err)
	}
	switch m {
	case Simple:
	case General, Optimal:
		if err := param.DeltaPrime(deltaPrime); err != nil {
			return 0, wrap(err)
		}
	default:
		return 0, wrap(fmt.Errorf("unknown method %v", m))
	}
	fits := func(k int) bool {
		if s, err := composeSimple(step, k); err == nil && s.Within(budget) {
			return true
		}
		// Beyond the steps optimal composition takes, general
		// composition, never below it, still bounds them.
		by := c
		if m == Optimal && k > maxOptimalSteps {
			by.Method = General
		}
		g, err := by.Compose(step, k)
		return err == nil && g.Within(budget)
	}
	if !fits(1) {
		return 0, nil
	}
	return lastFit(1, budget, func(k int) (bool, error) { return fits(k), nil })
}

// lastFit returns the largest number of steps in [lo, CountLimit] that
// fit budget, given fits(lo) (roots.Last), and a *BeyondCountError when
// CountLimit steps fit.
func lastFit(lo int, budget Guarantee, fits func(int) (bool, error)) (int, error) {
	k, err := roots.Last(lo, CountLimit, fits)
	if errors.Is(err, roots.ErrLimitFits) {
		return 0, &BeyondCountError{Budget: Budget{budget}}
	}
	return k, err
}

// StepEps returns the largest per-step ε such that k composed (ε, δ)-DP
// steps have total ε <= epsTotal under the composition c, method c.Method
// with slack c.DeltaPrime (ignored by Simple). The total δ does not depend on ε: it is c.Compose's. For Simple
// the answer is epsTotal/k; for General and Optimal, whose total ε grows
// with ε, it is found by bracketed regula falsi to a relative 1e-15, and
// the returned ε always meets the target.
func (c Composition) StepEps(epsTotal, delta float64, k int) (float64, error) {
	m, deltaPrime := c.Method, c.DeltaPrime
	wrap := func(err error) error { return fmt.Errorf("step eps (%v): %w", m, err) }
	if err := param.Positive("eps total", epsTotal); err != nil {
		return 0, wrap(err)
	}
	if err := param.Delta("delta", delta); err != nil {
		return 0, wrap(err)
	}
	if err := param.Count("k", k, 1); err != nil {
		return 0, wrap(err)
	}
	if m != Simple {
		if err := param.DeltaPrime(deltaPrime); err != nil {
			return 0, wrap(err)
		}
	}
	lo := epsTotal / float64(k)
	tooSmall := &param.Error{Name: "eps total", Value: epsTotal,
		Rule: fmt.Sprintf("over %d steps leaves no per-step eps > 0 in floating point: must be larger", k)}
	if lo == 0 {
		return 0, wrap(tooSmall)
	}
	// The bracket doubles ε past the answer, where the total may overflow
	// though the answer's does not: c.compose's +Inf is above every finite
	// epsTotal. At ε = epsTotal/k an overflow is an error, as the descent
	// an ulp at a time would not end from +Inf.
	total := func(eps float64) (float64, error) {
		g, err := c.compose(Guarantee{Eps: eps, Delta: delta}, k)
		return g.Eps, err
	}
	// Every method's total is at most kε, so ε = epsTotal/k fits (up to
	// rounding, which the loop below removes).
	for {
		t, err := total(lo)
		if err != nil {
			return 0, wrap(err)
		}
		if math.IsInf(t, 1) {
			return 0, wrap(&param.Error{Name: "eps total", Value: epsTotal,
				Rule: fmt.Sprintf("too large: the total eps of %d steps of %v each overflows: must be smaller", k, lo)})
		}
		if t <= epsTotal {
			break
		}
		if lo = math.Nextafter(lo, 0); lo == 0 {
			return 0, wrap(tooSmall)
		}
	}
	if m == Simple {
		return lo, nil
	}
	hi := math.Min(2*lo, math.MaxFloat64)
	fHi := 0.0
	for {
		t, err := total(hi)
		if err != nil {
			return 0, wrap(err)
		}
		if t > epsTotal {
			fHi = t - epsTotal
			break
		}
		if hi == math.MaxFloat64 {
			return hi, nil
		}
		lo, hi = hi, math.Min(2*hi, math.MaxFloat64)
	}
	// Regula falsi with the Illinois modification on the bracket
	// f(lo) <= 0 < f(hi), f(ε) = total(ε) - epsTotal, down to a relative
	// width of 1e-15; a bisection step whenever the secant stalls keeps it
	// bracketed and finite.
	t, _ := total(lo)
	fLo := t - epsTotal
	side := 0
	for range 200 {
		if hi-lo <= 1e-15*lo {
			break
		}
		mid := lo - fLo*(hi-lo)/(fHi-fLo)
		if !(mid > lo && mid < hi) {
			mid = lo + (hi-lo)/2
		}
		t, err := total(mid)
		if err != nil {
			return 0, wrap(err)
		}
		if f := t - epsTotal; f <= 0 {
			lo, fLo = mid, f
			if side == -1 {
				fHi /= 2
			}
			side = -1
		} else {
			hi, fHi = mid, f
			if side == 1 {
				fLo /= 2
			}
			side = 1
		}
	}
	return lo, nil
}
