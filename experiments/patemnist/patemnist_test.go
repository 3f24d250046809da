package patemnist

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/pate"
)

// A student learns from the labels it is given, not the true ones.
func TestTrainStudent(t *testing.T) {
	data := datasets.SyntheticClasses(0, 600, 3, 7)
	idx := datasets.Range(0, 400)
	res := pate.Result{Mechanism: "confident-gnmax", Labels: make([]int, 400)}
	for q := range res.Labels {
		res.Labels[q] = data.Test.Labels[q]
		if q%4 == 0 {
			res.Labels[q] = -1 // withheld
		}
	}
	s := Student{Filters: 2, Epochs: 5, Batch: 10, LR: 0.1}
	got, err := TrainStudent(context.Background(), data.Test, idx, res, datasets.Range(400, 600), 3, s, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Queries != 300 || got.Accuracy < 0.9 {
		t.Errorf("student on 300 labels: %+v", got)
	}
	for q := range res.Labels {
		if res.Labels[q] >= 0 {
			res.Labels[q] = (data.Test.Labels[q] + 1) % 3 // every label wrong
		}
	}
	bad, _ := TrainStudent(context.Background(), data.Test, idx, res, datasets.Range(400, 600), 3, s, rand.New(rand.NewPCG(1, 1)))
	if bad.Accuracy > 0.1 {
		t.Errorf("student on shifted labels: accuracy %v, want near 0", bad.Accuracy)
	}
	res.Labels = []int{-1}
	if _, err := TrainStudent(context.Background(), data.Test, []int{0}, res, []int{1}, 3, s, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("a student without labels trained")
	}
}

// Run end to end on a synthetic ten-class set: teachers trained then
// cached (their votes with them), the same outcome from the cache with
// the same seed, every mechanism's row and the student.
func TestRun(t *testing.T) {
	// Under -short the teachers train on 600 images, not 1,500: training
	// them is most of the test's time.
	train := 1500
	if testing.Short() {
		train = 600
	}
	m := datasets.SyntheticClasses(train, 200, 10, 3)
	seed := uint64(5)
	p := Params{K: 12, Mechanisms: Mechanisms(), Labelling: pate.Labelling{Delta: Delta}, CacheDir: t.TempDir(), Seed: &seed,
		Student: &Student{Filters: 2, Epochs: 5, Batch: 10, LR: 0.1}}
	// 12 teachers cannot reach T = 200: a threshold they can reach.
	conf, gn := p.Mechanisms[0].(ensemble.ConfidentGNMax), p.Mechanisms[1].(ensemble.GNMax)
	conf.Threshold, conf.Sigma1, conf.Sigma2 = 9, 2, 2
	gn.Sigma2 = 2
	p.Mechanisms = []ensemble.Mechanism{conf, gn}
	var progress []int
	p.Progress = func(done, total int) {
		if total != 12 {
			t.Errorf("progress of %d teachers, want 12", total)
		}
		progress = append(progress, done)
	}
	first, err := Run(context.Background(), m, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(progress) != 13 || progress[0] != 0 || progress[12] != 12 || !slices.IsSorted(progress) {
		t.Errorf("progress %v: want 0, then each of the 12 teachers", progress)
	}
	progress = nil
	if first.Cached || first.Queries != 100 || first.Holdout != 100 || len(first.Results) != 2 || first.Student == nil {
		t.Fatalf("outcome %+v", first)
	}
	if c := first.Teachers.Config; c.K != 12 || c.Classes != 10 || c.Queries != 100 || c.Filters != Filters {
		t.Errorf("teachers %+v", c)
	}
	again, err := Run(context.Background(), m, p)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || progress != nil {
		t.Errorf("second run trained again (progress %v)", progress)
	}
	for i := range first.Results {
		a, b := first.Results[i], again.Results[i]
		if a.Answered != b.Answered || a.Accuracy != b.Accuracy || a.EpsDependent == nil || b.EpsDependent == nil || *a.EpsDependent != *b.EpsDependent || *a.EpsReleased != *b.EpsReleased {
			t.Errorf("%s: seeded runs differ: %+v, %+v", a.Mechanism, a, b)
		}
	}
	if first.Results[1].Answered != 100 || first.Results[0].Answered == 0 || first.Student.Accuracy != again.Student.Accuracy {
		t.Errorf("answered %d, %d; students %v, %v", first.Results[0].Answered, first.Results[1].Answered, first.Student.Accuracy, again.Student.Accuracy)
	}
	// Interrupted once the teachers are loaded (from the cache, which
	// checks no context), the labelling stops with the interruption and
	// no outcome: at PATE's 5,000 queries and K = 250 it takes seconds,
	// which SIGTERM may not wait. Without a student, whose training
	// would see it anyway.
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	labelsOnly := p
	labelsOnly.Student = nil
	if out, err := Run(stopped, m, labelsOnly); !errors.Is(err, context.Canceled) || out != nil {
		t.Errorf("run interrupted before its labels: outcome %v, error %v; want none and context.Canceled", out != nil, err)
	}
}

// TestParamsCheck: a run needs at least one teacher, named as K, and Run
// refuses none before it looks at the data.
func TestParamsCheck(t *testing.T) {
	if err := (Params{K: 250}).Check(); err != nil {
		t.Errorf("K = 250: %v", err)
	}
	for _, k := range []int{0, -3} {
		err := Params{K: k}.Check()
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != "K" || pe.Value != k {
			t.Errorf("K = %d: %v, want a ParamError naming K", k, err)
		}
		if _, err := Run(context.Background(), nil, Params{K: k}); !errors.As(err, &pe) {
			t.Errorf("Run with K = %d: %v, want the ParamError", k, err)
		}
	}
}
