package ensemble

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
)

func TestWilson(t *testing.T) {
	// Reference values from the textbook form p̂ ± z·sqrt(p̂(1-p̂)/n + z²/4n²), over 1 + z²/n (Wilson 1927), computed separately.
	for _, tc := range []struct {
		x, n   int
		lo, hi float64
	}{
		{50, 100, 0.403832, 0.596168},
		{0, 10, 0, 0.277533},
		{10, 10, 0.722467, 1},
		{95000, 100000, 0.948632, 0.951334},
	} {
		lo, hi := wilson(tc.x, tc.n)
		if math.Abs(lo-tc.lo) > 1e-6 || math.Abs(hi-tc.hi) > 1e-6 {
			t.Errorf("Wilson(%d, %d) = [%.6f, %.6f], want [%.6f, %.6f]", tc.x, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

// TestSimulateTarget is the target: K = 11, m = 3, eps = 0.1,
// Delta = 1e-5, 100,000 queries: DaRRM_opt's 95% interval lies above
// subsampling's and RR's.
// TestSimulateNilAggregator: a nil aggregator among those simulated is an
// error naming its place, where it was a nil dereference.
func TestSimulateNilAggregator(t *testing.T) {
	g, err := newGNMax(constraints.New(3, 1, 0.1, 1e-5), noisymax.GNMaxGrid)
	if err != nil {
		t.Fatal(err)
	}
	for _, aggs := range [][]Aggregator{{nil}, {g, nil}} {
		_, err := func() (res []SimResult, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return Simulate(context.Background(), aggs, []float64{0.7, 0.7, 0.7}, 10, 1)
		}()
		if want := fmt.Sprintf("aggregator %d of %d is nil", len(aggs), len(aggs)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%d aggregators, the last nil: %v, want %q", len(aggs), err, want)
		}
	}
}

// TestSimulateCanceledWithoutAggregators checks that a canceled context
// ends a simulation of no aggregators, whose drawing of MaxInt queries'
// votes checked none.
func TestSimulateCanceledWithoutAggregators(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Simulate(ctx, nil, []float64{0.7}, 1<<20, 1); err != context.Canceled {
		t.Errorf("Simulate(canceled, no aggregators) = %v, want %v", err, context.Canceled)
	}
}

func TestSimulateTarget(t *testing.T) {
	ctx := context.Background()
	p := constraints.New(11, 3, 0.1, 1e-5)
	d, err := newPrivateDaRRM(ctx, p, optGamma(t, p), Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSubsample(ctx, p, Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRR(ctx, p, accountant.Simple, 0, Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	g, err := newGNMax(p, noisymax.GNMaxGrid)
	if err != nil {
		t.Fatal(err)
	}
	a, err := gamma.ParseActual("U(0.5,1)")
	if err != nil {
		t.Fatal(err)
	}
	teachers, err := a.Sample(11, noise.NewSeededSource(1).Float64)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Simulate(ctx, []Aggregator{d, s, r, g}, teachers, 100000, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res {
		t.Logf("%-9s agreement %.4f [%.4f, %.4f], exact %.4f, TV error %.4f", x.Name, x.Rate, x.Lo, x.Hi, x.Exact, x.TVError)
		se := math.Sqrt(x.Exact * (1 - x.Exact) / float64(x.Queries))
		if math.Abs(x.Rate-x.Exact) > 5*se {
			t.Errorf("%s: agreement %v is %.1f standard errors from the exact %v", x.Name, x.Rate, (x.Rate-x.Exact)/se, x.Exact)
		}
	}
	for _, base := range res[1:3] {
		if !(res[0].Lo > base.Hi) {
			t.Errorf("DaRRM's interval [%v, %v] does not lie above %s's [%v, %v]", res[0].Lo, res[0].Hi, base.Name, base.Lo, base.Hi)
		}
	}
	again, _ := Simulate(ctx, []Aggregator{d, s, r, g}, teachers, 100000, 1)
	for i := range res {
		if again[i].Agree != res[i].Agree {
			t.Errorf("%s: a second run with the same seed differs", res[i].Name)
		}
	}
	if _, err := Simulate(ctx, []Aggregator{d}, teachers[:9], 10, 1); err == nil {
		t.Error("Simulate accepted 9 teachers for K = 11 aggregators")
	}
}

// TestSimulateChunks: Simulate, which draws the votes a chunk at a time
// and lets every aggregator answer the chunk in turn, counts the
// agreements of drawing every query's votes once and labelling them with
// every aggregator from its own stream; and the votes of chunks of any
// size are those of one long draw.
func TestSimulateChunks(t *testing.T) {
	ctx := context.Background()
	p := constraints.New(11, 3, 0.1, 1e-5)
	s, err := newSubsample(ctx, p, Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	g, err := newGNMax(p, noisymax.GNMaxGrid)
	if err != nil {
		t.Fatal(err)
	}
	aggs := []Aggregator{zeroDaRRM(t, 11), s, g}
	teachers := []float64{0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1}
	const queries, seed = 2*checkEvery + 17, 4
	res, err := Simulate(ctx, aggs, teachers, queries, seed)
	if err != nil {
		t.Fatal(err)
	}
	draws := noise.NewSeededStream(seed, 0)
	srcs := make([]*noise.Source, len(aggs))
	for i := range aggs {
		srcs[i] = noise.NewSeededStream(seed, uint64(i)+1)
	}
	agree := make([]int, len(aggs))
	votes := make([]byte, len(teachers))
	for range queries {
		ones := 0
		for i, v := range teachers {
			votes[i] = 0
			if draws.Uint64()>>11 < discrete.Threshold(v) {
				votes[i] = 1
				ones++
			}
		}
		for i, a := range aggs {
			label, err := a.Aggregate(votes, srcs[i])
			if err != nil {
				t.Fatal(err)
			}
			if (label == 1) == (2*ones > len(teachers)) {
				agree[i]++
			}
		}
	}
	for i, r := range res {
		if r.Agree != agree[i] {
			t.Errorf("%s: %d agreements, want %d", r.Name, r.Agree, agree[i])
		}
	}
	long := newSimulatedVotes(teachers, queries).draw(noise.NewSeededStream(seed, 0), 0, queries)
	short, src := newSimulatedVotes(teachers, 7), noise.NewSeededStream(seed, 0)
	for drawn := 0; drawn < queries; {
		for _, q := range short.draw(src, drawn, queries-drawn) {
			if w := long[drawn]; q.Index != w.Index || !slices.Equal(q.Votes, w.Votes) || !slices.Equal(q.Counts, w.Counts) {
				t.Fatalf("query %d in chunks of 7: %+v, want %+v", drawn+1, q, w)
			}
			drawn++
		}
	}
}
