package plan

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TwoClass returns base for mechanism name on two-class votes of teachers
// whose problem is p, as darrm plan plans it: the per-query delta is p's
// when deltaGiven, else the thesis' default for each m; darrm-one-vote's
// target is the release's own (m·eps, delta), pure unless deltaGiven.
func TwoClass(base Request, name provenance.MechanismName, p constraints.Problem, deltaGiven bool) Request {
	r := base
	r.Mechanism.Name, r.Mechanism.Input, r.Classes = name, votefile.TwoClass, 2
	r.Problem, r.DefaultDelta = p, !deltaGiven
	if name == provenance.DaRRMOneVote {
		delta := 0.0
		if deltaGiven {
			delta = p.TargetDelta
		}
		r.Problem, r.DefaultDelta = constraints.NewOneVote(p.K, p.MEps(), delta), false
	}
	return r
}

// ManyClasses returns base for mechanism name on the votes of k teachers
// over classes classes, as darrm plan plans it: the per-query delta of
// the GNMax family is delta when given, else the budget's.
func ManyClasses(base Request, name provenance.MechanismName, k, classes int, delta *float64) Request {
	r := base
	r.Mechanism.Name, r.Mechanism.Input, r.Classes = name, votefile.ManyClasses, classes
	r.Problem = constraints.Problem{K: k, TargetDelta: base.Budget.Delta}
	if delta != nil {
		r.Problem.TargetDelta = *delta
	}
	return r
}

// Candidate is a noise function of a comparison at equal totals with the
// mechanism that releases with it: its name in the comparison and the
// request that plans the mechanism. Its noise function is the one the
// planned aggregator releases with (released).
type Candidate struct {
	Name    string
	Request Request
}

// Candidates returns the noise functions that darrm solve --compare
// compares for problem p, each with the mechanism that releases with it,
// each request a copy of base (its budget, composition, gamma source,
// options, and the mechanism's RR settings). In the one-vote
// relation they are OneVote's: gamma_opt, GNMax (its label scored by its
// exact probabilities, gnmaxGamma), at the per-query delta p.TargetDelta,
// else the budget's, and RR. In the private-teachers
// relation they are gamma_opt (darrm) and the mechanisms of the baselines
// (subsample, dsub when Delta = delta = 0, rr), each planned by its
// allowance m (TwoClass, deltaGiven as there).
func Candidates(base Request, p constraints.Problem, deltaGiven bool) []Candidate {
	if p.Relation == accountant.OneVote {
		delta := p.TargetDelta
		if delta == 0 {
			delta = base.Budget.Delta
		}
		rs := OneVote(base, p.K, delta)
		return []Candidate{
			{Name: "opt", Request: rs[0]},
			{Name: "gnmax", Request: rs[1]},
			{Name: "rr", Request: rs[2]},
		}
	}
	with := func(name string, m provenance.MechanismName) Candidate {
		return Candidate{Name: name, Request: TwoClass(base, m, p, deltaGiven)}
	}
	cs := []Candidate{with("opt", provenance.DaRRM), with("sub", provenance.Subsample)}
	if p.Delta == 0 && p.TargetDelta == 0 {
		cs = append(cs, with("dsub", provenance.DSub))
	}
	return append(cs, with("rr", provenance.RR))
}

// gnmaxGamma returns the noise function of the label that GNMax releases
// on two classes of k votes with discrete noise sigma on each count, as
// OneVote plans it: gamma(l) = |2·Pr[1 | l] - 1| of its exact
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
	Equal
	Measurement gamma.Measurement
}

// CompareAtTotals plans each candidate for budget over queries
// (EqualTotals) and measures the noise function of each that fits at its
// plan's parameters (gamma.Measure, under the prior's coefficients and the
// actual distributions).
func CompareAtTotals(ctx context.Context, cs []Candidate, budget accountant.Budget, queries int, coeffs []float64, actuals []gamma.Actual) ([]Compared, error) {
	rs := make([]Request, len(cs))
	for i, c := range cs {
		rs[i] = c.Request
	}
	eqs, err := EqualTotals(ctx, rs, budget, queries)
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
		if out[i].Measurement, err = gamma.Measure(g, coeffs, actuals); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// released returns the noise function with which the aggregator of r
// releases the majority: the one a two-class aggregator samples, and for
// GNMax on two classes that of its label's exact probabilities
// (gnmaxGamma).
func released(ctx context.Context, r Request) (gamma.Gamma, error) {
	agg, _, err := Aggregator(ctx, r)
	if err != nil {
		return nil, err
	}
	if a, ok := agg.(ensemble.Aggregator); ok {
		return a.Gamma(), nil
	}
	if r.Mechanism.Name != provenance.GNMax || r.Classes != 2 {
		return nil, fmt.Errorf("plan: %s on %d classes releases no noise function of the majority", r.Mechanism.Name, r.Classes)
	}
	return gnmaxGamma(r.Problem.K, r.Mechanism.GNMax.Sigma2)
}

// Simulated is a mechanism of a simulation at equal totals, with its
// neighbouring relation: its plan, or why nothing fits, and, when it fits,
// what its aggregator is in words, its simulation and Pr[label = 1] at the
// teachers' probabilities (gamma.LabelOne).
type Simulated struct {
	Mechanism provenance.MechanismName
	Relation  accountant.Relation
	Equal
	Label    string
	Sim      ensemble.SimResult
	LabelOne float64
}

// SimulateAtTotals plans each request for budget over queries
// (EqualTotals) and simulates each that fits at its plan's parameters, on
// the same teachers' probabilities p and seed (ensemble.Simulate, n
// queries).
func SimulateAtTotals(ctx context.Context, rs []Request, budget accountant.Budget, queries int, p []float64, n int, seed uint64) ([]Simulated, error) {
	eqs, err := EqualTotals(ctx, rs, budget, queries)
	if err != nil {
		return nil, err
	}
	out := make([]Simulated, len(eqs))
	var aggs []ensemble.Aggregator
	var at []int // the row of each aggregator
	for i, e := range eqs {
		info, err := ensemble.LookupMechanism(rs[i].Mechanism.Name, rs[i].Mechanism.Input)
		if err != nil {
			return nil, err
		}
		out[i] = Simulated{Mechanism: info.Name, Relation: info.Relation, Equal: e}
		if e.NoFit != nil {
			continue
		}
		agg, label, err := Aggregator(ctx, e.Plan.Request)
		if err != nil {
			return nil, err
		}
		out[i].Label = label
		aggs, at = append(aggs, agg.(ensemble.Aggregator)), append(at, i)
	}
	if len(aggs) == 0 {
		return out, nil
	}
	res, err := ensemble.Simulate(ctx, aggs, p, n, seed)
	if err != nil {
		return nil, err
	}
	for j, s := range res {
		r := &out[at[j]]
		r.Sim = s
		if r.LabelOne, err = gamma.LabelOne(aggs[j].Gamma(), p); err != nil {
			return nil, err
		}
	}
	return out, nil
}
