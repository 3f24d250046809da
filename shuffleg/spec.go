package shuffleg

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/datasets"
)

// Spec is an experiment stated by names and numbers, as darrm shuffleg's
// command line states it: the task and the dataset by name, their
// parameters, and the settings of the Experiment. Build checks it, loads
// the data and returns the Experiment.
type Spec struct {
	// Task is one of TaskNames.
	Task string
	// Dataset is a name of datasets.Catalog; DataDir is the folder its
	// files are in ("": datasets.DefaultDir).
	Dataset, DataDir string
	// N and D size the synthetic dataset: samples in each of the private
	// and public sets, and the dimension.
	N, D int
	// Radius is the ball radius C of mean estimation; Lambda the weight
	// of the regulariser of ridge and lasso-logistic.
	Radius, Lambda float64
	// Experiment holds the other settings; Build fills in its Problem.
	Experiment
}

// TaskNames are the tasks a Spec can name.
var TaskNames = []string{"mean", "ridge", "lasso-logistic"}

// NewTask returns the task named name (one of TaskNames): mean estimation
// in a ball of the given radius, ridge regression or l1-regularised
// logistic regression with weight lambda.
func NewTask(name string, radius, lambda float64) (Task, error) {
	switch name {
	case "mean":
		return MeanEstimation(radius), nil
	case "ridge":
		return RidgeRegression(lambda), nil
	case "lasso-logistic":
		return LassoLogistic(lambda), nil
	}
	return Task{}, fmt.Errorf("task %q: must be one of %s", name, strings.Join(TaskNames, ", "))
}

// Build checks s and returns its experiment, with the problem built from
// the dataset (generated for "synthetic", else read from DataDir), and the
// dataset's catalog entry. A number out of its domain is an
// *accountant.ParamError naming the field (eps, delta, p, clip, epochs,
// runs, workers, lr, C (the radius), lambda, n or d); the dataset's files must be
// there (a *datasets.MissingError says how to fetch them).
func (s Spec) Build() (*Experiment, datasets.Info, error) {
	e := s.Experiment
	if err := e.checkSettings(); err != nil {
		return nil, datasets.Info{}, err
	}
	task, err := NewTask(s.Task, s.Radius, s.Lambda)
	if err != nil {
		return nil, datasets.Info{}, err
	}
	if err := checkRegularizer(task.Reg); err != nil {
		return nil, datasets.Info{}, err
	}
	info, err := datasets.Lookup(s.Dataset)
	if err != nil {
		return nil, info, err
	}
	var pair *datasets.Pair
	if s.Dataset == "synthetic" {
		if s.N < 2 {
			return nil, info, &accountant.ParamError{Name: "n", Value: float64(s.N), Rule: "must be >= 2"}
		}
		if s.D < 1 {
			return nil, info, &accountant.ParamError{Name: "d", Value: float64(s.D), Rule: "must be >= 1"}
		}
		pair = datasets.Synthetic(task.Loss.Task(), s.N, s.D, 1)
	} else if pair, err = datasets.Load(s.DataDir, s.Dataset, task.Loss.Task()); err != nil {
		return nil, info, err
	}
	if e.Problem, err = NewProblem(task, pair.Private, pair.Public); err != nil {
		return nil, info, fmt.Errorf("dataset %s, task %s: %w", s.Dataset, s.Task, err)
	}
	for _, a := range e.Algorithms {
		if _, err := NewPlan(a, e.Problem.N(), e.Problem.Public.Len(), e.Epochs, e.Fraction); err != nil {
			return nil, info, fmt.Errorf("algorithm %v on dataset %s: %w", a, s.Dataset, err)
		}
	}
	return &e, pair.Info, nil
}

// ParseAlgorithms parses a comma-separated list of algorithm names
// (ParseAlgorithm), or "all" for Algorithms(); an algorithm listed twice
// is an error.
func ParseAlgorithms(s string) ([]Algorithm, error) {
	if s == "all" {
		return Algorithms(), nil
	}
	var out []Algorithm
	for _, name := range strings.Split(s, ",") {
		a, err := ParseAlgorithm(strings.TrimSpace(name))
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

// PrivateAlgorithms returns the algorithms that train on private data, and
// so have a privacy cost to account: all but PublicOnly.
func PrivateAlgorithms() []Algorithm {
	return slices.DeleteFunc(Algorithms(), func(a Algorithm) bool { return !a.Private() })
}

// ParsePrivateAlgorithms reads names of private algorithms
// (ParseAlgorithm), "all" standing for PrivateAlgorithms(); the result is
// in the order of names.
func ParsePrivateAlgorithms(names []string) ([]Algorithm, error) {
	var out []Algorithm
	for _, name := range names {
		a, err := ParseAlgorithm(name)
		switch {
		case name == "all":
			out = append(out, PrivateAlgorithms()...)
		case err != nil || !a.Private():
			return nil, fmt.Errorf("%q: must be one of dp-shuffleg, priv-pub, pub-priv, interleaved, all", name)
		default:
			out = append(out, a)
		}
	}
	return out, nil
}

// LRGrid parses a learning-rate grid: "thesis" for ThesisLRGrid, or a
// comma-separated list of learning rates. It also returns the grid's
// description for Report.LRSearch.
func LRGrid(s string) (lrs []float64, search string, err error) {
	if s == "thesis" {
		return ThesisLRGrid(), "thesis grid (Section 4.7.4)", nil
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
