// Package transfer runs the thesis' private knowledge transfer experiment
// (Section 3.7.2, Appendix B.4.1; Tables 3.1, B.4, B.6, B.8): K teachers
// trained with DP-SGD label queries drawn from a public set through DaRRM
// and its baselines, and the labels' accuracy is measured against the true
// labels. The teachers train on disjoint shares of a private training set
// (the thesis' setting) or each on the whole set (Problem 3.1.1's).
//
// It is an experiment runner of the thesis, which darrm's command runs, and
// no part of darrm's library API: Go lets another module import it, but its
// names change with the experiment, without notice (docs/design.md,
// "Packages and layering").
//
// The package has no cgo: γ_opt comes in through a function, which the
// command supplies from the certified cache.
package transfer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/dpsgd"
	"github.com/darrm/darrm/experiments/teachers"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/roots"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Thesis settings of the teachers (Section 3.7.2): K = 11, DP-SGD with
// clipping norm 1, noise multiplier 12, 5 epochs, Δ = 1e-4.
const (
	K            = 11
	Clip         = 1.0
	Sigma        = 12.0
	Epochs       = 5
	TeacherDelta = 1e-4
	// Batch is the expected batch size of DP-SGD (the thesis does not
	// give it): with the improved RDP conversion it reproduces the
	// thesis' ε = 0.0892 (MNIST) and 0.0852 (Fashion-MNIST) to 1%. The
	// noisy sum is divided by this constant, not by the share's size.
	Batch = 30
	// DeltaPrime is the slack of the general composition of the Q
	// queries (Table 3.2), unless Params.DeltaPrime gives another.
	DeltaPrime = 1e-4
)

// Training is how the experiment's teachers are trained: K, DP-SGD's noise
// multiplier, the epochs, and the setting of the private teachers. The
// non-private teachers (GNMax's) always train on disjoint shares: PATE's
// relation, adding or removing one record changing one vote, needs them.
type Training struct {
	K       int
	Sigma   float64
	Epochs  int
	Setting accountant.Shares
}

// Thesis returns the thesis' training (K = 11, σ = 12, 5 epochs) in the
// given setting.
func Thesis(setting accountant.Shares) Training {
	return Training{K: K, Sigma: Sigma, Epochs: Epochs, Setting: setting}
}

// Validate checks K (odd, >= 1), σ (> 0) and the epochs (>= 1); a bad
// value is a parameter error naming K, sigma or epochs.
func (tr Training) Validate() error {
	switch {
	case tr.K < 1 || tr.K%2 == 0:
		return &param.Error{Name: "K", Value: tr.K, Rule: "must be odd and >= 1"}
	case !(tr.Sigma > 0) || math.IsInf(tr.Sigma, 0):
		return &param.Error{Name: "sigma", Value: tr.Sigma, Rule: "must be a finite number > 0"}
	case tr.Epochs < 1:
		return &param.Error{Name: "epochs", Value: tr.Epochs, Rule: "must be an integer >= 1"}
	}
	return nil
}

// Configs returns the training of the private (DP-SGD) and the
// non-private (SGD, for GNMax) teachers of dataset, whose training set's
// public size is n (datasets.Binary.PublicTrainSize: fixed before the data
// are read, never the number of records present), with the given seed
// (nil: crypto/rand). DP-SGD's sampling rate is fixed from it in advance:
// an expected Batch images per step out of n/K (rounded down) on disjoint
// shares, out of n on shared data. Under add/remove neighbours the number
// of records present is private, and a rate computed from it would differ
// between neighbours, which the sampled Gaussian mechanism's analysis does
// not allow. The architecture and learning rates are Hyper's, chosen on a
// tuning task (Tune; docs/transfer.md).
func (tr Training) Configs(dataset string, n int, seed *uint64) (private, nonPrivate teachers.Config) {
	h := HyperFor(dataset)
	base := teachers.Config{Dataset: dataset, K: tr.K, Filters: h.Filters, Seed: seed}
	private, nonPrivate = base, base
	private.Private, private.Setting = true, tr.Setting
	private.Delta, private.Conversion = TeacherDelta, accountant.ImprovedConversion
	lr, images := h.LR, n/tr.K
	if tr.Setting == accountant.Shared {
		lr, images = h.LRShared, n
	}
	private.DP = dpsgd.Config{Epochs: tr.Epochs, Rate: float64(Batch) / float64(max(images, 1)), Clip: Clip, Sigma: tr.Sigma, LR: lr, Batch: Batch}
	nonPrivate.Epochs, nonPrivate.Batch, nonPrivate.LR = tr.Epochs, Batch, h.LRNonPrivate
	return private, nonPrivate
}

// TeacherGuarantee returns the (ε, Δ) of one private teacher: DP-SGD's
// sampled Gaussian mechanism over its steps, by the accountant with the
// improved conversion at Δ = TeacherDelta. It holds for datasets that
// differ by adding or removing one record (the sampled Gaussian
// mechanism's relation), each teacher's data being its share or the whole
// set.
func TeacherGuarantee(cfg dpsgd.Config) (accountant.Guarantee, int, error) {
	eps, alpha, err := accountant.SGM{Q: cfg.Rate, Sigma: cfg.Sigma, Steps: cfg.Steps()}.Eps(TeacherDelta, accountant.ImprovedConversion)
	return accountant.Guarantee{Eps: eps, Delta: TeacherDelta}, alpha, err
}

// Teachers are the experiment's two ensembles, the private (DP-SGD)
// teachers and the non-private (SGD) ones GNMax uses, with the private
// teachers' guarantee.
type Teachers struct {
	Private, NonPrivate *teachers.Ensemble
	// Cached says which ensemble came from the teachers' cache: the
	// private one, then the non-private one.
	Cached [2]bool
	// Guarantee is each private teacher's (ε, Δ), at Rényi order Alpha
	// (TeacherGuarantee).
	Guarantee accountant.Guarantee
	Alpha     int
}

// TrainTeachers returns both ensembles of the two-class task b, trained as
// tr.Configs says for b's public training-set size with the given seed
// (nil: crypto/rand), each from the
// teachers' cache in the folder dir when it holds it, else trained and
// saved there (teachers.Cached; dir "" is no cache); note, if set, hears
// of each training.
func TrainTeachers(ctx context.Context, dir string, b *datasets.Binary, tr Training, seed *uint64, note func(string)) (*Teachers, error) {
	if err := tr.Validate(); err != nil {
		return nil, fmt.Errorf("transfer: %w", err)
	}
	if b.PublicTrainSize < tr.K {
		return nil, fmt.Errorf("transfer: %s: public training-set size %d for K = %d teachers (DP-SGD's sampling rate is set from it)", b.Name, b.PublicTrainSize, tr.K)
	}
	priv, pub := tr.Configs(b.Name, b.PublicTrainSize, seed)
	var t Teachers
	var err error
	if t.Private, t.Cached[0], err = teachers.Cached(ctx, dir, b, priv, note); err != nil {
		return nil, err
	}
	if t.NonPrivate, t.Cached[1], err = teachers.Cached(ctx, dir, b, pub, note); err != nil {
		return nil, err
	}
	if t.Guarantee, t.Alpha, err = TeacherGuarantee(priv.DP); err != nil {
		return nil, err
	}
	return &t, nil
}

// Params is the protocol.
type Params struct {
	M       float64 // privacy allowance: each label is (m·ε, m·Δ)-DP
	Queries []int   // numbers of queries Q
	Redraws int     // query sets drawn per Q
	Seed    uint64  // of the query draws and the mechanisms' noise: an experiment
	// DeltaPrime is the slack δ' of the general composition of the Q
	// queries and of the K-fold composition of teachers on shared data
	// (the caps, the majority's per-query guarantee); 0: DeltaPrime,
	// Table 3.2's.
	DeltaPrime float64
	// Memo keeps the mechanisms' certificates and the compositions of
	// their totals for the calls that ask again (accountant.Memo); nil:
	// one of the run's own.
	Memo *accountant.Memo
}

// Result is one mechanism at one Q. Its total over the Q queries is the
// tighter of the composition over the queries and, for the private
// teachers' mechanisms, the teachers' cap; TotalBound says which. The
// composition (runTotal; TotalMethod names it) is, for the non-private
// teachers' mechanisms, the tightest at the total δ of the general
// composition of the per-query guarantee (Composition): in practice the
// exact composition of the label's pairs of output probabilities; for
// the private teachers' mechanisms, that general composition, or the
// optimal composition at a point of the label's privacy profile when
// tighter.
type Result struct {
	Mechanism        string           `json:"mechanism"`
	M                float64          `json:"m"`
	Queries          int              `json:"queries"`
	AccuracyMean     float64          `json:"accuracy_mean"`
	AccuracyStd      float64          `json:"accuracy_std"`
	QueryEps         float64          `json:"query_eps"`
	QueryDelta       float64          `json:"query_delta"`
	CompositionEps   float64          `json:"composition_eps"`
	CompositionDelta float64          `json:"composition_delta"`
	TotalEps         float64          `json:"total_eps"`
	TotalDelta       float64          `json:"total_delta"`
	TotalMethod      string           `json:"total_method"`
	TotalBound       accountant.Bound `json:"total_bound"`
	// NoisePays says whether the mechanism's noise buys privacy at this
	// Q: its total is below that of the noise-free majority of the same
	// teachers, which is the teachers' cap for the private teachers and no
	// guarantee at all for GNMax's non-private ones. False for the
	// majority itself, which has no noise.
	NoisePays bool   `json:"noise_pays"`
	Relation  string `json:"relation"`
}

// Crossover says from which number of queries a mechanism's total is the
// teachers' cap rather than the composition over the queries, and so up to
// which number its noise buys privacy.
type Crossover struct {
	Mechanism string `json:"mechanism"`
	// CapFrom is the least Q at which the cap is the tighter total, and
	// stays so for every larger Q (1: at every Q); 0 for a mechanism
	// without a cap (GNMax, whose teachers are not private).
	CapFrom int `json:"cap_from"`
	// NoisePaysUpTo is the largest Q at which the noise buys privacy (the
	// mechanism's total is below the noise-free majority's): CapFrom - 1
	// for the private teachers' noisy mechanisms, 0 when the cap is below
	// one label's cost and the noise buys nothing; -1 without a cap, when
	// it pays at every Q (GNMax, and any per-query mechanism); 0 for the
	// majority, which has no noise.
	NoisePaysUpTo int `json:"noise_pays_up_to"`
	// SharedNoisePaysUpTo is NoisePaysUpTo for teachers of the same
	// guarantee on shared data, whose cap is their K-fold composition:
	// the setting where DaRRM's noise pays for the first queries.
	SharedNoisePaysUpTo int `json:"noise_pays_up_to_shared"`
}

// Outcome is what Run measures, and the bounds on its totals.
type Outcome struct {
	Results []Result
	// Cap is the private teachers' cap (provenance.Binding.Cap): their own
	// (ε, Δ) on disjoint keyed-hash shares, their K-fold composition on
	// shared data.
	Cap *accountant.Cap
	// CapFrom gives, for each mechanism, the crossover of its totals.
	CapFrom []Crossover
	// SharedCap is the cap of teachers of the same guarantee on shared
	// data, their K-fold composition (Cap itself in the shared setting).
	SharedCap *accountant.Cap
	// DeltaPrime is the slack of the run's compositions (Params.DeltaPrime,
	// else DeltaPrime), which the totals depend on.
	DeltaPrime float64
}

// maxRedraws bounds Params.Redraws: a redraw's seed keeps its index in
// 20 bits (measure).
const maxRedraws = 1 << 20

// Validate checks the protocol for a public set of n images: M in [1, K],
// redraws in [1, maxRedraws], and each Q in [1, n]. A bad value is an
// parameter error naming m, redraws or queries.
func (p Params) Validate(n int) error {
	bad := func(name string, v float64, rule string, args ...any) error {
		return &param.Error{Name: name, Value: v, Rule: fmt.Sprintf(rule, args...)}
	}
	if err := param.M(p.M, K); err != nil {
		return err
	}
	if p.DeltaPrime != 0 {
		if err := param.DeltaPrime(p.DeltaPrime); err != nil {
			return err
		}
	}
	if p.Redraws < 1 || p.Redraws > maxRedraws {
		return bad("redraws", float64(p.Redraws), "must be in [1, %d]", maxRedraws)
	}
	for _, q := range p.Queries {
		if q < 1 || q > n {
			return bad("queries", float64(q), "must be in [1, %d], the size of the public set", n)
		}
	}
	return nil
}

// deltaPrime returns the slack of the run's compositions: p.DeltaPrime,
// else DeltaPrime.
func (p Params) deltaPrime() float64 {
	if p.DeltaPrime != 0 {
		return p.DeltaPrime
	}
	return DeltaPrime
}

// Mechanisms are the rows of Table 3.1, in its order, then GNMax
// calibrated on its released bit, randomized response, the noise-free
// majority of the private teachers, and DaRRM with gamma_opt in the
// one-vote relation on the non-private teachers. (A row's place seeds its
// noise: new rows go last.)
var Mechanisms = []string{"gnmax", "gnmax-tight", "darrm-sub", "darrm-opt", "rr", "majority", "darrm-one-vote"}

// labeller is what Run needs of a mechanism.
type labeller interface {
	Answer(q *votefile.Query, src *noise.Source) (label int, answered bool, err error)
	Privacy() ensemble.Privacy
}

// Run measures each mechanism's accuracy: for each Q, Redraws sets of Q
// distinct public images, labelled from the private teachers' votes
// (DaRRM with γ_Sub, DaRRM with γ_opt, RR, each label (m·ε, m·Δ)-DP for
// the private teachers' (ε, Δ) of t.Guarantee; and their noise-free
// majority) or the non-private teachers' votes (GNMax, by the paper's
// calibration and by the tight one, and DaRRM with the one-vote relation's
// γ_opt, at the same per-label target in that relation). Each total is
// bounded by the composition over the queries and, for the private
// teachers' mechanisms, by the teachers' cap, as a release's accounting
// bounds it (accountant.Account.Totals, runTotal); a mechanism that knows
// points of its label's privacy profile (Privacy.Profile) is composed at
// the best of them when that is tighter than the general composition that
// Result's Composition reports.
func Run(ctx context.Context, test *datasets.Dataset, t *Teachers, p Params, src ensemble.GammaSource) (*Outcome, error) {
	if err := p.Validate(test.Len()); err != nil {
		return nil, fmt.Errorf("transfer: %w", err)
	}
	teacher := t.Guarantee
	prm := constraints.Problem{K: t.Private.Config.K, M: p.M, Eps: teacher.Eps, Delta: teacher.Delta, TargetDelta: decimal.Mul(p.M, teacher.Delta)}
	if err := prm.Validate(); err != nil {
		return nil, fmt.Errorf("transfer: %w", err)
	}
	if t.Private.Meta == nil {
		return nil, fmt.Errorf("transfer: the private teachers have no metadata (partition, relation), so their cap is unknown")
	}
	binding, err := provenance.Check(t.Private.Meta, provenance.Stated{})
	if err != nil {
		return nil, fmt.Errorf("transfer: the private teachers' metadata: %w", err)
	}
	binding.Each = teacher
	dp := p.deltaPrime()
	cp, _, err := binding.Cap(dp)
	if err != nil {
		return nil, fmt.Errorf("transfer: the teachers' cap: %w", err)
	}
	shared, err := accountant.TeacherCap(teacher, prm.K, accountant.Shared, dp)
	if err != nil {
		return nil, fmt.Errorf("transfer: the teachers' cap on shared data: %w", err)
	}
	// The totals at each Q compose the same labels of each mechanism.
	memo := p.Memo
	if memo == nil {
		memo = new(accountant.Memo)
	}
	aggs, err := aggregators(ctx, prm, src, memo, dp)
	if err != nil {
		return nil, err
	}
	privQueries, pubQueries := queriesOf(t.Private.Votes(test)), queriesOf(t.NonPrivate.Votes(test))
	out := &Outcome{Cap: cp, SharedCap: &shared, DeltaPrime: dp}
	for _, name := range Mechanisms {
		c, err := crossover(name, aggs[name].Privacy().Guarantee, capOf(name, cp), capOf(name, &shared), dp)
		if err != nil {
			return nil, fmt.Errorf("transfer: %s: %w", name, err)
		}
		out.CapFrom = append(out.CapFrom, c)
	}
	for _, q := range p.Queries {
		for mi, name := range Mechanisms {
			agg := aggs[name]
			queries := privQueries
			if nonPrivate(name) {
				queries = pubQueries
			}
			mean, std, err := measure(ctx, test, queries, q, p.Redraws, p.Seed, mi, agg.Answer)
			if err != nil {
				return nil, err
			}
			priv := agg.Privacy()
			b := binding
			if nonPrivate(name) {
				b = provenance.Binding{Teachers: provenance.Teachers{K: prm.K, Relation: accountant.OneVote}} // no cap
			}
			acc, _, err := priv.Account(b, dp)
			if err != nil {
				return nil, fmt.Errorf("transfer: %s: %w", name, err)
			}
			comp, total, err := runTotal(memo, acc, q, dp)
			if err != nil {
				return nil, fmt.Errorf("transfer: %s at Q = %d: %w", name, q, err)
			}
			out.Results = append(out.Results, Result{Mechanism: name, M: p.M, Queries: q, AccuracyMean: mean, AccuracyStd: std,
				QueryEps: priv.Eps, QueryDelta: priv.Delta, CompositionEps: comp.Eps, CompositionDelta: comp.Delta,
				TotalEps: total.Guarantee.Eps, TotalDelta: total.Guarantee.Delta, TotalMethod: total.Name(), TotalBound: total.Bound,
				NoisePays: name != "majority" && total.Bound == accountant.QueriesBound, Relation: priv.Relation.String()})
		}
	}
	return out, nil
}

// runTotal returns, of the totals of Q labels of a release accounted by
// acc, the general composition of the per-query guarantee (Table 3.2's),
// and the total Result reports. Without a teachers' cap (the one-vote
// relation's non-private teachers) it is the tightest at that
// composition's total δ of every composition that holds for the labels:
// the per-query guarantee's by each method, the optimal composition at
// the best point of the label's privacy profile (accountant.Account.Totals),
// and the exact composition of the label's pairs of output probabilities,
// computed here at that δ; so GNMax and darrm-one-vote are each accounted
// by what they release. With a cap (the tables' private teachers, fixed
// models) the cap at every Q: it is the only bound of fixed teachers
// (accountant.Cap); the general composition, or the profile's when it is
// tighter, is kept beside it as analysis.
func runTotal(memo *accountant.Memo, acc accountant.Account, q int, deltaPrime float64) (comp accountant.Guarantee, total accountant.Total, err error) {
	acc.Steps = q
	ts, _ := acc.Totals(memo)
	i := slices.IndexFunc(ts, func(t accountant.Total) bool { return t.Method == accountant.General && t.Point == nil })
	if i < 0 || ts[i].Err != nil {
		return comp, total, fmt.Errorf("no general composition of the queries among the totals %v", ts)
	}
	comp, total = ts[i].Queries, ts[i]
	if acc.Cap != nil {
		if j := slices.IndexFunc(ts, func(t accountant.Total) bool { return t.Point != nil && t.Err == nil }); j >= 0 && ts[j].Queries.Within(total.Queries) {
			total = ts[j]
		}
		return comp, total, nil
	}
	if s := acc.Step; s.Kind != accountant.ApproxSpend {
		run, err := accountant.ComposeRun(memo, s, q, comp.Delta, deltaPrime, accountant.ImprovedConversion)
		if err != nil {
			return comp, total, err
		}
		for _, t := range run {
			if t.Method == accountant.Exact {
				ts = append(ts, t.Capped(nil))
			}
		}
	}
	for _, t := range ts {
		if t.Err == nil && t.Queries.Delta <= comp.Delta && t.Queries.Eps < total.Queries.Eps {
			total = t
		}
	}
	return comp, total, nil
}

// nonPrivate says which mechanisms label from the non-private teachers:
// those private in the one-vote relation.
func nonPrivate(name string) bool {
	return name == "gnmax" || name == "gnmax-tight" || name == "darrm-one-vote"
}

// capOf returns the cap on the totals of mechanism name: the private
// teachers' cap, none for the one-vote mechanisms (their teachers are not
// private).
func capOf(name string, c *accountant.Cap) *accountant.Cap {
	if nonPrivate(name) {
		return nil
	}
	return c
}

// crossover returns mechanism name's crossover for its per-query guarantee,
// its cap c (nil: none) and the cap it would have on shared data.
func crossover(name string, perQuery accountant.Guarantee, c, shared *accountant.Cap, deltaPrime float64) (Crossover, error) {
	from, err := capFrom(perQuery, c, deltaPrime)
	if err != nil {
		return Crossover{}, err
	}
	sharedFrom, err := capFrom(perQuery, shared, deltaPrime)
	if err != nil {
		return Crossover{}, err
	}
	pays := func(from int) int {
		switch {
		case name == "majority":
			return 0
		case from == 0:
			return -1
		}
		return from - 1
	}
	return Crossover{Mechanism: name, CapFrom: from, NoisePaysUpTo: pays(from), SharedNoisePaysUpTo: pays(sharedFrom)}, nil
}

// capFrom returns the least number of queries Q at which the cap c is the
// tighter total of Q releases each per-query-DP (their general
// composition, accountant.Cap.Total), 0 when c is nil. The composition
// grows with Q, so the answer is found by doubling, then bisection
// (roots.Last).
func capFrom(perQuery accountant.Guarantee, c *accountant.Cap, deltaPrime float64) (int, error) {
	if c == nil {
		return 0, nil
	}
	capped := func(q int) (bool, error) {
		comp, err := accountant.Composition{Method: accountant.General, DeltaPrime: deltaPrime}.Compose(perQuery, q)
		if err != nil {
			return false, err
		}
		_, b := c.Total(comp)
		return b == accountant.TeachersBound, nil
	}
	// The last Q at which the composition is the tighter total: Q = 0
	// composes nothing.
	last, err := roots.Last(0, 1<<41, func(q int) (bool, error) {
		if q == 0 {
			return true, nil
		}
		ok, err := capped(q)
		return !ok, err
	})
	if err != nil {
		return 0, fmt.Errorf("the cap %v: %w", c.Guarantee, err)
	}
	return last + 1, nil
}

// aggregators builds the mechanisms through ensemble.New, as a release
// builds them: all but the majority at the same per-label target, darrm
// and darrm-one-vote with gamma_opt of their relation from src, each
// certified once in memo.
func aggregators(ctx context.Context, p constraints.Problem, src ensemble.GammaSource, memo *accountant.Memo, deltaPrime float64) (map[string]labeller, error) {
	out := map[string]labeller{}
	t := ensemble.Target{M: p.M, Delta: p.TargetDelta}
	teachers := accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}
	for _, row := range []struct {
		name string
		m    ensemble.Mechanism
	}{
		{"darrm-opt", ensemble.DaRRM{Target: t, Gamma: src}},
		{"darrm-sub", ensemble.Subsample{Target: t}},
		{"rr", ensemble.RR{Target: t, Composition: accountant.Composition{Method: accountant.RRComposition(p.Delta), DeltaPrime: accountant.DefaultDeltaPrime}}},
		{"gnmax", ensemble.GNMax{Target: t, Search: noisymax.GNMaxGrid}},
		{"gnmax-tight", ensemble.GNMax{Target: t, Search: noisymax.GNMaxTight}},
		{"darrm-one-vote", ensemble.OneVoteDaRRM{Eps: p.MEps(), Delta: p.TargetDelta, Gamma: src}},
	} {
		l, _, err := ensemble.New(ctx, row.m, p.K, 2, teachers, ensemble.Options{Memo: memo})
		if err != nil {
			return nil, fmt.Errorf("transfer: %s: %w", row.name, err)
		}
		out[row.name] = l.(ensemble.Aggregator)
	}
	maj, err := newMajority(p, deltaPrime)
	if err != nil {
		return nil, err
	}
	out["majority"] = maj
	return out, nil
}

// majority releases the majority of the K votes, with no noise.
type majority struct {
	k       int
	privacy ensemble.Privacy
}

// newMajority returns the noise-free majority of p.K teachers. Per query
// it is post-processing of the K votes, each from an (ε, Δ)-DP teacher, so
// it has their K-fold composition, the tightest of simple, general and
// optimal (accountant.TeacherCap for shared data, with slack deltaPrime).
func newMajority(p constraints.Problem, deltaPrime float64) (*majority, error) {
	teacher := accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}
	c, err := accountant.TeacherCap(teacher, p.K, accountant.Shared, deltaPrime)
	if err != nil {
		return nil, fmt.Errorf("transfer: majority: %w", err)
	}
	return &majority{k: p.K, privacy: ensemble.Privacy{Spend: accountant.ApproxStep(c.Guarantee), Teachers: teacher, Relation: accountant.PrivateTeachers,
		Source: fmt.Sprintf("the majority of the %d votes, post-processing of the %d teachers' outputs: their %d-fold %v composition", p.K, p.K, p.K, c.Method)}}, nil
}

// Answer returns the majority of q's votes, each 0 or 1, of which there
// are an odd number K; every query is answered.
func (m *majority) Answer(q *votefile.Query, _ *noise.Source) (int, bool, error) {
	if len(q.Votes) != m.k {
		return 0, false, fmt.Errorf("transfer: majority: %d votes, want K = %d", len(q.Votes), m.k)
	}
	ones := 0
	for _, v := range q.Votes {
		ones += int(v)
	}
	if 2*ones > m.k {
		return 1, true, nil
	}
	return 0, true, nil
}

// Privacy returns the per-query guarantee (newMajority).
func (m *majority) Privacy() ensemble.Privacy { return m.privacy }

// Agreement describes how the teachers' votes agree on the public set:
// the mean fraction of votes equal to the majority, and the fraction of
// images on which all K agree.
type Agreement struct {
	WithMajority float64 `json:"with_majority"`
	Unanimous    float64 `json:"unanimous"`
}

// Agree measures the agreement of votes (K per row).
func Agree(votes [][]byte) Agreement {
	var with, unanimous float64
	for _, v := range votes {
		ones := 0
		for _, b := range v {
			ones += int(b)
		}
		maj := max(ones, len(v)-ones)
		with += float64(maj) / float64(len(v))
		if maj == len(v) {
			unanimous++
		}
	}
	n := float64(len(votes))
	return Agreement{WithMajority: with / n, Unanimous: unanimous / n}
}

// queriesOf returns the queries whose 0/1 votes are votes (K per row),
// with their class counts, as a vote file's reader reads them.
func queriesOf(votes [][]byte) []votefile.Query {
	qs := make([]votefile.Query, len(votes))
	for i, v := range votes {
		ones := 0
		for _, b := range v {
			ones += int(b)
		}
		qs[i] = votefile.Query{Votes: v, Counts: []int{len(v) - ones, ones}}
	}
	return qs
}

// measure returns the mean and sample standard deviation of the accuracy
// of the labels that answer gives (ensemble.Label) over redraws sets of q
// distinct queries of all, the public images of test: the draws seeded
// by (seed, q, the set) alone, so that every mechanism labels the same
// images, and the noise also by the mechanism's place mi. It ends with
// ctx's error within 1,024 queries once ctx is done.
func measure(ctx context.Context, test *datasets.Dataset, all []votefile.Query, q, redraws int, seed uint64, mi int, answer func(*votefile.Query, *noise.Source) (int, bool, error)) (mean, std float64, err error) {
	acc := make([]float64, redraws)
	queries := make([]votefile.Query, q)
	for r := range redraws {
		draw := rand.New(rand.NewPCG(seed, uint64(q)<<20|uint64(r)))
		src := noise.NewSeededSource(seed ^ uint64(q)<<40 ^ uint64(r)<<8 ^ uint64(mi))
		images := draw.Perm(test.Len())[:q]
		for j, i := range images {
			queries[j] = all[i]
			queries[j].Index = j + 1
		}
		right := 0
		err := ensemble.Label(ctx, queries, answer, src, func(query *votefile.Query, label int, _ bool) (bool, error) {
			if float64(label) == test.Y[images[query.Index-1]] {
				right++
			}
			return false, nil
		})
		if err != nil {
			return 0, 0, err
		}
		acc[r] = float64(right) / float64(q)
	}
	mean, std = meanStd(acc)
	return mean, std, nil
}

// meanStd returns the mean and the sample standard deviation.
func meanStd(x []float64) (mean, std float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	for _, v := range x {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(x)-1))
}

// Mean returns the mean of xs.
func Mean(xs []float64) float64 {
	m, _ := meanStd(xs)
	return m
}
