package main

import (
	"math"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/cliout"
)

func newAccountDPSGDCmd() *cobra.Command {
	var (
		a                = accountCmd{flags: map[string]string{"q": "--sampling-rate", "delta": "--target-delta", "steps": "--steps"}}
		sigma, q, delta  float64
		n, batch, epochs int
		steps            int
		conversion       string
	)
	cmd := newAccount(&a, "dpsgd", "Privacy of DP-SGD: the sampled Gaussian mechanism composed over its steps",
		`dpsgd prints the (eps, delta)-DP of DP-SGD (Abadi et al. 2016) with Poisson
sampling at rate q and noise multiplier --sigma: the RDP of the sampled
Gaussian mechanism (Mironov, Talwar and Zhang 2019) at every integer order
alpha in [2, 4096], composed over the steps and converted with --conversion
(paper: Theorem B.4.1; improved: the conversion of TF Privacy and Opacus), at
the order that minimises eps. The rate is --sampling-rate, or --batch / --n
(the expected batch size over the training set size); the length is --steps,
or --epochs · n / batch rounded up. JSON fields "eps", "delta" and "alpha".

Earlier spelling --delta is still accepted.`,
		`  darrm account dpsgd --sigma 12 --n 1024 --batch 30 --epochs 5 --target-delta 1e-4 --conversion improved
  darrm account dpsgd --sigma 1.1 --sampling-rate 0.01 --steps 10000 --target-delta 1e-5 --format json`,
		map[string]string{"delta": "target-delta"}, func(cmd *cobra.Command, f cliout.Format) error {
			if err := requireFlags(cmd, "sigma", "target-delta"); err != nil {
				return err
			}
			fs := cmd.Flags()
			if fs.Changed("sampling-rate") == (fs.Changed("batch") || fs.Changed("n")) {
				return usageErrorf("account dpsgd: give the sampling rate as --sampling-rate, or as --batch and --n")
			}
			if !fs.Changed("sampling-rate") {
				if err := requireFlags(cmd, "batch", "n"); err != nil {
					return err
				}
				if n < 1 || batch < 1 || batch > n {
					return usageErrorf("account dpsgd: --batch = %d, --n = %d: need 1 <= batch <= n", batch, n)
				}
				q = float64(batch) / float64(n)
			}
			if fs.Changed("steps") == fs.Changed("epochs") {
				return usageErrorf("account dpsgd: give the length as --steps, or as --epochs (with --batch and --n)")
			}
			if fs.Changed("epochs") {
				if fs.Changed("sampling-rate") || epochs < 1 {
					return usageErrorf("account dpsgd: --epochs = %d needs --batch and --n, and must be >= 1", epochs)
				}
				steps = int(math.Ceil(float64(epochs) * float64(n) / float64(batch)))
			}
			c, err := parseConversion(conversion)
			if err != nil {
				return err
			}
			run := accountant.SGM{Q: q, Sigma: sigma, Steps: steps}
			eps, alpha, err := run.Eps(delta, c)
			if err != nil {
				return err
			}
			return cliout.WriteRecord(cmd.OutOrStdout(), f, cliout.Record{
				{Key: "sigma", Val: sigma}, {Key: "sampling_rate", Val: q}, {Key: "steps", Val: steps},
				{Key: "conversion", Val: c.String()}, {Key: "reference", Val: "Mironov, Talwar and Zhang 2019 (sampled Gaussian RDP); " + c.Reference()},
				{Key: "alpha", Val: alpha}, {Key: "eps", Val: eps}, {Key: "delta", Val: delta},
			})
		})
	fs := cmd.Flags()
	flagSigma.add(fs, &sigma)
	flagSteps.add(fs, &steps)
	flagTargetDelta.add(fs, &delta)
	flagConversion.add(fs, &conversion)
	fs.Float64Var(&q, "sampling-rate", 0, "Poisson sampling rate q in [0, 1]")
	fs.IntVar(&n, "n", 0, "training set size (with --batch: q = batch/n)")
	fs.IntVar(&batch, "batch", 0, "expected batch size")
	fs.IntVar(&epochs, "epochs", 0, "epochs (steps = epochs·n/batch, rounded up)")
	return cmd
}
