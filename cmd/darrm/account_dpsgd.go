package main

import (
	"fmt"
	"math/bits"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/internal/param"
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
			if d.Run.Q, err = samplingRate(f.Batch, f.N); err != nil {
				return nil, err
			}
		}
		if fs.Changed("epochs") {
			if fs.Changed("sampling-rate") {
				return nil, cli.Usagef("account dpsgd: --epochs needs --batch and --n")
			}
			if d.Run.Steps, err = epochSteps(f.Epochs, f.Batch, f.N); err != nil {
				return nil, err
			}
		}
		d.Eps, d.Alpha, err = d.Run.Eps(f.Delta, f.Conversion)
		return d, err
	})
}

// samplingRate returns the Poisson sampling rate batch/n of DP-SGD (--batch, --n) with
// expected batch size batch on n records, 1 <= batch <= n.
func samplingRate(batch, n int) (float64, error) {
	if err := param.Count("n", n, 1); err != nil {
		return 0, fmt.Errorf("DP-SGD: %w", err)
	}
	if batch < 1 || batch > n {
		return 0, fmt.Errorf("DP-SGD: %w", &param.Error{Name: "batch", Value: batch, Rule: fmt.Sprintf("must be an integer in [1, n] = [1, %d]", n)})
	}
	return float64(batch) / float64(n), nil
}

// epochSteps returns the steps of DP-SGD (--epochs) in epochs expected passes over n
// records in expected batches of batch: ceil(epochs·n/batch), in 128-bit
// integers (epochs·n overflows an int long before the count does); at
// most accountant.CountLimit.
func epochSteps(epochs, batch, n int) (int, error) {
	if _, err := samplingRate(batch, n); err != nil {
		return 0, err
	}
	if err := param.Count("epochs", epochs, 1); err != nil {
		return 0, fmt.Errorf("DP-SGD: %w", err)
	}
	hi, lo := bits.Mul64(uint64(epochs), uint64(n))
	lo, carry := bits.Add64(lo, uint64(batch-1), 0)
	hi += carry
	if hi >= uint64(batch) {
		return 0, fmt.Errorf("DP-SGD: %w", &param.Error{Name: "epochs", Value: epochs, Rule: fmt.Sprintf("epochs·n/batch steps must be at most %d", accountant.CountLimit)})
	}
	steps, _ := bits.Div64(hi, lo, uint64(batch))
	if steps > accountant.CountLimit {
		return 0, fmt.Errorf("DP-SGD: %w", &param.Error{Name: "epochs", Value: epochs, Rule: fmt.Sprintf("epochs·n/batch = %d steps: must be at most %d", steps, accountant.CountLimit)})
	}
	return int(steps), nil
}
