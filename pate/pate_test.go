package pate

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
)

// syntheticCounts returns n queries of 250 votes over 10 classes whose
// plurality is the true class with votes 100..249, and the true classes.
func syntheticCounts(n int, seed uint64) ([][]int, []int) {
	r := rand.New(rand.NewPCG(seed, 1))
	counts, truth := make([][]int, n), make([]int, n)
	for q := range counts {
		c := make([]int, 10)
		truth[q] = r.IntN(10)
		top := 100 + r.IntN(150)
		c[truth[q]] = top
		for range 250 - top {
			c[r.IntN(10)]++
		}
		counts[q] = c
	}
	return counts, truth
}

// Label's answers, accuracy and privacy against the account built
// directly from the same answers; GNMax answers every query.
func TestLabel(t *testing.T) {
	counts, truth := syntheticCounts(300, 1)
	for _, m := range Mechanisms() {
		res, err := Label(counts, 250, 10, truth, m, Labelling{Delta: Delta}, noise.NewSeededSource(4))
		if err != nil {
			t.Fatal(err)
		}
		acct, _ := noisymax.NewAccount(m.GNMax, 250, 10, nil)
		answered, right := 0, 0
		for q, l := range res.Labels {
			a := noisymax.NotAnswered
			if l >= 0 {
				a = noisymax.Answered
				answered++
				if l == truth[q] {
					right++
				}
			}
			acct.Add(counts[q], a)
		}
		want, _ := acct.Result(Delta, accountant.PaperConversion)
		if res.Answered != answered || res.Accuracy != float64(right)/float64(answered) || res.Queries != 300 {
			t.Errorf("%s: answered %d accuracy %v, labels say %d, %v", m.Name, res.Answered, res.Accuracy, answered, float64(right)/float64(answered))
		}
		if res.EpsIndependent != want.Independent.Eps || res.EpsDependent != want.Dependent.Eps || !(res.EpsDependent < res.EpsIndependent) {
			t.Errorf("%s: eps %v / %v, account %v / %v", m.Name, res.EpsIndependent, res.EpsDependent, want.Independent.Eps, want.Dependent.Eps)
		}
		if m.GNMax.Confident() && (answered == 0 || answered == 300) {
			t.Errorf("confident-gnmax answered %d of 300: the votes should leave some below the threshold", answered)
		}
		if !m.GNMax.Confident() && answered != 300 {
			t.Errorf("gnmax answered %d of 300", answered)
		}
		if res.EpsReleased == nil && res.SSError == "" {
			t.Errorf("%s: neither a released eps nor why not", m.Name)
		}
		if res.Accuracy < 0.95 {
			t.Errorf("%s: accuracy %v with pluralities of 100 or more", m.Name, res.Accuracy)
		}
		// The total charges every query both steps, and the draw.
		rho, _ := m.GNMax.RunSlope(300, 300)
		alone, _ := RDPTotal(rho, nil, nil, Delta)
		if want := labelTotal(t, m.GNMax, 300, 300, res.Smooth); len(res.Totals) != 1 || res.Totals[0] != want || !(want.Guarantee.Eps > alone.Guarantee.Eps) {
			t.Errorf("%s: totals %v, want %v (the queries alone: %v)", m.Name, res.Totals, want, alone)
		}
	}
}

// labelTotal is the total of a run of Label that may ask queries
// threshold steps and labels GNMax steps, with the draw of ss.
func labelTotal(t *testing.T, m noisymax.ConfidentGNMax, queries, labels int, ss Smooth) accountant.Total {
	t.Helper()
	rho, err := m.RunSlope(queries, labels)
	if err != nil {
		t.Fatal(err)
	}
	tot, err := RDPTotal(rho, []Draw{{Order: ss.Order, Beta: ss.Beta, Sigma: ss.Sigma}}, nil, Delta)
	if err != nil {
		t.Fatal(err)
	}
	return tot
}

// A student learns from the labels it is given, not the true ones.
func TestTrainStudent(t *testing.T) {
	data := datasets.SyntheticClasses(0, 600, 3, 7)
	idx := datasets.Range(0, 400)
	res := Result{Mechanism: "confident-gnmax", Labels: make([]int, 400)}
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
	m := datasets.SyntheticClasses(1500, 200, 10, 3)
	seed := uint64(5)
	p := Params{K: 12, Mechanisms: Mechanisms(), Labelling: Labelling{Delta: Delta}, CacheDir: t.TempDir(), Seed: &seed,
		Student: &Student{Filters: 2, Epochs: 5, Batch: 10, LR: 0.1}}
	// 12 teachers cannot reach T = 200: a threshold they can reach.
	p.Mechanisms[0].GNMax.Threshold, p.Mechanisms[0].GNMax.Sigma1, p.Mechanisms[0].GNMax.Sigma2 = 9, 2, 2
	p.Mechanisms[1].GNMax.Sigma2 = 2
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
		if a.Answered != b.Answered || a.Accuracy != b.Accuracy || a.EpsDependent != b.EpsDependent || *a.EpsReleased != *b.EpsReleased {
			t.Errorf("%s: seeded runs differ: %+v, %+v", a.Mechanism, a, b)
		}
	}
	if first.Results[1].Answered != 100 || first.Results[0].Answered == 0 || first.Student.Accuracy != again.Student.Accuracy {
		t.Errorf("answered %d, %d; students %v, %v", first.Results[0].Answered, first.Results[1].Answered, first.Student.Accuracy, again.Student.Accuracy)
	}
}

// Label stops at the Answered-th answer: the queries asked are those up to
// it, accounted for as they were answered; with fewer answers than asked
// for, every query is asked and Reached is false.
func TestLabelAnswered(t *testing.T) {
	counts, truth := syntheticCounts(300, 1)
	m := Mechanisms()[0]
	res, err := Label(counts, 250, 10, truth, m, Labelling{Delta: Delta, Answered: 20}, noise.NewSeededSource(4))
	if err != nil {
		t.Fatal(err)
	}
	if res.Answered != 20 || !res.Reached || len(res.Labels) != res.Queries || res.Queries <= 20 || res.Labels[res.Queries-1] < 0 {
		t.Fatalf("answered %d of %d asked, reached %v, last label %v", res.Answered, res.Queries, res.Reached, res.Labels[len(res.Labels)-1])
	}
	acct, _ := noisymax.NewAccount(m.GNMax, 250, 10, nil)
	for q, l := range res.Labels {
		a := noisymax.NotAnswered
		if l >= 0 {
			a = noisymax.Answered
		}
		acct.Add(counts[q], a)
	}
	want, _ := acct.Result(Delta, accountant.PaperConversion)
	if res.EpsIndependent != want.Independent.Eps || res.EpsDependent != want.Dependent.Eps || res.EpsReleased == nil {
		t.Errorf("eps %v / %v, the account of the %d asked %v / %v", res.EpsIndependent, res.EpsDependent, res.Queries, want.Independent.Eps, want.Dependent.Eps)
	}
	// Stopping at an answer is held by a filter whose budget is fixed
	// before the run: the threshold step on all 300 queries it may ask,
	// the GNMax step on 20.
	if want := labelTotal(t, m.GNMax, 300, 20, res.Smooth); len(res.Totals) != 1 || res.Totals[0] != want {
		t.Errorf("totals %v, want %v", res.Totals, want)
	}
	all, err := Label(counts, 250, 10, truth, m, Labelling{Delta: Delta, Answered: 1000}, noise.NewSeededSource(4))
	if err != nil || all.Reached || all.Queries != 300 || all.Answered >= 300 {
		t.Errorf("1000 answers asked of 300 queries: %d answered of %d, reached %v (%v)", all.Answered, all.Queries, all.Reached, err)
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
		var pe *accountant.ParamError
		if !errors.As(err, &pe) || pe.Name != "K" || pe.Value != float64(k) {
			t.Errorf("K = %d: %v, want a ParamError naming K", k, err)
		}
		if _, err := Run(context.Background(), nil, Params{K: k}); !errors.As(err, &pe) {
			t.Errorf("Run with K = %d: %v, want the ParamError", k, err)
		}
	}
}
