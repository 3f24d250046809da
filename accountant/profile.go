package accountant

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/roots"
)

// A mechanism's privacy profile is δ(ε), the largest hockey-stick
// divergence sup_S P(S) - e^ε·Q(S) between its output distributions P, Q
// on any two neighbouring inputs, in both orders: the mechanism is
// (ε, δ(ε))-DP for every ε. A guarantee (ε, δ) is one point of it. A
// mechanism whose profile is known at more points can be composed more
// tightly than its guarantee alone allows: ComposeProfile.

// ComposeProfile returns the total privacy of k adaptively composed
// releases of a mechanism that is step-DP and (ε_i, δ_i)-DP for every
// point of profile (points of its privacy profile, each δ_i an upper
// bound), and the point that gave it: at the total δ of
// composeOptimal(step, k, deltaPrime), the least ε over step and the
// points of their optimal composition (Kairouz, Oh and Viswanath 2015,
// Thm 3.3).
//
// Every point bounds the whole sequence on its own. A mechanism that is
// (ε_i, δ_i)-DP is dominated by the canonical (ε_i, δ_i) pair of
// distributions (Kairouz et al., Thm 2.1), whatever its inputs, so k
// releases, each on inputs chosen adaptively, are dominated by k copies of
// that pair, whose composition Thm 3.3 gives exactly. A point with δ_i below
// step's δ leaves more slack at the same total δ_total:
// δ'_i = 1 - (1-δ_total)/(1-δ_i)^k, rounded down, so that its total δ is
// at most δ_total. Points with δ_i above step's are not used. The result
// is never above composeOptimal's ε, which is step's own point; when no
// point does better, point is step.
func ComposeProfile(step Guarantee, profile []Guarantee, k int, deltaPrime float64) (total, point Guarantee, err error) {
	base, err := composeOptimal(step, k, deltaPrime)
	if err != nil {
		return Guarantee{}, Guarantee{}, fmt.Errorf("profile composition: %w", err)
	}
	total, point = base, step
	for _, p := range profile {
		if err := checkStep("profile point ", p); err != nil {
			return Guarantee{}, Guarantee{}, fmt.Errorf("profile composition: %w", err)
		}
		if p.Delta > step.Delta || p == step {
			continue
		}
		slack := slackFor(p.Delta, k, base.Delta)
		if !(slack > 0 && slack < 1) {
			continue
		}
		g, err := composeOptimal(p, k, slack)
		if err != nil {
			return Guarantee{}, Guarantee{}, fmt.Errorf("profile composition at %v: %w", p, err)
		}
		if g.Eps < total.Eps {
			total.Eps, point = g.Eps, p
		}
	}
	return total, point, nil
}

// slackFor returns the slack δ' at which k steps of δ each total at most
// δ_total: δ' = 1 - (1-δ_total)/(1-δ)^k, rounded down.
func slackFor(delta float64, k int, total float64) float64 {
	// An upper bound of log(1 - δ_total): Log1p is within 1 ulp.
	keepTotal := outward.Up(math.Log1p(-total), 2)
	// y >= log(1-δ_total) - k·log(1-δ), so 1 - e^y <= δ'.
	y := outward.AddUp(keepTotal, -outward.Down(float64(k)*logKeepDown(delta), 1))
	return outward.Down(-math.Expm1(y), 2)
}

// ProfileTotal is ComposeProfile as a Total: Method Optimal, with Point
// the point of the profile composed. ok is false when no point of profile
// gives a smaller ε than step's own optimal composition (Totals' last
// entry), or when the composition fails.
func ProfileTotal(step Guarantee, profile []Guarantee, k int, deltaPrime float64) (t Total, ok bool) {
	g, p, err := ComposeProfile(step, profile, k, deltaPrime)
	if err != nil || p == step {
		return Total{}, false
	}
	return Total{Method: Optimal, DeltaPrime: deltaPrime, Guarantee: g, Point: &p}, true
}

// MaxStepsProfile is MaxSteps under optimal composition for steps of a
// mechanism that is also (ε_i, δ_i)-DP for every point of profile: the
// largest k, at most MaxOptimalSteps (the steps ComposeProfile takes),
// whose ComposeProfile total is within budget, or MaxSteps' own count
// when that is larger, or Unlimited when the cap c (nil: none) is
// (maxStepsCapped). It returns 0 when not even one step fits.
func MaxStepsProfile(step Guarantee, profile []Guarantee, budget Guarantee, deltaPrime float64, c *Cap) (int, error) {
	n, err := maxStepsCapped(step, budget, Optimal, deltaPrime, c)
	if err != nil || n == Unlimited || len(profile) == 0 || n >= MaxOptimalSteps {
		return n, err
	}
	fits := func(k int) (bool, error) {
		g, _, err := ComposeProfile(step, profile, k, deltaPrime)
		return err == nil && g.Within(budget), err
	}
	// Optimal's answer fits (ComposeProfile is never above it); search
	// upwards from it.
	lo := max(n, 1)
	if ok, err := fits(lo); err != nil || !ok {
		return n, err
	}
	// ComposeProfile takes at most MaxOptimalSteps steps: when they all
	// fit, that many is the count it proves.
	k, err := roots.LastIn(lo, MaxOptimalSteps, fits)
	if err != nil {
		return 0, fmt.Errorf("max steps (profile): %w in budget %v", err, budget)
	}
	return k, nil
}
