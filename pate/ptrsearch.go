package pate

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/param"
)

// ptrPassProbability returns the plan of a PTR release by m (as PlanPTR
// takes it) of the first opts.Queries queries of proxy (every query when
// 0) and the probability that its test would pass on them,
// Φ((g + 1)/σ - z), g the distance to instability (ptrStatistic; the
// lattice's difference from continuous noise neglected). It is for
// planning on proxy votes that do not depend on the private training data
// (synthetic, or of teachers trained on public data; not the same
// teachers' votes on other queries): on votes that do, it is a function
// of the private data, and so is a proposal chosen from it. Without
// withTest the plan is ptrPlan's without the test's guarantee (the
// probability is the same).
func ptrPassProbability(ctx context.Context, mo *memo, proxy [][]int, teachers, classes int, m ensemble.Mechanism, opts PTROptions, withTest bool) (PTRResult, float64, error) {
	r, acct, err := ptrPlan(mo, proxy, teachers, classes, m, opts, "proxy votes", withTest)
	if err != nil {
		return r, 0, err
	}
	g, err := acct.ptrStatistic(ctx, r)
	if err != nil {
		return r, 0, err
	}
	return r, math.Erfc(-(float64(g+1)/r.Sigma-r.Margin)/math.Sqrt2) / 2, nil
}

// PTRQueries returns the plan of the PTR release under opts (its Queries
// ignored) of the most queries N, the first of proxy, that passes on proxy
// with probability at least pass, and that probability, Φ((g + 1)/σ - z),
// g the distance to instability (ptrStatistic; the lattice's difference
// from continuous noise neglected); found by bisection (the probability
// falls as queries are added); a plan of 0 queries when not even one
// passes. It is for planning on proxy votes that do not depend on the
// private training data (synthetic, or of teachers trained on public
// data; not the same teachers' votes on other queries): on votes that do,
// it is a function of the private data, and so is a proposal chosen from
// it. memo keeps what the search computes for the calls that ask again
// (accountant.Memo; nil: the search's own, forgotten when it returns).
func PTRQueries(ctx context.Context, memo *accountant.Memo, proxy [][]int, teachers, classes int, m ensemble.Mechanism, opts PTROptions, pass float64) (PTRResult, float64, error) {
	if !(pass > 0 && pass < 1) {
		return PTRResult{}, 0, fmt.Errorf("PATE PTR: %w", &param.Error{Name: "pass probability", Value: pass, Rule: "must be in (0, 1)"})
	}
	// The search's plans need no test guarantee (ptrPassProbability
	// without it); the plan returned is ptrRule's, with it.
	mo := memoIn(memo)
	lo, hi, plo := 0, len(proxy)+1, 0.0
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		o := opts
		o.Queries = mid
		_, p, err := ptrPassProbability(ctx, mo, proxy, teachers, classes, m, o, false)
		if err != nil {
			return PTRResult{}, 0, err
		}
		if p >= pass {
			lo, plo = mid, p
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return PTRResult{}, plo, nil
	}
	g, err := ptrFamily(m, classes)
	if err != nil {
		return PTRResult{}, 0, err
	}
	o := opts
	o.Queries = lo
	best, err := ptrRule(mo, g, classes, lo, o)
	if err != nil {
		return PTRResult{}, 0, err
	}
	best.planned = ptrPlanned{mech: g, classes: classes, budget: opts.Budget, abstain: opts.Abstain}
	return best, plo, nil
}
