package accountant

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/decimal"
)

// TestPublishAtTheDelta: the total to publish is stated at the budget's
// δ (else the δ given, else the default), never above it, with the least
// ε of the totals there; a pair with a smaller ε at a larger δ (the
// slack δ' of the analysis totals) is not chosen. The cases:
// a pure step composed 250 times under a budget of δ 1e-10, and
// (0.15, 1e-6) steps under a budget of δ 1e-6.
func TestPublishAtTheDelta(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a      Account
		delta  float64 // the total δ
		method string
		eps    float64 // the ε to publish, to 6 digits (0: not checked)
	}{
		{"pure, budget delta 1e-10", Account{Step: ApproxStep(Guarantee{Eps: 0.05}), Steps: 250, Budget: &Budget{Guarantee{Eps: 5, Delta: 1e-10}}, DeltaPrime: 1e-5}, 1e-10, "optimal", 4.99053},
		{"approximate, budget delta 1e-6", Account{Step: ApproxStep(Guarantee{Eps: 0.15, Delta: 1e-7}), Steps: 10, Budget: &Budget{Guarantee{Eps: 1.6, Delta: 1e-6}}, DeltaPrime: 1e-5}, 1e-6, "", 0},
		{"pure budget", Account{Step: ApproxStep(Guarantee{Eps: 0.1}), Steps: 9, Budget: &Budget{Guarantee{Eps: 3, Delta: 0}}, DeltaPrime: 1e-5}, 0, "simple", 0.9},
		{"no budget: the default delta", Account{Step: ApproxStep(Guarantee{Eps: 0.2676, Delta: 3e-4}), Steps: 20, DeltaPrime: 1e-4}, 0, "optimal", 0},
		{"no budget: a delta given", Account{Step: ApproxStep(Guarantee{Eps: 0.1}), Steps: 100, Delta: ptr(1e-8), DeltaPrime: 1e-5}, 1e-8, "optimal", 0},
		{"no budget, a pure total", Account{Step: ApproxStep(Guarantee{Eps: 0.1}), Steps: 100, Delta: ptr(0.0), DeltaPrime: 1e-5}, 0, "simple", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.a.Publish(testMemo)
			if err != nil || got.Err != nil {
				t.Fatalf("%v %v", err, got.Err)
			}
			want := tc.delta
			total, from := tc.a.TotalDelta()
			wantFrom := BudgetDelta
			if tc.a.Budget == nil && tc.a.Delta == nil {
				g := tc.a.Step.Guarantee
				want = 1 - math.Pow(1-g.Delta, float64(tc.a.Steps))*(1-tc.a.DeltaPrime)
				if math.Abs(total-want) > 1e-12*want {
					t.Errorf("default total delta %g, want %g", total, want)
				}
				want, wantFrom = total, DefaultDelta
			} else if tc.a.Budget == nil {
				wantFrom = StatedDelta
			}
			if from != wantFrom || got.DeltaFrom != wantFrom {
				t.Errorf("delta from %v, the total's %v, want %v", from, got.DeltaFrom, wantFrom)
			}
			if got.Guarantee.Delta > want {
				t.Errorf("total %v above the total delta %g", got.Guarantee, want)
			}
			if tc.method != "" && got.Name() != tc.method {
				t.Errorf("by %s, want %s", got.Name(), tc.method)
			}
			if tc.eps != 0 && decimal.FormatBound(got.Guarantee.Eps) != decimal.FormatBound(tc.eps) {
				t.Errorf("eps %v, want %v", decimal.FormatBound(got.Guarantee.Eps), tc.eps)
			}
			if b := tc.a.Budget; b != nil && !got.Guarantee.Within(b.Guarantee) {
				t.Errorf("total %v outside the budget %v", got.Guarantee, *b)
			}
			// Never below the exact composition of the canonical pair of
			// the step's guarantee (Kairouz, Oh and Viswanath 2015, Thm
			// 3.3), which dominates it: its δ at the published ε is within
			// the total's.
			g := tc.a.Step.Guarantee
			exact := bigCanonicalDelta(g.Eps, g.Delta, tc.a.Steps, got.Guarantee.Eps)
			if exact.Cmp(big.NewFloat(got.Guarantee.Delta)) > 0 {
				e, _ := exact.Float64()
				t.Errorf("total %v: the exact composition has delta %g there", got.Guarantee, e)
			}
		})
	}
}

// TestPublishOneBit: a one-bit release's total to publish at a total δ
// is the least of its totals there, never below the exact composition
// of its pairs (512 bits) and never above the optimal composition of its
// guarantee; at δ = 0 and at a tiny δ its pure loss (the pairs' largest
// loss, when none is infinite) composes where the guarantee's δ cannot.
func TestPublishOneBit(t *testing.T) {
	pure := rampPairs([]float64{0.3, 0.35, 0.42, 0.5, 0.58, 0.65, 0.7})
	pureEps, ok := Spend{Kind: OneBitSpend, Bits: pure}.pureEps(nil)
	// The largest ratio of the pairs' probabilities of either output:
	// 0.42/0.35 = 1.2.
	if want := math.Log(1.2); !ok || pureEps < want || pureEps > want*(1+1e-14) {
		t.Fatalf("pure loss %v (%v), want log(1.2) = %v rounded up", pureEps, ok, want)
	}
	if _, ok := (Spend{Kind: OneBitSpend, Bits: testBits()["delta"]}).pureEps(nil); ok {
		t.Error("pairs with an infinite loss have a pure loss")
	}
	// The guarantee is a point (0.15, δ(0.15)) of the pairs' profile with
	// δ > 0, as a certificate would state it, which the pure loss does
	// not need.
	one, _ := newBitRun(nil, []bitPart{{oneBitLoss(pure), 1}}, 0)
	step := Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 0.15, Delta: one.delta(0.15)}, Bits: pure}
	for _, tc := range []struct {
		k      int
		delta  float64
		method string
	}{
		{5, 0, "profile"},
		{5, 1e-12, "profile"},
		{5, 0.05, ""},
		{3, 0.03, ""},
	} {
		a := Account{Step: step, Steps: tc.k, Delta: &tc.delta, DeltaPrime: 1e-5}
		got, err := a.Publish(testMemo)
		if err != nil || got.Err != nil {
			t.Fatalf("k=%d delta=%g: %v %v", tc.k, tc.delta, err, got.Err)
		}
		if got.Guarantee.Delta > tc.delta {
			t.Errorf("k=%d: total %v above delta %g", tc.k, got.Guarantee, tc.delta)
		}
		if tc.method != "" && got.Name() != tc.method {
			t.Errorf("k=%d delta=%g: by %s, want %s", tc.k, tc.delta, got.Name(), tc.method)
		}
		if exact := bigBitDelta(pure, tc.k, got.Guarantee.Eps); exact.Cmp(big.NewFloat(got.Guarantee.Delta)) > 0 {
			e, _ := exact.Float64()
			t.Errorf("k=%d delta=%g: total %v below the exact composition (delta %g there)", tc.k, tc.delta, got.Guarantee, e)
		}
		if tc.delta > 0 {
			if opt := slackTotal(step.Guarantee, tc.k, tc.delta); opt.Err == nil && got.Guarantee.Eps > opt.Guarantee.Eps {
				t.Errorf("k=%d delta=%g: total %v above optimal composition %v", tc.k, tc.delta, got.Guarantee, opt.Guarantee)
			}
		}
		t.Logf("k=%d delta=%g: %v by %s", tc.k, tc.delta, got.Guarantee, got.Name())
	}
}

// TestPublishNoTotal: a total δ below what the steps' δ composes to has
// no total; a bad account is an error.
func TestPublishNoTotal(t *testing.T) {
	a := Account{Step: ApproxStep(Guarantee{Eps: 0.1, Delta: 1e-5}), Steps: 10, Delta: ptr(1e-6), DeltaPrime: 1e-5}
	if got, err := a.Publish(testMemo); err != nil || got.Err == nil {
		t.Errorf("total %v (%v), want none", got, err)
	}
	for name, bad := range map[string]Account{
		"no steps":     {Step: ApproxStep(Guarantee{Eps: 0.1}), DeltaPrime: 1e-5},
		"bad step":     {Step: ApproxStep(Guarantee{Eps: -1}), Steps: 1, DeltaPrime: 1e-5},
		"bad delta'":   {Step: ApproxStep(Guarantee{Eps: 0.1}), Steps: 1, DeltaPrime: 1},
		"bad delta":    {Step: ApproxStep(Guarantee{Eps: 0.1}), Steps: 1, Delta: ptr(math.NaN())},
		"ledger":       {Filter: ptr(Simple)},
		"bad filter":   {Filter: ptr(ZCDPFilter), Budget: &Budget{Guarantee{Eps: 1}}},
		"bad budget":   {Step: ApproxStep(Guarantee{Eps: 0.1}), Steps: 1, Budget: &Budget{Guarantee{Eps: 0, Delta: 1e-5}}},
		"bad a point":  {Step: ApproxStep(Guarantee{Eps: 0.1}), Steps: 1, Profile: []Guarantee{{Eps: math.Inf(1)}}, DeltaPrime: 1e-5},
		"no max steps": {Step: ApproxStep(Guarantee{Eps: 0.1}), Steps: 1, DeltaPrime: 1e-5},
	} {
		_, err := bad.Publish(testMemo)
		if name == "no max steps" {
			_, _, err = bad.MaxSteps(context.Background(), testMemo)
		}
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestPublishLedger: a ledger's total to publish is the budget its
// filter holds every release to; with a teachers' cap the cap at the
// budget's δ alone, and why none when the cap is not within the budget.
func TestPublishLedger(t *testing.T) {
	budget := Guarantee{Eps: 3, Delta: 1e-3}
	got, err := Account{Filter: ptr(ZCDPFilter), Budget: &Budget{budget}}.Publish(testMemo)
	if err != nil || got.Guarantee != budget || !got.Filter || got.Name() != "zcdp-filter budget" || !strings.Contains(got.Reference(), "fixed before the first run") {
		t.Errorf("zcdp filter: %+v %v (%s)", got, err, got.Reference())
	}
	shared, _ := TeacherCap(Guarantee{Eps: 0.1, Delta: 1e-5}, 11, Shared, 1e-5)
	got, err = Account{Filter: ptr(Simple), Budget: &Budget{budget}, Cap: &shared}.Publish(testMemo)
	if err != nil || got.Cap == nil || got.Bound != TeachersBound || got.Guarantee.Delta > budget.Delta || got.Guarantee.Eps >= shared.Eps {
		t.Errorf("with a cap: %+v %v", got, err)
	}
	if got.Name() != "teachers' cap (optimal)" || !strings.Contains(got.Reference(), "11-fold") {
		t.Errorf("the cap: %s, %s", got.Name(), got.Reference())
	}
	for _, b := range []Guarantee{{Eps: 3, Delta: 1e-8}, {Eps: 0.5, Delta: 1e-3}} {
		got, err = Account{Filter: ptr(Simple), Budget: &Budget{b}, Cap: &shared}.Publish(testMemo)
		if err != nil || !errors.As(got.Err, new(*CapError)) || got.Filter {
			t.Errorf("a cap over the budget %v: %+v %v", b, got, err)
		}
	}
}

// reaches reports whether the cap c has a guarantee at total δ delta.
func reaches(c Cap, delta float64) bool {
	_, ok := c.at(delta)
	return ok
}

// TestFixedTeachersCapOnly: releases from fixed private teachers (an
// account with a cap) are bounded by the cap alone, never by the
// composition of per-query guarantees, which assumes fresh teachers per
// query: issue 68's case, K = 11 fixed teachers (0.1, 1e-5) on disjoint
// shares and on shared data, at a budget of (2, 1e-8) that the cap does
// not meet, allows no label, where the labels' pure point (0.30003, 0)
// composes 6 labels within it (5 of them (1.50015, 0)); at a budget the
// cap meets, every label; teachers without a cap (a fresh mechanism per
// query) keep the composition.
func TestFixedTeachersCapOnly(t *testing.T) {
	teacher := Guarantee{Eps: 0.1, Delta: 1e-5}
	step := ApproxStep(Guarantee{Eps: 0.3, Delta: 3e-5})
	profile := []Guarantee{{Eps: 0.30003}}
	disjoint, _ := TeacherCap(teacher, 11, Disjoint, 1e-5)
	shared, _ := TeacherCap(teacher, 11, Shared, 1e-5)
	tight := Guarantee{Eps: 2, Delta: 1e-8}
	for _, tc := range []struct {
		name   string
		cap    *Cap
		budget Guarantee
		want   int
	}{
		{"fresh teachers: the composition", nil, tight, 6},
		{"fixed, disjoint: the cap's delta is above the budget's", &disjoint, tight, 0},
		{"fixed, shared: the cap's delta is above the budget's", &shared, tight, 0},
		{"fixed, shared: the cap's eps is above the budget's", &shared, Guarantee{Eps: 0.5, Delta: 1e-3}, 0},
		{"fixed, disjoint: the cap within the budget", &disjoint, Guarantee{Eps: 0.1, Delta: 1e-5}, Unlimited},
		{"fixed, shared: the cap within the budget at its delta", &shared, Guarantee{Eps: 1, Delta: 1e-3}, Unlimited},
	} {
		a := Account{Step: step, Profile: profile, Cap: tc.cap, Budget: &Budget{tc.budget}, DeltaPrime: 1e-5}
		n, total, err := a.MaxSteps(context.Background(), testMemo)
		if err != nil || n != tc.want {
			t.Errorf("%s: %d steps (%v), want %d", tc.name, n, err, tc.want)
			continue
		}
		var ce *CapError
		switch {
		case n == 0 && (!errors.As(total.Err, &ce) || !strings.Contains(ce.Error(), "not proved for fixed teachers") || !strings.Contains(ce.Error(), "kind per-query")):
			t.Errorf("%s: no step, and why: %v", tc.name, total.Err)
		case n == Unlimited && (total.Cap == nil || !total.Guarantee.Within(tc.budget)):
			t.Errorf("%s: every step, by %+v", tc.name, total)
		}
		// The count's predicate and the total to publish of 5 labels
		// say the same: within the budget only by the cap, which is
		// their total whenever it reaches the budget's delta.
		a.Steps = 5
		ok, err := a.Fits(testMemo)
		p, perr := a.Publish(testMemo)
		if err != nil || perr != nil || ok != (n != 0) || tc.cap == nil && (p.Err != nil || p.Cap != nil) ||
			tc.cap != nil && (p.Err == nil) != reaches(*tc.cap, tc.budget.Delta) || p.Err == nil && (p.Cap != nil) != (tc.cap != nil) {
			t.Errorf("%s: 5 steps fit %v (%v); publish %+v (%v)", tc.name, ok, err, p, perr)
		}
		// Every analysis total of fixed teachers is the cap.
		totals, err := a.Totals(testMemo)
		for _, tot := range totals {
			if err != nil || (tc.cap != nil) != (tot.Bound == TeachersBound) {
				t.Errorf("%s: total %+v (%v)", tc.name, tot, err)
			}
		}
	}
}

// TestCapAt: the cap at a total δ is the teacher's guarantee on
// disjoint shares when its δ is within, and on shared data the least of
// the simple composition and of the optimal composition with the slack
// that makes the total δ (hand-checked: 11 teachers (0.1, 1e-5) at
// δ = 1e-3 have slack 1 - (1-1e-3)/(1-1e-5)^11; the exact composition of
// their canonical pairs, 512 bits, is within it).
func TestCapAt(t *testing.T) {
	teacher := Guarantee{Eps: 0.1, Delta: 1e-5}
	disjoint, _ := TeacherCap(teacher, 11, Disjoint, 1e-5)
	if c, ok := disjoint.at(1e-5); !ok || c.Guarantee != teacher {
		t.Errorf("disjoint at 1e-5: %v %v", c.Guarantee, ok)
	}
	if _, ok := disjoint.at(1e-6); ok {
		t.Error("disjoint at 1e-6: a cap")
	}
	shared, _ := TeacherCap(teacher, 11, Shared, 1e-5)
	for _, delta := range []float64{1.1e-4, 1.2e-4, 1e-3, 0.01} {
		c, ok := shared.at(delta)
		if !ok || c.Delta > delta {
			t.Fatalf("shared at %g: %v %v", delta, c.Guarantee, ok)
		}
		if exact := bigCanonicalDelta(teacher.Eps, teacher.Delta, 11, c.Eps); exact.Cmp(big.NewFloat(delta)) > 0 {
			t.Errorf("shared at %g: %v below the exact composition", delta, c.Guarantee)
		}
		if delta > 1.2e-4 && c.Eps >= shared.Eps {
			t.Errorf("shared at %g: %v, no better than the cap at delta' %v", delta, c.Guarantee, shared.Guarantee)
		}
		t.Logf("shared at %g: %v by %v", delta, c.Guarantee, c.Method)
	}
	if _, ok := shared.at(1e-5); ok {
		t.Error("shared at 1e-5: a cap")
	}
	pure, _ := TeacherCap(Guarantee{Eps: 0.5}, 3, Shared, 1e-5)
	if c, ok := pure.at(0); !ok || c.Guarantee != (Guarantee{Eps: 1.5}) {
		t.Errorf("pure teachers at 0: %v %v", c.Guarantee, ok)
	}
	if !shared.Fits(Guarantee{Eps: 1, Delta: 1e-3}) || shared.Fits(Guarantee{Eps: 1, Delta: 1e-4}) {
		t.Error("Fits")
	}
}

// TestMaxSteps: the count of a run is the last number of steps whose
// total to publish fits, which names the result that allows it; the cap
// within the budget allows every step.
func TestMaxSteps(t *testing.T) {
	budget := Guarantee{Eps: 2, Delta: 1e-5}
	// Confident-GNMax, every query charged: 194 by the exact composition
	// (docs/accountant.md), continuous or discrete noise.
	for _, disc := range []bool{true, false} {
		s := confident
		s.Discrete = disc
		n, total, err := Account{Step: s, Budget: &Budget{budget}}.MaxSteps(context.Background(), testMemo)
		if err != nil || n != 194 || total.Method != Exact || !total.Guarantee.Within(budget) {
			t.Errorf("discrete %v: %d steps, %v by %s (%v); want 194 by exact", disc, n, total.Guarantee, total.Name(), err)
		}
	}
	// Pure budgets take the per-step pure loss of a one-bit release's
	// pairs, which its guarantee's δ would refuse.
	step := Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 0.16, Delta: 1e-5}, Bits: rampPairs([]float64{0.3, 0.35, 0.42, 0.5, 0.58, 0.65, 0.7})}
	eps, _ := step.pureEps(nil)
	for _, b := range []Guarantee{{Eps: 2, Delta: 0}, {Eps: 2, Delta: 1e-12}, {Eps: eps, Delta: 0}} {
		a := Account{Step: step, Budget: &Budget{b}}
		n, total, err := a.MaxSteps(context.Background(), testMemo)
		if err != nil || n < int(b.Eps/eps) || !total.Guarantee.Within(b) {
			t.Errorf("budget %v: %d steps, %v by %s (%v); want at least %d by the pure loss %g", b, n, total.Guarantee, total.Name(), err, int(b.Eps/eps), eps)
		}
		a.Steps = n + 1
		if ok, err := a.Fits(testMemo); ok || err != nil {
			t.Errorf("budget %v: %d steps fit too (%v)", b, n+1, err)
		}
	}
	shared, _ := TeacherCap(Guarantee{Eps: 0.1, Delta: 1e-5}, 11, Shared, 1e-5)
	a := Account{Step: ApproxStep(Guarantee{Eps: 0.3, Delta: 3e-5}), Cap: &shared, Budget: &Budget{Guarantee{Eps: 1, Delta: 1e-3}}}
	if n, total, err := a.MaxSteps(context.Background(), testMemo); n != Unlimited || err != nil || total.Cap == nil {
		t.Errorf("a cap within the budget at its delta: %d, %+v, %v", n, total, err)
	}
	// The cap's δ is above the budget's: no step, though 3 compose
	// within it; the cap alone bounds fixed teachers.
	a.Budget = &Budget{Guarantee{Eps: 1, Delta: 1e-4}}
	if n, total, err := a.MaxSteps(context.Background(), testMemo); n != 0 || err != nil || !errors.As(total.Err, new(*CapError)) {
		t.Errorf("a cap over the budget: %d by %s (%v, %v), want 0 and why", n, total.Name(), total.Err, err)
	}
	if n, _, err := (Account{Step: ApproxStep(Guarantee{Eps: 3}), Budget: &Budget{Guarantee{Eps: 1, Delta: 0.1}}}).MaxSteps(context.Background(), testMemo); n != 0 || err != nil {
		t.Errorf("not even one: %d (%v)", n, err)
	}
}

// TestPublishJSON: a total to publish that is the cap or a filter's
// budget says so in JSON, with no composition over the queries beside it.
func TestPublishJSON(t *testing.T) {
	budget := Guarantee{Eps: 3, Delta: 1e-3}
	shared, _ := TeacherCap(Guarantee{Eps: 0.1, Delta: 1e-5}, 11, Shared, 1e-5)
	for _, a := range []Account{{Filter: ptr(Simple), Budget: &Budget{budget}}, {Filter: ptr(Simple), Budget: &Budget{budget}, Cap: &shared}} {
		got, err := a.Publish(testMemo)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(got)
		if err != nil || !strings.Contains(string(b), `"method":"`+got.Name()+`"`) || !strings.Contains(string(b), `"queries":null`) {
			t.Errorf("%s (%v)", b, err)
		}
	}
}

// doneAfter is a context that is done from its n-th look on (Err), so
// that a test can end a search at a point of its choosing.
type doneAfter struct {
	context.Context
	looks, n int
}

func (c *doneAfter) Err() error {
	c.looks++
	if c.looks >= c.n {
		return context.Canceled
	}
	return nil
}

// TestMaxStepsStopsComposing: once its context is done, the count's
// search of a one-bit release composes no more (each composition is a
// transform of 2^19 points): done after the first count is tried, it
// ends with the context's error and has composed no other count.
func TestMaxStepsStopsComposing(t *testing.T) {
	s := oneBitSpend(rampPairs([]float64{0.31, 0.37, 0.44, 0.5, 0.56, 0.63, 0.69}))
	budget := Guarantee{Eps: 2, Delta: 1e-5}
	ctx := &doneAfter{Context: context.Background(), n: 2}
	m := new(Memo)
	if _, _, err := (Account{Step: s, Budget: &Budget{budget}}).MaxSteps(ctx, m); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the context's", err)
	}
	c := m.curvesOf(s.Bits)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.runs {
		if r.k > 1 {
			t.Errorf("composed %d steps after the context was done", r.k)
		}
	}
}

// TestPublishSaysInexact: where a step's exact composition is out of
// reach (three distinct σ of discrete Gaussians) the total to publish
// says why, with
// the looser total that holds; where it is within reach, or the step has
// none to miss (a step known by its guarantee), it says nothing.
func TestPublishSaysInexact(t *testing.T) {
	three := Spend{Kind: GaussianSpend, Guarantee: Guarantee{Eps: 1, Delta: 1e-6}, Discrete: true,
		Gaussian: []GaussianPart{{Sigma: 40, Coords: 1}, {Sigma: 50, Coords: 1}, {Sigma: 60, Coords: 1}}}
	two := three
	two.Gaussian = two.Gaussian[:2]
	budget := Guarantee{Eps: 4, Delta: 1e-10}
	for _, c := range []struct {
		name string
		s    Spend
		want string
	}{
		{"three sigmas", three, "3 distinct sigmas"},
		{"two sigmas", two, ""},
		{"a guarantee", ApproxStep(Guarantee{Eps: 0.1, Delta: 1e-12}), ""},
	} {
		n, tot, err := Account{Step: c.s, Budget: &Budget{budget}, DeltaPrime: 1e-5}.MaxSteps(context.Background(), testMemo)
		if err != nil || n < 1 {
			t.Fatalf("%s: %d steps, %v", c.name, n, err)
		}
		if c.want == "" && tot.Inexact != "" || c.want != "" && (!strings.Contains(tot.Inexact, c.want) || tot.Method == Exact) {
			t.Errorf("%s: %d steps by %s, inexact %q; want %q", c.name, n, tot.Name(), tot.Inexact, c.want)
		}
	}
}
