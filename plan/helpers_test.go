package plan

import (
	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// twoClass returns base for mechanism name on two-class votes of teachers
// whose problem is p, as darrm plan plans it: the per-query delta is p's
// when deltaGiven, else the thesis' default for each m; darrm-one-vote's
// target is the release's own (m·eps, delta), pure unless deltaGiven.
func twoClass(base Request, name provenance.MechanismName, p constraints.Problem, deltaGiven bool) Request {
	r := base
	r.K, r.Classes = p.K, 2
	t := ensemble.Target{M: p.M}
	if deltaGiven {
		t.Delta = p.TargetDelta
	}
	r.Teachers = &accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}
	switch name {
	case ensemble.DaRRM{}.Name():
		r.Mechanism = ensemble.DaRRM{Target: t, Gamma: optimal.Source{}}
	case ensemble.Subsample{}.Name():
		r.Mechanism = ensemble.Subsample{Target: t}
	case ensemble.DSub{}.Name():
		r.Mechanism = ensemble.DSub{Target: t}
	case ensemble.RR{}.Name():
		r.Mechanism = ensemble.RR{Target: t}
	case ensemble.GNMax{}.Name():
		r.Mechanism = ensemble.GNMax{Target: t}
	case ensemble.OneVoteDaRRM{}.Name():
		delta := 0.0
		if deltaGiven {
			delta = p.TargetDelta
		}
		r.Mechanism, r.Teachers = ensemble.OneVoteDaRRM{Eps: p.MEps(), Delta: delta, Gamma: optimal.Source{}}, nil
	}
	return r
}

// manyClasses returns base for mechanism name, with the settings of g (its
// σs and threshold; a σ2 of 1 where g has none, for a plan to choose) or
// of scale, on the votes of k teachers over classes classes, as darrm plan
// plans it: the per-query delta of the GNMax family is delta when given,
// else the budget's.
func manyClasses(base Request, name provenance.MechanismName, g noisymax.Steps, scale float64, k, classes int, delta *float64) Request {
	r := base
	r.K, r.Classes = k, classes
	d := base.Budget.Delta
	if delta != nil {
		d = *delta
	}
	if g.Noise == noisymax.UnsetNoise {
		g.Noise = noisymax.DiscreteNoise
	}
	if g.Sigma2 == 0 {
		g.Sigma2 = 1
	}
	switch name {
	case ensemble.GNMax{}.Name():
		r.Mechanism = ensemble.GNMax{Target: ensemble.Target{Delta: d}, Sigma2: g.Sigma2, Noise: g.Noise}
	case ensemble.ConfidentGNMax{}.Name():
		r.Mechanism = ensemble.ConfidentGNMax{Threshold: g.Threshold, Sigma1: g.Sigma1, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: d}, Sigma2: g.Sigma2, Noise: g.Noise}}
	case ensemble.LNMax{}.Name():
		r.Mechanism = ensemble.LNMax{Scale: scale}
	}
	return r
}

// request returns a request for mechanism name on votes of kind in, with
// the problem p as given (its per-query delta too) and the budget (eps,
// delta).
func request(name provenance.MechanismName, in votefile.Input, p constraints.Problem, classes int, eps, delta float64) Request {
	base := Request{ReleaseSpec: ensemble.ReleaseSpec{Certificate: ensemble.Options{Memo: testMemo}, Budget: &accountant.Budget{Guarantee: accountant.Guarantee{Eps: eps, Delta: delta}}}}
	if in == votefile.TwoClass {
		r := twoClass(base, name, p, true)
		r.Classes = classes
		return r
	}
	return manyClasses(base, name, noisymax.Steps{}, 0, p.K, classes, &p.TargetDelta)
}

// testMemo is the memo of the package's tests' requests: the mechanisms,
// certificates and compositions that many tests plan again are made once
// per test binary, as darrm's one Memo for its run makes them once.
var testMemo = new(accountant.Memo)
