package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/darrm/darrm/ensemble"
)

// PrecisionError says that no Confident-GNMax plan of the queries asked
// reaches the least precision asked on the proxy votes, what precision
// is reachable, and how many queries reach the one asked.
type PrecisionError struct {
	// Asked is the least precision asked (ConfidentOptions.MinPrecision)
	// for Queries queries.
	Asked   float64
	Queries int
	// Best is the highest expected precision a plan of Queries reaches,
	// at a threshold that answers at least one proxy query, and BestPlan
	// that plan with its utility.
	Best     float64
	BestPlan Plan
	// Reach is the plan, with its utility, of the largest number of
	// queries (Reach.Queries) that reaches Asked; nil when not even one
	// query does, at the least noise the search tried.
	Reach *Plan
}

func (e *PrecisionError) Error() string {
	_, v, rule := e.Param()
	return fmt.Sprintf("min-precision = %v: %s", v, rule)
}

// Param returns the parameter, its value and what rule it breaks, in
// words with the figures: the precision reachable and the queries that
// reach the one asked.
func (e *PrecisionError) Param() (string, any, string) {
	g, u := e.BestPlan.Request.Mechanism.GNMax, e.BestPlan.Utility
	rule := fmt.Sprintf("no threshold of a plan of %d queries reaches it on the proxy votes: the best expected precision is %.4g (threshold %v, sigma1 %.4g, sigma2 %.4g: %.1f correct of %.1f answered)",
		e.Queries, e.Best, g.Threshold, g.Sigma1, g.Sigma2, u.Correct, u.Answered)
	if e.Reach == nil {
		return "min-precision", e.Asked, rule + "; no number of queries reaches it"
	}
	g, u = e.Reach.Request.Mechanism.GNMax, e.Reach.Utility
	return "min-precision", e.Asked, rule + fmt.Sprintf("; at most %d queries reach %v (threshold %v, sigma1 %.4g, sigma2 %.4g: %.1f correct of %.1f answered)",
		e.Reach.Queries, e.Asked, g.Threshold, g.Sigma1, g.Sigma2, u.Correct, u.Answered)
}

// unreachable returns the *PrecisionError of a plan of queries that no
// threshold of the ratios' plans rps reaches minPrecision with.
//
// The precision depends on (σ1, σ2, T) alone, and the queries that fit on
// the noise alone, so the largest number of queries that reaches
// minPrecision is searched on the noise: for each ratio, the largest σ2
// (σ1 = ratio·σ2) at which some threshold reaches it, by halving from the
// plan's σ2 and then bisecting to 0.1% (searchRel); the queries that σ2,
// less searchRel, fits in the plan's target are that ratio's number. The
// most of them is then planned (confident), and, should the precision not
// fall with the noise everywhere, one query fewer at a time, at most
// maxReachTries times. So Reach.Queries is the largest to within about
// 0.3% (σ2 to 0.2%, the queries that fit growing like σ2²).
func unreachable(ctx context.Context, r Request, queries int, ratios []float64, proxy Proxy, minPrecision float64, rps []ratioPlan) error {
	e := &PrecisionError{Asked: minPrecision, Queries: queries, Best: -1}
	for _, rp := range rps {
		if t, p := rp.scores.bestPrecision(); t >= 0 && p > e.Best {
			e.Best, e.BestPlan = p, rp.at(t)
		}
	}
	if e.Best < 0 {
		return fmt.Errorf("plan: no threshold answers one proxy query in expectation: the proxy votes' largest counts are too far below every threshold")
	}
	if err := verify(ctx, &e.BestPlan); err != nil {
		return err
	}
	e.BestPlan.Utility.On = proxy.describe(queries)
	most := make([]int, len(rps))
	errs := make([]error, len(rps))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, rp := range rps {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			most[i], errs[i] = mostReaching(ctx, r, rp, proxy, minPrecision)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
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
// when none does down to 2^-30 of rp's σ2.
func mostReaching(ctx context.Context, r Request, rp ratioPlan, proxy Proxy, p float64) (int, error) {
	reaches := func(sigma2 float64) (bool, error) {
		s, err := score(ctx, proxy, rp.ratio*sigma2, sigma2)
		return s.best(p) >= 0, err
	}
	hi := rp.plan.Request.Mechanism.GNMax.Sigma2 // does not reach p
	lo := hi
	for i := 0; ; i++ {
		if i == 30 {
			return 0, nil
		}
		lo /= 2
		ok, err := reaches(lo)
		if err != nil {
			return 0, err
		}
		if ok {
			break
		}
		hi = lo
	}
	for hi > lo*(1+searchRel) {
		mid := math.Sqrt(lo * hi)
		ok, err := reaches(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	// A plan of the queries lo fits may return a σ2 up to searchRel above
	// the least that fits them: count them at lo/(1 + searchRel), so that
	// the plan's σ2 is at most lo.
	at := rp.plan.Request
	rp.plan.knob.set(&at, (1+searchRel)/lo)
	b, err := build(ctx, at)
	if errors.Is(err, ensemble.ErrNotCertified) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return b.queriesFor(at), nil
}
