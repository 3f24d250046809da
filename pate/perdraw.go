package pate

import (
	"context"
	"fmt"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// FilterAccount is the account of the labels of a release charged per
// draw to a Gaussian-DP filter (ensemble.ProgressiveGNMax): its total to
// publish is the filter's budget, which the labels' header states and the
// account recomputes from the header's settings by the release's own
// path (ensemble.New, accountant.Account.Publish of the filter); the
// queries labelled, answered and withheld are what the labels show.
type FilterAccount struct {
	Mechanism ensemble.ProgressiveGNMax
	Total     accountant.Total
	PerQuery  accountant.Guarantee
	Queries   int
	Answered  int
	Withheld  int
}

// perDraw reports whether m is a mechanism accounted only by the filter
// that charges each of its draws (ensemble.ChargedPerDraw: progressive
// GNMax).
func perDraw(m ensemble.Mechanism) bool {
	c, ok := ensemble.ChargedPerDraw(m, accountant.Guarantee{})
	return ok && m != nil && c.Name() == m.Name()
}

// accountPerDraw is Account of the labels of a release charged per draw:
// their header must state the mechanism, its settings and the filter's
// budget as the release wrote them, and publish the total that the
// release's path computes from them; every label row must name its
// query, in order.
func accountPerDraw(ctx context.Context, in votefile.Reader, opts AccountOptions, out *AccountResult) (*AccountResult, error) {
	lr := opts.Labels
	if lr == nil || lr.Meta() == nil {
		return nil, fmt.Errorf("pate: %s is accounted by the Gaussian-DP filter that charged its release's draws: give the release's labels, whose header states the filter's budget", opts.Mechanism.Name())
	}
	m := lr.Meta()
	stated, err := ensemble.Mechanisms().FromHeader(m)
	if err != nil {
		return nil, lr.HeaderErrorf("%v", err)
	}
	mech, ok := stated.(ensemble.ProgressiveGNMax)
	switch {
	case !ok || provenance.MechanismName(m.Mechanism) != opts.Mechanism.Name():
		return nil, lr.Errorf("made by %s, but the account is of %s", m.Mechanism, opts.Mechanism.Name())
	case m.K != in.K() || m.Classes != in.Classes():
		return nil, lr.Errorf("labels of K = %d teachers over %d classes, but the votes have K = %d over %d", m.K, m.Classes, in.K(), in.Classes())
	case m.Ensemble != "" && in.Meta() != nil && m.Ensemble != in.Meta().Ensemble:
		return nil, lr.Errorf("labels of ensemble %s, but the votes are of ensemble %s", m.Ensemble, in.Meta().Ensemble)
	case m.Accounting != accountant.GDPFilter.String() || m.Total == nil:
		return nil, lr.HeaderErrorf("accounting %q: the labels of %s are accounted by the Gaussian-DP filter each draw was charged to (accounting %s), whose budget the header states as the total", m.Accounting, m.Mechanism, accountant.GDPFilter)
	}
	if opts.Delta != mech.Budget.Delta {
		// The total is the filter's budget, at its δ: another δ asked
		// for was reported as the budget's, silently.
		return nil, &param.Error{Name: "delta", Value: opts.Delta, Rule: fmt.Sprintf("must be the delta of the Gaussian-DP filter's budget, %v, which the label file's header states: the labels of %s are accounted by that filter, whose budget is their total", mech.Budget.Delta, mech.Name())}
	}
	if g, ok := opts.Mechanism.(ensemble.ProgressiveGNMax); ok {
		g.Budget = mech.Budget
		if !equalSettings(g, mech) {
			return nil, fmt.Errorf("the settings given, %+v, are not those the label file's header states, %+v: the labels were made with the header's (leave the settings out to use them)", g, mech)
		}
	}
	agg, err := build(mech, m.K, m.Classes)
	if err != nil {
		return nil, lr.HeaderErrorf("its settings and budget are not those of a release: %v", err)
	}
	fa := &FilterAccount{Mechanism: mech, PerQuery: agg.Privacy().Guarantee}
	if fa.PerQuery != perQuery(m) {
		return nil, lr.HeaderErrorf("it states eps = %v per query at delta = %v, but its settings and budget give eps = %v: the header contradicts itself (damaged or edited), so its settings cannot be accounted", m.Eps, m.Delta, fa.PerQuery.Eps)
	}
	gdp := accountant.GDPFilter
	budget := accountant.Budget{Guarantee: mech.Budget}
	if fa.Total, err = (accountant.Account{Filter: &gdp, Budget: &budget}).Publish(opts.Memo); err != nil {
		return nil, lr.HeaderErrorf("its budget %v: %v", mech.Budget, err)
	}
	fa.Total.DeltaFrom = accountant.BudgetDelta
	out.Release = accountant.Account{Step: agg.Privacy().Spend, Filter: &gdp, Budget: &budget}
	if t := m.Total; t.Eps != fa.Total.Guarantee.Eps || t.Delta != fa.Total.Guarantee.Delta || t.Argument != fa.Total.Name() {
		return nil, lr.HeaderErrorf("it states the total %v by %q, but a release charged per draw within the budget %v publishes %v by %q: the header does not describe this release",
			accountant.Guarantee{Eps: t.Eps, Delta: t.Delta}, t.Argument, mech.Budget, fa.Total.Guarantee, fa.Total.Name())
	}
	if r := opts.Recorded; r != nil {
		if err := r.chargedPerDraw(lr, m); err != nil {
			return nil, err
		}
	}
	var key votesKey
	labelled := true
	for n := 1; in.Next(); n++ {
		q := in.Query()
		key.add(q.Counts)
		if n%(1<<16) == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !labelled {
			out.Unlabelled++
			continue
		}
		a, ended, err := labelOf(lr, q, n)
		if err != nil {
			return nil, err
		}
		if ended {
			labelled = false
			out.Unlabelled++
			continue
		}
		fa.Queries++
		if a == answerGiven {
			fa.Answered++
		} else {
			fa.Withheld++
		}
	}
	if err := in.Err(); err != nil {
		return nil, err
	}
	if err := labelsEnd(lr, labelled); err != nil {
		return nil, err
	}
	if err := fitsBudget(opts.Memo, mech, fa.Answered, fa.Withheld); err != nil {
		return nil, lr.HeaderErrorf("%v", err)
	}
	out.Votes, out.Filter = key.sum(), fa
	return out, nil
}

// fitsBudget refuses labels whose queries drew more than the filter of
// m's budget holds: each query took its threshold step's draw, if m has
// one, and an answered query the first level's draw at least, so their
// least μ² (the filter's charges) bounds what their release spent from
// below. A header edited throughout to a smaller budget, its total and
// per-query guarantee with it, agrees with itself, but not with the
// labels it heads when that budget could not have drawn them.
func fitsBudget(memo *accountant.Memo, m ensemble.ProgressiveGNMax, answered, withheld int) error {
	f := accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.GDPFilter, Delta: m.Budget.Delta}}}
	muB2, ok := f.GDPBudget(m.Budget)
	if !ok {
		return fmt.Errorf("its budget %v has no Gaussian-DP filter", m.Budget)
	}
	mu2 := func(d accountant.GaussianPart) (float64, error) {
		s := accountant.Spend{Kind: accountant.GaussianSpend, Discrete: true, Gaussian: []accountant.GaussianPart{d}, Guarantee: accountant.Guarantee{Eps: 1, Delta: m.Budget.Delta}}
		c, err := f.Charge(memo, s, m.Budget)
		if err != nil || c.Mu2 == nil {
			return 0, fmt.Errorf("the charge of a draw of sigma %v: %v", d.Sigma, err)
		}
		return *c.Mu2, nil
	}
	draws := m.Draws()
	first, err := mu2(draws[0])
	if err != nil {
		return err
	}
	least := float64(answered+withheld) * first
	if m.Sigma1 != 0 {
		level, err := mu2(draws[1])
		if err != nil {
			return err
		}
		least += float64(answered) * level
	}
	// Within a millionth: GDPBudget is the halting rule's edge to a
	// relative 1e-9 below it, which a run ends short of.
	if least > muB2*(1+1e-6) {
		return fmt.Errorf("its %d answered and %d withheld queries drew mu^2 >= %.6g, more than the Gaussian-DP filter of its budget %v holds (mu_B^2 = %.6g): the budget is not the one its release was held to (the header was edited)", answered, withheld, least, m.Budget, muB2)
	}
	return nil
}

// equalSettings reports whether a and b have the same settings and
// budget.
func equalSettings(a, b ensemble.ProgressiveGNMax) bool {
	return slices.Equal(a.Levels, b.Levels) && a.Kappa == b.Kappa && a.GiveUp == b.GiveUp && a.Threshold == b.Threshold && a.Sigma1 == b.Sigma1 && a.Budget == b.Budget
}

// chargedPerDraw checks the header m of labels charged per draw against
// the releases the ledger records: the ledger it names, its ensemble, and
// a run of its mechanism (charged in units of the filter's, whose count is
// no count of labels).
func (r *Recorded) chargedPerDraw(lr *votefile.LabelReader, m *votefile.LabelMeta) error {
	switch {
	case m.Ledger != "" && m.Ledger != r.ID:
		return lr.HeaderErrorf("labels charged to the ledger of id %s, but ledger %s has id %s: it did not charge them, and its total does not cover them", m.Ledger, r.Ledger, r.ID)
	case m.Ledger == "":
		return lr.HeaderErrorf("labels charged to no ledger: ledger %s did not charge them, and its total does not cover them", r.Ledger)
	case m.Ensemble != r.Ensemble:
		return lr.HeaderErrorf("labels of ensemble %q, but ledger %s is bound to ensemble %q", m.Ensemble, r.Ledger, r.Ensemble)
	}
	for _, x := range r.Releases {
		if x.Mechanism == provenance.MechanismName(m.Mechanism) {
			return nil
		}
	}
	return lr.HeaderErrorf("it states %s charged per draw, but ledger %s records no release of it: the header does not describe a release the ledger charged", m.Mechanism, r.Ledger)
}
