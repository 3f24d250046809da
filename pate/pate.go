// Package pate accounts for releases by PATE's mechanisms and labels C-class
// votes with them.
//
// Account gives the data-independent and data-dependent bounds of Papernot,
// Song, Mironov, Raghunathan, Talwar and Erlingsson, "Scalable Private
// Learning with PATE", ICLR 2018, and prepares the data-dependent bound's
// release by smooth sensitivity (AccountResult.ReleaseOnce draws it).
// Label labels C-class vote counts through Confident-GNMax or GNMax with
// darrm's exact samplers, scores the labels against the true ones and
// accounts for them at δ, as that paper's MNIST experiment
// (experiments/patemnist) does.
package pate

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Labelling is how the experiment labels and accounts for the queries.
type Labelling struct {
	// Delta is the δ of the (ε, δ) reported; Directions the divergences
	// the data-dependent bound covers (both, a guarantee, or the PATE
	// paper's one-sided bound).
	Delta      float64
	Directions Directions
	// Smooth are the parameters of the smooth-sensitivity release of the
	// data-dependent ε (releaseSmooth).
	Smooth SmoothParams
	// Answered, if positive, stops at the query whose answer is the
	// Answered-th, as PATE 2018's MNIST student asks until 286 queries
	// are answered; 0 labels every query.
	Answered int
}

// Result is one mechanism's labels and their privacy.
type Result struct {
	Mechanism provenance.MechanismName
	// Queries counts the queries asked: every query, or, with
	// Labelling.Answered, those up to the Answered-th answer (all of
	// them when fewer were answered: Reached is then false).
	Queries int
	Reached bool
	// Answered counts the queries the threshold step answered (every
	// query for GNMax); Accuracy is the share of them whose label is the
	// true one.
	Answered int
	Accuracy float64
	// Privacy of the release at Delta: the realised cost of its answered
	// and withheld queries (rdpAccount with the answers), the
	// data-dependent bound in Directions at its Rényi order, and Smooth,
	// its release by smooth sensitivity (EpsReleased nil, with SSError,
	// when the analysis does not apply). The first three are nil for a
	// release charged per draw, whose Rényi analysis is not made: its
	// guarantee is its filter's budget (they were 0, read as no cost).
	Directions     Directions
	EpsIndependent *float64
	EpsDependent   *float64
	Order          *float64
	Smooth         smooth
	EpsReleased    *float64
	SSError        string
	Delta          float64
	// Publish is the total to publish at Delta of the labels and of the
	// smooth-sensitivity draw when it may be published (EpsReleased is an
	// estimate, not a bound): every query asked charged both steps,
	// chosen as for every release (accountant.Account.Publish), or, with
	// Labelling.Answered, the budget of a Rényi filter fixed before the
	// run (the threshold step on every query it may ask, the GNMax step
	// on Answered). Totals are the valid totals it was chosen from,
	// analysis.
	Publish accountant.Total
	Totals  []accountant.Total
	// Labels holds each query's label, -1 where it was not answered; it
	// has Queries entries.
	Labels []int
}

// Label labels the queries whose teachers' vote counts are counts (C
// classes, K teachers) with mechanism m (GNMax or Confident-GNMax, its
// guarantee at opts.Delta; built as a release builds it, ensemble.New),
// drawing from src, in order, up to
// the opts.Answered-th answer if set; scores the labels against truth and
// accounts for them as opts says, releasing the data-dependent ε by smooth
// sensitivity (releaseSmooth). Once ctx is done it stops, between two
// queries or within the smooth sensitivity's sum, with ctx's error: at
// PATE's 5,000 queries and K = 250 the labels and their release take
// seconds.
func Label(ctx context.Context, counts [][]int, teachers, classes int, truth []int, m ensemble.Mechanism, opts Labelling, src *noise.Source) (Result, error) {
	// What the labels are scored against, checked before any is drawn
	// (an index past truth panicked).
	switch {
	case m == nil:
		return Result{}, fmt.Errorf("pate: label: no mechanism")
	case len(truth) != len(counts):
		return Result{}, fmt.Errorf("pate: label: %d true labels for %d queries: give one per query", len(truth), len(counts))
	}
	for i, y := range truth {
		if y < 0 || y >= classes {
			return Result{}, fmt.Errorf("pate: label: query %d's true label %d is not a class of [0, %d)", i+1, y, classes)
		}
	}
	if perDraw(m) {
		return labelPerDraw(ctx, counts, teachers, classes, truth, m, opts, src)
	}
	// As a release draws it (ensemble.New): a zero noise is the discrete
	// noise, which the account refused as unset.
	g, _ := ensemble.Steps(m, classes)
	g = g.Drawn()
	if g.Sigma2 == 0 {
		return Result{}, fmt.Errorf("pate: %s labels 0/1 votes, not class counts", m.Name())
	}
	agg, err := build(classMechanism(m.Name(), g, opts.Delta), teachers, classes)
	if err != nil {
		return Result{}, err
	}
	acct, err := newRDPAccount(g, teachers, classes, rdpOptions{Directions: opts.Directions})
	if err != nil {
		return Result{}, err
	}
	res := Result{Mechanism: m.Name(), Delta: opts.Delta, Directions: opts.Directions}
	queries := make([]votefile.Query, len(counts))
	for i, c := range counts {
		queries[i] = votefile.Query{Index: i + 1, Counts: c}
	}
	right := 0
	err = ensemble.Label(ctx, queries, agg.Answer, src, func(q *votefile.Query, label int, answered bool) (bool, error) {
		ans := answerWithheld
		if answered {
			ans = answerGiven
			res.Answered++
			if label == truth[q.Index-1] {
				right++
			}
		}
		res.Labels = append(res.Labels, label)
		if err := acct.add(q.Counts, ans); err != nil {
			return false, err
		}
		return opts.Answered > 0 && res.Answered == opts.Answered, nil
	})
	if err != nil {
		return res, err
	}
	res.Reached = opts.Answered == 0 || res.Answered == opts.Answered
	res.Queries = len(res.Labels)
	if res.Answered > 0 {
		res.Accuracy = float64(right) / float64(res.Answered)
	}
	r, err := acct.result(opts.Delta, accountant.PaperConversion)
	if err != nil {
		return res, err
	}
	res.EpsIndependent, res.EpsDependent, res.Order = &r.Independent.Eps, &r.Dependent.Eps, &r.Dependent.Order
	// The smooth sensitivity takes about 0.5 ms a query at K = 250: an
	// interruption there is Label's error, not the release's.
	ss, err := releaseSmooth(ctx, acct, r, opts.Smooth, opts.Delta, accountant.PaperConversion, src)
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	res.Smooth = ss
	switch {
	case err != nil:
		res.SSError = err.Error()
	case ss.Error != "":
		res.SSError = ss.Error
	default:
		res.EpsReleased = &ss.Eps
	}
	res.Publish, res.Totals, err = labelTotals(agg, g.RunSlope, len(counts), res.Queries, opts, ss)
	return res, err
}

// labelPerDraw is Label for a mechanism charged per draw to a
// Gaussian-DP filter (progressive GNMax, its budget set), built as a
// release builds it: the queries are asked in order until the filter has
// no room for the next one's draws (or the opts.Answered-th answer), and
// the total to publish is the filter's budget. No data-dependent bound
// is offered for it (SSError says so).
func labelPerDraw(ctx context.Context, counts [][]int, teachers, classes int, truth []int, m ensemble.Mechanism, opts Labelling, src *noise.Source) (Result, error) {
	agg, err := build(m, teachers, classes)
	if err != nil {
		return Result{}, err
	}
	res := Result{Mechanism: m.Name(), Directions: opts.Directions, SSError: "not offered: every draw was charged to the Gaussian-DP filter before it was drawn, and its budget is the guarantee"}
	queries := make([]votefile.Query, len(counts))
	for i, c := range counts {
		queries[i] = votefile.Query{Index: i + 1, Counts: c}
	}
	right := 0
	err = ensemble.Label(ctx, queries, agg.Answer, src, func(q *votefile.Query, label int, answered bool) (bool, error) {
		if answered {
			res.Answered++
			if label == truth[q.Index-1] {
				right++
			}
		}
		res.Labels = append(res.Labels, label)
		return opts.Answered > 0 && res.Answered == opts.Answered, nil
	})
	if err != nil {
		return res, err
	}
	res.Reached = opts.Answered == 0 || res.Answered == opts.Answered
	res.Queries = len(res.Labels)
	if res.Answered > 0 {
		res.Accuracy = float64(right) / float64(res.Answered)
	}
	budget := accountant.Budget{Guarantee: agg.Privacy().Guarantee}
	if f, ok := m.(ensemble.ProgressiveGNMax); ok {
		budget.Guarantee = f.Budget
	}
	gdp := accountant.GDPFilter
	res.Publish, err = (accountant.Account{Filter: &gdp, Budget: &budget}).Publish(nil)
	res.Publish.DeltaFrom, res.Delta = accountant.BudgetDelta, budget.Delta
	return res, err
}

// labelTotals returns the total to publish and the totals it is chosen
// from of a run of Label that asked the first asked of available
// queries, its smooth-sensitivity release being ss. Every query asked is charged both steps
// (the composition of every step the run could take: ensemble's
// accounting of a release, as aggregate's); a run that stops at the
// Answered-th answer asks a number of queries that depends on the
// outputs, and is held by a Rényi filter whose budget is fixed before it
// (Feldman and Zrnic 2021): the threshold step on every available query,
// the GNMax step on Answered. A draw whose parameters were fixed without
// the votes is composed with them (rdpTotal). slope is the mechanism's
// data-independent Rényi slope of a run of the mechanism (its RunSlope).
func labelTotals(agg ensemble.Labeler, slope func(queries, labels int) (float64, error), available, asked int, opts Labelling, ss smooth) (accountant.Total, []accountant.Total, error) {
	var draws []draw
	if ss.Drawn && !ss.FromVotes {
		draws = []draw{{Order: ss.Order, Beta: ss.Beta, Sigma: ss.Sigma}}
	}
	if opts.Answered == 0 && len(draws) == 0 {
		acc, _, err := agg.Privacy().Account(provenance.Binding{}, opts.Delta)
		if err != nil {
			return accountant.Total{}, nil, err
		}
		acc.Delta, acc.Steps = &opts.Delta, asked
		// The total and the totals compose the same run.
		memo := new(accountant.Memo)
		t, err := acc.Publish(memo)
		if asked == 0 {
			return t, nil, err
		}
		ts, terr := acc.Totals(memo)
		if terr != nil {
			ts = nil
		}
		return t, ts, err
	}
	queries, labels := asked, asked
	if opts.Answered > 0 {
		queries, labels = available, opts.Answered
	}
	rho, err := slope(queries, labels)
	if err != nil {
		return accountant.Total{}, nil, err
	}
	t, err := rdpTotal(rho, draws, nil, opts.Delta)
	return t, []accountant.Total{t}, err
}
