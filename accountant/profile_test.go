package accountant

import (
	"context"
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

// bigCanonicalDelta returns, with 512-bit arithmetic, the hockey-stick
// divergence at e^u of k copies of the canonical (eps, delta) pair:
// 1 - (1-delta)^k·(1 - δ̃(u)), δ̃ the k-fold randomized response's
// (Kairouz, Oh and Viswanath 2015, Thm 3.3).
func bigCanonicalDelta(eps, delta float64, k int, u float64) *big.Float {
	const prec = 512
	keep := new(big.Float).SetPrec(prec).SetFloat64(1)
	keep.Sub(keep, big.NewFloat(delta))
	pow := new(big.Float).SetPrec(prec).SetFloat64(1)
	for range k {
		pow.Mul(pow, keep)
	}
	rest := new(big.Float).SetPrec(prec).SetFloat64(1)
	rest.Sub(rest, bigDeltaTilde(eps, k, u))
	rest.Mul(rest, pow)
	return new(big.Float).SetPrec(prec).Sub(new(big.Float).SetPrec(prec).SetFloat64(1), rest)
}

// TestComposeProfileAgainstBig checks every total of ComposeProfile
// against a direct 512-bit evaluation of its point's canonical pair: the
// k-fold composition is within the total at its ε, and not at an ε a
// relative 1e-9 below (the total is the least for its point).
func TestComposeProfileAgainstBig(t *testing.T) {
	for _, c := range []struct {
		step    Guarantee
		profile []Guarantee
	}{
		{Guarantee{0.2654, 3e-4}, []Guarantee{{0.2659, 2.2e-4}, {0.2669, 7e-5}, {0.2674, 0}}},
		{Guarantee{0.3, 1e-5}, []Guarantee{{0.3006, 0}}},
		{Guarantee{1, 1e-3}, []Guarantee{{1.1, 1e-4}, {2, 1e-6}, {0.5, 1e-7}}},
		{Guarantee{0.1, 0}, []Guarantee{{0.2, 0}}},
	} {
		for _, k := range []int{1, 2, 5, 20, 64} {
			for _, dp := range []float64{1e-5, 1e-2} {
				opt, err := composeOptimal(c.step, k, dp)
				if err != nil {
					t.Fatal(err)
				}
				got, point, err := ComposeProfile(c.step, c.profile, k, dp)
				if err != nil {
					t.Fatal(err)
				}
				if got.Delta != opt.Delta || got.Eps > opt.Eps {
					t.Errorf("%v k=%d: profile total %v, optimal %v: the same delta, never a larger eps", c.step, k, got, opt)
				}
				if point.Delta > c.step.Delta {
					t.Errorf("%v k=%d: point %v", c.step, k, point)
				}
				d := big.NewFloat(got.Delta)
				if bigCanonicalDelta(point.Eps, point.Delta, k, got.Eps).Cmp(d) > 0 {
					t.Errorf("%v k=%d delta'=%v: the composition of %v is not within %v", c.step, k, dp, point, got)
				}
				if got.Eps > 0 && bigCanonicalDelta(point.Eps, point.Delta, k, got.Eps*(1-1e-9)).Cmp(d) <= 0 {
					t.Errorf("%v k=%d delta'=%v: %v is not the least eps for %v", c.step, k, dp, got, point)
				}
			}
		}
	}
}

// TestComposeProfileRules: without points, or with points no better than
// the guarantee, the total is optimal composition's (and a run's totals
// have none of the profile); a point whose delta exceeds the guarantee's
// is not used; a bad point is an error.
func TestComposeProfileRules(t *testing.T) {
	step := Guarantee{0.3, 1e-5}
	opt, _ := composeOptimal(step, 50, 1e-5)
	for _, profile := range [][]Guarantee{nil, {step}, {{0.3, 1e-4}}, {{0.5, 1e-5}}} {
		got, point, err := ComposeProfile(step, profile, 50, 1e-5)
		if err != nil || got != opt || point != step {
			t.Errorf("profile %v: %v at %v, %v; want optimal %v", profile, got, point, err, opt)
		}
		if ts, err := (Account{Step: ApproxStep(step), Profile: profile, Steps: 50, DeltaPrime: 1e-5}).Totals(testMemo); err != nil || profileTotal(ts) != nil {
			t.Errorf("profile %v: the run's totals have a profile's: %v, %v", profile, ts, err)
		}
	}
	ts, err := (Account{Step: ApproxStep(step), Profile: []Guarantee{{0.31, 0}}, Steps: 50, DeltaPrime: 1e-5}).Totals(testMemo)
	if tot := profileTotal(ts); err != nil || tot == nil || tot.Name() != "profile" || *tot.Point != (Guarantee{0.31, 0}) || !(tot.Guarantee.Eps < opt.Eps) || tot.Guarantee.Delta != opt.Delta {
		t.Errorf("the profile's total: %+v, %v", ts, err)
	}
	var pe *param.Error
	if _, _, err := ComposeProfile(step, []Guarantee{{math.NaN(), 0}}, 5, 1e-5); !errors.As(err, &pe) {
		t.Errorf("a NaN point: %v", err)
	}
}

// TestMaxStepsProfile: the number of steps a budget allows with a
// profile is at least optimal composition's of the guarantee, and the
// total of one more does not fit.
func TestMaxStepsProfile(t *testing.T) {
	step, profile := Guarantee{0.2654, 3e-4}, []Guarantee{{0.2674, 0}}
	for _, budget := range []Guarantee{{8, 0.05}, {3, 0.01}, {0.2, 0.01}} {
		opt, err := (Composition{Method: Optimal, DeltaPrime: 1e-4}).MaxSteps(step, Budget{Guarantee: budget})
		if err != nil {
			t.Fatal(err)
		}
		a := Account{Step: ApproxStep(step), Profile: profile, Budget: &Budget{budget}}
		n, total, err := a.MaxSteps(context.Background(), testMemo)
		if err != nil {
			t.Fatal(err)
		}
		if n < opt {
			t.Errorf("budget %v: %d steps, optimal composition allows %d", budget, n, opt)
		}
		if n > 0 && !total.Guarantee.Within(budget) {
			t.Errorf("budget %v: %d steps total %v", budget, n, total.Guarantee)
		}
		a.Steps = n + 1
		if g, _ := a.Publish(testMemo); g.Err == nil && g.Guarantee.Within(budget) {
			t.Errorf("budget %v: %d steps allowed, but %d total %v", budget, n, n+1, g.Guarantee)
		}
		t.Logf("budget %v: %d steps by %s (optimal composition of the guarantee: %d)", budget, n, total.Name(), opt)
	}
}

// profileTotal returns the total of ts that composes a point of the
// profile, nil when there is none.
func profileTotal(ts []Total) *Total {
	for i := range ts {
		if ts[i].Point != nil {
			return &ts[i]
		}
	}
	return nil
}
