package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Comparison is every mechanism that fits the proxy votes, each planned
// for the same budget, queries and target (one run or a new ledger) and
// scored on the votes, and the best of them.
type Comparison struct {
	// Plans are the mechanisms compared, in the order Compare lists them,
	// each with its expected utility on the proxy votes (Plan.Utility), or
	// why it has none (NoFit: a budget that fits not even the least
	// generous value of its parameter, a parameter error on
	// budget-eps, or a least precision no threshold reaches).
	Plans []Equal
	// Best is the index in Plans of the plan with the most expected
	// correct labels among those whose expected precision (correct of
	// answered) reaches Request.MinPrecision, -1 when none does.
	Best int
	// Left are the mechanisms of the votes' classes left out, each with
	// why.
	Left []string
}

// Compare plans every mechanism of ms that fits the proxy votes
// base.Proxy (needed) for base.Queries queries of base.Budget in
// base.For's target, scores each on the votes, and names the one with the
// most expected correct labels: those on class counts that a plan scores
// on proxy votes (ensemble.Planned.Expect; with a threshold step, chosen
// on them: onProxy), in the order of ms, then, for two classes of K odd
// teachers who all vote, those of 0/1 votes in the one-vote relation,
// scored exactly by their noise function. A mechanism calibrated to its
// teachers' guarantee (ensemble.Needs.Teachers), planned on its own, or
// not planned by a setting is not compared; one of 0/1 votes that the
// votes do not fit, or one whose plan fails (a setting of its own that
// no plan chooses, unset), is left out, saying why (Comparison.Left); a
// mechanism of either kind of votes is planned on counts unless it still
// labels 0/1 votes on two classes. Every plan
// has the same total budget and target, so their utilities compare at
// equal totals. base.MinPrecision sets a threshold step's threshold, and
// a mechanism whose expected precision falls short of it is not the best.
//
// base gives K, the classes, the budget, its slack, the target, the
// filter and the certificate's options; its Mechanism is not read. Each
// mechanism of ms comes with its settings but the one a plan chooses: a
// per-query δ and noise, a γ source.
func Compare(ctx context.Context, base Request, ms []ensemble.Mechanism) (Comparison, error) {
	if err := base.validate(); err != nil {
		return Comparison{}, err
	}
	if base.Proxy == nil {
		return Comparison{}, errors.New("plan: Compare's base.Proxy is not set: a comparison scores the plans on proxy votes")
	}
	// Compare's best reaches the least precision too: one out of range
	// made no plan the best (NaN, 1) or every plan one (a negative).
	if err := base.checkMinPrecision(); err != nil {
		return Comparison{}, err
	}
	base = base.withMemo()
	queries, proxy := base.Queries, *base.Proxy
	if err := proxy.check(base.K, base.Classes); err != nil {
		return Comparison{}, err
	}
	// Every mechanism compared is in the one-vote relation (below): none
	// is released from teachers whose partition breaks it.
	if err := holds(provenance.Teachers{Relation: accountant.OneVote, Kind: base.Kind, Partition: base.Partition}); err != nil {
		return Comparison{}, err
	}
	c := Comparison{Best: -1}
	type planner struct {
		name provenance.MechanismName
		plan func() (Plan, error)
	}
	var counts, two []planner
	for _, m := range ms {
		r := base
		r.Mechanism = m
		if slices.Contains(m.Votes(), votefile.ManyClasses) {
			if p := m.Plan(votefile.ManyClasses); p.Setting != "" && !m.Needs(votefile.ManyClasses).Teachers && (p.Expect != nil || p.Threshold != nil) {
				// At a first value of its setting, which the plan
				// chooses: GNMax, which labels either kind of votes,
				// then labels counts alone. One that still labels 0/1
				// votes on two classes is planned as one of 0/1 votes.
				if first := p.With(1); ensemble.VotesOf(first, proxy.Classes) == votefile.ManyClasses {
					r.Mechanism, r.Classes = first, proxy.Classes
					counts = append(counts, planner{m.Name(), func() (Plan, error) { return onProxy(ctx, r, queries, proxy) }})
					continue
				}
			}
			if !slices.Contains(m.Votes(), votefile.TwoClass) {
				// Left out, saying why, where the proxy's votes are of
				// its kind: a user comparing learns that it exists.
				switch p := m.Plan(votefile.ManyClasses); {
				case proxy.Classes == 2:
				case p.OnProxy != nil:
					c.Left = append(c.Left, fmt.Sprintf("%s: planned on its own (plan --mechanism %s --votes): it answers as many queries as the budget allows, not a number given", m.Name(), m.Name()))
				default:
					c.Left = append(c.Left, fmt.Sprintf("%s: no setting of its plan is scored on proxy votes", m.Name()))
				}
				continue
			}
		}
		if p := m.Plan(votefile.TwoClass); p.Setting == "" || m.Needs(votefile.TwoClass).Teachers || m.Relation() != accountant.OneVote {
			continue
		}
		if why := twoClassFits(proxy); why != "" {
			if proxy.Classes == 2 {
				c.Left = append(c.Left, fmt.Sprintf("%s: %s", m.Name(), why))
			}
			continue
		}
		r.Classes = 2
		two = append(two, planner{m.Name(), func() (Plan, error) { return scoreExactly(ctx, r, queries, proxy) }})
	}
	for _, p := range append(counts, two...) {
		pl, err := p.plan()
		s := Equal{Mechanism: p.name}
		switch {
		case fitsNot(err), errors.As(err, new(*precisionError)):
			s.NoFit = err
		case ctx.Err() != nil:
			return Comparison{}, ctx.Err()
		case err != nil:
			// A mechanism that cannot be planned here (a setting of its
			// own that no plan chooses, left unset) is left out, saying
			// why: the others still compare.
			c.Left = append(c.Left, fmt.Sprintf("%s: %v", p.name, err))
			continue
		default:
			s.Plan = pl
			u := pl.Utility
			if u.Correct >= base.MinPrecision*u.Answered && (c.Best < 0 || u.Correct > c.Plans[c.Best].Plan.Utility.Correct) {
				c.Best = len(c.Plans)
			}
		}
		c.Plans = append(c.Plans, s)
	}
	return c, nil
}

// twoClassFits says why a mechanism of 0/1 votes does not fit the proxy
// votes, "" when they do: two classes of K odd teachers who all vote (it
// releases the majority of 0/1 votes).
func twoClassFits(proxy Proxy) string {
	if proxy.Classes != 2 {
		return "it labels two classes"
	}
	if proxy.K%2 == 0 {
		return fmt.Sprintf("it needs an odd number of teachers, not K = %d", proxy.K)
	}
	if n, same := commonSum(proxy.Counts); !same || n != proxy.K {
		return "it needs every teacher's vote on every query, and some abstain here"
	}
	return ""
}

// scoreExactly returns the plan of the setting of r's mechanism of 0/1
// votes for queries queries (parameters) with its expected correct labels
// on the two-class proxy votes, exactly: with l votes for class 1, the
// label is the majority with probability (1 + γ(l))/2, γ its aggregator's
// noise function as sampled (ensemble.Aggregator.Gamma).
func scoreExactly(ctx context.Context, r Request, queries int, proxy Proxy) (Plan, error) {
	pl, err := parameters(ctx, r, queries)
	if err != nil {
		return Plan{}, err
	}
	agg, _, err := pl.Request.Aggregator(ctx)
	if err != nil {
		return Plan{}, err
	}
	a, ok := agg.(ensemble.Aggregator)
	if !ok {
		return Plan{}, fmt.Errorf("plan: %s releases no noise function of the majority", r.Mechanism.Name())
	}
	g := a.Gamma()
	var c float64
	for i, counts := range proxy.Counts {
		l := counts[1]
		one := (1 - g[l]) / 2 // Pr[label = 1]
		if 2*l > proxy.K {
			one = (1 + g[l]) / 2
		}
		if proxy.truth(i) == 1 {
			c += one
		} else {
			c += 1 - one
		}
	}
	pl.Utility = answeredAll(c, queries, proxy)
	return pl, nil
}

// answeredAll returns the utility of a mechanism that answers every
// query and expects correct correct labels over the proxy votes.
func answeredAll(correct float64, queries int, proxy Proxy) *Utility {
	q := float64(queries)
	return &Utility{Correct: correct / float64(len(proxy.Counts)) * q, Answered: q, On: proxy.describe(queries)}
}

// OnProxy plans m, a mechanism of vote counts planned on its own
// (ensemble.Planned.OnProxy: progressive GNMax), on the proxy votes for
// the budget of its Gaussian-DP filter, at the least agreement
// minAgreement of its labels with each query's class (the proxy's truth,
// else its plurality; 0: the mechanism's default), its simulation seeded
// by seed: a function of the public proxy votes and the seed alone.
func OnProxy(ctx context.Context, m ensemble.Mechanism, proxy Proxy, budget accountant.Guarantee, minAgreement float64, seed uint64) (ensemble.ProxyPlan, error) {
	if m == nil {
		return ensemble.ProxyPlan{}, errors.New("plan: OnProxy: m is nil: the mechanism to plan (ensemble.ProgressiveGNMax)")
	}
	own := m.Plan(votefile.ManyClasses).OnProxy
	if own == nil {
		return ensemble.ProxyPlan{}, fmt.Errorf("plan: %s is not planned on its own on proxy votes", m.Name())
	}
	if err := proxy.check(proxy.K, proxy.Classes); err != nil {
		return ensemble.ProxyPlan{}, err
	}
	truth := make([]int, len(proxy.Counts))
	for i := range truth {
		truth[i] = proxy.truth(i)
	}
	return own(ctx, ensemble.ProxyRequest{K: proxy.K, Classes: proxy.Classes, Counts: proxy.Counts, Truth: truth, Budget: budget, MinAgreement: minAgreement, Seed: seed})
}
