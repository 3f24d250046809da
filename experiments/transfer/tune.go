package transfer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/teachers"
	"github.com/darrm/darrm/internal/param"
)

// Hyper are the teachers' hyperparameters: the network's filter count and
// the learning rates of DP-SGD on a disjoint share, of DP-SGD on the whole
// training set (the shared setting), and of SGD (the non-private teachers).
type Hyper struct {
	Filters      int     `json:"filters"`
	LR           float64 `json:"lr"`
	LRShared     float64 `json:"lr_shared"`
	LRNonPrivate float64 `json:"lr_nonprivate"`
}

// TuningPairs is the number of pairs of classes the hyperparameters are
// tuned on.
const TuningPairs = 4

// TuningTasks returns the tasks the hyperparameters of dataset (mnist58 or
// fashion58) are tuned on: TuningPairs pairs of classes of the same images,
// drawn with a fixed seed from the 28 pairs of the eight classes that are
// in neither its private training set nor its public set (which holds the
// queries and the labels they are scored against). Several pairs, so that
// no one easy or hard pair decides.
func TuningTasks(dataset string) ([]string, error) {
	source, ok := map[string]string{"mnist58": "mnist", "fashion58": "fashion"}[dataset]
	if !ok {
		return nil, fmt.Errorf("tune: dataset %q: must be mnist58 or fashion58, the data sets with tuning tasks", dataset)
	}
	var pairs [][2]int
	for a := range 10 {
		for b := a + 1; b < 10; b++ {
			if a != 5 && a != 8 && b != 5 && b != 8 {
				pairs = append(pairs, [2]int{a, b})
			}
		}
	}
	r := rand.New(rand.NewPCG(0x74756e65, 0x7061697273))
	var names []string
	for _, i := range r.Perm(len(pairs))[:TuningPairs] {
		names = append(names, datasets.PairName(source, pairs[i][0], pairs[i][1]))
	}
	return names, nil
}

// tuned are the hyperparameters Tune chose with DefaultGrid on each data
// set's tuning tasks (darrm teachers tune; the table in docs/transfer.md).
// No private image, and no query, entered their choice.
var tuned = map[string]Hyper{
	"mnist58":   {Filters: 4, LR: 0.05, LRShared: 0.01, LRNonPrivate: 0.3},
	"fashion58": {Filters: 4, LR: 0.02, LRShared: 0.005, LRNonPrivate: 0.3},
}

// Fixed are the hyperparameters of every other data set (the tuning tasks
// themselves, generated data), fixed in advance.
var Fixed = Hyper{Filters: 8, LR: 0.05, LRShared: 0.05, LRNonPrivate: 0.3}

// HyperFor returns the hyperparameters of dataset: tuned on its tuning task
// for the experiment's data sets, else Fixed.
func HyperFor(dataset string) Hyper {
	if h, ok := tuned[dataset]; ok {
		return h
	}
	return Fixed
}

// Grid is the search Tune makes: every filter count with every LR for
// DP-SGD on a share, then, at the filter count chosen, every LRShared and
// every LRNonPrivate; each point trained Seeds times.
type Grid struct {
	Filters                    []int
	LR, LRShared, LRNonPrivate []float64
	Seeds                      int
}

// DefaultGrid is the grid the experiment's hyperparameters were chosen on.
var DefaultGrid = Grid{
	Filters:      []int{1, 2, 4, 8, 16},
	LR:           []float64{0.005, 0.01, 0.02, 0.05, 0.1, 0.2},
	LRShared:     []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05},
	LRNonPrivate: []float64{0.03, 0.1, 0.3, 1},
	Seeds:        3,
}

// Trial is one point of the grid and the test accuracy of its teacher on
// each tuning task, for each seed (task-major).
type Trial struct {
	// Stage is "private" (DP-SGD on a share), "shared" (DP-SGD on the
	// whole set) or "nonprivate" (SGD on a share).
	Stage    string    `json:"stage"`
	Filters  int       `json:"filters"`
	LR       float64   `json:"lr"`
	Accuracy []float64 `json:"accuracy"`
	Mean     float64   `json:"accuracy_mean"`
}

// Tune chooses the hyperparameters of a data set whose training set's
// public size is n (datasets.PublicTrainSize) on the tuning tasks (load
// reads each): each trial trains one
// teacher as tr trains them (tr.Configs, with the sampling rate of the
// data set's own teachers), on a random subset of a task's training images
// the size of one of the data set's teachers' data (n/K, or n for the
// shared setting), and scores it on the task's test images. First every
// filter count with every DP-SGD rate on a share, then, at the filter count
// chosen, every rate of DP-SGD on the whole set and of SGD. The highest
// mean over tasks and seeds wins; ties go to fewer filters, then the
// smaller rate. The seeds make the search reproducible; note, if set,
// hears of each stage.
func Tune(ctx context.Context, tasks []string, load func(string) (*datasets.Binary, error), dataset string, n int, tr Training, grid Grid, note func(string)) (Hyper, []Trial, error) {
	if err := tr.Validate(); err != nil {
		return Hyper{}, nil, fmt.Errorf("tune: %w", err)
	}
	if len(tasks) == 0 || grid.Seeds < 1 || len(grid.Filters) == 0 || len(grid.LR) == 0 || len(grid.LRShared) == 0 || len(grid.LRNonPrivate) == 0 {
		return Hyper{}, nil, errors.New("tune: need a task, a seed and one value of each hyperparameter")
	}
	if n/tr.K < 1 {
		return Hyper{}, nil, fmt.Errorf("tune: %w", &param.Error{Name: "K", Value: tr.K, Rule: fmt.Sprintf("%d training images: each of the K teachers needs a share", n)})
	}
	say := func(format string, args ...any) {
		if note != nil {
			note(fmt.Sprintf(format, args...))
		}
	}
	shared := tr
	shared.Setting = accountant.Shared
	privCfg, pubCfg := tr.Configs(dataset, n, nil)
	sharedCfg, _ := shared.Configs(dataset, n, nil)
	// stage runs points on every task, one task in memory at a time.
	stage := func(what string, points []point) ([]Trial, error) {
		trials := make([]Trial, len(points))
		for i, p := range points {
			trials[i] = Trial{Stage: p.stage, Filters: p.cfg.Filters, LR: lrOf(p.cfg)}
		}
		for _, name := range tasks {
			say("tuning %s on %s: %d trials", what, name, len(points)*grid.Seeds)
			task, err := load(name)
			if err != nil {
				return nil, err
			}
			acc, err := runTrials(ctx, task, points, grid.Seeds)
			if err != nil {
				return nil, err
			}
			for i := range trials {
				trials[i].Accuracy = append(trials[i].Accuracy, acc[i]...)
			}
		}
		for i := range trials {
			trials[i].Mean = Mean(trials[i].Accuracy)
		}
		return trials, nil
	}
	var points []point
	for _, f := range grid.Filters {
		for _, lr := range grid.LR {
			c := privCfg
			c.Filters, c.DP.LR = f, lr
			points = append(points, point{"private", c, n / tr.K})
		}
	}
	first, err := stage("DP-SGD on a share", points)
	if err != nil {
		return Hyper{}, nil, err
	}
	b := bestTrial(first)
	h := Hyper{Filters: b.Filters, LR: b.LR}
	points = points[:0]
	for _, lr := range grid.LRShared {
		c := sharedCfg
		c.Filters, c.DP.LR = h.Filters, lr
		points = append(points, point{"shared", c, n})
	}
	for _, lr := range grid.LRNonPrivate {
		c := pubCfg
		c.Filters, c.LR = h.Filters, lr
		points = append(points, point{"nonprivate", c, n / tr.K})
	}
	rest, err := stage(fmt.Sprintf("the other rates at %d filters", h.Filters), points)
	if err != nil {
		return Hyper{}, nil, err
	}
	h.LRShared = bestTrial(rest[:len(grid.LRShared)]).LR
	h.LRNonPrivate = bestTrial(rest[len(grid.LRShared):]).LR
	return h, append(first, rest...), nil
}

// point is one trial to run: a teacher's configuration and the size of
// its training subset.
type point struct {
	stage string
	cfg   teachers.Config
	size  int
}

// runTrials trains each point's teacher seeds times, in parallel, as the
// one teacher (K = 1) of the task with its training set cut to a subset
// (seed s draws the subset and the teacher's randomness), and returns
// each one's test accuracy.
func runTrials(ctx context.Context, task *datasets.Binary, points []point, seeds int) ([][]float64, error) {
	acc := make([][]float64, len(points))
	errs := make([]error, len(points)*seeds)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for pi, pt := range points {
		acc[pi] = make([]float64, seeds)
		if pt.size > task.Train.Len() {
			return nil, fmt.Errorf("tune: %s has %d training images, fewer than the %d a trial needs", task.Name, task.Train.Len(), pt.size)
		}
		for s := range seeds {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				seed := uint64(s + 1)
				idx := rand.New(rand.NewPCG(seed, 0x7475_6e65)).Perm(task.Train.Len())[:pt.size]
				c := pt.cfg
				c.K, c.Seed = 1, &seed
				e, err := teachers.Train(ctx, &datasets.Binary{Name: task.Name, Train: datasets.Subset(task.Train, idx), Test: task.Test}, c)
				if err != nil {
					errs[pi*seeds+s] = fmt.Errorf("tune: %s, %s, %d filters, rate %v: %w", task.Name, pt.stage, c.Filters, lrOf(c), err)
					return
				}
				acc[pi][s] = e.Accuracy[0]
			}()
		}
	}
	wg.Wait()
	return acc, errors.Join(errs...)
}

// lrOf is the learning rate a teacher's configuration trains with.
func lrOf(c teachers.Config) float64 {
	if c.Private {
		return c.DP.LR
	}
	return c.LR
}

// bestTrial returns the trial of highest mean accuracy, the first of
// equals (the grids list fewer filters and smaller rates first).
func bestTrial(ts []Trial) Trial {
	b := ts[0]
	for _, t := range ts[1:] {
		if t.Mean > b.Mean {
			b = t
		}
	}
	return b
}
