package shuffleexp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/shuffleg"
)

// Thesis defaults (Section 4.7.4).
const (
	DefaultRadius   = 10.0 // C, the ball radius of mean estimation
	DefaultLambda   = 0.1  // λ_r and λ_l
	DefaultClip     = 10.0 // per-sample gradient clipping norm
	DefaultEpochs   = 50   // K
	DefaultFraction = 0.5  // p
	DefaultDelta    = 1e-6 // δ
	DefaultRuns     = 10
)

// thesisLRGrid returns the learning-rate grid of Section 4.7.4:
// {0.5, 0.1, 0.05, 0.01, ..., 5·10⁻⁹, 10⁻⁹}.
func thesisLRGrid() []float64 {
	var g []float64
	for e := 1; e <= 9; e++ {
		// Parse the decimal literals so that 0.01 is the double nearest
		// 0.01, not 0.1·0.1.
		for _, m := range []int{5, 1} {
			v, _ := strconv.ParseFloat(fmt.Sprintf("%de-%d", m, e), 64)
			g = append(g, v)
		}
	}
	return g
}

// Experiment is one panel of Figure 4.2: each algorithm calibrated to
// (Eps, Delta), run Runs times for each learning rate of LRs, the best
// learning rate chosen by the lowest mean final loss (Section 4.7.5).
type Experiment struct {
	Problem    *shuffleg.Problem
	Algorithms []shuffleg.Algorithm
	Order      shuffleg.Order
	Epochs     int
	Fraction   float64 // p
	Clip       float64
	Eps, Delta float64
	Conversion accountant.Conversion
	// AlphaRule picks the Rényi order of each private algorithm's bound:
	// the exact minimiser (the zero value) or Table 4.3's rule.
	AlphaRule accountant.AlphaRule
	LRs       []float64 // one value fixes the learning rate
	Runs      int
	// Seed, when set, makes the experiment reproducible: each run's key
	// (shuffleg.Config.Key) is derived from it, and the same seed gives the
	// same results on any number of workers. Unset, the keys come from
	// crypto/rand.
	Seed *uint64
	// Workers is the number of runs executed in parallel (0: GOMAXPROCS).
	Workers int
	// AllowNonContractive runs learning rates above the contraction bound
	// of shuffleg.Plan.ContractionBound, where the privacy analysis does not hold;
	// their results have Contractive = false. Without it a fixed learning
	// rate above the bound is an error and grid points above it are
	// skipped.
	AllowNonContractive bool
	// Progress, when set, is called after each run with the number of runs
	// done and the total; it may be called from several goroutines.
	Progress func(done, total int)
}

// Result is the outcome of one algorithm.
type Result struct {
	Algorithm   shuffleg.Algorithm
	Label       string // e.g. "Interleaved-RR"
	Plan        shuffleg.Plan
	Calibration shuffleg.Calibration // zero for shuffleg.PublicOnly
	// Bound is the largest contractive learning rate
	// (shuffleg.Plan.ContractionBound).
	Bound float64
	LR    float64 // the chosen learning rate
	// Contractive is false when LR exceeds Bound: the privacy analysis
	// does not hold for this result.
	Contractive bool
	Runs        int
	// Per-epoch mean and population standard deviation over the runs of
	// the objective G(x; D) and of the excess G(x; D) − G(x*; D); index 0 is
	// the initial point.
	LossMean, LossStd, ExcessMean, ExcessStd []float64
	Grid                                     []GridPoint
}

// FinalLoss returns the mean and standard deviation of the last iterate's
// objective.
func (r *Result) FinalLoss() (mean, std float64) {
	return r.LossMean[len(r.LossMean)-1], r.LossStd[len(r.LossStd)-1]
}

// FinalExcess returns the mean and standard deviation of the last
// iterate's excess risk.
func (r *Result) FinalExcess() (mean, std float64) {
	return r.ExcessMean[len(r.ExcessMean)-1], r.ExcessStd[len(r.ExcessStd)-1]
}

// GridPoint is one learning rate of the grid search.
type GridPoint struct {
	LR          float64
	Status      GridStatus
	Contractive bool
	// Mean and std of the final loss over the runs (NaN unless Status is
	// GridOK).
	FinalLossMean, FinalLossStd float64
}

// GridStatus says what became of a grid point: GridOK, GridDiverged or
// GridNonContractive (skipped).
type GridStatus string

// The grid point statuses.
const (
	GridOK             GridStatus = "ok"
	GridDiverged       GridStatus = "diverged"
	GridNonContractive GridStatus = "skipped: non-contractive"
)

// Notes returns what a reader of the experiment's results must know: how
// the noise was calibrated, that the losses are measurements rather than a
// private release, where the randomness came from, and which results fall
// outside the privacy analysis (non-contractive learning rates).
func (e *Experiment) Notes(results []Result) []string {
	notes := []string{
		fmt.Sprintf("noise calibrated by the accountant to (eps = %g, delta = %g) for each private algorithm, RDP to DP conversion: %s (%s), Renyi order: %s", e.Eps, e.Delta, e.Conversion, e.Conversion.Reference(), alphaRuleNote(e.AlphaRule)),
		"losses are G(x; D) on the private data, evaluated without noise: experiment measurements, not a private release; the learning-rate selection reads them and is not privacy-accounted (as in the thesis)",
	}
	if e.Seed != nil {
		notes = append(notes, fmt.Sprintf("seeded with %d: reproducible, NOT for release", *e.Seed))
	} else {
		notes = append(notes, "randomness: AES-256-CTR streams keyed from crypto/rand")
	}
	for _, r := range results {
		if !r.Contractive {
			notes = append(notes, fmt.Sprintf("%s: learning rate %g > %s = %g (allowed explicitly): the steps are not contractive and the privacy guarantee does NOT hold", r.Label, r.LR, boundName(r.Algorithm), r.Bound))
		}
	}
	return notes
}

func alphaRuleNote(r accountant.AlphaRule) string {
	if r == accountant.AlphaTable43 {
		return "Table 4.3's rule alpha = sqrt(log(1/delta)/rho)"
	}
	return "the exact minimiser of the bound"
}

// NonContractiveError reports a fixed learning rate above the contraction
// bound, for which the privacy analysis does not hold, or a grid of them:
// LR is then the grid's smallest.
type NonContractiveError struct {
	Algorithm shuffleg.Algorithm
	LR        float64
	Bound     float64
}

// Error names the algorithm, the rate and the bound it exceeds.
func (e *NonContractiveError) Error() string {
	return fmt.Sprintf("algorithm %v: learning rate %g > %g = %s: the gradient steps are not contractive, so the privacy analysis (PABI, Lemmas 4.5.2 and 4.6.2) does not hold", e.Algorithm, e.LR, e.Bound, boundName(e.Algorithm))
}

// boundName names a's contraction bound (shuffleg.Plan.ContractionBound):
// Interleaved's takes the public samples' smoothness too (Lemma 4.6.2),
// which its messages called 1/L*.
func boundName(a shuffleg.Algorithm) string {
	if a == shuffleg.Interleaved {
		return "1/max{L*, L̃*}"
	}
	return "1/L*"
}

func (e *Experiment) check() error {
	if e.Problem == nil {
		return errors.New("experiment: no problem")
	}
	return e.checkSettings()
}

// checkSettings checks every field but Problem. A number out of its domain
// is a parameter error naming the field: eps, delta, p, epochs,
// runs, clip, lr or workers; an alpha rule with another conversion than
// its own a setting error.
func (e *Experiment) checkSettings() error {
	bad := func(name string, v float64, rule string) error {
		return &param.Error{Name: name, Value: v, Rule: rule}
	}
	switch {
	case len(e.Algorithms) == 0:
		return errors.New("experiment: no algorithm")
	case !(e.Eps > 0) || math.IsInf(e.Eps, 0):
		return bad("eps", e.Eps, "must be a finite number > 0")
	case !(e.Delta > 0 && e.Delta < 1):
		return bad("delta", e.Delta, "must be in (0, 1)")
	case !(e.Fraction > 0 && e.Fraction <= 1):
		return bad("p", e.Fraction, "must be in (0, 1]")
	case !(e.Clip > 0) || math.IsInf(e.Clip, 0):
		return bad("clip", e.Clip, "must be a finite number > 0")
	case e.Epochs < 1 || e.Epochs > maxEpochs:
		return bad("epochs", float64(e.Epochs), fmt.Sprintf("must be in [1, %d]", maxEpochs))
	case e.Runs < 1 || e.Runs > maxRuns:
		return bad("runs", float64(e.Runs), fmt.Sprintf("must be in [1, %d]", maxRuns))
	case float64(len(e.Algorithms))*float64(len(e.LRs))*float64(e.Runs)*float64(e.Epochs+1) > maxCurvePoints:
		// Every run keeps its curves, two values an epoch.
		return bad("runs", float64(e.Runs), fmt.Sprintf("%d runs of %d epochs for %d algorithms at %d learning rates: their curves must hold at most %d points (1 GiB)",
			e.Runs, e.Epochs, len(e.Algorithms), len(e.LRs), maxCurvePoints))
	case e.Workers < 0 || e.Workers > param.MaxWorkers:
		return bad("workers", float64(e.Workers), fmt.Sprintf("must be in [0, %d] (0: all cores)", param.MaxWorkers))
	case len(e.LRs) == 0:
		return errors.New("learning rates: none given")
	}
	if err := e.Conversion.CheckAlphaRule(e.AlphaRule); err != nil {
		return err
	}
	for _, lr := range e.LRs {
		if !(lr > 0) || math.IsInf(lr, 0) {
			return bad("lr", lr, "must be a finite number > 0")
		}
	}
	return nil
}

// Bounds on an experiment's size, each checked before anything is
// allocated for it: its curves are kept in memory, two float64s an epoch
// of each run.
const (
	maxEpochs      = 1 << 20
	maxRuns        = 1 << 16
	maxCurvePoints = 1 << 26
)

// job is one run: algorithm index, grid index, run index.
type job struct{ a, l, r int }

// Run calibrates, runs and aggregates the experiment, using Workers
// goroutines for the runs and grid points. It returns one Result per
// algorithm, in the order of Algorithms.
func (e *Experiment) Run(ctx context.Context) ([]Result, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	key, err := e.masterKey()
	if err != nil {
		return nil, err
	}
	p := e.Problem
	results := make([]Result, len(e.Algorithms))
	cfgs := make([]shuffleg.Config, len(e.Algorithms))
	traces := make([][][]*shuffleg.Trace, len(e.Algorithms)) // [algorithm][lr][run]
	var jobs []job
	for ai, a := range e.Algorithms {
		plan, err := shuffleg.NewPlan(a, p.N(), p.Public.Len(), e.Epochs, e.Fraction)
		if err != nil {
			return nil, err
		}
		res := &results[ai]
		*res = Result{Algorithm: a, Label: a.Label(e.Order), Plan: plan, Bound: plan.ContractionBound(p), Runs: e.Runs}
		cfgs[ai] = shuffleg.Config{Algorithm: a, Order: e.Order, Epochs: e.Epochs, Fraction: e.Fraction, Clip: e.Clip}
		if a.Private() {
			c, err := plan.Calibrate(e.Clip, accountant.Guarantee{Eps: e.Eps, Delta: e.Delta}, e.Conversion, e.AlphaRule)
			if err != nil {
				return nil, err
			}
			res.Calibration = c
			cfgs[ai].Sigma = c.Sigma
		}
		traces[ai] = make([][]*shuffleg.Trace, len(e.LRs))
		for li, lr := range e.LRs {
			contractive := lr <= res.Bound
			res.Grid = append(res.Grid, GridPoint{LR: lr, Contractive: contractive, FinalLossMean: math.NaN(), FinalLossStd: math.NaN()})
			if !contractive && !e.AllowNonContractive {
				res.Grid[li].Status = GridNonContractive
				continue
			}
			traces[ai][li] = make([]*shuffleg.Trace, e.Runs)
			for r := range e.Runs {
				jobs = append(jobs, job{ai, li, r})
			}
		}
		if !slices.ContainsFunc(res.Grid, func(g GridPoint) bool { return g.Status == "" }) {
			// No rate may run: the smallest of them, the only one of
			// a fixed rate, is above the bound.
			return nil, &NonContractiveError{Algorithm: a, LR: slices.Min(e.LRs), Bound: res.Bound}
		}
	}
	if err := e.runJobs(ctx, jobs, cfgs, traces, key); err != nil {
		return nil, err
	}
	for ai := range results {
		if err := e.aggregate(&results[ai], traces[ai]); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// masterKey returns the key every run's generator is derived from: a hash
// of Seed, or 32 bytes from crypto/rand.
func (e *Experiment) masterKey() ([32]byte, error) {
	var key [32]byte
	if e.Seed != nil {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], *e.Seed)
		return sha256.Sum256(append([]byte("darrm/shuffleg seed "), b[:]...)), nil
	}
	if _, err := rand.Read(key[:]); err != nil {
		return key, fmt.Errorf("crypto/rand: %w", err)
	}
	return key, nil
}

// runKey returns the key of the random stream of run r of algorithm a:
// SHA-256(master key, a, r). The learning rate is not part of the key, so
// the grid points of a run see the same permutations and noise (common
// random numbers), which makes the grid search compare learning rates
// rather than draws.
func runKey(master [32]byte, a shuffleg.Algorithm, r int) [32]byte {
	var b [48]byte
	copy(b[:], master[:])
	binary.LittleEndian.PutUint64(b[32:], uint64(a))
	binary.LittleEndian.PutUint64(b[40:], uint64(r))
	return sha256.Sum256(b[:])
}

func (e *Experiment) runJobs(ctx context.Context, jobs []job, cfgs []shuffleg.Config, traces [][][]*shuffleg.Trace, key [32]byte) error {
	workers := e.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, max(1, len(jobs)))
	ch := make(chan job)
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for j := range ch {
				if errs[w] != nil || ctx.Err() != nil {
					continue
				}
				cfg := cfgs[j.a]
				cfg.LR = e.LRs[j.l]
				k := runKey(key, e.Algorithms[j.a], j.r)
				cfg.Key = &k
				tr, err := shuffleg.Run(ctx, e.Problem, cfg)
				if err != nil {
					errs[w] = err
					continue
				}
				traces[j.a][j.l][j.r] = tr
				if e.Progress != nil {
					e.Progress(int(done.Add(1)), len(jobs))
				}
			}
		})
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		ch <- j
	}
	close(ch)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// aggregate fills the grid statistics and the curves of the best learning
// rate of one algorithm.
func (e *Experiment) aggregate(res *Result, traces [][]*shuffleg.Trace) error {
	best := -1
	for li, runs := range traces {
		g := &res.Grid[li]
		if runs == nil {
			continue
		}
		final := make([]float64, len(runs))
		g.Status = GridOK
		for r, tr := range runs {
			if tr.Diverged() {
				g.Status = GridDiverged
			}
			final[r] = tr.Loss[len(tr.Loss)-1]
		}
		if g.Status != GridOK {
			continue
		}
		g.FinalLossMean, g.FinalLossStd = meanStd(final)
		if best < 0 || g.FinalLossMean < res.Grid[best].FinalLossMean {
			best = li
		}
	}
	if best < 0 {
		return fmt.Errorf("algorithm %v: every learning rate of the grid diverged", res.Algorithm)
	}
	res.LR, res.Contractive = e.LRs[best], res.Grid[best].Contractive
	K := e.Epochs + 1
	res.LossMean, res.LossStd = make([]float64, K), make([]float64, K)
	res.ExcessMean, res.ExcessStd = make([]float64, K), make([]float64, K)
	col := make([]float64, len(traces[best]))
	for k := range K {
		for r, tr := range traces[best] {
			col[r] = tr.Loss[k]
		}
		res.LossMean[k], res.LossStd[k] = meanStd(col)
		for r, tr := range traces[best] {
			col[r] = tr.Excess[k]
		}
		res.ExcessMean[k], res.ExcessStd[k] = meanStd(col)
	}
	return nil
}

// meanStd returns the mean and the population standard deviation (ddof 0,
// as numpy's std) by two passes.
func meanStd(x []float64) (mean, std float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(x)))
}
