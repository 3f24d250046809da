// Package patemnist runs PATE 2018's MNIST experiment with darrm's exact
// samplers and accounting: K non-private teachers trained on disjoint shares
// of the training set label the public queries through Confident-GNMax and
// GNMax (pate.Label), and a student may be trained on the answered queries.
//
// It is an experiment runner of the thesis, which darrm's command runs, and
// no part of darrm's library API: Go lets another module import it, but its
// names change with the experiment, without notice (docs/design.md,
// "Packages and layering").
//
// The experiment is Section 5 and Table 2's MNIST row of Papernot, Song,
// Mironov, Raghunathan, Talwar and Erlingsson, "Scalable Private Learning
// with PATE", ICLR 2018. The teachers' shares are cut by a keyed hash of each
// record; the queries are the first half of the test set, as PATE's are;
// each mechanism's labels are scored against the true labels and accounted
// for at δ, and the student is tested on the other half.
package patemnist

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/dpsgd"
	"github.com/darrm/darrm/experiments/nn"
	"github.com/darrm/darrm/experiments/teachers"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/pate"
	"github.com/darrm/darrm/provenance"
)

// Student is how the student is trained: the teachers' network, plain
// SGD.
type Student struct {
	Filters, Epochs, Batch int
	LR                     float64
}

// StudentResult is the student's accuracy on the held-out half of the
// test set, trained on Queries labelled queries of Mechanism.
type StudentResult struct {
	Mechanism provenance.MechanismName
	Queries   int
	Accuracy  float64
}

// TrainStudent trains a network of s on the queries of public (image idx[q]
// of it) that res labelled, with those labels, and tests it on the images
// test of public. It is post-processing of the labels: its guarantee is
// theirs.
func TrainStudent(ctx context.Context, public *datasets.Images, idx []int, res pate.Result, test []int, classes int, s Student, r *rand.Rand) (StudentResult, error) {
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
	// Labelling says: the first Queries of them (0: every one, the first
	// half of the test set).
	K          int
	Mechanisms []ensemble.Mechanism
	Queries    int
	pate.Labelling
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
	// Queries are the queries asked of the first half of the test set,
	// Holdout the other half.
	Queries, Holdout int
	Results          []pate.Result
	Student          *StudentResult
}

// Check checks what a run needs before it loads any data: K >= 1
// teachers. Run checks it too.
func (p Params) Check() error {
	if p.K < 1 {
		return &param.Error{Name: "K", Value: p.K, Rule: "must be >= 1"}
	}
	if p.Queries < 0 {
		return &param.Error{Name: "queries", Value: p.Queries, Rule: "must be >= 0 (0: every query)"}
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
	if p.Queries > 0 {
		if p.Queries > q {
			return nil, &param.Error{Name: "queries", Value: p.Queries, Rule: fmt.Sprintf("must be at most the %d queries, the first half of the test set", q)}
		}
		counts, out.Queries = counts[:p.Queries], p.Queries
	}
	src := noise.NewSource()
	if p.Seed != nil {
		src = noise.NewSeededSource(*p.Seed)
	}
	for _, mech := range p.Mechanisms {
		res, err := pate.Label(ctx, counts, p.K, m.Classes, m.Test.Labels[:len(counts)], mech, p.Labelling, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mech.Name(), err)
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
