package plan

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/votefile"
)

// precisionError says that no Confident-GNMax plan of the queries asked
// reaches the least precision asked on the proxy votes, what precision
// is reachable, and how many queries reach the one asked.
type precisionError struct {
	// Asked is the least precision asked (Request.MinPrecision)
	// for Queries queries.
	Asked   float64
	Queries int
	// Best is the highest expected precision a plan of Queries reaches,
	// at a threshold that answers at least one proxy query, and BestPlan
	// that plan with its utility, as the search found its parameters
	// (its Count is not computed: it is not a plan to release with).
	Best     float64
	BestPlan Plan
	// Reach is the plan, with its utility, of the largest number of
	// queries (Reach.Queries) that reaches Asked; nil when not even one
	// query does, at the least noise the search tried.
	Reach *Plan
}

func (e *precisionError) Error() string {
	_, v, rule := e.Param()
	return fmt.Sprintf("min-precision = %v: %s", v, rule)
}

// Param returns the parameter, its value and what rule it breaks, in
// words with the figures: the precision reachable and the queries that
// reach the one asked.
func (e *precisionError) Param() (string, any, string) {
	// The best precision is rounded down, and its correct labels down and
	// answered ones up, so that neither reads as the one asked when below
	// it (97.996 of 100 read 98.0 of 100.0); the noise up, so that a plan
	// run at the printed σs is not less noise than the one found.
	noise := func(x float64) string { return decimal.Format(x, 4, true, 0) }
	b := e.BestPlan
	u := b.Utility
	rule := fmt.Sprintf("no threshold of a plan of %d queries reaches it on the proxy votes: the best expected precision is %s (threshold %v, sigma1 %s, sigma2 %s: %.1f correct of %.1f answered)",
		e.Queries, decimal.Format(e.Best, 4, false, 0), b.threshold, noise(b.sigma1), noise(b.Value), math.Floor(u.Correct*10)/10, math.Ceil(u.Answered*10)/10)
	if e.Reach == nil {
		return "min-precision", e.Asked, rule + "; no number of queries reaches it"
	}
	r := e.Reach
	u = r.Utility
	return "min-precision", e.Asked, rule + fmt.Sprintf("; at most %d queries reach %v (threshold %v, sigma1 %s, sigma2 %s: %.1f correct of %.1f answered)",
		r.Queries, e.Asked, r.threshold, noise(r.sigma1), noise(r.Value), u.Correct, u.Answered)
}

// unreachable returns the *precisionError of a plan of queries that no
// threshold of the ratios' plans rps reaches minPrecision with.
//
// The precision depends on (σ1, σ2, T) alone, and the queries that fit on
// the noise alone, so the largest number of queries that reaches
// minPrecision is searched on the noise: for each ratio, the largest σ2
// (σ1 = ratio·σ2) at which some threshold reaches it, to 0.1% (searchRel,
// mostReaching); the queries that σ2,
// less searchRel, fits in the plan's target are that ratio's number. The
// most of them is then planned (confident), and, should the precision not
// fall with the noise everywhere, one query fewer at a time, at most
// maxReachTries times. So Reach.Queries is the largest to within about
// 0.3% (σ2 to 0.2%, the queries that fit growing like σ2²).
func unreachable(ctx context.Context, r Request, queries int, ratios []float64, proxy Proxy, minPrecision float64, rps []ratioPlan) error {
	e := &precisionError{Asked: minPrecision, Queries: queries, Best: -1}
	for _, rp := range rps {
		if t, p := rp.scores.bestPrecision(); t >= 0 && p > e.Best {
			e.Best, e.BestPlan = p, rp.at(t)
		}
	}
	if e.Best < 0 {
		return fmt.Errorf("plan: no threshold answers one proxy query in expectation: the proxy votes' largest counts are too far below every threshold")
	}
	e.BestPlan.Utility.On = proxy.describe(queries)
	most := make([]int, len(rps))
	err := inParallel(len(rps), func(i int) (err error) {
		most[i], err = mostReaching(ctx, r, rps[i], proxy, minPrecision)
		return err
	})
	if err != nil {
		return err
	}
	q := 0
	for _, n := range most {
		q = max(q, min(n, queries-1))
	}
	for try := 0; q >= 1 && try < maxReachTries; try, q = try+1, q-1 {
		pl, _, err := confident(ctx, r, q, ratios, proxy, minPrecision)
		if err != nil {
			return err
		}
		if pl != nil {
			pl.Utility.On = proxy.describe(q)
			e.Reach = pl
			break
		}
	}
	return e
}

// maxReachTries bounds the plans unreachable tries below the number of
// queries its search on the noise found.
const maxReachTries = 4

// mostReaching returns the number of queries that the largest σ2 of rp's
// ratio at which a threshold reaches precision p fits in r's target; 0
// when none does down to 2^-30 of rp's σ2. The best precision falls
// smoothly as log σ2 rises, so its crossing of p is bracketed by halving
// σ2 and then found by regula falsi on log σ2 with the Illinois rule,
// which keeps a bracket (precision >= p at its lower end, below at its
// upper) and shrinks it to searchRel in a few evaluations where
// bisection takes about ten.
func mostReaching(ctx context.Context, r Request, rp ratioPlan, proxy Proxy, p float64) (int, error) {
	// gap returns the best precision at σ2 less p: >= 0 where p is reached.
	gap := func(sigma2 float64) (float64, error) {
		s, err := score(ctx, proxy, rp.ratio*sigma2, rp.plan.Request.planned().With(sigma2).Plan(votefile.ManyClasses).Expect)
		if err != nil {
			return 0, err
		}
		if t, prec := s.bestPrecision(); t >= 0 {
			return prec - p, nil
		}
		return -1, nil
	}
	hi := rp.plan.Value // σ2: does not reach p
	ghi, err := gap(hi)
	if err != nil {
		return 0, err
	}
	lo, glo := hi, ghi
	for i := 0; glo < 0; i++ {
		if i == 30 {
			return 0, nil
		}
		hi, ghi = lo, glo
		lo /= 2
		if glo, err = gap(lo); err != nil {
			return 0, err
		}
	}
	side := 0 // the end kept by the last step: -1 lo, +1 hi
	for hi > lo*(1+searchRel) {
		u, v := outward.Ln(lo), outward.Ln(hi)
		mid := math.Exp(u + (v-u)*glo/(glo-ghi))
		if !(mid > lo*(1+searchRel/4) && mid < hi/(1+searchRel/4)) {
			mid = math.Sqrt(lo * hi) // a step that would not shrink the bracket
		}
		g, err := gap(mid)
		if err != nil {
			return 0, err
		}
		if g >= 0 {
			lo, glo = mid, g
			if side == 1 {
				ghi /= 2 // Illinois: the end kept twice counts half
			}
			side = 1
		} else {
			hi, ghi = mid, g
			if side == -1 {
				glo /= 2
			}
			side = -1
		}
	}
	// A plan of the queries lo fits may return a σ2 up to searchRel above
	// the least that fits them: count them at lo/(1 + searchRel), so that
	// the plan's σ2 is at most lo.
	at := rp.plan.Request
	rp.plan.knob.set(&at, (1+searchRel)/lo)
	b, err := build(ctx, at)
	if errors.Is(err, gamma.ErrNotCertified) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return b.queriesFor(ctx, at), nil
}
