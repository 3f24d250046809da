package shuffleexp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/shuffleg"
)

// Spec is an experiment stated by names and numbers, as darrm shuffleg's
// command line states it: the task and the dataset by name, the
// parameters that apply to them, and the settings of the Experiment.
// Build checks it, loads the data and returns the Experiment.
type Spec struct {
	// Task is mean, ridge or lasso-logistic.
	Task string
	// Dataset is a name of datasets.Catalog; DataDir is the folder its
	// files are in ("": datasets.DefaultDir).
	Dataset, DataDir string
	// N and D size the synthetic dataset: samples in each of the private
	// and public sets, and the dimension (nil: DefaultN, DefaultD). They
	// apply to the dataset synthetic only.
	N, D *int
	// Radius is the ball radius C of mean estimation (nil:
	// DefaultRadius); it applies to the task mean only. Lambda is the
	// weight of the regulariser of ridge and lasso-logistic (nil:
	// DefaultLambda), and applies to them only.
	Radius, Lambda *float64
	// Experiment holds the other settings; Build fills in its Problem.
	Experiment
}

// Sizes of the synthetic dataset when a Spec does not state them.
const (
	DefaultN = 1000 // samples in each of the private and public sets
	DefaultD = 784  // dimension, that of MNIST
)

// taskNames are the tasks a Spec can name.
var taskNames = []string{"mean", "ridge", "lasso-logistic"}

// maxSyntheticValues bounds the values of each generated set, n·d: two
// sets of this many float64s take a gigabyte, and their generation,
// which checks no context, under a second.
const maxSyntheticValues = 1 << 26

// newTask returns the task named name (one of taskNames), as Section
// 4.7.1 states it: mean estimation, f(x; q) = ½·||x − q||² with ψ the
// indicator of the ball of the given radius; ridge regression, the squared
// error with ψ = (λ/2)·||x||²; or lasso logistic regression, the logistic
// loss with ψ = λ·||x||₁. Another name is a setting error.
func newTask(name string, radius, lambda float64) (shuffleg.Task, error) {
	switch name {
	case "mean":
		return shuffleg.Task{Loss: shuffleg.SquaredDistance, Reg: shuffleg.Ball{Radius: radius}}, nil
	case "ridge":
		return shuffleg.Task{Loss: shuffleg.SquaredError, Reg: shuffleg.Ridge{Lambda: lambda}}, nil
	case "lasso-logistic":
		return shuffleg.Task{Loss: shuffleg.Logistic, Reg: shuffleg.L1{Lambda: lambda}}, nil
	}
	return shuffleg.Task{}, &param.SettingError{Name: "task", Value: strconv.Quote(name), Rule: "must be one of " + strings.Join(taskNames, ", ")}
}

// dataTask returns the kind of problem loss l belongs to, which selects a
// dataset's private/public construction.
func dataTask(l shuffleg.Loss) datasets.Task {
	switch l {
	case shuffleg.SquaredError:
		return datasets.Regression
	case shuffleg.Logistic:
		return datasets.Classification
	}
	return datasets.Mean
}

// Build checks s and returns its experiment, with the problem built from
// the dataset (generated for "synthetic", else read from DataDir), and the
// dataset's catalog entry. An unknown task, a parameter stated for a task
// or dataset it does not apply to (C, lambda, n, d), or settings that do
// not go together (alpha rule) are a setting error; a number
// out of its domain is a parameter error naming the field (eps,
// delta, p, clip, epochs, runs, workers, lr, C (the radius), lambda, n or
// d); the dataset's files must be there (a *datasets.MissingError says how
// to fetch them).
func (s Spec) Build(ctx context.Context) (*Experiment, datasets.Info, error) {
	task, err := newTask(s.Task, valueOr(s.Radius, DefaultRadius), valueOr(s.Lambda, DefaultLambda))
	if err != nil {
		return nil, datasets.Info{}, err
	}
	if err := s.checkStated(); err != nil {
		return nil, datasets.Info{}, err
	}
	e := s.Experiment
	if err := e.checkSettings(); err != nil {
		return nil, datasets.Info{}, err
	}
	if err := task.Validate(); err != nil {
		return nil, datasets.Info{}, err
	}
	info, err := datasets.Lookup(s.Dataset)
	if err != nil {
		return nil, info, err
	}
	var pair *datasets.Pair
	if s.Dataset == "synthetic" {
		n, d := valueOr(s.N, DefaultN), valueOr(s.D, DefaultD)
		if n < 2 {
			return nil, info, &param.Error{Name: "n", Value: n, Rule: "must be >= 2"}
		}
		if d < 1 {
			return nil, info, &param.Error{Name: "d", Value: d, Rule: "must be >= 1"}
		}
		// In float64: n·d overflows an int long before memory runs out.
		if float64(n)*float64(d) > maxSyntheticValues {
			return nil, info, &param.Error{Name: "n", Value: n, Rule: fmt.Sprintf("n·d = %g values of each set of dimension d = %d: must be at most %d (512 MiB a set)", float64(n)*float64(d), d, maxSyntheticValues)}
		}
		if pair, err = datasets.Synthetic(ctx, dataTask(task.Loss), n, d, 1); err != nil {
			return nil, info, err
		}
	} else if pair, err = datasets.Load(s.DataDir, s.Dataset, dataTask(task.Loss)); err != nil {
		return nil, info, err
	}
	if err := ctx.Err(); err != nil { // after the synthetic set's drawing
		return nil, info, err
	}
	if e.Problem, err = shuffleg.NewProblem(ctx, task, pair.Private, pair.Public); err != nil {
		return nil, info, fmt.Errorf("dataset %s, task %s: %w", s.Dataset, s.Task, err)
	}
	for _, a := range e.Algorithms {
		if _, err := shuffleg.NewPlan(a, e.Problem.N(), e.Problem.Public.Len(), e.Epochs, e.Fraction); err != nil {
			return nil, info, fmt.Errorf("algorithm %v on dataset %s: %w", a, s.Dataset, err)
		}
	}
	return &e, pair.Info, nil
}

// checkStated refuses, as a setting error, a parameter that s
// states for a task or dataset it does not apply to.
func (s Spec) checkStated() error {
	misplaced := func(name string, v any, rule string) error {
		return &param.SettingError{Name: name, Value: fmt.Sprint(v), Rule: rule}
	}
	const syntheticOnly = "applies to the dataset synthetic only"
	switch {
	case s.Lambda != nil && s.Task == "mean":
		return misplaced("lambda", *s.Lambda, "applies to the tasks ridge and lasso-logistic, not mean (whose parameter is C)")
	case s.Radius != nil && s.Task != "mean":
		return misplaced("C", *s.Radius, "applies to the task mean only")
	case s.N != nil && s.Dataset != "synthetic":
		return misplaced("n", *s.N, syntheticOnly)
	case s.D != nil && s.Dataset != "synthetic":
		return misplaced("d", *s.D, syntheticOnly)
	}
	return nil
}

// valueOr returns *p, or def when p is nil.
func valueOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// allAlgorithms returns the five algorithms in the thesis' order.
func allAlgorithms() []shuffleg.Algorithm {
	return []shuffleg.Algorithm{shuffleg.DPShuffleG, shuffleg.PrivPub, shuffleg.PubPriv, shuffleg.Interleaved, shuffleg.PublicOnly}
}

// parseAlgorithm parses an algorithm's command-line name, or "dp", the
// earlier name of DP-ShuffleG.
func parseAlgorithm(s string) (shuffleg.Algorithm, error) {
	var a shuffleg.Algorithm
	err := a.UnmarshalText([]byte(s))
	return a, err
}

// ParseAlgorithms parses a comma-separated list of algorithm names
// (parseAlgorithm), or "all" for allAlgorithms(); an algorithm listed twice
// is an error.
func ParseAlgorithms(s string) ([]shuffleg.Algorithm, error) {
	if s == "all" {
		return allAlgorithms(), nil
	}
	var out []shuffleg.Algorithm
	for _, name := range strings.Split(s, ",") {
		a, err := parseAlgorithm(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("%w (or all)", err)
		}
		for _, b := range out {
			if a == b {
				return nil, fmt.Errorf("%q: %v is listed twice", s, a)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// privateAlgorithms returns the algorithms that train on private data, and
// so have a privacy cost to account: all but PublicOnly.
func privateAlgorithms() []shuffleg.Algorithm {
	return slices.DeleteFunc(allAlgorithms(), func(a shuffleg.Algorithm) bool { return !a.Private() })
}

// ParsePrivateAlgorithms reads names of private algorithms
// (parseAlgorithm), "all" standing for privateAlgorithms(); the result is
// in the order of names, and an algorithm named twice (all counts as
// naming each) is an error, as in ParseAlgorithms.
func ParsePrivateAlgorithms(names []string) ([]shuffleg.Algorithm, error) {
	if len(names) == 0 {
		return nil, errors.New("empty: must be one of dp-shuffleg, priv-pub, pub-priv, interleaved, all")
	}
	var out []shuffleg.Algorithm
	for _, name := range names {
		a, err := parseAlgorithm(name)
		add := []shuffleg.Algorithm{a}
		switch {
		case name == "all":
			add = privateAlgorithms()
		case err != nil || !a.Private():
			return nil, fmt.Errorf("%q: must be one of dp-shuffleg, priv-pub, pub-priv, interleaved, all", name)
		}
		for _, a := range add {
			if slices.Contains(out, a) {
				return nil, fmt.Errorf("%q: %v is named twice", strings.Join(names, ","), a)
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// LRGrid parses a learning-rate grid: "thesis" for thesisLRGrid, or a
// comma-separated list of learning rates. It also returns the grid's
// description for Report.LRSearch.
func LRGrid(s string) (lrs []float64, search string, err error) {
	if s == "thesis" {
		return thesisLRGrid(), "thesis grid (Section 4.7.4)", nil
	}
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, "", fmt.Errorf("value %q: must be a finite number > 0 (or the whole grid: thesis)", f)
		}
		lrs = append(lrs, v)
	}
	return lrs, "given grid", nil
}
