package main

import (
	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/cliout"
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
	return newAccount("dpsgd", "Privacy of DP-SGD: the sampled Gaussian mechanism composed over its steps", &f, names, map[string]string{"delta": "target-delta"}, func(cmd *cobra.Command, format cliout.Format) error {
		fs := cmd.Flags()
		if fs.Changed("sampling-rate") == (fs.Changed("batch") || fs.Changed("n")) {
			return cli.Usagef("account dpsgd: give the sampling rate as --sampling-rate, or as --batch and --n")
		}
		if fs.Changed("steps") == fs.Changed("epochs") {
			return cli.Usagef("account dpsgd: give the length as --steps, or as --epochs (with --batch and --n)")
		}
		run := accountant.SGM{Q: f.Rate, Sigma: f.Sigma, Steps: f.Steps}
		var err error
		if !fs.Changed("sampling-rate") {
			if err := cli.RequireFlags(cmd, "batch", "n"); err != nil {
				return err
			}
			if run.Q, err = accountant.SamplingRate(f.Batch, f.N); err != nil {
				return err
			}
		}
		if fs.Changed("epochs") {
			if fs.Changed("sampling-rate") {
				return cli.Usagef("account dpsgd: --epochs needs --batch and --n")
			}
			if run.Steps, err = accountant.EpochSteps(f.Epochs, f.Batch, f.N); err != nil {
				return err
			}
		}
		c := f.Conversion
		eps, alpha, err := run.Eps(f.Delta, c)
		if err != nil {
			return err
		}
		return cliout.WriteRecord(cmd.OutOrStdout(), format, cliout.Record{
			{Key: "sigma", Val: f.Sigma}, {Key: "sampling_rate", Val: run.Q}, {Key: "steps", Val: run.Steps},
			{Key: "conversion", Val: c.String()}, {Key: "reference", Val: "Mironov, Talwar and Zhang 2019 (sampled Gaussian RDP); " + c.Reference()},
			{Key: "alpha", Val: alpha}, {Key: "eps", Val: eps}, {Key: "delta", Val: f.Delta},
		})
	})
}
