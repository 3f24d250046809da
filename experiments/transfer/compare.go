package transfer

// This file holds the comparisons at equal totals of the thesis' noise
// functions (darrm solve --compare, the transfer experiment): the
// mechanisms that release with each, planned for one total (plan.EqualTotals)
// and measured at their plans' parameters; and the mechanisms its
// simulation compares.

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/plan"
	"github.com/darrm/darrm/provenance"
)

// Candidate is a noise function of a comparison at equal totals with the
// mechanism that releases with it: its name in the comparison and the
// request that plans the mechanism. Its noise function is the one the
// planned aggregator releases with (released).
type Candidate struct {
	Name    string
	Request plan.Request
}

// Candidates returns the noise functions that darrm solve --compare
// compares for problem p, each with the mechanism that releases with it,
// each request a copy of base (its budget, slack and options), for p.K
// teachers on two classes, gamma_opt from src (an optimal.Source, say).
// In the one-vote relation
// they are oneVote's: gamma_opt, GNMax (its label scored by its exact
// probabilities, gnmaxGamma), at the per-query delta p.TargetDelta, else
// the budget's, and RR. In the private-teachers relation, for teachers
// (p.Eps, p.Delta)-DP, they are gamma_opt (darrm) and the mechanisms of
// the baselines (subsample, dsub when Delta = delta = 0, rr by rr), each
// planned by its allowance m, at the per-query delta p.TargetDelta when
// deltaGiven, else at the thesis' default for each m.
func Candidates(base plan.Request, p constraints.Problem, deltaGiven bool, src ensemble.GammaSource, rr accountant.Composition) []Candidate {
	if p.Relation == accountant.OneVote {
		delta := p.TargetDelta
		if delta == 0 {
			delta = base.Budget.Delta
		}
		rs := oneVote(base, p.K, delta, src)
		return []Candidate{
			{Name: "opt", Request: rs[0]},
			{Name: "gnmax", Request: rs[1]},
			{Name: "rr", Request: rs[2]},
		}
	}
	t := ensemble.Target{M: p.M} // the default delta
	if deltaGiven {
		t.Delta = p.TargetDelta
	}
	with := func(name string, m ensemble.Mechanism) Candidate {
		r := base
		r.Mechanism, r.Teachers, r.K, r.Classes = m, &accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}, p.K, 2
		return Candidate{Name: name, Request: r}
	}
	cs := []Candidate{with("opt", ensemble.DaRRM{Target: t, Gamma: src}), with("sub", ensemble.Subsample{Target: t})}
	if p.Delta == 0 && p.TargetDelta == 0 {
		cs = append(cs, with("dsub", ensemble.DSub{Target: t}))
	}
	return append(cs, with("rr", ensemble.RR{Target: t, Composition: rr}))
}

// Simulated returns the mechanisms the thesis' simulation on synthetic
// teachers compares on problem p (darrm simulate), in the registry's
// order: dsub only for Delta = 0 (Theorem 3.5.1), gnmax only for
// delta > 0 (a Gaussian mechanism is not pure DP), and darrm-one-vote
// beside it, at the same per-query target in the same relation.
func Simulated(p constraints.Problem) []provenance.MechanismName {
	names := []provenance.MechanismName{ensemble.DaRRM{}.Name(), ensemble.Subsample{}.Name()}
	if p.Delta == 0 {
		names = append(names, ensemble.DSub{}.Name())
	}
	names = append(names, ensemble.RR{}.Name())
	if p.TargetDelta > 0 {
		names = append(names, ensemble.GNMax{}.Name(), ensemble.OneVoteDaRRM{}.Name())
	}
	return names
}

// gnmaxGamma returns the noise function of the label that GNMax releases
// on two classes of k votes with discrete noise sigma on each count, as
// oneVote plans it: gamma(l) = |2·Pr[1 | l] - 1| of its exact
// probabilities (noisymax.GNMaxBitProbs; DaRRM releases the majority with
// probability (1 + gamma)/2).
func gnmaxGamma(k int, sigma float64) (gamma.Gamma, error) {
	ps, err := noisymax.GNMaxBitProbs(sigma, k, noisymax.DiscreteNoise)
	if err != nil {
		return nil, err
	}
	g := make(gamma.Gamma, k+1)
	for l, p := range ps {
		g[l] = math.Abs(2*p - 1)
	}
	return g, nil
}

// Compared is a candidate planned for a total (Equal) and, when it fits,
// its noise function at the plan's parameters, measured.
type Compared struct {
	Candidate
	plan.Equal
	Measurement gamma.Measurement
}

// CompareAtTotals plans each candidate for budget over queries
// (EqualTotals) and measures the noise function of each that fits at its
// plan's parameters (gamma.Gamma.Measure, under the prior's coefficients and the
// actual distributions).
func CompareAtTotals(ctx context.Context, cs []Candidate, budget accountant.Budget, queries int, coeffs []float64, actuals []gamma.Actual) ([]Compared, error) {
	rs := make([]plan.Request, len(cs))
	for i, c := range cs {
		rs[i] = c.Request
	}
	eqs, err := plan.EqualTotals(ctx, rs, budget, queries)
	if err != nil {
		return nil, err
	}
	out := make([]Compared, len(cs))
	for i, e := range eqs {
		out[i] = Compared{Candidate: cs[i], Equal: e}
		if e.NoFit != nil {
			continue
		}
		g, err := released(ctx, e.Plan.Request)
		if err != nil {
			return nil, err
		}
		if out[i].Measurement, err = g.Measure(ctx, e.Plan.Request.Certificate.Memo, coeffs, actuals); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// released returns the noise function with which the aggregator of r
// releases the majority: the one a two-class aggregator samples, and for
// GNMax on two classes that of its label's exact probabilities
// (gnmaxGamma).
func released(ctx context.Context, r plan.Request) (gamma.Gamma, error) {
	agg, _, err := r.Aggregator(ctx)
	if err != nil {
		return nil, err
	}
	if a, ok := agg.(ensemble.Aggregator); ok {
		return a.Gamma(), nil
	}
	g, ok := r.Mechanism.(ensemble.GNMax)
	if !ok || r.Classes != 2 {
		return nil, fmt.Errorf("transfer: %s on %d classes releases no noise function of the majority", r.Mechanism.Name(), r.Classes)
	}
	return gnmaxGamma(r.K, g.Sigma2)
}

// oneVote returns the requests of a comparison in the one-vote relation
// for K teachers on two classes, each a copy of base (its budget, slack
// and options) with its mechanism: darrm-one-vote (gamma_opt from src),
// GNMax on two classes with discrete noise,
// as darrm aggregate --classes 2 releases it, and randomized response on
// the majority, which is darrm-one-vote releasing RR's constant gamma
// (gamma.RRBaseline), the largest constant gamma of the relation.
// Each is pure at the per-query delta 0 but GNMax, whose per-query delta
// is delta (> 0: Gaussian noise is not pure DP).
func oneVote(base plan.Request, k int, delta float64, src ensemble.GammaSource) []plan.Request {
	with := func(m ensemble.Mechanism) plan.Request {
		r := base
		r.Mechanism, r.K, r.Classes = m, k, 2
		return r
	}
	oneVote := ensemble.OneVoteDaRRM{Eps: base.Budget.Eps, Gamma: src}
	rr := with(ensemble.OneVoteDaRRM{Eps: base.Budget.Eps, Gamma: rrGamma{}})
	// Its Sigma2, which the plan chooses, says that it labels counts.
	gnmax := ensemble.GNMax{Target: ensemble.Target{Delta: delta}, Sigma2: 1, Noise: noisymax.DiscreteNoise}
	return []plan.Request{with(oneVote), with(gnmax), rr}
}

// rrGamma is the γ source of randomized response on the majority in the
// one-vote relation: for each problem, RR's largest constant gamma
// (gamma.RRBaseline), which the aggregator certifies as it samples it.
type rrGamma struct{}

func (rrGamma) Gamma(_ context.Context, p constraints.Problem, _ func(context.Context, constraints.Problem, gamma.Gamma) (gamma.Certificate, error)) (gamma.Gamma, string, error) {
	b, err := gamma.RRBaseline(p, 0, 0)
	if err != nil {
		return nil, "", err
	}
	return b.Gamma, "randomized response's constant gamma", nil
}
