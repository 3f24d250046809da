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
			return &param.Error{Name: "budget-delta", Value: budget.Delta, Rule: "must be > 0 for the zcdp-filter (use the simple filter for a pure-DP budget)"}
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

// check refuses a charge with a quantity that no step costs: below 0,
// NaN or infinite (a δ, 1 or more).
func (c Charge) check() error {
	for _, g := range []struct {
		name string
		g    *Guarantee
	}{{"point", c.Point}, {"advanced", c.Advanced}} {
		if g.g == nil {
			continue
		}
		if err := param.AtLeast("charge "+g.name+" eps", g.g.Eps, 0); err != nil {
			return err
		}
		if err := param.Delta("charge "+g.name+" delta", g.g.Delta); err != nil {
			return err
		}
	}
	for _, v := range []struct {
		name string
		v    *float64
	}{{"rho", c.Rho}, {"gdp_mu2", c.Mu2}, {"rdp", c.Renyi}} {
		if v.v == nil {
			continue
		}
		if err := param.AtLeast("charge "+v.name, *v.v, 0); err != nil {
			return err
		}
	}
	return param.Delta("charge gdp_delta", c.MuDelta)
}

// buildMargin is the relative margin, 2^-48 (16 units in the last
// place), by which a charge states each quantity it computes through the
// math library above the value computed (margined): a darrm built for
// another architecture or GOAMD64 level computes it to other last digits
// (its math library, fused multiply-adds: 3 units in progressive GNMax's
// μ²), and a reader of a ledger accepts a charge only when each quantity
// is at least the one it computes (Filter.Covers). A count moves only
// where a quantity computed lies within the margin below its edge: a
// design at exactly the budget's share, such as (0.3, 10⁻⁶)-DP labels
// computed 8.6·10⁻¹⁰ below it, keeps its count.
const buildMargin = 0x1p-48

// margined returns x raised by buildMargin.
func margined(x float64) float64 { return outward.MulUp(x, 1+buildMargin) }

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
			return fmt.Errorf("filter %v: %w", f, &param.Error{Name: "filter", Value: p.Method.String(), Rule: rule})
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
		return fmt.Errorf("filter %v: %w", f, &param.Error{Name: "filter", Value: sum, Rule: fmt.Sprintf("the shares of delta must sum to at most the budget's delta %v", budget.Delta)})
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
// stepMu2, stepRenyi). Each quantity computed through the math library
// is margined (buildMargin), so that every build's charge covers the
// step as every other build computes it (Covers). An error says that no part
// can hold the step: it is then refused. A part with a share of δ for its steps' δ holds every step,
// as a version-4 ledger's simple filter does, one of pure losses only
// those with a pure point; that a step fits only above its share is the
// count's concern (MaxSteps), or the teachers' cap's.
func (f Filter) Charge(m *Memo, s Spend, budget Guarantee) (Charge, error) {
	return f.charge(m, s, budget, false)
}

// charge is Charge, or with least the least charge that covers the step
// on this build (Covers): each quantity as computed, without its margin,
// and the points' least (pointFor, mostStepsPoint).
func (f Filter) charge(m *Memo, s Spend, budget Guarantee, least bool) (Charge, error) {
	m = m.forCall()
	if err := f.Check(budget); err != nil {
		return Charge{}, err
	}
	if err := s.Check(); err != nil {
		return Charge{}, err
	}
	up := margined
	if least {
		up = func(x float64) float64 { return x }
	}
	pick := func(stated, low Guarantee) *Guarantee {
		if least {
			return &low
		}
		return &stated
	}
	c := Charge{Guarantee: s.Guarantee}
	held := false
	for _, p := range f.Parts {
		switch p.Method {
		case Simple:
			g, gl := pointFor(m, s, func(g Guarantee) float64 { return g.Eps/budget.Eps + share(g.Delta, p.Delta) })
			epsOK := func(n, e float64) bool { return outward.MulUp(n, e) <= budget.Eps }
			g, gl = mostStepsPoint(m, s, g, gl, func(k int) float64 {
				n := float64(k)
				return largestBelow(outward.DivDirected(budget.Eps, n, false), func(e float64) bool { return epsOK(n, e) })
			}, func(k int, g Guarantee) bool {
				n := float64(k)
				return epsOK(n, g.Eps) && outward.MulUp(n, g.Delta) <= p.Delta
			})
			c.Point, held = pick(g, gl), held || g.Delta == 0 || p.Delta > 0
		case AdvancedFilter:
			v := advancedBudget(budget.Eps, p.Slack)
			g, gl := pointFor(m, s, func(g Guarantee) float64 { return g.Eps*g.Eps/v + share(g.Delta, p.Delta-p.Slack) })
			epsOK := func(n, e float64) bool {
				return advancedEps(outward.MulUp(n, outward.MulUp(e, e)), p.Slack) <= budget.Eps
			}
			g, gl = mostStepsPoint(m, s, g, gl, func(k int) float64 {
				n := float64(k)
				return largestBelow(outward.Down(math.Sqrt(v/n), 2), func(e float64) bool { return epsOK(n, e) })
			}, func(k int, g Guarantee) bool {
				n := float64(k)
				return epsOK(n, g.Eps) && outward.AddUp(p.Slack, outward.MulUp(n, g.Delta)) <= p.Delta
			})
			c.Advanced, held = pick(g, gl), held || g.Delta == 0 || p.Delta > p.Slack
		case ZCDPFilter:
			if rho, ok := stepRho(m, s); ok {
				rho = up(rho)
				c.Rho, held = &rho, true
			}
		case GDPFilter:
			if mu2, tail, ok := stepMu2(m, s); ok {
				mu2 = up(mu2)
				c.Mu2, c.MuDelta, held = &mu2, up(tail), true
			}
		case RenyiFilter:
			if r, ok := stepRenyi(m, s, p.Order); ok {
				r = up(r)
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

// Covers reports whether c, the charge that a ledger's line states for
// a step that s describes, charges each part of f under budget at least
// the least charge that covers the step on this build: Charge's, each
// quantity without its margin, and each point one of the step's privacy
// profile chosen by Charge's rule (pointFor, mostStepsPoint), so that a
// charge at or above it in every coordinate is a point or bound of the
// step chosen before it ran; c must have the same quantities. A charge
// that Charge returned on any build covers its step (its margins exceed
// another build's rounding); one edited below the step's cost does not.
func (f Filter) Covers(m *Memo, s Spend, budget Guarantee, c Charge) error {
	least, err := f.charge(m, s, budget, true)
	if err != nil {
		return err
	}
	if c.Guarantee != least.Guarantee {
		return fmt.Errorf("its guarantee %v is not the step's, %v", c.Guarantee, least.Guarantee)
	}
	points := []struct {
		name      string
		got, want *Guarantee
	}{{"point", c.Point, least.Point}, {"advanced", c.Advanced, least.Advanced}}
	for _, p := range points {
		switch {
		case (p.got == nil) != (p.want == nil):
			return fmt.Errorf("its %s %v, where the step's least charge has %v", p.name, p.got, p.want)
		case p.got != nil && !(p.got.Eps >= p.want.Eps && p.got.Delta >= p.want.Delta):
			// In full: a Guarantee prints six digits, which hide the gap.
			return fmt.Errorf("its %s (%v, %v) is below the step's least, (%v, %v)", p.name, p.got.Eps, p.got.Delta, p.want.Eps, p.want.Delta)
		}
	}
	values := []struct {
		name      string
		got, want *float64
	}{{"rho", c.Rho, least.Rho}, {"gdp_mu2", c.Mu2, least.Mu2}, {"gdp_delta", &c.MuDelta, &least.MuDelta}, {"rdp", c.Renyi, least.Renyi}}
	for _, v := range values {
		switch {
		case (v.got == nil) != (v.want == nil):
			return fmt.Errorf("its %s %v, where the step's least charge has %v", v.name, fmtValue(v.got), fmtValue(v.want))
		case v.got != nil && !(*v.got >= *v.want):
			return fmt.Errorf("its %s %v is below the step's least, %v", v.name, *v.got, *v.want)
		}
	}
	if least.Mu2 == nil && c.MuDelta != 0 {
		return fmt.Errorf("its gdp_delta %v, where the step's least charge has no Gaussian-DP mu", c.MuDelta)
	}
	return nil
}

// fmtValue formats a quantity of a charge that may be absent.
func fmtValue(x *float64) string {
	if x == nil {
		return "none"
	}
	return fmt.Sprint(*x)
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

// Add returns seq followed by k steps of charge c (k = 0: seq itself):
// their guarantees (Sequence.Add), and each part's quantity added to its
// sums, or the steps counted in its sums' count of steps it could not
// charge. A charge with a quantity below 0, or not finite, is refused:
// no step costs less than nothing, and a ledger's line states its
// charge, so one below 0 would take back what the steps before it spent.
func (f Filter) Add(seq Sequence, c Charge, k int) (Sequence, error) {
	if err := c.check(); err != nil {
		return seq, fmt.Errorf("filter %v: %w", f, err)
	}
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

// MaxSteps returns the largest number k of further steps that s
// describes that f holds within budget after the steps spent (the
// filter's halting rule, Total, after Add of k charges): the last k
// that fits, never a midpoint; 0 when none does (or spent does not);
// when every count up to the most a Sequence holds fits, that many,
// CountLimit - spent.Steps: the budget limits no run of practical
// length. The charge is Charge's: an error when no part can hold s.
func (f Filter) MaxSteps(m *Memo, spent Sequence, s Spend, budget Guarantee) (int, error) {
	c, err := f.Charge(m, s, budget)
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
