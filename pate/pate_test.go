package pate

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
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
	// Under -short 100 queries: Label and the account score every query.
	n := 300
	if testing.Short() {
		n = 100
	}
	counts, truth := syntheticCounts(n, 1)
	for _, m := range paperMechanisms() {
		res, err := Label(t.Context(), counts, 250, 10, truth, m.mech(), Labelling{Delta: paperDelta}, noise.NewSeededSource(4))
		if err != nil {
			t.Fatal(err)
		}
		acct, _ := newRDPAccount(m.GNMax, 250, 10, rdpOptions{memo: testMemo})
		answered, right := 0, 0
		for q, l := range res.Labels {
			a := answerWithheld
			if l >= 0 {
				a = answerGiven
				answered++
				if l == truth[q] {
					right++
				}
			}
			acct.add(counts[q], a)
		}
		want, _ := acct.result(paperDelta, accountant.PaperConversion)
		if res.Answered != answered || res.Accuracy != float64(right)/float64(answered) || res.Queries != n {
			t.Errorf("%s: answered %d accuracy %v, labels say %d, %v", m.Name, res.Answered, res.Accuracy, answered, float64(right)/float64(answered))
		}
		if res.EpsIndependent == nil || res.EpsDependent == nil || res.Order == nil {
			t.Fatalf("%s: no Rényi analysis: %+v", m.Name, res)
		}
		if *res.EpsIndependent != want.Independent.Eps || *res.EpsDependent != want.Dependent.Eps || !(*res.EpsDependent < *res.EpsIndependent) {
			t.Errorf("%s: eps %v / %v, account %v / %v", m.Name, *res.EpsIndependent, *res.EpsDependent, want.Independent.Eps, want.Dependent.Eps)
		}
		if m.GNMax.Confident() && (answered == 0 || answered == n) {
			t.Errorf("confident-gnmax answered %d of %d: the votes should leave some below the threshold", answered, n)
		}
		if !m.GNMax.Confident() && answered != n {
			t.Errorf("gnmax answered %d of %d", answered, n)
		}
		if res.EpsReleased == nil && res.SSError == "" {
			t.Errorf("%s: neither a released eps nor why not", m.Name)
		}
		if res.Accuracy < 0.95 {
			t.Errorf("%s: accuracy %v with pluralities of 100 or more", m.Name, res.Accuracy)
		}
		// The total charges every query both steps, and the draw.
		rho, _ := m.GNMax.RunSlope(n, n)
		alone, _ := rdpTotal(rho, nil, nil, paperDelta)
		if want := labelTotal(t, m.GNMax, n, n, res.Smooth); len(res.Totals) != 1 || res.Totals[0] != want || !(want.Guarantee.Eps > alone.Guarantee.Eps) {
			t.Errorf("%s: totals %v, want %v (the queries alone: %v)", m.Name, res.Totals, want, alone)
		}
	}
}

// labelTotal is the total of a run of Label that may ask queries
// threshold steps and labels GNMax steps, with the draw of ss.
func labelTotal(t *testing.T, m noisymax.Steps, queries, labels int, ss smooth) accountant.Total {
	t.Helper()
	rho, err := m.RunSlope(queries, labels)
	if err != nil {
		t.Fatal(err)
	}
	tot, err := rdpTotal(rho, []draw{{Order: ss.Order, Beta: ss.Beta, Sigma: ss.Sigma}}, nil, paperDelta)
	if err != nil {
		t.Fatal(err)
	}
	return tot
}

// TestLabelChecksTruth: true labels of the wrong number or outside the
// classes, and no mechanism, are refused before any label is drawn; each
// panicked.
func TestLabelChecksTruth(t *testing.T) {
	counts := [][]int{{5, 0, 0}, {0, 5, 0}}
	m := ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 1}
	for _, tc := range []struct {
		name  string
		truth []int
		m     ensemble.Mechanism
		want  string
	}{
		{"no true labels", nil, m, "0 true labels for 2 queries"},
		{"one short", []int{0}, m, "1 true labels for 2 queries"},
		{"a label past the classes", []int{0, 3}, m, "query 2's true label 3 is not a class"},
		{"a negative label", []int{-1, 1}, m, "query 1's true label -1"},
		{"no mechanism", []int{0, 1}, nil, "no mechanism"},
	} {
		_, err := Label(t.Context(), counts, 5, 3, tc.truth, tc.m, Labelling{Delta: 1e-5}, noise.NewSeededSource(1))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestLabelZeroNoise: a mechanism whose noise is left at its zero value
// labels as a release draws it (ensemble.New, noisymax.Steps.Drawn), with
// the discrete noise: Label refused it as unset, though ensemble.New
// builds it.
func TestLabelZeroNoise(t *testing.T) {
	counts, truth := syntheticCounts(20, 2)
	for _, tc := range []struct {
		name      string
		zero, set ensemble.Mechanism
	}{
		{"gnmax", ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40},
			ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40, Noise: noisymax.DiscreteNoise}},
		{"confident-gnmax", ensemble.ConfidentGNMax{Threshold: 150, Sigma1: 100, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}},
			ensemble.ConfidentGNMax{Threshold: 150, Sigma1: 100, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40, Noise: noisymax.DiscreteNoise}}},
	} {
		got, err := Label(t.Context(), counts, 250, 10, truth, tc.zero, Labelling{Delta: 1e-5}, noise.NewSeededSource(3))
		if err != nil {
			t.Errorf("%s with a zero noise: %v", tc.name, err)
			continue
		}
		want, err := Label(t.Context(), counts, 250, 10, truth, tc.set, Labelling{Delta: 1e-5}, noise.NewSeededSource(3))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Labels, want.Labels) || got.Accuracy != want.Accuracy || !slices.Equal(got.Totals, want.Totals) {
			t.Errorf("%s with a zero noise: %+v, with the discrete noise %+v", tc.name, got, want)
		}
	}
}

// Label stops at the Answered-th answer: the queries asked are those up to
// it, accounted for as they were answered; with fewer answers than asked
// for, every query is asked and Reached is false.
func TestLabelAnswered(t *testing.T) {
	// Under -short 100 queries: Label and the account score every query
	// asked.
	n := 300
	if testing.Short() {
		n = 100
	}
	counts, truth := syntheticCounts(n, 1)
	m := paperMechanisms()[0]
	res, err := Label(t.Context(), counts, 250, 10, truth, m.mech(), Labelling{Delta: paperDelta, Answered: 20}, noise.NewSeededSource(4))
	if err != nil {
		t.Fatal(err)
	}
	if res.Answered != 20 || !res.Reached || len(res.Labels) != res.Queries || res.Queries <= 20 || res.Labels[res.Queries-1] < 0 {
		t.Fatalf("answered %d of %d asked, reached %v, last label %v", res.Answered, res.Queries, res.Reached, res.Labels[len(res.Labels)-1])
	}
	acct, _ := newRDPAccount(m.GNMax, 250, 10, rdpOptions{memo: testMemo})
	for q, l := range res.Labels {
		a := answerWithheld
		if l >= 0 {
			a = answerGiven
		}
		acct.add(counts[q], a)
	}
	want, _ := acct.result(paperDelta, accountant.PaperConversion)
	if res.EpsIndependent == nil || res.EpsDependent == nil || *res.EpsIndependent != want.Independent.Eps || *res.EpsDependent != want.Dependent.Eps || res.EpsReleased == nil {
		t.Errorf("eps %v / %v, the account of the %d asked %v / %v", res.EpsIndependent, res.EpsDependent, res.Queries, want.Independent.Eps, want.Dependent.Eps)
	}
	// Stopping at an answer is held by a filter whose budget is fixed
	// before the run: the threshold step on all n queries it may ask,
	// the GNMax step on 20.
	if want := labelTotal(t, m.GNMax, n, 20, res.Smooth); len(res.Totals) != 1 || res.Totals[0] != want {
		t.Errorf("totals %v, want %v", res.Totals, want)
	}
	all, err := Label(t.Context(), counts, 250, 10, truth, m.mech(), Labelling{Delta: paperDelta, Answered: 1000}, noise.NewSeededSource(4))
	if err != nil || all.Reached || all.Queries != n || all.Answered >= n {
		t.Errorf("1000 answers asked of %d queries: %d answered of %d, reached %v (%v)", n, all.Answered, all.Queries, all.Reached, err)
	}
}
