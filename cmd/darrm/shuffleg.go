package main

import (
	"errors"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/curveplot"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/shuffleexp"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/shuffleg"
)

func init() { subcommands = append(subcommands, subcommand{"shuffleg", plain(newShufflegCmd)}) }

type shufflegFlags struct {
	Task       string                `flag:"task" help:"task: mean, ridge or lasso-logistic (required)"`
	Dataset    string                `flag:"dataset" help:"dataset (see above; required)"`
	Algorithms string                `flag:"algorithm" help:"algorithms to run: all, or a list of those named above"`
	Order      shuffleg.Order        `flag:"order" help:"order of the private samples: rr, so or ig"`
	Eps        []float64             `flag:"target-eps"`
	Delta      float64               `flag:"target-delta"`
	Fraction   float64               `flag:"p" help:"fraction of the steps on private samples, in (0, 1]"`
	Epochs     int                   `flag:"epochs" help:"number of epochs (the K of Chapter 4)"`
	Runs       int                   `flag:"runs" help:"runs per algorithm and learning rate"`
	Clip       float64               `flag:"clip" help:"per-sample clipping norm (the Lipschitz constant G)"`
	Radius     float64               `flag:"C" help:"mean: radius of the ball constraint"`
	Lambda     float64               `flag:"lambda" help:"ridge, lasso-logistic: regularisation weight"`
	LR         float64               `flag:"lr" help:"fixed learning rate (instead of a grid search)"`
	LRGrid     string                `flag:"lr-grid" help:"learning rates to search: thesis, or a list"`
	Conversion accountant.Conversion `flag:"conversion"`
	AlphaRule  accountant.AlphaRule  `flag:"alpha-rule" help:"Renyi order of the bound: exact or table-4.3"`
	Seed       uint64                `flag:"seed"`
	Workers    int                   `flag:"workers"`
	Format     cliout.Format         `flag:"format"`
	NonContr   bool                  `flag:"allow-noncontractive" help:"run rates above 1/L*, where the analysis fails (marked)"`
	Curves     string                `flag:"curves" help:"also write the per-epoch curves as CSV to this file"`
	Plot       string                `flag:"plot"`
	PlotMetric curveplot.Metric      `flag:"plot-metric"`
	N          int                   `flag:"n" help:"synthetic: samples in each of the private and public sets"`
	D          int                   `flag:"d" help:"synthetic: dimension"`
	dataDir    string
}

// shufflegNames maps the parameters of shuffleexp.Spec to the flags, where
// their names differ.
var shufflegNames = map[string]string{"eps": "--target-eps", "delta": "--target-delta", "alpha rule": "--alpha-rule", "clip": "--clip"}

func newShufflegCmd() *cobra.Command {
	f := shufflegFlags{Algorithms: "all", Order: shuffleg.RR, Fraction: shuffleexp.DefaultFraction, Epochs: shuffleexp.DefaultEpochs, Runs: shuffleexp.DefaultRuns,
		Clip: shuffleexp.DefaultClip, Radius: shuffleexp.DefaultRadius, Lambda: shuffleexp.DefaultLambda, LRGrid: "thesis",
		N: shuffleexp.DefaultN, D: shuffleexp.DefaultD}
	cmd := newCmd("shuffleg", &cobra.Command{
		Use:   "shuffleg --task TASK --dataset DATASET --target-eps EPS [flags]",
		Short: "Run the DP-ShuffleG experiments (private shuffled gradient methods with public data)",
		Args:  cli.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runShuffleg(cmd, &f) },
	}, &f)
	cmd.Flags().StringVar(&f.dataDir, "data-dir", "", "folder of the datasets")
	cli.SetDefaultText(cmd.Flags(), "$"+datasets.EnvDir+" or $XDG_DATA_HOME/darrm", "data-dir")
	// The thesis' delta (Section 4.7.4) when not given.
	cli.SetDefaultText(cmd.Flags(), cliout.Float(shuffleexp.DefaultDelta), "target-delta")
	return cmd
}

// spec returns the experiment the flags state, for shuffleexp.Spec.Build to
// check; it checks what only the flags say: that --task and --dataset are
// given, one --target-eps, and one of --lr and --lr-grid.
func (f *shufflegFlags) spec(cmd *cobra.Command) (s shuffleexp.Spec, search string, err error) {
	fl := cmd.Flags()
	switch {
	case f.Task == "":
		return s, "", cli.Usagef("--task is required: mean, ridge or lasso-logistic")
	case f.Dataset == "":
		return s, "", cli.Usagef("--dataset is required")
	case len(f.Eps) != 1:
		return s, "", cli.Usagef("--target-eps: give one eps (got %d)", len(f.Eps))
	case fl.Changed("lr") && fl.Changed("lr-grid"):
		return s, "", cli.Usagef("--lr and --lr-grid: give one of them")
	}
	if !fl.Changed("target-delta") {
		f.Delta = shuffleexp.DefaultDelta
	}
	e := shuffleexp.Experiment{Order: f.Order, Conversion: f.Conversion, AlphaRule: f.AlphaRule, Eps: f.Eps[0], Delta: f.Delta, Epochs: f.Epochs, Fraction: f.Fraction, Clip: f.Clip, Runs: f.Runs,
		Workers: f.Workers, AllowNonContractive: f.NonContr, LRs: []float64{f.LR}}
	search = "fixed"
	if fl.Changed("seed") {
		e.Seed = &f.Seed
	}
	if e.Algorithms, err = shuffleexp.ParseAlgorithms(f.Algorithms); err != nil {
		return s, "", cli.Usagef("--algorithm: %v", err)
	}
	if !fl.Changed("lr") {
		if e.LRs, search, err = shuffleexp.LRGrid(f.LRGrid); err != nil {
			return s, "", cli.Usagef("--lr-grid: %v", err)
		}
	}
	return shuffleexp.Spec{Task: f.Task, Dataset: f.Dataset, DataDir: f.dataDir, N: cli.Given(fl, "n", f.N), D: cli.Given(fl, "d", f.D),
		Radius: cli.Given(fl, "C", f.Radius), Lambda: cli.Given(fl, "lambda", f.Lambda), Experiment: e}, search, nil
}

func runShuffleg(cmd *cobra.Command, f *shufflegFlags) error {
	start := time.Now()
	spec, search, err := f.spec(cmd)
	if err != nil {
		return err
	}
	if err := setup.CheckPlot(f.Plot); err != nil {
		return err
	}
	if err := cli.CheckFolder("data-dir", f.dataDir); err != nil {
		return err
	}
	exp, info, err := spec.Build(cmd.Context())
	if cerr := cmd.Context().Err(); cerr != nil {
		return cerr // interrupted, not bad input
	}
	if err != nil {
		return cli.AsUsage(setup.Flagged(err, shufflegNames))
	}
	prog := cliout.NewProgress(cmd.ErrOrStderr(), -1, "shuffleg runs")
	exp.Progress = func(done, total int) { prog.Update(int64(done), int64(total)) }
	results, err := exp.Run(cmd.Context())
	prog.Done()
	if nc := (*shuffleexp.NonContractiveError)(nil); errors.As(err, &nc) {
		flag := "--lr-grid" // or the thesis' grid, its default
		if search == "fixed" {
			flag = "--lr"
		}
		return cli.Usagef("%s: %v; pass --allow-noncontractive to run it anyway (the output is then marked)", flag, err)
	} else if err != nil {
		return setup.Flagged(err, shufflegNames)
	}
	rep := shuffleexp.NewReport(exp, results, f.Task, info, search)
	if f.Curves != "" {
		if err := atomicfile.WriteOutput(cmd.Context(), f.Curves, 0o644, func(w io.Writer) error { return rep.WriteCurves(w) }); err != nil {
			return err
		}
	}
	if f.Plot != "" {
		fig, err := curveplot.ShufflegFigure([]shuffleexp.Report{rep}, nil, f.PlotMetric, "", 1)
		if err != nil {
			return err
		}
		if err := fig.Write(cmd.Context(), f.Plot); err != nil {
			return err
		}
	}
	return report.Shuffleg{Report: &rep, Seconds: time.Since(start).Seconds()}.Write(cmd.OutOrStdout(), f.Format)
}
