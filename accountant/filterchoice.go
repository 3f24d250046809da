package accountant

import (
	"errors"
	"math"
)

// FilterCandidate is a filter that a ledger open to any use may take
// (OpenFilters), and what it allows of the labels expected.
type FilterCandidate struct {
	Filter Filter
	// Steps is the number of steps of the hint the filter allows from an
	// empty sequence (Filter.MaxSteps), -1 without a hint; Err says why
	// it holds none of them.
	Steps int
	Err   error
}

// renyiOrders are the orders a Rényi filter's part is chosen from for a
// hint: integers, so that the sampled Gaussian has a curve at each.
var renyiOrders = [...]float64{2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 256, 512, 1024}

// maxSlackHalvings bounds the advanced filter's slack, chosen for a hint
// among δ_B·2^-j, j = 0, …, maxSlackHalvings.
const maxSlackHalvings = 12

// OpenFilters returns the filters a ledger open to any use may hold its
// runs to under the budget, each valid for parameters chosen adaptively
// (Filter), with what each allows of the steps hint describes (nil: no
// hint), and the index of the one to keep. Each is chosen from public
// information only, before the first step: the relation, the budget and
// the hint, which does not bind the releases.
//
// With δ_B > 0 every candidate but the last is a filter of δ_B with a
// part of simple composition at δ = 0 beside it, which costs nothing
// (Filter's union) and gives every step with a pure point at least its
// basic-composition count, Σε_i <= ε_B: the Gaussian-DP filter, the zCDP
// filter, with a hint the Rényi filter at the order (renyiOrders) and
// the advanced filter at the slack (δ_B·2^-j) that allow the hint the
// most steps, and last simple composition of δ_B alone. With δ_B = 0,
// simple composition of pure points is the only filter.
//
// The one kept allows the hint the most steps, the earlier of equals;
// without a hint it is the relation's: the Gaussian-DP filter with
// simple composition of pure points in the one-vote relation (Gaussian
// noise, discrete Laplace noise and pure labels), simple composition of
// δ_B in the private-teachers relation, whose labels are (ε, δ)-DP.
func (budget Budget) OpenFilters(m *Memo, r Relation, hint *Spend) ([]FilterCandidate, int, error) {
	m = m.forCall()
	if err := budget.Validate(); err != nil {
		return nil, 0, err
	}
	if hint != nil {
		if err := hint.Check(); err != nil {
			return nil, 0, err
		}
	}
	d := budget.Delta
	pure := FilterPart{Method: Simple}
	if !(d > 0) {
		c := candidate(m, Filter{Parts: []FilterPart{pure}}, budget, hint)
		return []FilterCandidate{c}, 0, nil
	}
	out := []FilterCandidate{
		candidate(m, Filter{Parts: []FilterPart{{Method: GDPFilter, Delta: d}, pure}}, budget, hint),
		candidate(m, Filter{Parts: []FilterPart{{Method: ZCDPFilter, Delta: d}, pure}}, budget, hint),
	}
	if hint != nil {
		var best FilterCandidate
		for _, a := range renyiOrders {
			c := candidate(m, Filter{Parts: []FilterPart{{Method: RenyiFilter, Delta: d, Order: a}, pure}}, budget, hint)
			if best.Filter.Parts == nil || c.Steps > best.Steps {
				best = c
			}
		}
		out = append(out, best)
		best = FilterCandidate{}
		for j := range maxSlackHalvings + 1 {
			slack := math.Ldexp(d, -j)
			c := candidate(m, Filter{Parts: []FilterPart{{Method: AdvancedFilter, Delta: d, Slack: slack}, pure}}, budget, hint)
			if best.Filter.Parts == nil || c.Steps > best.Steps {
				best = c
			}
		}
		out = append(out, best)
	}
	out = append(out, candidate(m, Filter{Parts: []FilterPart{{Method: Simple, Delta: d}}}, budget, hint))
	if hint == nil {
		if r == OneVote {
			return out, 0, nil
		}
		return out, len(out) - 1, nil
	}
	keep := 0
	for i, c := range out {
		if c.Steps > out[keep].Steps {
			keep = i
		}
	}
	if out[keep].Steps <= 0 {
		return out, keep, errors.Join(errNoFilter, out[keep].Err)
	}
	return out, keep, nil
}

// errNoFilter says that no candidate filter holds a step of the hint.
var errNoFilter = errors.New("no filter holds a step of the labels expected within the budget")

// candidate returns f with what it allows of hint.
func candidate(m *Memo, f Filter, budget Budget, hint *Spend) FilterCandidate {
	c := FilterCandidate{Filter: f, Steps: -1}
	if hint != nil {
		c.Steps, c.Err = f.MaxSteps(m, Sequence{}, *hint, budget.Guarantee)
	}
	return c
}
