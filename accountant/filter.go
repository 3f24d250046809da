package accountant

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/roots"
)

// A privacy filter holds steps whose parameters may be chosen adaptively,
// each after seeing the outputs of the ones before, to a budget fixed in
// advance: a step is taken only if the running total, with it, stays
// within the budget. Its halting rule must be fixed before the first
// step; a rule that takes a step when any one of several compositions,
// each at the whole budget, says it fits is not a filter any of them
// proves valid (a union of filters whose shares of δ sum to the budget's
// is: Filter). A version-4 ledger's filter is one Method, chosen when
// the budget is set, one of these two, each charging a step at its
// guarantee (Sequence.FilterTotal):
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

// checkFilter reports whether f is a filter for budget: Simple, or
// ZCDPFilter with budget.Delta > 0 (a zCDP bound gives no pure DP).
func checkFilter(f Method, budget Guarantee) error {
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

// FilterTotal returns the total of the steps seq under a version-4
// ledger's filter f with the budget, and whether it is within the budget (the filter's halting rule),
// after checking that f is a filter for the budget (checkFilter: the
// empty sequence's total is an error exactly when it is not):
// Simple (Σε_i, Σδ_i); ZCDPFilter (ε, budget.Delta), ε the improved
// conversion of seq.Rho at budget.Delta. The empty sequence is (0, 0).
func (seq Sequence) FilterTotal(f Method, budget Guarantee) (Guarantee, bool, error) {
	if err := checkFilter(f, budget); err != nil {
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
	eps, _, err := ImprovedConversion.RhoToDP(seq.Rho, budget.Delta)
	if err != nil {
		return Guarantee{}, false, err
	}
	g := Guarantee{Eps: eps, Delta: budget.Delta}
	return g, g.Within(budget), nil
}

// Filter is the privacy filter a ledger holds its runs to, fixed before
// its first run and stored with it: one or more parts, each a filter
// proven for parameters chosen adaptively with its share of the budget's
// δ, held to the budget's ε. A step runs while any one part stays within
// its share (a single part is that filter alone). The ledger's guarantee
// is then (ε_B, Σ_f δ_f), its budget when the shares sum to its δ:
//
// Every part counts every step, and a part's sums only grow, so when the
// interaction stops, the parts within their shares are those that held
// every step. Split the transcripts by the first such part, in the
// parts' order, f: on those transcripts the interaction took exactly the
// steps f alone would have taken (f accepted each, and refuses the next
// one asked for, as every part does), so their probability under either
// input is the same as in f's own interaction, and for every set S of
// transcripts P(S) - e^ε·Q(S) = Σ_f [P_f(S ∩ A_f) - e^ε·Q_f(S ∩ A_f)] <=
// Σ_f δ_f(ε). A part of pure losses has δ_f(ε_B) = 0: "zCDP, or simple
// composition of pure points" costs nothing beyond the zCDP part's δ.
//
// The parts, each at most once:
//
//   - Simple: Σε_i <= ε_B and Σδ_i <= δ_f over the point of each step's
//     privacy profile it charges (Charge.Point): simple composition is a
//     filter (Rogers, Roth, Ullman and Vadhan 2016), and a step may be
//     charged at any point it meets, chosen before it runs from what
//     the analyst knows then (a filter's parameters may depend on the
//     outputs before the step, never on its own). A one-bit release is
//     charged at the point of its profile at which the most of its steps
//     fit ε_B and δ_f (mostStepsPoint), a function of its description
//     and the budget alone. With δ_f = 0 it is basic composition of pure
//     losses.
//   - ZCDPFilter: Σρ_i <= ρ_B, ρ_B the largest slope whose improved
//     conversion at δ_f is ε_B (Feldman and Zrnic 2021, for every order
//     at once, as a version-4 ledger's zCDP filter).
//   - RenyiFilter: Σ D_α,i <= B_α at the part's order α, B_α the largest
//     whose improved conversion at δ_f is ε_B (Feldman and Zrnic 2021,
//     Thm 3.1).
//   - AdvancedFilter: Σε_i² <= V and Σδ_i <= δ_f - δ', V the largest
//     with √(2·log(1/δ')·V) + V/2 <= ε_B (Whitehouse, Ramdas, Rogers and
//     Wu 2023, their filter for approximate DP; δ' its Slack), over the
//     point of each step's profile it charges (Charge.Advanced), chosen
//     as the simple part's is.
//   - GDPFilter: Σμ_i² <= μ_B² and Σδ_i <= δ_T, μ_B the largest μ whose
//     Gaussian-DP profile at ε_B is δ_f less a reserve r = 2^-20·δ_f,
//     δ_T = r/(1 + e^ε_B) (Smith and Thakurta 2022). The δ_i are the
//     masses that discrete Gaussian noise keeps outside the window on
//     which its μ is certified (dgCertify): coupling each step with its
//     restriction to the window costs at most δ_i in total variation on
//     each side, so the interaction is within (1 + e^ε)·δ_T of one held
//     to μ_B.
//
// A part accepts only sums at which its condition holds for the exact
// values (every sum and charge is rounded up): a rule stricter than the
// theorem's by a rounding is an analyst that stops earlier, which every
// filter allows.
type Filter struct {
	Parts []FilterPart `json:"parts"`
}

// FilterPart is one part of a Filter.
type FilterPart struct {
	// Method is the part's filter: Simple, ZCDPFilter, RenyiFilter,
	// AdvancedFilter or GDPFilter.
	Method Method `json:"filter"`
	// Delta is the part's share of the budget's δ: the δ of its
	// guarantee at the budget's ε.
	Delta float64 `json:"delta"`
	// Slack is an AdvancedFilter's δ' in (0, Delta]: the δ of its
	// concentration bound; the rest of Delta holds the steps' δ.
	Slack float64 `json:"slack,omitempty"`
	// Order is a RenyiFilter's order α > 1.
	Order float64 `json:"order,omitempty"`
}

// Charge is what one step adds to the sums of a Filter (Filter.Add),
// chosen before the step runs from its description alone (Filter.Charge):
// its guarantee, which every sequence sums (Sequence.Add), and, for each
// part of the filter, the quantity that part holds to its budget. A
// ledger records it with the step, so that its sums can be checked
// without the step's description. For the parts the filter has, a nil
// Rho, Mu2 or Renyi says that the step has no such bound (the part
// cannot hold it: its sums count it in Curveless, Muless, Renyiless).
type Charge struct {
	Guarantee
	// Point is the point of the step's privacy profile the simple part
	// charges, Advanced the one the advanced part charges.
	Point    *Guarantee `json:"point,omitempty"`
	Advanced *Guarantee `json:"advanced,omitempty"`
	// Rho is the zCDP part's slope.
	Rho *float64 `json:"rho,omitempty"`
	// Mu2 is the Gaussian-DP part's μ², MuDelta the total-variation
	// distance it sets aside for it (discrete Gaussian noise).
	Mu2     *float64 `json:"gdp_mu2,omitempty"`
	MuDelta float64  `json:"gdp_delta,omitempty"`
	// Renyi is the Rényi part's divergence at its order.
	Renyi *float64 `json:"rdp,omitempty"`
}

// gdpReserve is the share of a GDPFilter part's δ set aside for the
// masses outside the windows of discrete Gaussian noise: 2^-20 of it,
// far more than any practical count of steps uses (2e^-128 a
// coordinate), and too little to change a count.
const gdpReserve = 0x1p-20

// String names the parts in order, with their shares: e.g.
// "gdp-filter(1e-05) or simple(0)".
func (f Filter) String() string {
	var b strings.Builder
	for i, p := range f.Parts {
		if i > 0 {
			b.WriteString(" or ")
		}
		fmt.Fprintf(&b, "%v(%s", p.Method, decimal.FormatBound(p.Delta))
		switch p.Method {
		case AdvancedFilter:
			fmt.Fprintf(&b, ", slack %s", decimal.FormatBound(p.Slack))
		case RenyiFilter:
			fmt.Fprintf(&b, ", order %s", strconv.FormatFloat(p.Order, 'g', -1, 64))
		}
		b.WriteString(")")
	}
	return b.String()
}

// Check reports whether f is a filter for budget: at least one part,
// each of a filter's Method and at most once, shares in [0, δ_B] that
// sum to at most δ_B, a share > 0 for the parts whose guarantee has no
// pure point (all but Simple), an AdvancedFilter's Slack in (0, Delta],
// a RenyiFilter's Order > 1.
func (f Filter) Check(budget Guarantee) error {
	if err := (Budget{budget}).Validate(); err != nil {
		return err
	}
	if len(f.Parts) == 0 {
		return errors.New("filter: no parts")
	}
	seen := map[Method]bool{}
	var sum float64
	for _, p := range f.Parts {
		bad := func(rule string) error {
			return fmt.Errorf("filter %v: %w", f, &ParamError{Name: "filter", Value: p.Method.String(), Rule: rule})
		}
		switch p.Method {
		case Simple, ZCDPFilter, RenyiFilter, AdvancedFilter, GDPFilter:
		default:
			return bad(fmt.Sprintf("must be %v, %v, %v, %v or %v (the filters proven for adaptively chosen parameters)", Simple, ZCDPFilter, RenyiFilter, AdvancedFilter, GDPFilter))
		}
		if seen[p.Method] {
			return bad("a filter has each part at most once")
		}
		seen[p.Method] = true
		if !(p.Delta >= 0 && p.Delta <= budget.Delta) {
			return bad(fmt.Sprintf("its share of delta, %v, must be in [0, %v] (the budget's delta)", p.Delta, budget.Delta))
		}
		if p.Method != Simple && !(p.Delta > 0) {
			return bad("needs a share of delta > 0 (only simple composition holds pure losses at delta 0)")
		}
		if p.Method == AdvancedFilter && !(p.Slack > 0 && p.Slack <= p.Delta) {
			return bad(fmt.Sprintf("its slack %v must be in (0, %v] (its share of delta)", p.Slack, p.Delta))
		}
		if p.Method != AdvancedFilter && p.Slack != 0 {
			return bad("only the advanced filter has a slack")
		}
		if p.Method == RenyiFilter {
			if err := param.Alpha(p.Order); err != nil {
				return fmt.Errorf("filter %v: %w", f, err)
			}
		} else if p.Order != 0 {
			return bad("only the Renyi filter has an order")
		}
		sum = outward.AddUp(sum, p.Delta)
	}
	if sum > budget.Delta {
		return fmt.Errorf("filter %v: %w", f, &ParamError{Name: "filter", Value: sum, Rule: fmt.Sprintf("the shares of delta must sum to at most the budget's delta %v", budget.Delta)})
	}
	return nil
}

// has returns f's part of method m, and whether it has one.
func (f Filter) has(m Method) (FilterPart, bool) {
	for _, p := range f.Parts {
		if p.Method == m {
			return p, true
		}
	}
	return FilterPart{}, false
}

// Charge returns what a step that s describes costs each part of f
// under budget, chosen from the description alone, before the step
// runs: its guarantee; for the simple and advanced parts the point of
// its privacy profile that takes the least of the part's budget (pointFor:
// the guarantee, or the pure point of a one-bit release's pairs or of a
// pure step), and for a one-bit release the point of its profile at
// which the most of its steps fit the part (mostStepsPoint) when that
// holds more of them; the least zCDP slope, Gaussian-DP μ² and Rényi
// divergence at the part's order that the description proves (stepRho,
// stepMu2, stepRenyi). An error says that no part can hold the step: it is then
// refused. A part with a share of δ for its steps' δ holds every step,
// as a version-4 ledger's simple filter does, one of pure losses only
// those with a pure point; that a step fits only above its share is the
// count's concern (MaxSteps), or the teachers' cap's.
func (f Filter) Charge(s Spend, budget Guarantee) (Charge, error) {
	if err := f.Check(budget); err != nil {
		return Charge{}, err
	}
	if err := s.Check(); err != nil {
		return Charge{}, err
	}
	c := Charge{Guarantee: s.Guarantee}
	held := false
	for _, p := range f.Parts {
		switch p.Method {
		case Simple:
			g := pointFor(s, func(g Guarantee) float64 { return g.Eps/budget.Eps + share(g.Delta, p.Delta) })
			epsOK := func(n, e float64) bool { return outward.MulUp(n, e) <= budget.Eps }
			g = mostStepsPoint(s, g, func(k int) float64 {
				n := float64(k)
				return largestBelow(outward.DivDirected(budget.Eps, n, false), func(e float64) bool { return epsOK(n, e) })
			}, func(k int, g Guarantee) bool {
				n := float64(k)
				return epsOK(n, g.Eps) && outward.MulUp(n, g.Delta) <= p.Delta
			})
			c.Point, held = &g, held || g.Delta == 0 || p.Delta > 0
		case AdvancedFilter:
			v := advancedBudget(budget.Eps, p.Slack)
			g := pointFor(s, func(g Guarantee) float64 { return g.Eps*g.Eps/v + share(g.Delta, p.Delta-p.Slack) })
			epsOK := func(n, e float64) bool {
				return advancedEps(outward.MulUp(n, outward.MulUp(e, e)), p.Slack) <= budget.Eps
			}
			g = mostStepsPoint(s, g, func(k int) float64 {
				n := float64(k)
				return largestBelow(outward.Down(math.Sqrt(v/n), 2), func(e float64) bool { return epsOK(n, e) })
			}, func(k int, g Guarantee) bool {
				n := float64(k)
				return epsOK(n, g.Eps) && outward.AddUp(p.Slack, outward.MulUp(n, g.Delta)) <= p.Delta
			})
			c.Advanced, held = &g, held || g.Delta == 0 || p.Delta > p.Slack
		case ZCDPFilter:
			if rho, ok := stepRho(s); ok {
				c.Rho, held = &rho, true
			}
		case GDPFilter:
			if mu2, tail, ok := stepMu2(s); ok {
				c.Mu2, c.MuDelta, held = &mu2, tail, true
			}
		case RenyiFilter:
			if r, ok := stepRenyi(s, p.Order); ok {
				c.Renyi, held = &r, true
			}
		}
	}
	if !held {
		why := ""
		if _, ok := f.has(GDPFilter); ok && s.Discrete && len(s.Gaussian) > 0 {
			why = fmt.Sprintf(" (the Gaussian-DP mu of discrete Gaussian noise is certified for sigma up to %d)", maxDGCertSigma)
		}
		return c, fmt.Errorf("no part of the filter %v can hold a step of %v (%v): it has no pure point, zCDP slope, Gaussian-DP mu or Renyi curve that they need, and none has a share of delta for its delta%s", f, s.Guarantee, s.Kind, why)
	}
	return c, nil
}

// share returns delta as a share of a part's δ: +Inf when the part has
// none for it.
func share(delta, of float64) float64 {
	if delta == 0 {
		return 0
	}
	if !(of > 0) {
		return math.Inf(1)
	}
	return delta / of
}

// pointFor returns the point of s's privacy profile of least cost: its
// guarantee, or its pure point (a one-bit release's largest loss,
// Spend.pureEps). Ties keep the guarantee.
func pointFor(s Spend, cost func(Guarantee) float64) Guarantee {
	g := s.Guarantee
	if eps, ok := s.pureEps(); ok {
		if p := (Guarantee{Eps: eps}); cost(p) < cost(g) {
			return p
		}
	}
	return g
}

// mostStepsPoint returns the point of a one-bit release's privacy
// profile at which a part holds the most steps of s, or g, a point of
// it, when g holds as many: for each k the point (ε_k, δ(ε_k)), ε_k =
// epsFor(k) the largest ε at which k steps meet the part's condition on
// ε, holds k steps when holds(k, point) (both its conditions, summed as
// Filter.Total sums them), and the largest such k is found by search
// (δ(ε_k) grows with k). It depends on the step's description and the
// budget alone, so it is chosen before the step runs, as the simple and
// advanced filters allow; g is returned for every other step.
func mostStepsPoint(s Spend, g Guarantee, epsFor func(k int) float64, holds func(k int, p Guarantee) bool) Guarantee {
	if s.Kind != OneBitSpend || len(s.Bits) == 0 {
		return g
	}
	pairs := cachedBitCurves(s.Bits).dominating
	at := func(k int) (Guarantee, bool) {
		e := epsFor(k)
		p := Guarantee{Eps: e, Delta: bitProfile(pairs, e)}
		return p, e > 0 && holds(k, p)
	}
	k, err := roots.Last(0, CountLimit, func(k int) (bool, error) {
		if k == 0 {
			return true, nil
		}
		_, ok := at(k)
		return ok, nil
	})
	if errors.Is(err, roots.ErrLimitFits) {
		k = CountLimit
	} else if err != nil || k == 0 {
		return g
	}
	if holds(k, g) {
		return g
	}
	p, _ := at(k)
	return p
}

// largestBelow returns e, or the first value below it, stepping down an
// ulp at a time and then by doubling steps, at which ok holds (0 when
// none above 0 does): an estimate e of the largest ε that a rounded
// condition allows, made to meet it.
func largestBelow(e float64, ok func(float64) bool) float64 {
	for i := 0; e > 0 && !ok(e); i++ {
		if i < 8 {
			e = math.Nextafter(e, 0)
		} else {
			e = outward.Down(e, math.Ldexp(1, i-8))
		}
	}
	return math.Max(e, 0)
}

// bitProfile returns an upper bound of the privacy profile at eps of one
// step of the one-bit release whose dominating pairs (each larger first)
// are pairs: the largest hockey-stick divergence H_α, α = e^eps, of its
// pairs in either order, max(0, P - αQ, (1-Q) - α(1-P)) (oneBitLoss).
func bitProfile(pairs []BitPair, eps float64) float64 {
	alpha := outward.Exp(outward.Exact(eps)).Lo
	// line returns a - α·b, rounded up; 0 when α·b is infinite.
	line := func(a, b float64) float64 {
		if b == 0 {
			return a
		}
		ab := outward.MulDown(alpha, b)
		if math.IsInf(ab, 1) {
			return 0
		}
		return outward.AddUp(a, -ab)
	}
	var d float64
	for _, p := range pairs {
		d = math.Max(d, line(p.P, p.Q))
		d = math.Max(d, line(outward.AddUp(1, -p.Q), outward.AddDown(1, -p.P)))
	}
	return d
}

// stepRho returns the least zCDP slope that s proves, rounded up, and
// whether it has one: its own (Spend.Rho: Gaussian noise, a pure
// guarantee), the pure point's ε²/2 (Bun and Steinke 2016, Prop. 1.4),
// and for discrete Laplace noise its coordinates' Coords·(1/b)²/2, each
// coordinate randomized response with ε = 1/b (laplaceRun), zCDP
// composing by adding.
func stepRho(s Spend) (float64, bool) {
	best, ok := s.rho()
	take := func(r float64) {
		if !ok || r < best {
			best, ok = r, true
		}
	}
	if eps, pure := s.pureEps(); pure {
		take(upPositive(eps*eps/2, 2))
	}
	if s.Kind == LaplaceSpend {
		e := s.Laplace.coordEps()
		take(outward.MulUp(float64(s.Laplace.Coords), upPositive(e*e/2, 2)))
	}
	return best, ok
}

// stepMu2 returns the least μ² of Gaussian DP that s proves, rounded
// up, with the total-variation distance set aside for it, and whether
// it has one: Gaussian noise (of a GaussianSpend, or the noise a one-bit
// release is computed from) Σ Coords·μ_σ², μ_σ = 1/σ for continuous
// noise (a coordinate moved by at most 1 is N(0, σ²) against N(1, σ²),
// and Gaussian DP composes by adding μ², Dong, Roth and Su 2022, Cor.
// 3.3) and the certified μ of dgCertify for discrete noise, with its
// window's tail per coordinate; discrete Laplace noise Coords·μ_{1/b}²
// (each coordinate randomized response with ε = 1/b, pureMu); a pure
// step or a one-bit release's pure point μ_ε² (pureMu).
func stepMu2(s Spend) (mu2, tail float64, ok bool) {
	take := func(m, t float64) {
		if !ok || m < mu2 {
			mu2, tail, ok = m, t, true
		}
	}
	if len(s.Gaussian) > 0 {
		var m, t float64
		held := true
		for _, p := range s.Gaussian {
			c := float64(p.Coords)
			if !s.Discrete {
				r := 1 / p.Sigma
				m = outward.AddUp(m, upPositive(c*r*r, 4))
				continue
			}
			g := cachedDGCert(p.Sigma)
			if !g.ok {
				held = false
				break
			}
			m = outward.AddUp(m, outward.MulUp(c, outward.MulUp(g.mu, g.mu)))
			t = outward.AddUp(t, outward.MulUp(c, g.tail))
		}
		if held {
			take(m, t)
		}
	}
	if s.Kind == LaplaceSpend {
		if m, good := pureMu(s.Laplace.coordEps()); good {
			take(outward.MulUp(float64(s.Laplace.Coords), outward.MulUp(m, m)), 0)
		}
	}
	eps, pure := s.pureEps()
	if s.pure() {
		eps, pure = s.Eps, true
	}
	if pure {
		if m, good := pureMu(eps); good {
			take(outward.MulUp(m, m), 0)
		}
	}
	return mu2, tail, ok
}

// stepRenyi returns the least Rényi divergence at order alpha that s
// proves, rounded up, and whether it has one: its own curve
// (Spend.RDP: zCDP steps, the sampled Gaussian at integer orders),
// randomized response's exactly for a pure step or point and for each
// coordinate of discrete Laplace noise (rrRenyi), and a one-bit
// release's dominating pair's when none of its losses is infinite
// (bitRenyi).
func stepRenyi(s Spend, alpha float64) (float64, bool) {
	best, ok := s.rdp(alpha)
	take := func(r float64, good bool) {
		if good && (!ok || r < best) {
			best, ok = r, true
		}
	}
	if s.pure() {
		take(rrRenyi(s.Eps, alpha))
	}
	if eps, pure := s.pureEps(); pure {
		take(rrRenyi(eps, alpha))
	}
	if s.Kind == LaplaceSpend {
		if r, good := rrRenyi(s.Laplace.coordEps(), alpha); good {
			take(outward.MulUp(float64(s.Laplace.Coords), r), true)
		}
	}
	if s.Kind == OneBitSpend && len(s.Bits) > 0 {
		take(bitRenyi(cachedBitCurves(s.Bits).loss, alpha))
	}
	return best, ok
}

// rrRenyi returns an upper bound of the Rényi divergence at order alpha
// of randomized response with ε, which bounds every ε-DP step's (its
// pair is a post-processing of randomized response's, Kairouz, Oh and
// Viswanath 2015, Thm 2.1; the divergence is symmetric):
// D_α = log(cosh((α - 1/2)ε) / cosh(ε/2)) / (α - 1).
func rrRenyi(eps, alpha float64) (float64, bool) {
	if !(eps > 0) || math.IsInf(eps, 0) || !(alpha > 1) || math.IsInf(alpha, 0) {
		return 0, false
	}
	// log cosh x = x + log1p(e^-2x) - log 2, without overflow; for small
	// x, log1p(2·sinh²(x/2)), without cancellation.
	logCosh := func(x float64) float64 {
		if x > 1 {
			return x + math.Log1p(math.Exp(-2*x)) - math.Ln2
		}
		h := math.Sinh(x / 2)
		return math.Log1p(2 * h * h)
	}
	a, b := logCosh((alpha-0.5)*eps), logCosh(eps/2)
	d := (a - b) / (alpha - 1)
	if !(d >= 0) || math.IsInf(d, 0) {
		return 0, false
	}
	// Each log cosh within a few ulps of itself, the difference of two
	// such (a > b) within 16 ulps of a, and the quotient an ulp: raised by
	// a relative 2^-40 of a over the difference, the cancellation's worst.
	return outward.Up(d+(math.Abs(a)+math.Abs(b))*0x1p-40/(alpha-1), 4) + math.SmallestNonzeroFloat64, true
}

// bitRenyi returns an upper bound of the Rényi divergence at order
// alpha of a one-bit release's dominating pair (oneBitLoss), and whether
// it is finite (no infinite loss): D_α = log E_P[e^((α-1)L)] / (α - 1),
// the sum over its atoms of mass·e^((α-1)·loss), with each mass and loss
// an upper bound. The pair's hockey-stick curve is symmetric, so it is
// its own reverse and the divergence holds in both orders.
func bitRenyi(b bitLoss, alpha float64) (float64, bool) {
	if b.inf > 0 || len(b.atoms) == 0 || !(alpha > 1) || math.IsInf(alpha, 0) {
		return 0, false
	}
	t := alpha - 1
	// log Σ m_j e^(t·ℓ_j), the largest exponent taken out.
	top := math.Inf(-1)
	for _, a := range b.atoms {
		top = math.Max(top, t*a.hi+math.Log(a.mass))
	}
	var sum float64
	for _, a := range b.atoms {
		sum += math.Exp(t*a.hi + math.Log(a.mass) - top)
	}
	n := float64(len(b.atoms))
	d := (top + math.Log(sum)) / t
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return 0, false
	}
	// Each exponent within a few ulps of its magnitude, each exp and log
	// an ulp, the sum n roundings: a relative (n + 8)·2^-52 of the sum and
	// an absolute 8 ulps of the largest exponent's size.
	slack := ((n+8)*0x1p-52 + 8*0x1p-52*(math.Abs(top)+t*maxAtomLoss(b))) / t
	return math.Max(0, outward.Up(d, 4)+slack), true
}

// maxAtomLoss returns the largest |loss| among b's atoms.
func maxAtomLoss(b bitLoss) float64 {
	var m float64
	for _, a := range b.atoms {
		m = math.Max(m, math.Max(math.Abs(a.lo), math.Abs(a.hi)))
	}
	return m
}

// advancedBudget returns V, the largest Σε_i² whose advanced-composition
// bound √(2·log(1/δ')·V) + V/2 is at most eps, rounded down: with
// L = log(1/δ'), √V = √(2L + 2ε) - √(2L) = 2ε/(√(2L + 2ε) + √(2L)).
func advancedBudget(eps, slack float64) float64 {
	l := -math.Log(slack)
	r := 2 * eps / (math.Sqrt(2*l+2*eps) + math.Sqrt(2*l))
	return outward.Down(r*r, 16)
}

// advancedEps returns the advanced-composition bound of Σε_i² sq with
// slack δ', rounded up: √(2·log(1/δ')·sq) + sq/2.
func advancedEps(sq, slack float64) float64 {
	l := outward.Up(-math.Log(slack), 2)
	return outward.AddUp(outward.Up(math.Sqrt(outward.MulUp(2*l, sq)), 2), sq/2)
}

// gdpBounds returns a GDPFilter part's δ for μ and its δ_T for the
// tails (Filter's doc): δ_f(1 - 2^-20) and 2^-20·δ_f/(1 + e^ε), each
// rounded down.
func gdpBounds(p FilterPart, eps float64) (muDelta, tails float64) {
	r := p.Delta * gdpReserve
	return outward.Down(p.Delta-r, 1), outward.Down(r/outward.AddUp(1, outward.Up(math.Exp(eps), 2)), 2)
}

// Add returns seq followed by k steps of charge c (k = 0: seq itself):
// their guarantees (Sequence.Add), and each part's quantity added to its
// sums, or the steps counted in its sums' count of steps it could not
// charge.
func (f Filter) Add(seq Sequence, c Charge, k int) (Sequence, error) {
	next, err := seq.Add(c.Guarantee, k)
	if err != nil || k == 0 {
		return next, err
	}
	n := float64(k)
	times := func(x float64) float64 { return outward.MulUp(n, x) }
	for _, p := range f.Parts {
		switch p.Method {
		case Simple:
			if c.Point == nil {
				return seq, fmt.Errorf("filter %v: the charge has no point for its simple part", f)
			}
			next.PointEps = outward.AddUp(next.PointEps, times(c.Point.Eps))
			next.PointDelta = outward.AddUp(next.PointDelta, times(c.Point.Delta))
			switch {
			case seq.Steps == 0:
				next.Point = *c.Point
			case next.Point != *c.Point:
				next.PointMixed = true
			}
		case AdvancedFilter:
			if c.Advanced == nil {
				return seq, fmt.Errorf("filter %v: the charge has no point for its advanced part", f)
			}
			e := c.Advanced.Eps
			next.AdvancedSq = outward.AddUp(next.AdvancedSq, times(outward.MulUp(e, e)))
			next.AdvancedDelta = outward.AddUp(next.AdvancedDelta, times(c.Advanced.Delta))
		case ZCDPFilter:
			if c.Rho == nil {
				next.Curveless += k
			} else {
				next.Rho = outward.AddUp(next.Rho, times(*c.Rho))
			}
		case GDPFilter:
			if c.Mu2 == nil {
				next.Muless += k
			} else {
				next.Mu2 = outward.AddUp(next.Mu2, times(*c.Mu2))
				next.MuDelta = outward.AddUp(next.MuDelta, times(c.MuDelta))
			}
		case RenyiFilter:
			if c.Renyi == nil {
				next.Renyiless += k
			} else {
				next.Renyi = outward.AddUp(next.Renyi, times(*c.Renyi))
			}
		}
	}
	if err := next.Check(); err != nil {
		return seq, fmt.Errorf("filter %v: %w", f, err)
	}
	return next, nil
}

// Total returns the total of the steps seq under f with budget, and
// whether they are within it (f's halting rule: some part within its
// share). The total is that of the first part, in f's order, within its
// share, else of the first part that bounds them (an error when none
// does): each part's own bound of the steps,
// at its share of δ (Simple (Σε_i, Σδ_i); ZCDPFilter, RenyiFilter and
// GDPFilter ε at their δ; AdvancedFilter √(2·log(1/δ')·Σε_i²) + Σε_i²/2
// at δ' + Σδ_i). It is a realised cost, for analysis: what a ledger
// publishes is its budget (Account.Publish). The empty sequence is
// (0, 0).
func (f Filter) Total(seq Sequence, budget Guarantee) (Guarantee, bool, error) {
	if err := f.Check(budget); err != nil {
		return Guarantee{}, false, err
	}
	if err := seq.Check(); err != nil {
		return Guarantee{}, false, err
	}
	if seq.Steps == 0 {
		return Guarantee{}, true, nil
	}
	var first *Guarantee
	for _, p := range f.Parts {
		g, ok, err := p.total(seq, budget)
		if err != nil {
			return Guarantee{}, false, err
		}
		if ok {
			return g, true, nil
		}
		if first == nil && !math.IsInf(g.Eps, 0) {
			first = &g
		}
	}
	if first == nil {
		return Guarantee{}, false, fmt.Errorf("filter %v: no part bounds these %d steps (each lacks the curve it needs for some)", f, seq.Steps)
	}
	return *first, false, nil
}

// total returns part p's bound of the steps seq at its share of δ, and
// whether they are within its share of budget (Total).
func (p FilterPart) total(seq Sequence, budget Guarantee) (Guarantee, bool, error) {
	inf := Guarantee{Eps: math.Inf(1), Delta: p.Delta}
	switch p.Method {
	case Simple:
		g := Guarantee{Eps: seq.PointEps, Delta: seq.PointDelta}
		if !seq.PointMixed {
			n := float64(seq.Steps)
			g = Guarantee{Eps: outward.MulUp(n, seq.Point.Eps), Delta: outward.MulUp(n, seq.Point.Delta)}
		}
		return g, g.Eps <= budget.Eps && g.Delta <= p.Delta, nil
	case AdvancedFilter:
		g := Guarantee{Eps: advancedEps(seq.AdvancedSq, p.Slack), Delta: outward.AddUp(p.Slack, seq.AdvancedDelta)}
		return g, g.Eps <= budget.Eps && g.Delta <= p.Delta, nil
	case ZCDPFilter:
		if seq.Curveless > 0 {
			return inf, false, nil
		}
		if seq.Rho == 0 {
			return Guarantee{Delta: p.Delta}, true, nil
		}
		eps, _, err := ImprovedConversion.RhoToDP(seq.Rho, p.Delta)
		return Guarantee{Eps: eps, Delta: p.Delta}, err == nil && eps <= budget.Eps, err
	case RenyiFilter:
		if seq.Renyiless > 0 {
			return inf, false, nil
		}
		eps, err := ImprovedConversion.ConvertRDP(seq.Renyi, p.Order, p.Delta)
		return Guarantee{Eps: eps, Delta: p.Delta}, err == nil && eps <= budget.Eps, err
	case GDPFilter:
		if seq.Muless > 0 {
			return inf, false, nil
		}
		muDelta, tails := gdpBounds(p, budget.Eps)
		eps := gdpEps(seq.Mu2, muDelta)
		return Guarantee{Eps: eps, Delta: p.Delta}, seq.MuDelta <= tails && gdpDelta(budget.Eps, seq.Mu2) <= muDelta, nil
	}
	return Guarantee{}, false, fmt.Errorf("filter part %v: not a filter", p.Method)
}

// GDPBudget returns μ_B² of the Gaussian-DP part of f under budget: the
// largest sum of μ_i² its halting rule holds (to a relative 1e-9, below
// it), and whether f has such a part. It is what a plan divides by the
// μ² a step costs on average; the filter itself decides each step
// (Total).
func (f Filter) GDPBudget(budget Guarantee) (float64, bool) {
	p, ok := f.has(GDPFilter)
	if !ok || f.Check(budget) != nil {
		return 0, false
	}
	muDelta, _ := gdpBounds(p, budget.Eps)
	holds := func(mu2 float64) bool { return gdpDelta(budget.Eps, mu2) <= muDelta }
	hi := 1.0
	for holds(hi) {
		if hi > 1e300 {
			return math.Inf(1), true
		}
		hi *= 2
	}
	return roots.Edge(hi, 0, 1e-9, holds), true
}

// gdpEps returns the least ε at which μ-Gaussian DP, μ² <= mu2, is
// (ε, delta)-DP, to a relative 1e-9 and rounded up (gdpDelta decreases
// in ε); 0 for μ = 0.
func gdpEps(mu2, delta float64) float64 {
	if mu2 == 0 {
		return 0
	}
	ok := func(eps float64) bool { return gdpDelta(eps, mu2) <= delta }
	hi := 1.0
	for !ok(hi) {
		if hi > 1e300 {
			return math.Inf(1)
		}
		hi *= 2
	}
	return roots.Edge(0, hi, 1e-9, ok)
}

// MaxSteps returns the largest number k of further steps that s
// describes that f holds within budget after the steps spent (the
// filter's halting rule, Total, after Add of k charges): the last k
// that fits, never a midpoint; 0 when none does (or spent does not);
// when every count up to the most a Sequence holds fits, that many,
// CountLimit - spent.Steps: the budget limits no run of practical
// length. The charge is Charge's: an error when no part can hold s.
func (f Filter) MaxSteps(spent Sequence, s Spend, budget Guarantee) (int, error) {
	c, err := f.Charge(s, budget)
	if err != nil {
		return 0, err
	}
	if err := spent.Check(); err != nil {
		return 0, err
	}
	fits := func(k int) (bool, error) {
		seq, err := f.Add(spent, c, k)
		if err != nil {
			return false, err
		}
		_, ok, err := f.Total(seq, budget)
		return ok, err
	}
	if ok, err := fits(0); err != nil || !ok {
		return 0, err
	}
	limit := CountLimit - spent.Steps
	k, err := roots.Last(0, limit, fits)
	if errors.Is(err, roots.ErrLimitFits) {
		return limit, nil
	}
	return k, err
}
