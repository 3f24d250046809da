package accountant

import (
	"fmt"
	"math"
	"slices"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
)

// Run is a run of a schedule fixed before its first step (Account.Before):
// Steps steps of the mechanism Step describes, with further points Profile
// of its per-step privacy profile, as an Account's own.
type Run struct {
	Step    Spend
	Profile []Guarantee
	Steps   int
}

// check validates a run of a schedule.
func (r Run) check() error {
	if err := r.Step.Check(); err != nil {
		return err
	}
	for _, p := range r.Profile {
		if err := checkStep("profile point ", p); err != nil {
			return err
		}
	}
	return param.CountIn("steps", r.Steps, 1, CountLimit)
}

// merged returns, for a schedule whose runs all describe the account's
// own step (one mechanism, its settings and profile), the account of one
// run of them all, and the steps of the runs before: it composes exactly
// as they do (and MaxSteps counts from it); false otherwise.
func (a Account) merged() (Account, int, bool) {
	before := 0
	for _, r := range a.Before {
		if !sameStep(r.Step, a.Step) || !slices.Equal(r.Profile, a.Profile) {
			return a, 0, false
		}
		before, _ = addSteps(before, r.Steps)
	}
	one := a
	one.Before = nil
	one.Steps, _ = addSteps(a.Steps, before)
	return one, before, true
}

// sameStep reports whether s and t describe the same step.
func sameStep(s, t Spend) bool {
	return s.Kind == t.Kind && s.Guarantee == t.Guarantee && slices.Equal(s.Gaussian, t.Gaussian) && s.Discrete == t.Discrete &&
		s.Q == t.Q && s.Sigma == t.Sigma && slices.Equal(s.Bits, t.Bits) && (s.Laplace == nil) == (t.Laplace == nil) && (s.Laplace == nil || *s.Laplace == *t.Laplace)
}

// schedule returns the account's runs when its own has k steps: Before,
// then its own.
func (a Account) schedule(k int) []Run {
	return append(slices.Clip(a.Before), Run{Step: a.Step, Profile: a.Profile, Steps: k})
}

// chooseSchedule offers the totals of the schedule of runs at total δ
// delta, cheap ones first, until one is at most enough; its inexact says
// why no exact composition of the runs was offered, when none was.
//
// Every run's parameters are fixed before the first step, so every
// composition proven for parameters fixed in advance holds for the whole
// schedule, with the queries chosen adaptively (the runs' dominating
// pairs compose exactly under adaptive inputs, Zhu, Dong and Wang 2022):
//
//   - simple composition of the runs' guarantees, and of their pure
//     points when every run has one (Theorem 3.3.2);
//   - general composition of the guarantees, which differ (Kairouz, Oh
//     and Viswanath 2015, Thm 3.5), with the slack that makes the total
//     δ delta;
//   - RDP: Σ k_i·D_α,i at the best order of renyiOrders (or the zCDP
//     slopes' exact minimum over α, when every run has one), improved
//     conversion;
//   - the exact composition of the dominating pairs: continuous
//     Gaussian noise (μ² adds, Dong, Roth and Su 2022, Cor. 3.3),
//     discrete Gaussian noise of at most two σ in all (its exact loss),
//     discrete Laplace noise of one scale (randomized response's optimal
//     composition), and one-bit releases, pure steps and discrete
//     Laplace noise of any pairs, ε and scales together (newBitRun: the
//     privacy loss distribution of each run's dominating pair, all on one
//     grid, discretised pessimistically);
//   - Gaussian noise of continuous and discrete σ, or of more than two
//     discrete σ: Gaussian DP with the discrete coordinates' certified μ
//     (dgCertify), at δ less (1 + e^ε) times their windows' tails;
//   - the runs' own totals to publish (each the least of its own exact
//     and other compositions, Account.Publish) at a split of delta among
//     them, composed simply: the split is searched among a few (equal,
//     by steps, and for two runs nine shares of the first), the best
//     kept.
func chooseSchedule(m *Memo, runs []Run, delta, enough float64) *chooser {
	c := newChooser(delta, enough)
	var seq Sequence
	pure := 0.0
	allPure := true
	for _, r := range runs {
		seq, _ = seq.Add(r.Step.Guarantee, r.Steps)
		if eps, ok := runPureEps(m, r); ok && allPure {
			pure = outward.AddUp(pure, outward.MulUp(float64(r.Steps), eps))
		} else {
			allPure = false
		}
	}
	c.offer(Total{Method: Simple, Guarantee: seq.simple()})
	if allPure {
		c.offer(Total{Method: Simple, Guarantee: Guarantee{Eps: pure}})
	}
	if !(delta > 0) || c.done() {
		return c
	}
	if slack := slackForLog(seq.SumLogKeep, delta); slack > 0 && slack < 1 {
		c.offer(Total{Method: General, DeltaPrime: slack, Guarantee: seq.general(slack)})
	}
	hi := 1.0
	if e, ok := scheduleRenyi(m, runs, delta); ok {
		hi = e
		c.offer(Total{Method: Renyi, Guarantee: Guarantee{Eps: e, Delta: delta}})
	}
	if c.done() {
		return c
	}
	exact, why := scheduleCurves(m, runs, delta)
	composed := false
	if exact.epsAt != nil {
		if e, ok := exact.epsAt(delta); ok {
			c.offer(Total{Method: Exact, Guarantee: Guarantee{Eps: e, Delta: delta}})
			composed = why == ""
		}
	}
	if exact.delta != nil {
		if e, ok := exact.exactEps(delta, hi); ok {
			c.offer(Total{Method: Exact, Guarantee: Guarantee{Eps: e, Delta: delta}, Inexact: why})
			composed = why == ""
		}
	}
	if why != "" {
		c.inexact = why
	}
	// The runs' own totals composed simply bound the same pairs' exact
	// composition from above: where that was made, they add nothing.
	if c.done() || composed {
		return c
	}
	splitTotals(m, c, runs, delta)
	return c
}

// runPureEps returns the least pure ε of one step of r: its guarantee's
// when pure, its pairs' largest loss, a profile point with δ = 0.
func runPureEps(m *Memo, r Run) (float64, bool) {
	best, ok := 0.0, false
	take := func(e float64) {
		if !ok || e < best {
			best, ok = e, true
		}
	}
	if r.Step.Delta == 0 {
		take(r.Step.Eps)
	}
	if e, pure := r.Step.pureEps(m); pure {
		take(e)
	}
	for _, p := range r.Profile {
		if p.Delta == 0 {
			take(p.Eps)
		}
	}
	return best, ok
}

// slackForLog returns the slack δ' at which a composition whose steps
// keep Σlog(1-δ_i) >= logKeep has total δ at most total, rounded down
// (slackFor's, from the sum): total itself when logKeep is 0, pure steps,
// as totalDelta's inverse.
func slackForLog(logKeep, total float64) float64 {
	if logKeep == 0 {
		return total
	}
	keepTotal := outward.Up(math.Log1p(-total), 2)
	return outward.Down(-math.Expm1(outward.AddUp(keepTotal, -logKeep)), 2)
}

// scheduleRenyi returns the RDP total of the runs at δ under the
// improved conversion, and whether every run has a Rényi curve: from
// the zCDP slopes exactly when every run has one (stepRho), else at the
// best order of renyiOrders (stepRenyi).
func scheduleRenyi(m *Memo, runs []Run, delta float64) (float64, bool) {
	var rho float64
	slopes := true
	for _, r := range runs {
		s, ok := stepRho(m, r.Step)
		if !ok {
			slopes = false
			break
		}
		rho = outward.AddUp(rho, outward.MulUp(float64(r.Steps), s))
	}
	best := math.Inf(1)
	if slopes {
		if e, _, err := ImprovedConversion.RhoToDP(rho, delta); err == nil {
			best = e
		}
	}
	for _, a := range renyiOrders {
		var sum float64
		ok := true
		for _, r := range runs {
			d, has := stepRenyi(m, r.Step, a)
			if !has {
				ok = false
				break
			}
			sum = outward.AddUp(sum, outward.MulUp(float64(r.Steps), d))
		}
		if !ok {
			if slopes {
				continue
			}
			return 0, false
		}
		if e, err := ImprovedConversion.ConvertRDP(sum, a, delta); err == nil && e < best {
			best = e
		}
	}
	return best, !math.IsInf(best, 1)
}

// scheduleCurves returns the composition of the runs' dominating pairs
// at total δ delta, when one distribution of the privacy loss holds
// them all (chooseSchedule), and, when it is not their exact
// composition or there is none, why.
func scheduleCurves(m *Memo, runs []Run, delta float64) (runCurves, string) {
	kinds := map[SpendKind]bool{}
	discrete := map[bool]bool{}
	total := 0
	for _, r := range runs {
		kinds[r.Step.Kind] = true
		discrete[r.Step.Discrete] = true
		total, _ = addSteps(total, r.Steps)
	}
	one := runs[0].Step
	sameScale := len(kinds) == 1 && one.Kind == LaplaceSpend
	for _, r := range runs {
		sameScale = sameScale && *r.Step.Laplace == LaplacePart{Scale: one.Laplace.Scale, Coords: r.Step.Laplace.Coords}
	}
	if parts, ok := bitParts(m, runs); ok && !sameScale {
		b, err := newBitRun(m.pool(), parts, delta)
		if err != nil {
			return runCurves{}, err.Error()
		}
		return runCurves{delta: b.delta, guess: b.estimate}, ""
	}
	switch {
	case len(kinds) > 1:
		return runCurves{}, "the runs are of different kinds, whose pairs are not composed together"
	case one.Kind == GaussianSpend && len(discrete) == 1:
		var parts []GaussianPart
		for _, r := range runs {
			for _, p := range r.Step.Gaussian {
				n, ok := steps(p.Coords, r.Steps)
				if !ok {
					return runCurves{}, "too many coordinates"
				}
				parts = append(parts, GaussianPart{Sigma: p.Sigma, Coords: n})
			}
		}
		s := Spend{Kind: GaussianSpend, Guarantee: one.Guarantee, Gaussian: parts, Discrete: one.Discrete}
		r := newRunCurves(m, s, 1, delta)
		if r.delta != nil {
			return r, ""
		}
		if g, ok := gaussianCurves(m, runs); ok {
			return g, r.missing + "; composed by Gaussian DP with the discrete noise's certified mu"
		}
		return runCurves{}, r.missing
	case one.Kind == GaussianSpend:
		if g, ok := gaussianCurves(m, runs); ok {
			return g, "continuous and discrete noise; composed by Gaussian DP with the discrete noise's certified mu"
		}
		return runCurves{}, "continuous and discrete noise, and a discrete sigma without a certified mu"
	case one.Kind == LaplaceSpend:
		coords := 0
		for _, r := range runs {
			n, ok := steps(r.Step.Laplace.Coords, r.Steps)
			if ok {
				coords, ok = addSteps(coords, n)
			}
			if !ok {
				return runCurves{}, "too many coordinates"
			}
		}
		return runCurves{epsAt: laplaceRun(LaplacePart{Scale: one.Laplace.Scale, Coords: coords}, 1)}, ""
	}
	return runCurves{}, fmt.Sprintf("no exact composition of %v runs", one.Kind)
}

// bitParts returns the runs as parts of a composition of one-bit
// releases' dominating pairs (newBitRun), and whether every run has one:
// a one-bit release's pairs' envelope; a pure step's randomized response
// with its ε (which dominates every ε-DP pair, Kairouz, Oh and Viswanath
// 2015, Thm 2.1); discrete Laplace noise's coordinates, each randomized
// response with ε = 1/b (laplaceRun).
func bitParts(m *Memo, runs []Run) ([]bitPart, bool) {
	var parts []bitPart
	for _, r := range runs {
		s := r.Step
		switch {
		case s.Kind == OneBitSpend && len(s.Bits) > 0:
			parts = append(parts, bitPart{m.curvesOf(s.Bits).loss, r.Steps})
		case s.Kind == LaplaceSpend:
			n, ok := steps(s.Laplace.Coords, r.Steps)
			if !ok {
				return nil, false
			}
			parts = append(parts, bitPart{oneBitLoss(rrPairsOut(s.Laplace.coordEps())), n})
		case s.Kind == PureSpend:
			parts = append(parts, bitPart{oneBitLoss(rrPairsOut(s.Eps)), r.Steps})
		default:
			return nil, false
		}
	}
	return parts, true
}

// rrPairsOut returns randomized response's pair with ε, rounded outward
// (Pr[1] on the one input up, on the other down): a pair further apart,
// which dominates it.
func rrPairsOut(eps float64) []BitPair {
	e := outward.Exp(outward.Exact(eps))
	one := outward.Exact(1)
	p := e.Div(e.Add(one))
	q := one.Div(e.Add(one))
	return []BitPair{{P: math.Min(1, p.Hi), Q: math.Max(0, q.Lo)}}
}

// gaussianCurves returns the profile of the runs of Gaussian noise by
// Gaussian DP: μ² = Σ over runs, parts and coordinates of μ_σ² (1/σ²
// for continuous noise, the certificate's for discrete, dgCertify), and
// at each ε δ(ε) of that μ plus (1 + e^ε) times the discrete
// coordinates' windows' tails (each step's pair is within that total
// variation of one that is μ_σ-Gaussian DP, on both sides); false when a
// discrete σ has no certificate.
func gaussianCurves(memo *Memo, runs []Run) (runCurves, bool) {
	var mu2, tails float64
	for _, r := range runs {
		m, t, ok := stepMu2(memo, Spend{Kind: GaussianSpend, Gaussian: r.Step.Gaussian, Discrete: r.Step.Discrete})
		if !ok {
			return runCurves{}, false
		}
		n := float64(r.Steps)
		mu2 = outward.AddUp(mu2, outward.MulUp(n, m))
		tails = outward.AddUp(tails, outward.MulUp(n, t))
	}
	return runCurves{delta: func(eps float64) float64 {
		return math.Min(1, outward.AddUp(gdpDelta(eps, mu2), outward.MulUp(tails, outward.AddUp(1, outward.Up(math.Exp(eps), 2)))))
	}}, true
}

// splitTotals offers the simple composition of the runs' own totals to
// publish at splits of delta among them (chooseSchedule).
func splitTotals(m *Memo, c *chooser, runs []Run, delta float64) {
	var splits [][]float64
	equal := make([]float64, len(runs))
	bySteps := make([]float64, len(runs))
	var total float64
	for _, r := range runs {
		total += float64(r.Steps)
	}
	for i, r := range runs {
		equal[i] = 1 / float64(len(runs))
		bySteps[i] = float64(r.Steps) / total
	}
	splits = append(splits, equal, bySteps)
	if len(runs) == 2 {
		for _, f := range [...]float64{0.02, 0.05, 0.1, 0.25, 0.4, 0.6, 0.75, 0.9, 0.95, 0.98} {
			splits = append(splits, []float64{f, 1 - f})
		}
	}
	reason := "the runs' own totals at a split of delta among them, composed simply (Theorem 3.3.2)"
	for _, w := range splits {
		if c.done() {
			return
		}
		var eps, sum float64
		ok := true
		for i, r := range runs {
			d := outward.Down(delta*w[i]*(1-0x1p-40), 1)
			sum = outward.AddUp(sum, d)
			t, err := Account{Step: r.Step, Profile: r.Profile, Steps: r.Steps, Delta: &d}.Publish(m)
			if err != nil || t.Err != nil {
				ok = false
				break
			}
			eps = outward.AddUp(eps, t.Guarantee.Eps)
		}
		if ok && sum <= delta {
			c.offer(Total{Method: Simple, Guarantee: Guarantee{Eps: eps, Delta: delta}, Inexact: reason})
		}
	}
}
