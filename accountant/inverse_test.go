package accountant

import (
	"errors"
	"math"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

// TestMaxStepsScan compares MaxSteps with a linear scan of Compose: the
// last k whose total under the method, or under simple composition, fits
// (a pure-DP budget takes the pure steps that simple composition allows).
func TestMaxStepsScan(t *testing.T) {
	for _, m := range []Method{Simple, General, Optimal} {
		for _, step := range []Guarantee{{0.2676, 3e-4}, {0.05, 1e-6}, {1, 0}, {0.3, 0}} {
			for _, budget := range []Guarantee{{1, 1e-2}, {5, 0.05}, {0.1, 0.5}, {3, 0}} {
				got, err := (Composition{Method: m, DeltaPrime: 1e-4}).MaxSteps(step, Budget{Guarantee: budget})
				if err != nil {
					t.Fatal(err)
				}
				want := 0
				for k := 1; ; k++ {
					g, err := Composition{Method: m, DeltaPrime: 1e-4}.Compose(step, k)
					if err != nil {
						t.Fatal(err)
					}
					s, _ := composeSimple(step, k)
					if !g.Within(budget) && !s.Within(budget) {
						break
					}
					want = k
				}
				if got != want {
					t.Errorf("%v step %v budget %v: MaxSteps %d, scan %d", m, step, budget, got, want)
				}
			}
		}
	}
}

func TestMaxStepsOrder(t *testing.T) {
	step, budget := Guarantee{0.01, 1e-7}, Guarantee{2, 1e-3}
	var q [3]int
	for i, m := range []Method{Simple, General, Optimal} {
		n, err := (Composition{Method: m, DeltaPrime: 1e-4}).MaxSteps(step, Budget{Guarantee: budget})
		if err != nil {
			t.Fatal(err)
		}
		q[i] = n
	}
	// The float64 nearest 0.01 is 0.01 + 2.1e-19, so 200 simple steps
	// exceed ε = 2 by 4.2e-17: the safe answer is 199.
	if !(q[0] <= q[1] && q[1] <= q[2]) || q[0] != 199 {
		t.Errorf("simple %d, general %d, optimal %d queries", q[0], q[1], q[2])
	}
}

func TestMaxStepsLimit(t *testing.T) {
	if _, err := (Composition{Method: Simple, DeltaPrime: 0}).MaxSteps(Guarantee{1e-300, 0}, Budget{Guarantee: Guarantee{1, 0.5}}); err == nil {
		t.Error("no error when more than 2^53 steps fit")
	}
}

// TestStepEpsOverflow: a total ε near the largest float64 is answered, or
// refused naming the total, for every method: the optimal composition of
// such steps overflowed to +Inf without an error, and StepEps stepped down
// from it an ulp at a time, without end; then the
// bracket's doubled ε overflowed general composition's total, and the
// error named the step's ε, which the caller did not give.
func TestStepEpsOverflow(t *testing.T) {
	for _, m := range []Method{Simple, General, Optimal} {
		for _, total := range []float64{1e308, math.MaxFloat64} {
			for _, k := range []int{1, 10} {
				c := Composition{Method: m, DeltaPrime: 1e-5}
				eps, err := c.StepEps(total, 1e-3, k)
				var pe *param.Error
				if err != nil {
					if !errors.As(err, &pe) || pe.Name != "eps total" {
						t.Errorf("%v of %d steps, total %v: %v, want a ParamError naming eps total", m, k, total, err)
					}
					if m != Optimal && total < math.MaxFloat64 {
						t.Errorf("%v of %d steps, total %v: %v, want the step ε", m, k, total, err)
					}
					continue
				}
				if g, err := c.Compose(Guarantee{Eps: eps, Delta: 1e-3}, k); err != nil || !(g.Eps <= total) || !(eps >= total/float64(k)) {
					t.Errorf("%v of %d steps, total %v: step ε %v composes to %v, %v", m, k, total, eps, g.Eps, err)
				}
			}
		}
		if g, err := (Composition{Method: m, DeltaPrime: 1e-5}).Compose(Guarantee{Eps: math.MaxFloat64, Delta: 1e-3}, 10); err == nil && math.IsInf(g.Eps, 1) {
			t.Errorf("%v: Compose of MaxFloat64 steps: ε = +Inf without an error", m)
		}
	}
}

// TestStepEps checks that the per-step ε meets the total and is the largest
// that does (to within 1e-12 relative).
func TestStepEps(t *testing.T) {
	for _, m := range []Method{Simple, General, Optimal} {
		for _, epsTotal := range []float64{0.5, 2, 10} {
			for _, k := range []int{1, 3, 20, 1000} {
				eps, err := (Composition{Method: m, DeltaPrime: 1e-5}).StepEps(epsTotal, 1e-6, k)
				if err != nil {
					t.Fatal(err)
				}
				at, _ := Composition{Method: m, DeltaPrime: 1e-5}.Compose(Guarantee{eps, 1e-6}, k)
				above, _ := Composition{Method: m, DeltaPrime: 1e-5}.Compose(Guarantee{eps * (1 + 1e-12), 1e-6}, k)
				if at.Eps > epsTotal || !(above.Eps > epsTotal*(1-1e-11)) {
					t.Errorf("%v total %v k=%d: step eps %v gives %v; eps*(1+1e-12) gives %v", m, epsTotal, k, eps, at.Eps, above.Eps)
				}
			}
		}
	}
}

// TestTotalDeltaAtMostOne: a total δ rounded up is at most 1, which bounds
// every δ: general composition of 2^31 steps of δ = 1e-5 read
// 1.0000000000000007.
func TestTotalDeltaAtMostOne(t *testing.T) {
	for _, m := range []Method{General, Optimal} {
		g, err := (Composition{Method: m, DeltaPrime: 1e-5}).Compose(Guarantee{Eps: 0.1, Delta: 1e-5}, 1<<31)
		if err == nil && !(g.Delta <= 1) {
			t.Errorf("%v of 2^31 steps: δ = %v", m, g.Delta)
		}
	}
}

// TestPureStepsAtTheirSlack checks that pure steps total δ' itself, so
// that a budget whose δ is the slack (the default 1e-5 of both) counts by
// the method asked: at least as many steps as a slack just below it
// allows, which the budget's δ leaves room for.
func TestPureStepsAtTheirSlack(t *testing.T) {
	for _, m := range []Method{General, Optimal} {
		for _, tc := range []struct{ eps, budget, slack float64 }{{0.05, 2, 1e-5}, {0.05, 4, 1e-6}, {0.01, 1, 0.1}} {
			c := Composition{Method: m, DeltaPrime: tc.slack}
			for _, k := range []int{1, 7, 100} {
				if g, err := c.Compose(Guarantee{Eps: tc.eps}, k); err != nil || g.Delta != tc.slack {
					t.Errorf("%v of %d steps of (%v, 0) at δ' = %v: δ = %v (%v), want δ'", m, k, tc.eps, tc.slack, g.Delta, err)
				}
			}
			budget := Budget{Guarantee: Guarantee{Eps: tc.budget, Delta: tc.slack}}
			at, err := c.MaxSteps(Guarantee{Eps: tc.eps}, budget)
			if err != nil {
				t.Fatal(err)
			}
			below, err := (Composition{Method: m, DeltaPrime: tc.slack * 0.99}).MaxSteps(Guarantee{Eps: tc.eps}, budget)
			if err != nil {
				t.Fatal(err)
			}
			if simple := int(tc.budget / tc.eps); at < below || at <= simple {
				t.Errorf("%v, steps of ε = %v in (%v, %v) at δ' = δ: %d steps, %d at δ' 1%% below, %d by simple composition", m, tc.eps, tc.budget, tc.slack, at, below, simple)
			}
		}
	}
}
