package accountant

import (
	"fmt"

	"github.com/darrm/darrm/internal/outward"
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
	return slackForLog(outward.Down(float64(k)*logKeepDown(delta), 1), total)
}
