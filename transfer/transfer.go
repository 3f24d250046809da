// Package transfer runs the thesis' private knowledge transfer experiment
// (Section 3.7.2, App. B.4.1; Tables 3.1, B.4, B.6, B.8): K teachers
// trained with DP-SGD on disjoint shares of a private training set label
// queries drawn from a public set through DaRRM and its baselines, and the
// labels' accuracy is measured against the true labels.
//
// The package has no cgo: γ_opt comes in through a function, which the
// command supplies from the certified cache.
package transfer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/dpsgd"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/teachers"
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
	// thesis' ε = 0.0892 (MNIST) and 0.0852 (Fashion-MNIST) to 1%.
	Batch = 30
	// DeltaPrime is the slack of the general composition of the Q
	// queries (Table 3.2).
	DeltaPrime = 1e-4
)

// TeacherConfigs returns the training of the private (DP-SGD) and the
// non-private (SGD, for GNMax) teachers of dataset, whose teachers each get
// share training images, with the given seed (nil: crypto/rand). The
// architecture and learning rates are darrm's choices (docs/transfer.md).
func TeacherConfigs(dataset string, share int, seed *uint64) (private, nonPrivate teachers.Config) {
	base := teachers.Config{Dataset: dataset, K: K, Filters: 8, Seed: seed}
	private, nonPrivate = base, base
	private.Private, private.Delta, private.Conversion = true, TeacherDelta, accountant.ImprovedConversion
	private.DP = dpsgd.Config{Epochs: Epochs, Rate: float64(Batch) / float64(share), Clip: Clip, Sigma: Sigma, LR: 0.05}
	nonPrivate.Epochs, nonPrivate.Batch, nonPrivate.LR = Epochs, Batch, 0.3
	return private, nonPrivate
}

// TeacherGuarantee returns the (ε, Δ) of one private teacher: DP-SGD's
// sampled Gaussian mechanism over its steps, by the accountant with the
// improved conversion at Δ = TeacherDelta.
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
// TeacherConfigs says with the given seed (nil: crypto/rand), each from
// the teachers' cache in the folder dir when it holds it, else trained and
// saved there (teachers.Cached; dir "" is no cache); note, if set, hears
// of each training.
func TrainTeachers(ctx context.Context, dir string, b *datasets.Binary, seed *uint64, note func(string)) (*Teachers, error) {
	priv, pub := TeacherConfigs(b.Name, b.Train.Len()/K, seed)
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

// GammaOpt returns the certified γ_opt of a problem.
type GammaOpt func(ctx context.Context, p constraints.Params) (gamma.Gamma, error)

// Params is the protocol.
type Params struct {
	M       float64 // privacy allowance: each label is (m·ε, m·Δ)-DP
	Queries []int   // numbers of queries Q
	Redraws int     // query sets drawn per Q
	Seed    uint64  // of the query draws and the mechanisms' noise: an experiment
}

// Result is one mechanism at one Q.
type Result struct {
	Mechanism    string  `json:"mechanism"`
	M            float64 `json:"m"`
	Queries      int     `json:"queries"`
	AccuracyMean float64 `json:"accuracy_mean"`
	AccuracyStd  float64 `json:"accuracy_std"`
	QueryEps     float64 `json:"query_eps"`
	QueryDelta   float64 `json:"query_delta"`
	TotalEps     float64 `json:"total_eps"`
	TotalDelta   float64 `json:"total_delta"`
	Relation     string  `json:"relation"`
}

// Validate checks the protocol for a public set of n images: M in [1, K],
// at least one redraw, and each Q in [1, n]. A bad value is an
// *accountant.ParamError naming m, redraws or queries.
func (p Params) Validate(n int) error {
	bad := func(name string, v float64, rule string, args ...any) error {
		return &accountant.ParamError{Name: name, Value: v, Rule: fmt.Sprintf(rule, args...)}
	}
	if !(p.M >= 1 && p.M <= K) {
		return bad("m", p.M, "must be in [1, K] = [1, %d]", K)
	}
	if p.Redraws < 1 {
		return bad("redraws", float64(p.Redraws), "must be >= 1")
	}
	for _, q := range p.Queries {
		if q < 1 || q > n {
			return bad("queries", float64(q), "must be in [1, %d], the size of the public set", n)
		}
	}
	return nil
}

// Mechanisms are the rows of Table 3.1, in its order, with RR added.
var Mechanisms = []string{"gnmax", "darrm-sub", "darrm-opt", "rr"}

// Run measures each mechanism's accuracy: for each Q, Redraws sets of Q
// distinct public images, labelled from the private teachers' votes
// (DaRRM with γ_Sub, DaRRM with γ_opt, RR) or the non-private teachers'
// votes (GNMax), each label (m·ε, m·Δ)-DP for the private teachers' (ε, Δ)
// of t.Guarantee.
func Run(ctx context.Context, test *datasets.Dataset, t *Teachers, p Params, opt GammaOpt) ([]Result, error) {
	if err := p.Validate(test.Len()); err != nil {
		return nil, fmt.Errorf("transfer: %w", err)
	}
	teacher := t.Guarantee
	prm := constraints.Params{K: t.Private.Config.K, M: p.M, Eps: teacher.Eps, Delta: teacher.Delta, TargetDelta: p.M * teacher.Delta}
	if err := prm.Validate(); err != nil {
		return nil, fmt.Errorf("transfer: %w", err)
	}
	aggs, err := aggregators(ctx, prm, opt)
	if err != nil {
		return nil, err
	}
	privVotes, pubVotes := t.Private.Votes(test), t.NonPrivate.Votes(test)
	var out []Result
	for _, q := range p.Queries {
		for mi, name := range Mechanisms {
			agg := aggs[name]
			votes := privVotes
			if name == "gnmax" {
				votes = pubVotes
			}
			acc := make([]float64, p.Redraws)
			for r := range p.Redraws {
				draw := rand.New(rand.NewPCG(p.Seed, uint64(q)<<20|uint64(r)))
				src := ensemble.NewSeededSource(p.Seed ^ uint64(q)<<40 ^ uint64(r)<<8 ^ uint64(mi))
				right := 0
				for _, i := range draw.Perm(test.Len())[:q] {
					label, err := agg.Aggregate(votes[i], src)
					if err != nil {
						return nil, err
					}
					if float64(label) == test.Y[i] {
						right++
					}
				}
				acc[r] = float64(right) / float64(q)
			}
			mean, std := meanStd(acc)
			priv := agg.Privacy()
			total, err := accountant.ComposeGeneral(priv.Guarantee, q, DeltaPrime)
			if err != nil {
				return nil, err
			}
			out = append(out, Result{Mechanism: name, M: p.M, Queries: q, AccuracyMean: mean, AccuracyStd: std,
				QueryEps: priv.Eps, QueryDelta: priv.Delta, TotalEps: total.Eps, TotalDelta: total.Delta, Relation: priv.Relation.String()})
		}
	}
	return out, nil
}

// aggregators builds the four mechanisms at the same per-label target.
func aggregators(ctx context.Context, p constraints.Params, opt GammaOpt) (map[string]ensemble.Aggregator, error) {
	g, err := opt(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("transfer: gamma_opt: %w", err)
	}
	d, err := ensemble.NewDaRRM(ctx, p, g, ensemble.Options{})
	if err != nil {
		return nil, fmt.Errorf("transfer: darrm-opt: %w", err)
	}
	sub, err := ensemble.NewSubsample(ctx, p, ensemble.Options{})
	if err != nil {
		return nil, fmt.Errorf("transfer: darrm-sub: %w", err)
	}
	rr, err := ensemble.NewRR(ctx, p, accountant.RRComposition(p.Delta), accountant.DefaultDeltaPrime, ensemble.Options{})
	if err != nil {
		return nil, fmt.Errorf("transfer: rr: %w", err)
	}
	gn, err := ensemble.NewGNMax(p, accountant.GNMaxGrid)
	if err != nil {
		return nil, fmt.Errorf("transfer: gnmax: %w", err)
	}
	return map[string]ensemble.Aggregator{"darrm-opt": d, "darrm-sub": sub, "rr": rr, "gnmax": gn}, nil
}

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
