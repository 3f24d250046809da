package main

import (
	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
)

func newAccountDPSGDCmd() *cobra.Command {
	var f struct {
		Sigma      float64               `flag:"sigma" required:""`
		Steps      int                   `flag:"steps"`
		Delta      float64               `flag:"target-delta" required:""`
		Conversion accountant.Conversion `flag:"conversion"`
		Rate       float64               `flag:"sampling-rate" help:"Poisson sampling rate q in [0, 1]"`
		N          int                   `flag:"n" help:"training set size (with --batch: q = batch/n)"`
		Batch      int                   `flag:"batch" help:"expected batch size"`
		Epochs     int                   `flag:"epochs" help:"epochs (steps = epochs·n/batch, rounded up)"`
	}
	names := map[string]string{"q": "--sampling-rate", "delta": "--target-delta"}
	return newAccount("dpsgd", "Privacy of DP-SGD: the sampled Gaussian mechanism composed over its steps", &f, names, func(cmd *cobra.Command) (report.Document, error) {
		fs := cmd.Flags()
		if fs.Changed("sampling-rate") == (fs.Changed("batch") || fs.Changed("n")) {
			return nil, cli.Usagef("account dpsgd: give the sampling rate as --sampling-rate, or as --batch and --n")
		}
		if fs.Changed("steps") == fs.Changed("epochs") {
			return nil, cli.Usagef("account dpsgd: give the length as --steps, or as --epochs (with --batch and --n)")
		}
		d := report.AccountDPSGD{Run: accountant.SGM{Q: f.Rate, Sigma: f.Sigma, Steps: f.Steps}, Conversion: f.Conversion, Delta: f.Delta}
		var err error
		if !fs.Changed("sampling-rate") {
			if err := cli.RequireFlags(cmd, "batch", "n"); err != nil {
				return nil, err
			}
			if d.Run.Q, err = accountant.SamplingRate(f.Batch, f.N); err != nil {
				return nil, err
			}
		}
		if fs.Changed("epochs") {
			if fs.Changed("sampling-rate") {
				return nil, cli.Usagef("account dpsgd: --epochs needs --batch and --n")
			}
			if d.Run.Steps, err = accountant.EpochSteps(f.Epochs, f.Batch, f.N); err != nil {
				return nil, err
			}
		}
		d.Eps, d.Alpha, err = d.Run.Eps(f.Delta, f.Conversion)
		return d, err
	})
}
