// Package pate accounts for releases by PATE's mechanisms and runs PATE
// 2018's MNIST experiment.
//
// Account gives the data-independent and data-dependent bounds of Papernot,
// Song, Mironov, Raghunathan, Talwar and Erlingsson, "Scalable Private
// Learning with PATE", ICLR 2018, and PrepareSmooth the data-dependent bound
// released by smooth sensitivity. The experiment (that paper's Section 5,
// Table 2's MNIST row) runs with darrm's exact samplers and accounting: K
// non-private teachers trained on disjoint shares of the training set, cut
// by a keyed hash of each record, label the public queries (the first half
// of the test set, as PATE does) through Confident-GNMax and GNMax; each
// mechanism's labels are scored against the true labels and accounted for at
// δ, and a student may be trained on the answered queries and tested on the
// other half.
package pate

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/dpsgd"
	"github.com/darrm/darrm/internal/nn"
	"github.com/darrm/darrm/internal/teachers"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/votefile"
)

// PATE's MNIST setting (the PATE paper, Table 2): 250 teachers,
// Confident-GNMax with T = 200, σ1 = 150, σ2 = 40, GNMax with σ = 40, and
// δ = 1e-5.
const (
	Teachers  = 250
	Threshold = 200.0
	Sigma1    = 150.0
	Sigma2    = 40.0
	Delta     = 1e-5
)

// Mechanisms returns the paper's two aggregators of C-class votes with
// their settings (ensemble.Mechanism's GNMax): Confident-GNMax (T = 200,
// σ1 = 150, σ2 = 40) and GNMax (σ = 40), both with darrm's discrete
// Gaussian noise.
func Mechanisms() []ensemble.Mechanism {
	return []ensemble.Mechanism{
		{Name: votefile.ConfidentGNMax, Input: votefile.ManyClasses, GNMax: noisymax.ConfidentGNMax{Threshold: Threshold, Sigma1: Sigma1, Sigma2: Sigma2, Noise: noisymax.DiscreteNoise}},
		{Name: votefile.GNMax, Input: votefile.ManyClasses, GNMax: noisymax.ConfidentGNMax{Sigma2: Sigma2, Noise: noisymax.DiscreteNoise}},
	}
}

// Labelling is how the experiment labels and accounts for the queries.
type Labelling struct {
	// Delta is the δ of the (ε, δ) reported; Directions the divergences
	// the data-dependent bound covers (both, a guarantee, or the PATE
	// paper's one-sided bound).
	Delta      float64
	Directions noisymax.Directions
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
	Mechanism votefile.MechanismName
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
	// and withheld queries (noisymax.Account with the answers), the
	// data-dependent bound in Directions, and Smooth, its release by
	// smooth sensitivity (EpsReleased nil, with SSError, when the
	// analysis does not apply).
	Directions     noisymax.Directions
	EpsIndependent float64
	EpsDependent   float64
	Order          float64
	Smooth         Smooth
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
// classes, K teachers) with mechanism m, drawing from src, in order, up to
// the opts.Answered-th answer if set; scores the labels against truth and
// accounts for them as opts says, releasing the data-dependent ε by smooth
// sensitivity (releaseSmooth).
func Label(counts [][]int, teachers, classes int, truth []int, m ensemble.Mechanism, opts Labelling, src *noise.Source) (Result, error) {
	agg, err := ensemble.NewClassGNMax(m.GNMax, teachers, classes, opts.Delta)
	if err != nil {
		return Result{}, err
	}
	acct, err := noisymax.NewAccountWith(m.GNMax, teachers, classes, noisymax.Options{Directions: opts.Directions})
	if err != nil {
		return Result{}, err
	}
	res := Result{Mechanism: m.Name, Delta: opts.Delta, Directions: opts.Directions}
	right := 0
	for q, c := range counts {
		if opts.Answered > 0 && res.Answered == opts.Answered {
			break
		}
		label, answered, err := agg.Label(c, src)
		if err != nil {
			return res, fmt.Errorf("query %d: %w", q, err)
		}
		ans := noisymax.NotAnswered
		if answered {
			ans = noisymax.Answered
			res.Answered++
			if label == truth[q] {
				right++
			}
		}
		res.Labels = append(res.Labels, label)
		if err := acct.Add(c, ans); err != nil {
			return res, err
		}
	}
	res.Reached = opts.Answered == 0 || res.Answered == opts.Answered
	res.Queries = len(res.Labels)
	if res.Answered > 0 {
		res.Accuracy = float64(right) / float64(res.Answered)
	}
	r, err := acct.Result(opts.Delta, accountant.PaperConversion)
	if err != nil {
		return res, err
	}
	res.EpsIndependent, res.EpsDependent, res.Order = r.Independent.Eps, r.Dependent.Eps, r.Dependent.Order
	ss, err := releaseSmooth(acct, r, opts.Smooth, opts.Delta, accountant.PaperConversion, src)
	res.Smooth = ss
	switch {
	case err != nil:
		res.SSError = err.Error()
	case ss.Error != "":
		res.SSError = ss.Error
	default:
		res.EpsReleased = &ss.Eps
	}
	res.Publish, res.Totals, err = labelTotals(agg, m.GNMax, len(counts), res.Queries, opts, ss)
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
// the votes is composed with them (RDPTotal).
func labelTotals(agg *ensemble.ClassGNMax, m noisymax.ConfidentGNMax, available, asked int, opts Labelling, ss Smooth) (accountant.Total, []accountant.Total, error) {
	var draws []Draw
	if ss.Drawn && !ss.FromVotes {
		draws = []Draw{{Order: ss.Order, Beta: ss.Beta, Sigma: ss.Sigma}}
	}
	if opts.Answered == 0 && len(draws) == 0 {
		acc, err := ensemble.NewAccounting(context.Background(), agg.Privacy(), votefile.Binding{}, accountant.Composition{Method: accountant.General, DeltaPrime: opts.Delta}, nil)
		if err != nil {
			return accountant.Total{}, nil, err
		}
		acc.TotalDelta = &opts.Delta
		t, err := acc.Publish(asked)
		return t, acc.Totals(asked), err
	}
	queries, labels := asked, asked
	if opts.Answered > 0 {
		queries, labels = available, opts.Answered
	}
	rho, err := m.RunSlope(queries, labels)
	if err != nil {
		return accountant.Total{}, nil, err
	}
	t, err := RDPTotal(rho, draws, nil, opts.Delta)
	return t, []accountant.Total{t}, err
}

// Student is how the student is trained: the teachers' network, plain
// SGD.
type Student struct {
	Filters, Epochs, Batch int
	LR                     float64
}

// StudentResult is the student's accuracy on the held-out half of the
// test set, trained on Queries labelled queries of Mechanism.
type StudentResult struct {
	Mechanism votefile.MechanismName
	Queries   int
	Accuracy  float64
}

// TrainStudent trains a network of s on the queries of public (image idx[q]
// of it) that res labelled, with those labels, and tests it on the images
// test of public. It is post-processing of the labels: its guarantee is
// theirs.
func TrainStudent(ctx context.Context, public *datasets.Images, idx []int, res Result, test []int, classes int, s Student, r *rand.Rand) (StudentResult, error) {
	var train []int
	var labels []float64
	for q, l := range res.Labels {
		if l >= 0 {
			train, labels = append(train, idx[q]), append(labels, float64(l))
		}
	}
	out := StudentResult{Mechanism: res.Mechanism, Queries: len(train)}
	if len(train) == 0 {
		return out, fmt.Errorf("student: %s answered no query", res.Mechanism)
	}
	data := public.Dataset(train)
	data.Y = labels // the released labels, not the true ones
	net, err := nn.NewClasses(s.Filters, classes, r)
	if err != nil {
		return out, err
	}
	if err := dpsgd.SGD(ctx, net, data, s.Epochs, s.Batch, s.LR, r); err != nil {
		return out, fmt.Errorf("student: %w", err)
	}
	out.Accuracy = dpsgd.Accuracy(net, public.Dataset(test))
	return out, nil
}

// TunedOn is the data set the teachers' hyperparameters (below) and the
// data-free rule's constants (DataFreeSmooth) were tuned on: an experiment
// on it runs on its own tuning data, whose privacy that tuning spent.
const TunedOn = "fashion-mnist"

// Hyperparameters of the teachers (and of the student, the same network):
// chosen on Fashion-MNIST, neither private nor queried here (docs/pate.md:
// 240 training images per network, validated on 2,000 others), F = 8
// filters, 10 epochs of SGD in batches of 10 at rate 0.1.
const (
	Filters = 8
	Epochs  = 10
	Batch   = 10
	LR      = 0.1
	// StudentEpochs trains the student longer: it sees about ten times
	// the images of one teacher.
	StudentEpochs = 20
)

// TeacherConfig returns the training of K non-private C-class teachers
// of dataset that keep their votes on the first queries test images.
func TeacherConfig(dataset string, k, classes, queries int, seed *uint64) teachers.Config {
	return teachers.Config{Dataset: dataset, K: k, Classes: classes, Queries: queries, Filters: Filters,
		Epochs: Epochs, Batch: Batch, LR: LR, Setting: accountant.Disjoint, Seed: seed}
}

// Params are the experiment's.
type Params struct {
	// K is the number of teachers; Mechanisms label the queries as
	// Labelling says.
	K          int
	Mechanisms []ensemble.Mechanism
	Labelling
	// Student, if set, trains a student on the first mechanism's labels.
	Student *Student
	// CacheDir is the teachers' cache folder ("" for none); Seed, if set,
	// makes the teachers, the noise and the student reproducible (NOT FOR
	// RELEASE).
	CacheDir string
	Seed     *uint64
	// Note, if set, hears of the teachers' training or loading, and
	// Progress of each teacher trained (teachers.Config.Progress).
	Note     func(string)
	Progress func(done, total int)
}

// Outcome is the experiment's result.
type Outcome struct {
	Teachers *teachers.Ensemble
	Cached   bool
	// Queries is the first half of the test set, Holdout the other half.
	Queries, Holdout int
	Results          []Result
	Student          *StudentResult
}

// Check checks what a run needs before it loads any data: K >= 1
// teachers. Run checks it too.
func (p Params) Check() error {
	if p.K < 1 {
		return &accountant.ParamError{Name: "K", Value: float64(p.K), Rule: "must be >= 1"}
	}
	return nil
}

// Run trains (or loads) the teachers of m, labels the first half of its
// test set with each mechanism, and trains the student if asked.
func Run(ctx context.Context, m *datasets.MNIST, p Params) (*Outcome, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	q := m.Test.Len() / 2
	cfg := TeacherConfig(m.Name, p.K, m.Classes, q, p.Seed)
	cfg.Progress = p.Progress
	e, cached, err := teachers.CachedClasses(ctx, p.CacheDir, m, cfg, p.Note)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Teachers: e, Cached: cached, Queries: q, Holdout: m.Test.Len() - q}
	counts := e.Counts()
	src := noise.NewSource()
	if p.Seed != nil {
		src = noise.NewSeededSource(*p.Seed)
	}
	for _, mech := range p.Mechanisms {
		res, err := Label(counts, p.K, m.Classes, m.Test.Labels[:q], mech, p.Labelling, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mech.Name, err)
		}
		out.Results = append(out.Results, res)
	}
	if p.Student != nil && len(out.Results) > 0 {
		r := rand.New(rand.NewChaCha8(studentKey(p.Seed)))
		s, err := TrainStudent(ctx, m.Test, datasets.Range(0, q), out.Results[0], datasets.Range(q, m.Test.Len()), m.Classes, *p.Student, r)
		if err != nil {
			return nil, err
		}
		out.Student = &s
	}
	return out, nil
}

// studentKey is the key of the student's random stream: from the seed,
// or from crypto/rand.
func studentKey(seed *uint64) [32]byte {
	var key [32]byte
	if seed != nil {
		binary.LittleEndian.PutUint64(key[:8], *seed)
		copy(key[8:], "darrm-pate-student")
	} else {
		crand.Read(key[:]) // never fails: crypto/rand crashes the program instead
	}
	return key
}
