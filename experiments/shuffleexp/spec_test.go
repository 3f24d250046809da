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
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/shuffleg"
)

// goodSpec is a small synthetic mean-estimation experiment.
func goodSpec() Spec {
	return Spec{Task: "mean", Dataset: "synthetic", N: new(20), D: new(3), Experiment: Experiment{
		Algorithms: allAlgorithms(), Order: shuffleg.RR, Epochs: 2, Fraction: 0.5, Clip: 1, Eps: 1, Delta: 1e-6, LRs: []float64{0.1}, Runs: 1,
	}}
}

func TestSpecBuild(t *testing.T) {
	e, info, err := goodSpec().Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "synthetic" || e.Problem == nil || e.Problem.N() != 20 || e.Problem.Dim() != 3 || e.Problem.Public.Len() != 20 {
		t.Fatalf("info %+v, problem %+v", info, e.Problem)
	}
	if e.Problem.Task.String() != meanEstimation(DefaultRadius).String() {
		t.Errorf("task %v", e.Problem.Task)
	}
	for _, task := range []string{"ridge", "lasso-logistic"} {
		s := goodSpec()
		s.Task = task
		if e, _, err := s.Build(context.Background()); err != nil || e.Problem.Task.Reg == nil {
			t.Errorf("%s: %v", task, err)
		}
	}
}

// TestSpecBuildRejects checks that each bad field is reported, by name
// for the numbers and the settings.
func TestSpecBuildRejects(t *testing.T) {
	dataset := func(s *Spec, name string) { s.Dataset, s.N, s.D = name, nil, nil }
	for _, tc := range []struct {
		mod     func(*Spec)
		param   string // the parameter error's name, or
		setting string // the setting error's name, and
		want    string // a part of the error
	}{
		{func(s *Spec) { s.Eps = 0 }, "eps", "", ""},
		{func(s *Spec) { s.Delta = 1 }, "delta", "", ""},
		{func(s *Spec) { s.Fraction = 0 }, "p", "", ""},
		{func(s *Spec) { s.Clip = -1 }, "clip", "", ""},
		{func(s *Spec) { s.Epochs = 0 }, "epochs", "", ""},
		{func(s *Spec) { s.Runs = 0 }, "runs", "", ""},
		// Each run keeps a curve of its epochs: sizes from the flags are
		// bounded before they are allocated (a makeslice panic, and an
		// out of memory, at 2^63 and 2^32).
		{func(s *Spec) { s.Runs = math.MaxInt }, "runs", "", ""},
		{func(s *Spec) { s.Epochs = math.MaxInt }, "epochs", "", ""},
		{func(s *Spec) { s.Epochs, s.Runs = 1<<20, 1<<10 }, "runs", "", "curves must hold at most"},
		{func(s *Spec) { s.Workers = math.MaxInt }, "workers", "", ""},
		{func(s *Spec) { s.Workers = -1 }, "workers", "", ""},
		{func(s *Spec) { s.LRs = []float64{0.1, -1} }, "lr", "", ""},
		{func(s *Spec) { s.Radius = new(0.0) }, "C", "", ""},
		{func(s *Spec) { s.Task, s.Lambda = "ridge", new(-1.0) }, "lambda", "", ""},
		{func(s *Spec) { s.N = new(1) }, "n", "", ""},
		{func(s *Spec) { s.D = new(0) }, "d", "", ""},
		// n·d overflowed an int (a makeslice panic) or ran out of memory.
		{func(s *Spec) { s.N, s.D = new(100000000), new(100000000) }, "n", "", "must be at most"},
		{func(s *Spec) { s.N, s.D = new(1<<32), new(1<<32) }, "n", "", "must be at most"},
		{func(s *Spec) { s.Algorithms = nil }, "", "", "no algorithm"},
		{func(s *Spec) { s.AlphaRule = accountant.AlphaTable43; s.Conversion = accountant.ImprovedConversion }, "", "alpha rule", "Table 4.3"},
		{func(s *Spec) { s.Task = "median" }, "", "task", `task "median": must be one of mean, ridge, lasso-logistic`},
		{func(s *Spec) { s.Lambda = new(0.5) }, "", "lambda", "lambda 0.5: applies to the tasks ridge and lasso-logistic, not mean"},
		{func(s *Spec) { s.Task, s.Radius = "ridge", new(2.0) }, "", "C", "C 2: applies to the task mean only"},
		{func(s *Spec) { s.Dataset = "mnist69" }, "", "n", "n 20: applies to the dataset synthetic only"},
		{func(s *Spec) { dataset(s, "mnist69"); s.D = new(5) }, "", "d", "d 5: applies to the dataset synthetic only"},
		{func(s *Spec) { dataset(s, "mnist") }, "", "", `dataset "mnist"`},
		{func(s *Spec) { s.Task = "lasso-logistic"; dataset(s, "mnist69") }, "", "", "no construction"},
		{func(s *Spec) { dataset(s, "mnist69"); s.DataDir = t.TempDir() }, "", "", datasets.FetchScript},
		{func(s *Spec) { s.Fraction = 0.01 }, "", "", "algorithm priv-pub on dataset synthetic"},
	} {
		s := goodSpec()
		tc.mod(&s)
		_, _, err := s.Build(context.Background())
		var pe *param.Error
		var se *param.SettingError
		switch {
		case err == nil:
			t.Errorf("%+v: no error", s)
		case tc.param != "" && (!errors.As(err, &pe) || pe.Name != tc.param):
			t.Errorf("error %v, want a ParamError for %s", err, tc.param)
		case tc.setting != "" && (!errors.As(err, &se) || se.Name != tc.setting):
			t.Errorf("error %v, want a SettingError for %s", err, tc.setting)
		case tc.want != "" && !strings.Contains(err.Error(), tc.want):
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}

func TestParseAlgorithms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []shuffleg.Algorithm
		err  string
	}{
		{"all", allAlgorithms(), ""},
		{"dp", []shuffleg.Algorithm{shuffleg.DPShuffleG}, ""},
		{"interleaved, priv-pub", []shuffleg.Algorithm{shuffleg.Interleaved, shuffleg.PrivPub}, ""},
		{"dp,dp-shuffleg", nil, "listed twice"},
		{"dp,foo", nil, `algorithm "foo"`},
		{"DP, Public-Only", []shuffleg.Algorithm{shuffleg.DPShuffleG, shuffleg.PublicOnly}, ""},
		{"rr", nil, `algorithm "rr": must be one of dp-shuffleg, priv-pub, pub-priv, interleaved, public-only (or all)`},
	} {
		got, err := ParseAlgorithms(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
		} else if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParsePrivateAlgorithms(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []shuffleg.Algorithm
		ok   bool
	}{
		{[]string{"all"}, []shuffleg.Algorithm{shuffleg.DPShuffleG, shuffleg.PrivPub, shuffleg.PubPriv, shuffleg.Interleaved}, true},
		{[]string{"dp"}, []shuffleg.Algorithm{shuffleg.DPShuffleG}, true},
		{[]string{"interleaved", "priv-pub"}, []shuffleg.Algorithm{shuffleg.Interleaved, shuffleg.PrivPub}, true},
		// An algorithm named twice was accounted twice, a row each.
		{[]string{"pub-priv", "all"}, nil, false},
		{[]string{"dp", "dp-shuffleg"}, nil, false},
		{nil, nil, false}, // none named: the command ran nothing, "no results"
		{[]string{"public-only"}, nil, false},
		{[]string{"dp", "foo"}, nil, false},
	} {
		got, err := ParsePrivateAlgorithms(tc.in)
		if (err == nil) != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if err != nil && !strings.HasSuffix(err.Error(), "must be one of dp-shuffleg, priv-pub, pub-priv, interleaved, all") && !strings.HasSuffix(err.Error(), "is named twice") {
			t.Errorf("%q: error %v", tc.in, err)
		}
	}
}

func TestLRGrid(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   []float64
		search string
	}{
		{"thesis", thesisLRGrid(), "thesis grid (Section 4.7.4)"},
		{"0.1, 0.01", []float64{0.1, 0.01}, "given grid"},
		{"0.1,x", nil, ""},
		{"0.1,-1", nil, ""},
		{"Inf", nil, ""},
	} {
		lrs, search, err := LRGrid(tc.in)
		if (err != nil) != (tc.want == nil) || !slices.Equal(lrs, tc.want) || search != tc.search {
			t.Errorf("LRGrid(%q) = %v, %q, %v", tc.in, lrs, search, err)
		}
	}
}

// ExampleSpec runs a small experiment stated as on the command line.
func ExampleSpec() {
	seed := uint64(1)
	s := Spec{Task: "mean", Dataset: "synthetic", N: new(50), D: new(5), Experiment: Experiment{
		Algorithms: []shuffleg.Algorithm{shuffleg.DPShuffleG, shuffleg.PublicOnly}, Order: shuffleg.RR, Epochs: 3, Fraction: DefaultFraction, Clip: DefaultClip,
		Eps: 5, Delta: DefaultDelta, LRs: []float64{0.05}, Runs: 2, Seed: &seed,
	}}
	e, _, err := s.Build(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	results, err := e.Run(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range results {
		fmt.Printf("%s: private epochs %d, noise calibrated %v\n", r.Label, r.Plan.PrivEpochs, r.Calibration.Sigma > 0)
	}
	// Output:
	// DP-RR: private epochs 3, noise calibrated true
	// Public Only: private epochs 0, noise calibrated false
}

// TestCatalogProblems builds a problem from the catalog datasets'
// constructions for each loss they serve, on the datasets package's small
// fixtures (those that hold enough images for a construction): the
// constructions fit the tasks.
func TestCatalogProblems(t *testing.T) {
	for _, name := range []string{"breast-cancer", "diabetes", "compas", "crime", "synthetic"} {
		info, err := datasets.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range []shuffleg.Loss{shuffleg.SquaredDistance, shuffleg.SquaredError, shuffleg.Logistic} {
			if !slices.Contains(info.Tasks, dataTask(l)) {
				continue
			}
			pair, err := datasets.Load("../datasets/testdata", name, dataTask(l))
			if err != nil {
				t.Errorf("%s/%v: %v", name, l, err)
				continue
			}
			if _, err := shuffleg.NewProblem(context.Background(), shuffleg.Task{Loss: l, Reg: shuffleg.Ridge{Lambda: 0.1}}, pair.Private, pair.Public); err != nil {
				t.Errorf("%s/%v: not a valid problem: %v", name, l, err)
			}
		}
	}
}
