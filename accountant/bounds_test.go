package accountant

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

// extremeSpends are descriptions at the ends of what Spend.Check and the
// mechanisms' settings allow: noise of the largest scale the samplers take
// (1e15) and the least one, many coordinates, and one-bit releases whose
// pairs are nearly equal or far apart.
func extremeSpends() map[string]Spend {
	g := Guarantee{Eps: 1e-12, Delta: 1e-5}
	gauss := func(discrete bool, parts ...GaussianPart) Spend {
		return Spend{Kind: GaussianSpend, Guarantee: g, Gaussian: parts, Discrete: discrete}
	}
	return map[string]Spend{
		"discrete sigma 1e15":       gauss(true, GaussianPart{Sigma: 1e15, Coords: 2}),
		"discrete sigma 0.5":        gauss(true, GaussianPart{Sigma: 0.5, Coords: 2}),
		"discrete 2^40 coordinates": gauss(true, GaussianPart{Sigma: 40, Coords: 1 << 40}),
		"discrete two sigmas":       gauss(true, GaussianPart{Sigma: 1e15, Coords: 1}, GaussianPart{Sigma: 0.5, Coords: 2}),
		"continuous sigma 1e15":     gauss(false, GaussianPart{Sigma: 1e15, Coords: 2}),
		"laplace scale 1e15":        {Kind: LaplaceSpend, Guarantee: Guarantee{Eps: 2e-15}, Laplace: &LaplacePart{Scale: 1e15, Coords: 2}},
		"laplace 2^40 coordinates":  {Kind: LaplaceSpend, Guarantee: Guarantee{Eps: 1}, Laplace: &LaplacePart{Scale: 2, Coords: 1 << 40}},
		"one bit nearly equal":      {Kind: OneBitSpend, Guarantee: Guarantee{Eps: 1e-12}, Bits: []BitPair{{0.5 + 1e-13, 0.5 - 1e-13}}},
		"one bit ramp":              {Kind: OneBitSpend, Guarantee: Guarantee{Eps: 0.3}, Bits: rampPairs([]float64{0.3, 0.35, 0.42, 0.5, 0.58, 0.65, 0.7})},
		"one bit far apart":         {Kind: OneBitSpend, Guarantee: Guarantee{Eps: 40, Delta: 1e-12}, Bits: []BitPair{{1 - 1e-12, 1e-17}, {0.6, 0.4}}},
		"pure tiny":                 {Kind: PureSpend, Guarantee: Guarantee{Eps: 1e-300}},
		"sampled Gaussian":          {Kind: SampledGaussianSpend, Guarantee: g, Q: 1e-9, Sigma: 1e15},
	}
}

// TestComposeRunExtremes: every size the compositions derive from a
// spend and a step count is bounded before it is allocated, so at the
// extremes of both (sigma 1e15 over 2^53 steps, 2^40 coordinates, step
// counts whose int products overflow) ComposeRun, Account.Fits and Account.MaxSteps
// answer, or refuse a count beyond 2^53 as a parameter, instead of
// panicking (a makeslice of an overflowed length), allocating terabytes
// or convolving for hours. Each total they give is finite and valid.
func TestComposeRunExtremes(t *testing.T) {
	counts := []int{1, 3, 1 << 20, 1e12, 1 << 53}
	if testing.Short() {
		counts = []int{1, 1e12, 1 << 53}
	}
	budget := Guarantee{Eps: 2, Delta: 1e-5}
	for name, s := range extremeSpends() {
		if err := s.Check(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, k := range counts {
			tot, err := ComposeRun(testMemo, s, k, 1e-5, 1e-6, ImprovedConversion)
			if err != nil {
				t.Errorf("%s, %d steps: %v", name, k, err)
			}
			for _, x := range tot {
				if x.Err == nil && (math.IsNaN(x.Guarantee.Eps) || x.Guarantee.Eps < 0 || math.IsNaN(x.Guarantee.Delta)) {
					t.Errorf("%s, %d steps: %v total %v", name, k, x.Method, x.Guarantee)
				}
			}
			if _, err := (Account{Step: s, Steps: k, Budget: &Budget{budget}, DeltaPrime: 1e-6}).Fits(testMemo); err != nil {
				t.Errorf("%s, Fits of %d steps: %v", name, k, err)
			}
		}
		n, _, err := Account{Step: s, Budget: &Budget{budget}, DeltaPrime: 1e-6}.MaxSteps(context.Background(), testMemo)
		var beyond *BeyondCountError
		if err != nil && !errors.As(err, &beyond) {
			t.Errorf("%s: MaxSteps: %v", name, err)
		}
		t.Logf("%s: MaxSteps %d, %v", name, n, err)
	}
	for _, k := range []int{0, 1<<53 + 1, math.MaxInt} {
		_, err := ComposeRun(testMemo, extremeSpends()["one bit ramp"], k, 1e-5, 1e-6, ImprovedConversion)
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != "steps" {
			t.Errorf("ComposeRun of %d steps: %v, want a param.Error on steps", k, err)
		}
		if _, err := (Account{Step: extremeSpends()["one bit ramp"], Steps: k, Budget: &Budget{budget}, DeltaPrime: 1e-6}).Fits(testMemo); !errors.As(err, &pe) || pe.Name != "steps" {
			t.Errorf("Fits of %d steps: %v, want a param.Error on steps", k, err)
		}
	}
}

// TestStepProducts: steps and addSteps refuse what would pass 2^53,
// including products that overflow an int.
func TestStepProducts(t *testing.T) {
	for _, c := range []struct {
		a, b int
		ok   bool
	}{{0, math.MaxInt, true}, {2, 1 << 52, true}, {2, 1<<52 + 1, false}, {1 << 40, 1 << 40, false}, {math.MaxInt, 3, false}, {-1, 2, false}} {
		n, ok := steps(c.a, c.b)
		if ok != c.ok || ok && n != c.a*c.b {
			t.Errorf("steps(%d, %d) = %d, %v", c.a, c.b, n, ok)
		}
	}
	if _, ok := addSteps(1<<53, 1); ok {
		t.Error("addSteps(2^53, 1) accepted")
	}
	if n, ok := addSteps(1<<52, 1<<52); !ok || n != 1<<53 {
		t.Errorf("addSteps(2^52, 2^52) = %d, %v", n, ok)
	}
}

// FuzzComposeRun composes a discrete Gaussian, a Laplace and a one-bit
// spend of fuzzed parameters over a fuzzed number of steps: no input
// panics, and a count beyond 2^53 is refused.
func FuzzComposeRun(f *testing.F) {
	f.Add(1e15, 2, 400000, 0.5, 0.4)
	f.Add(0.5, 1<<40, 1<<53, 1.0, 0.0)
	f.Add(1e-300, math.MaxInt, math.MaxInt, 1e-300, 1.0)
	f.Fuzz(func(t *testing.T, sigma float64, coords, k int, p, q float64) {
		if testing.Short() && k > 1<<30 && sigma < 1 {
			t.Skip()
		}
		spends := []Spend{
			{Kind: GaussianSpend, Guarantee: Guarantee{Eps: 1, Delta: 1e-5}, Gaussian: []GaussianPart{{Sigma: sigma, Coords: coords}}, Discrete: true},
			{Kind: LaplaceSpend, Guarantee: Guarantee{Eps: 1}, Laplace: &LaplacePart{Scale: sigma, Coords: coords}},
			{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 1, Delta: 1e-5}, Bits: []BitPair{{p, q}}},
		}
		for _, s := range spends {
			if s.Check() != nil {
				continue
			}
			_, err := ComposeRun(testMemo, s, k, 1e-5, 1e-6, ImprovedConversion)
			if (k < 1 || k > 1<<53) != (err != nil) {
				t.Errorf("%v, %d steps: %v", s.Kind, k, err)
			}
		}
	})
}

// ExampleComposeRun_bounded shows the exact composition declining a
// window it cannot hold: the discrete Gaussian of scale 1e15 over 800,000
// coordinates is composed by its RDP curve alone.
func ExampleComposeRun_bounded() {
	s := Spend{Kind: GaussianSpend, Guarantee: Guarantee{Eps: 1e-12, Delta: 1e-5}, Gaussian: []GaussianPart{{Sigma: 1e15, Coords: 2}}, Discrete: true}
	tot, err := ComposeRun(testMemo, s, 400000, 1e-5, 1e-6, ImprovedConversion)
	if err != nil {
		fmt.Println(err)
	}
	for _, x := range tot {
		fmt.Println(x.Method)
	}
	// Output:
	// simple
	// general
	// optimal
	// rdp
}

// TestMaxStepsBeyond: a budget that fits more steps than optimal
// composition takes is counted on (by general and simple composition),
// and one that fits more than CountLimit is a *BeyondCountError naming
// the budget's ε, for every search of the most steps.
func TestMaxStepsBeyond(t *testing.T) {
	budget := Guarantee{Eps: 2, Delta: 1e-5}
	opt := Composition{Method: Optimal, DeltaPrime: 1e-6}
	n, err := opt.MaxSteps(Guarantee{Eps: 1e-8}, Budget{budget})
	if g, gerr := composeGeneral(Guarantee{Eps: 1e-8}, n, 1e-6); err != nil || n <= 2e8 || gerr != nil || !g.Within(budget) {
		t.Errorf("MaxSteps of 1e-8 steps under optimal composition: %d, %v; want more than simple composition's 2e8, within the budget by general composition (%v)", n, err, g)
	}
	tiny := Guarantee{Eps: 1e-18}
	for name, search := range map[string]func() (int, error){
		"MaxSteps": func() (int, error) { return opt.MaxSteps(tiny, Budget{budget}) },
		"Account.MaxSteps": func() (int, error) {
			n, _, err := Account{Step: ApproxStep(tiny), Profile: []Guarantee{tiny}, Budget: &Budget{budget}, DeltaPrime: 1e-6}.MaxSteps(context.Background(), testMemo)
			return n, err
		},
	} {
		n, err := search()
		var beyond *BeyondCountError
		if !errors.As(err, &beyond) {
			t.Errorf("%s: %d, %v; want a *BeyondCountError", name, n, err)
			continue
		}
		if pname, v, _ := beyond.Param(); pname != "budget eps" || v != 2.0 {
			t.Errorf("%s: %v names %s = %v", name, err, pname, v)
		}
	}
}

// TestDerivedNamedAsGiven: a quantity derived from the caller's
// parameters that floating point cannot hold (a zCDP slope that
// overflows or underflows) is refused as the parameter the caller set,
// never as the derived one, which no caller can change.
func TestDerivedNamedAsGiven(t *testing.T) {
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"Gaussian slope overflows", func() error { _, err := (Gaussian{Sensitivity: 1, Sigma: 1e-300, Steps: 1 << 60}).Rho(); return err }, "sigma"},
		{"Gaussian slope underflows", func() error { _, err := (Gaussian{Sensitivity: 1, Sigma: 1e300, Steps: 1}).Rho(); return err }, "sigma"},
		{"the slope an eps allows underflows", func() error {
			_, _, err := rhoForDP(Guarantee{Eps: 1e-300, Delta: 1e-5}, PaperConversion)
			return err
		}, "eps"},
	} {
		var pe *param.Error
		if err := c.err(); !errors.As(err, &pe) || pe.Name != c.want {
			t.Errorf("%s: %v, want a param.Error naming %s", c.name, err, c.want)
		}
	}
}
