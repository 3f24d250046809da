package shuffleexp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/shuffleg"
)

func testExperiment(t testing.TB, p *shuffleg.Problem) *Experiment {
	seed := uint64(42)
	return &Experiment{
		Problem: p, Algorithms: allAlgorithms(), Order: shuffleg.RR, Epochs: 5, Fraction: 0.5, Clip: 10,
		Eps: 5, Delta: 1e-6, Conversion: accountant.PaperConversion, LRs: []float64{0.01, 0.001}, Runs: 3, Seed: &seed,
	}
}

// TestExperimentDeterministic checks that a seeded experiment gives the same
// results on one worker and on several.
func TestExperimentDeterministic(t *testing.T) {
	p := newTestProblem(t, meanEstimation(10), 40, 40, 8, 1)
	var got [][]Result
	for _, w := range []int{1, 3} {
		e := testExperiment(t, p)
		e.Workers = w
		res, err := e.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res)
	}
	for i := range got[0] {
		a, b := got[0][i], got[1][i]
		if !slices.Equal(a.LossMean, b.LossMean) || !slices.Equal(a.ExcessStd, b.ExcessStd) || a.LR != b.LR {
			t.Fatalf("%v: results differ between 1 and 3 workers", a.Algorithm)
		}
	}
}

// TestExperimentResults checks the aggregate: calibrated noise for the
// private algorithms only, the chosen learning rate has the lowest mean
// final loss of the grid, and the curves are the runs' mean and std.
func TestExperimentResults(t *testing.T) {
	p := newTestProblem(t, ridgeRegression(0.1), 40, 40, 4, 2)
	e := testExperiment(t, p)
	e.LRs = []float64{0.05, 0.01, 0.001}
	res, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if (r.Calibration.Sigma > 0) != r.Algorithm.Private() {
			t.Errorf("%v: sigma %v", r.Algorithm, r.Calibration.Sigma)
		}
		mean, std := r.FinalLoss()
		for _, g := range r.Grid {
			if g.Status == GridOK && g.FinalLossMean < mean {
				t.Errorf("%v: chose lr %v with final loss %v, but lr %v has %v", r.Algorithm, r.LR, mean, g.LR, g.FinalLossMean)
			}
			if g.LR == r.LR && (g.FinalLossMean != mean || g.FinalLossStd != std) {
				t.Errorf("%v: grid point %v disagrees with the curves", r.Algorithm, g)
			}
		}
		if len(r.LossMean) != e.Epochs+1 || r.ExcessMean[0] <= 0 {
			t.Errorf("%v: %d curve points, initial excess %v", r.Algorithm, len(r.LossMean), r.ExcessMean[0])
		}
		if m, _ := r.FinalExcess(); !closeTo(m, mean-p.Optimum().Value, 1e-9) {
			t.Errorf("%v: final excess %v, loss − G(x*) = %v", r.Algorithm, m, mean-p.Optimum().Value)
		}
	}
}

// TestExperimentContraction checks the policy for learning rates above
// 1/L*: a fixed one is refused with a *NonContractiveError, grid points
// above it are skipped, and AllowNonContractive runs them, marked.
func TestExperimentContraction(t *testing.T) {
	p := newTestProblem(t, ridgeRegression(0.1), 40, 40, 4, 2)
	bound := shuffleg.Plan{Algorithm: shuffleg.DPShuffleG}.ContractionBound(p)
	e := testExperiment(t, p)
	e.Algorithms = []shuffleg.Algorithm{shuffleg.DPShuffleG}
	e.LRs = []float64{2 * bound}
	_, err := e.Run(context.Background())
	var nc *NonContractiveError
	if !errors.As(err, &nc) || nc.Bound != bound {
		t.Fatalf("fixed lr above the bound: error %v", err)
	}
	e.LRs = []float64{3 * bound, 2 * bound}
	if _, err := e.Run(context.Background()); !errors.As(err, &nc) || nc.LR != 2*bound || nc.Bound != bound {
		t.Fatalf("a grid above the bound: error %v", err)
	}
	e.LRs = []float64{2 * bound, bound / 2}
	res, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := res[0].Grid[0]; g.Status != GridNonContractive || res[0].LR != bound/2 || !res[0].Contractive {
		t.Fatalf("grid: %+v, chose %v", res[0].Grid, res[0].LR)
	}
	e.LRs = []float64{1.5 * bound}
	e.AllowNonContractive = true
	res, err = e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Contractive {
		t.Fatal("result above the bound marked contractive")
	}
}

// TestAggregateSkipsDiverged feeds aggregate a grid point with a diverged
// run (clipping keeps real runs bounded, so it is built by hand): the point
// is marked and the other one chosen.
func TestAggregateSkipsDiverged(t *testing.T) {
	e := &Experiment{Epochs: 1, LRs: []float64{1, 0.1}}
	inf := math.Inf(1)
	res := &Result{Algorithm: shuffleg.DPShuffleG, Grid: []GridPoint{{LR: 1, Contractive: true}, {LR: 0.1, Contractive: true}}}
	traces := [][]*shuffleg.Trace{
		{{Loss: []float64{2, 0.1}, Excess: []float64{1, 0}}, {Loss: []float64{2, inf}, Excess: []float64{1, inf}}},
		{{Loss: []float64{2, 1.5}, Excess: []float64{1, 0.5}}, {Loss: []float64{2, 1.7}, Excess: []float64{1, 0.7}}},
	}
	if err := e.aggregate(res, traces); err != nil {
		t.Fatal(err)
	}
	if res.Grid[0].Status != GridDiverged || res.LR != 0.1 {
		t.Fatalf("grid %+v, chose %v", res.Grid, res.LR)
	}
	if m, s := res.FinalLoss(); m != 1.6 || !closeTo(s, 0.1, 1e-12) {
		t.Fatalf("final loss %v ± %v, want 1.6 ± 0.1", m, s)
	}
	res.Grid[1].Status = ""
	if err := e.aggregate(res, [][]*shuffleg.Trace{traces[0], nil}); err == nil {
		t.Fatal("all diverged: no error")
	}
}

func TestExperimentRejects(t *testing.T) {
	p := newTestProblem(t, meanEstimation(10), 10, 10, 2, 1)
	for _, tc := range []struct {
		mod  func(*Experiment)
		want string
	}{
		{func(e *Experiment) { e.Eps = 0 }, "eps = 0"},
		{func(e *Experiment) { e.Eps = math.NaN() }, "eps = NaN"},
		{func(e *Experiment) { e.Eps = math.Inf(1) }, "eps = +Inf"},
		{func(e *Experiment) { e.Delta = 1 }, "delta = 1"},
		{func(e *Experiment) { e.Delta = 0 }, "delta = 0"},
		{func(e *Experiment) { e.Fraction = 0 }, "p = 0"},
		{func(e *Experiment) { e.Fraction = 1.5 }, "p = 1.5"},
		{func(e *Experiment) { e.Runs = 0 }, "runs = 0"},
		{func(e *Experiment) { e.LRs = []float64{-1} }, "lr = -1"},
		{func(e *Experiment) { e.LRs = nil }, "none given"},
		{func(e *Experiment) { e.Clip = math.Inf(1) }, "clip = +Inf"},
	} {
		e := testExperiment(t, p)
		tc.mod(e)
		if _, err := e.Run(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}

func TestExperimentCancel(t *testing.T) {
	p := newTestProblem(t, meanEstimation(10), 10, 10, 2, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := testExperiment(t, p).Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
}

func TestThesisLRGrid(t *testing.T) {
	g := thesisLRGrid()
	if len(g) != 18 || g[0] != 0.5 || g[1] != 0.1 || g[2] != 0.05 || g[3] != 0.01 || g[16] != 5e-9 || g[17] != 1e-9 {
		t.Fatalf("grid %v", g)
	}
}

// Example runs a small mean-estimation panel: the five algorithms at
// ε = 5, δ = 10⁻⁶, with noise calibrated by the accountant.
func ExampleExperiment_Run() {
	priv := &datasets.Dataset{D: 2, X: []float64{0.9, 0.1, 1.1, -0.1, 1.0, 0.0, 0.8, 0.2}}
	pub := &datasets.Dataset{D: 2, X: []float64{1.2, 0.1, 1.3, -0.1, 1.1, 0.0, 1.2, 0.2}}
	p, err := shuffleg.NewProblem(context.Background(), meanEstimation(DefaultRadius), priv, pub)
	if err != nil {
		fmt.Println(err)
		return
	}
	seed := uint64(1)
	e := &Experiment{
		Problem: p, Algorithms: allAlgorithms(), Order: shuffleg.RR, Epochs: 10, Fraction: 0.5, Clip: DefaultClip,
		Eps: 5, Delta: DefaultDelta, Conversion: accountant.PaperConversion, LRs: []float64{0.01}, Runs: 2, Seed: &seed,
	}
	res, err := e.Run(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res {
		fmt.Printf("%-14s sigma %.4g\n", r.Label, r.Calibration.Sigma)
	}
	// Output:
	// DP-RR          sigma 72.04
	// Priv-Pub-RR    sigma 50.94
	// Pub-Priv-RR    sigma 50.94
	// Interleaved-RR sigma 41.59
	// Public Only    sigma 0
}

// meanEstimation, ridgeRegression and lassoLogistic are the tasks of the
// command's names with their parameters.
func meanEstimation(radius float64) shuffleg.Task { return mustTask("mean", radius, 0) }

func ridgeRegression(lambda float64) shuffleg.Task { return mustTask("ridge", 0, lambda) }

func mustTask(name string, radius, lambda float64) shuffleg.Task {
	t, err := newTask(name, radius, lambda)
	if err != nil {
		panic(err)
	}
	return t
}

// newTestProblem builds task's problem on the synthetic dataset's n private
// and n public samples of dimension d.
func newTestProblem(t testing.TB, task shuffleg.Task, n, m, d int, seed uint64) *shuffleg.Problem {
	t.Helper()
	if n != m {
		t.Fatalf("the synthetic dataset has as many public samples as private ones: %d != %d", n, m)
	}
	pair, err := datasets.Synthetic(context.Background(), dataTask(task.Loss), n, d, seed)
	if err != nil {
		t.Fatal(err)
	}
	p, err := shuffleg.NewProblem(context.Background(), task, pair.Private, pair.Public)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func closeTo(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestNonContractiveNamesBound: the messages of a rate above the bound
// name the bound each algorithm has, Interleaved's the maximum over the
// public samples too, which they called 1/L*.
func TestNonContractiveNamesBound(t *testing.T) {
	for _, tc := range []struct {
		a    shuffleg.Algorithm
		name string
	}{{shuffleg.DPShuffleG, "= 1/L*:"}, {shuffleg.PrivPub, "= 1/L*:"}, {shuffleg.Interleaved, "= 1/max{L*, L̃*}:"}} {
		if got := (&NonContractiveError{Algorithm: tc.a, LR: 2, Bound: 1}).Error(); !strings.Contains(got, tc.name) {
			t.Errorf("%v: %q, want %q", tc.a, got, tc.name)
		}
		notes := (&Experiment{}).Notes([]Result{{Algorithm: tc.a, Label: tc.a.String(), LR: 2, Bound: 1}})
		if last := notes[len(notes)-1]; !strings.Contains(last, "> "+strings.TrimSuffix(strings.TrimPrefix(tc.name, "= "), ":")+" = 1 ") {
			t.Errorf("%v's note: %q", tc.a, last)
		}
	}
}
