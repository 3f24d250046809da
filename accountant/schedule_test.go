package accountant

import (
	"fmt"
	"math"
	"testing"

	"github.com/darrm/darrm/internal/roots"
)

// rrPairs are randomized response's pairs with ε.
func rrPairs(eps float64) []BitPair {
	p := math.Exp(eps) / (1 + math.Exp(eps))
	return []BitPair{{p, 1 - p}}
}

// refRRSchedule returns δ(ε) of k1 randomized responses with ε1 then
// k2 with ε2, summed over every count of each run's negative losses
// (a brute-force reference of their exact composition).
func refRRSchedule(e1 float64, k1 int, e2 float64, k2 int, eps float64) float64 {
	binom := func(n, i int, p float64) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(i + 1))
		c, _ := math.Lgamma(float64(n - i + 1))
		return math.Exp(a - b - c + float64(n-i)*math.Log(p) + float64(i)*math.Log1p(-p))
	}
	p1, p2 := math.Exp(e1)/(1+math.Exp(e1)), math.Exp(e2)/(1+math.Exp(e2))
	var d float64
	for i := 0; i <= k1; i++ {
		for j := 0; j <= k2; j++ {
			if l := e1*float64(k1-2*i) + e2*float64(k2-2*j); l > eps {
				d += binom(k1, i, p1) * binom(k2, j, p2) * -math.Expm1(eps-l)
			}
		}
	}
	return d
}

// TestSchedule: an account of runs fixed before the first step
// (Account.Before) composes them all. Runs of one step are one run (a
// declared use split into runs: the count after 20 steps is the run's
// less 20). Continuous Gaussian noise of two σ composes exactly (μ²
// adds): its count is floor((μ_B² - 30·2/σ₁²)/(2/σ₂²)), μ_B from a
// 256-bit bisection. Discrete Gaussian noise of at most two σ in all is
// the exact composition of their sums. Randomized responses of two ε
// (different pairs) compose exactly, on one grid: the total published is
// within 10^-3 above the exact ε at the budget's δ (a brute-force sum over
// both runs' losses, bisected), and the count is the exact maximum. A
// pure run then Gaussian noise, which no one composition holds, gets a
// bound that says so (Total.Inexact).
func TestSchedule(t *testing.T) {
	ctx := t.Context()
	b := Guarantee{1, 1e-5}
	n, _, err := Account{Step: gnmaxStep, Budget: &Budget{b}, Before: []Run{{Step: gnmaxStep, Steps: 20}}}.MaxSteps(ctx, testMemo)
	if err != nil || n != 57-20 {
		t.Errorf("GNMax after 20 of its steps: %d (%v), want 37", n, err)
	}
	one, _ := Account{Step: gnmaxStep, Steps: 57, Budget: &Budget{b}}.Publish(testMemo)
	split, _ := Account{Step: gnmaxStep, Steps: 37, Budget: &Budget{b}, Before: []Run{{Step: gnmaxStep, Steps: 20}}}.Publish(testMemo)
	if one.Guarantee != split.Guarantee {
		t.Errorf("57 steps publish %v, 20 then 37 %v", one.Guarantee, split.Guarantee)
	}

	cont := func(sigma float64) Spend {
		return Spend{Kind: GaussianSpend, Guarantee: Guarantee{Eps: 1, Delta: 1e-5}, Gaussian: []GaussianPart{{Sigma: sigma, Coords: 2}}}
	}
	for _, bb := range []Guarantee{{2, 1e-5}, {8, 1e-12}} {
		a := Account{Step: cont(40), Budget: &Budget{bb}, Before: []Run{{Step: cont(25), Steps: 30}}}
		n, total, err := a.MaxSteps(ctx, testMemo)
		mub := refMuB(bb.Eps, bb.Delta)
		mub.Mul(mub, mub)
		mub.Sub(mub, bf(30*2.0/625))
		want := bigFloor(mub, bf(2.0/1600))
		if err != nil || n != want || total.Method != Exact || total.Inexact != "" {
			t.Errorf("%v: continuous σ 40 after 30 of σ 25: %d by %v (%v), want %d exactly", bb, n, total.Method, err, want)
		}
	}

	bc := Guarantee{2, 1e-5}
	mixed := Account{Step: gnmaxStep, Budget: &Budget{bc}, Before: []Run{{Step: confidentStep, Steps: 100}}}
	n, total, err := mixed.MaxSteps(ctx, testMemo)
	merged := Spend{Kind: GaussianSpend, Guarantee: gnmaxStep.Guarantee, Gaussian: []GaussianPart{{Sigma: 40, Coords: 2 * (100 + n)}, {Sigma: 150, Coords: 100}}, Discrete: true}
	all, _ := ComposeRun(testMemo, merged, 1, bc.Delta, DefaultDeltaPrime, ImprovedConversion)
	ref := all[len(all)-1]
	if err != nil || total.Method != Exact || total.Inexact != "" || ref.Method != Exact || total.Guarantee.Eps > ref.Guarantee.Eps*(1+1e-9) || n < 90 {
		t.Errorf("GNMax after 100 Confident-GNMax: %d, %v %v (%v); their noise composed at once %v", n, total.Method, total.Guarantee, err, ref.Guarantee)
	}

	for _, c := range []struct {
		e1, e2 float64
		k1     int
		budget Guarantee
	}{{0.3, 0.5, 5, Guarantee{4, 1e-6}}, {0.1, 0.4, 40, Guarantee{6, 1e-8}}} {
		if testing.Short() && c.k1 > 5 {
			continue // each count's composition is a transform of 2^19 points
		}
		a := Account{Step: Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: c.e2}, Bits: rrPairs(c.e2)}, Budget: &Budget{c.budget},
			Before: []Run{{Step: Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: c.e1}, Bits: rrPairs(c.e1)}, Steps: c.k1}}}
		n, _, err := a.MaxSteps(ctx, testMemo)
		name := fmt.Sprintf("%d of randomized response %g, then %g, in %v", c.k1, c.e1, c.e2, c.budget)
		if err != nil || n < 1 {
			t.Fatalf("%s: %d (%v)", name, n, err)
		}
		a.Steps = n
		pub, err := a.Publish(testMemo)
		if err != nil || pub.Inexact != "" || pub.Method != Exact || !pub.Guarantee.Within(c.budget) {
			t.Errorf("%s: published %v by %v (%v), inexact %q", name, pub.Guarantee, pub.Method, err, pub.Inexact)
		}
		exact := roots.Edge(0, 100, 1e-12, func(eps float64) bool { return refRRSchedule(c.e1, c.k1, c.e2, n, eps) <= c.budget.Delta })
		if pub.Guarantee.Eps < exact*(1-1e-9) || pub.Guarantee.Eps > exact*(1+1e-3) {
			t.Errorf("%s: %d steps publish %v, the exact ε at that δ is %.9g", name, n, pub.Guarantee, exact)
		}
		if d := refRRSchedule(c.e1, c.k1, c.e2, n+1, c.budget.Eps); d <= c.budget.Delta {
			t.Errorf("%s: %d steps, but %d fit exactly (δ %.4g)", name, n, n+1, d)
		}
		t.Logf("%s: %d steps, %v (exact %.9g)", name, n, pub.Guarantee, exact)
	}

	pureThenGauss := Account{Step: cont(40), Budget: &Budget{bc}, Before: []Run{{Step: Spend{Kind: PureSpend, Guarantee: Guarantee{Eps: 0.05}}, Steps: 10}}}
	pureThenGauss.Steps = 50
	if pub, err := pureThenGauss.Publish(testMemo); err != nil || pub.Inexact == "" || pub.Err != nil {
		t.Errorf("pure then Gaussian: %+v (%v)", pub, err)
	}
	if d, _ := (Account{Step: oneVoteStep, Steps: 5, DeltaPrime: 1e-5, Before: []Run{{Step: oneVoteStep, Steps: 5}}}).TotalDelta(); math.Abs(d-(1-math.Pow(1-1e-9, 10)*(1-1e-5))) > 1e-15 {
		t.Errorf("the default total δ of 5 + 5 steps: %g", d)
	}
	if _, err := (Account{Step: gnmaxStep, Steps: 1, Budget: &Budget{b}, Before: []Run{{Step: gnmaxStep}}}).Publish(testMemo); err == nil {
		t.Error("a run of no steps before is accepted")
	}
}
