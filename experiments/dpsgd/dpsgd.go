// Package dpsgd trains nn networks with differentially private stochastic
// gradient descent (Abadi et al., 2016) and with plain SGD.
//
// It serves the thesis' experiments, which darrm's command runs, and is no
// part of darrm's library API: Go lets another module import it, but its
// names change with the experiments, without notice (docs/design.md,
// "Packages and layering").
//
// A DP-SGD step draws a batch by Poisson sampling (each example with
// probability q, so that the sampled Gaussian mechanism's analysis applies:
// accountant.SGM), clips each example's gradient to L2 norm C, adds
// N(0, σ²C²) noise to each coordinate of their sum, divides by the expected
// batch size, and takes a gradient step.
package dpsgd

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/nn"
)

// Config is a DP-SGD run.
type Config struct {
	Epochs int     // expected passes over the data: Steps = ceil(Epochs/Rate)
	Rate   float64 // Poisson sampling rate q in (0, 1]
	Clip   float64 // per-example L2 clipping norm C > 0
	Sigma  float64 // noise multiplier σ >= 0: noise N(0, σ²C²) per coordinate
	LR     float64 // learning rate > 0
	// Batch is the expected batch size the noisy sum is divided by. Set,
	// it is a constant and the step adds one example's clipped gradient
	// over Batch whatever the data: the sampled Gaussian mechanism's
	// analysis (add/remove one example) holds as stated. 0 divides by
	// Rate·n for the n examples given, which depends on the data's size.
	Batch float64 `json:",omitempty"`
}

// Steps returns the number of steps, ceil(Epochs/Rate), the count the
// accountant composes.
func (c Config) Steps() int { return int(math.Ceil(float64(c.Epochs) / c.Rate)) }

func (c Config) check() error {
	switch {
	case c.Epochs < 1:
		return fmt.Errorf("dpsgd: epochs = %d: must be >= 1", c.Epochs)
	case !(c.Rate > 0 && c.Rate <= 1):
		return fmt.Errorf("dpsgd: sampling rate = %v: must be in (0, 1]", c.Rate)
	case !(c.Clip > 0) || math.IsInf(c.Clip, 0):
		return fmt.Errorf("dpsgd: clip = %v: must be a finite number > 0", c.Clip)
	case !(c.Sigma >= 0) || math.IsInf(c.Sigma, 0):
		return fmt.Errorf("dpsgd: sigma = %v: must be a finite number >= 0", c.Sigma)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("dpsgd: learning rate = %v: must be a finite number > 0", c.LR)
	case !(c.Batch >= 0) || math.IsInf(c.Batch, 0):
		return fmt.Errorf("dpsgd: expected batch = %v: must be a finite number > 0, or 0 for rate·n", c.Batch)
	}
	return nil
}

func checkData(d *datasets.Dataset) error {
	if err := d.Validate("training"); err != nil {
		return fmt.Errorf("dpsgd: %w", err)
	}
	if d.D != nn.Side*nn.Side || len(d.Y) != d.Len() {
		return fmt.Errorf("dpsgd: training data of %d pixels with %d labels for %d images: want %d pixels and a label per image", d.D, len(d.Y), d.Len(), nn.Side*nn.Side)
	}
	return nil
}

// clipNorm scales g to L2 norm at most c and returns its norm before.
func clipNorm(g []float64, c float64) float64 {
	var s float64
	for _, v := range g {
		s += v * v
	}
	norm := math.Sqrt(s)
	if norm > c {
		f := c / norm
		for i := range g {
			g[i] *= f
		}
	}
	return norm
}

// Private trains net on data with DP-SGD, drawing the sampling and the
// noise from r. It returns the number of steps taken.
func Private(ctx context.Context, net *nn.Net, data *datasets.Dataset, cfg Config, r *rand.Rand) (int, error) {
	if err := cfg.check(); err != nil {
		return 0, err
	}
	if err := checkData(data); err != nil {
		return 0, err
	}
	n := data.Len()
	ws := net.NewWorkspace()
	g := make([]float64, len(net.Params))
	sum := make([]float64, len(net.Params))
	batch := cfg.Batch
	if batch == 0 {
		batch = cfg.Rate * float64(n)
	}
	scale := cfg.LR / batch
	steps := cfg.Steps()
	for step := 0; step < steps; step++ {
		if err := ctx.Err(); err != nil {
			return step, err
		}
		clear(sum)
		for i := 0; i < n; i++ {
			if r.Float64() >= cfg.Rate {
				continue
			}
			net.Grad(data.Row(i), data.Y[i], g, ws)
			clipNorm(g, cfg.Clip)
			for k, v := range g {
				sum[k] += v
			}
		}
		sd := cfg.Sigma * cfg.Clip
		for k := range sum {
			net.Params[k] -= scale * (sum[k] + sd*r.NormFloat64())
		}
	}
	return steps, nil
}

// SGD trains net on data with plain minibatch SGD: epochs passes over a
// fresh permutation, in batches of batch examples.
func SGD(ctx context.Context, net *nn.Net, data *datasets.Dataset, epochs, batch int, lr float64, r *rand.Rand) error {
	if epochs < 1 || batch < 1 || !(lr > 0) {
		return fmt.Errorf("sgd: epochs = %d, batch = %d, learning rate = %v: need epochs, batch >= 1 and a rate > 0", epochs, batch, lr)
	}
	if err := checkData(data); err != nil {
		return err
	}
	n := data.Len()
	ws := net.NewWorkspace()
	g := make([]float64, len(net.Params))
	sum := make([]float64, len(net.Params))
	for range epochs {
		if err := ctx.Err(); err != nil {
			return err
		}
		perm := r.Perm(n)
		for s := 0; s < n; s += batch {
			clear(sum)
			end := min(s+batch, n)
			for _, i := range perm[s:end] {
				net.Grad(data.Row(i), data.Y[i], g, ws)
				for k, v := range g {
					sum[k] += v
				}
			}
			f := lr / float64(end-s)
			for k := range sum {
				net.Params[k] -= f * sum[k]
			}
		}
	}
	return nil
}

// Accuracy returns the fraction of data's images net classifies correctly.
func Accuracy(net *nn.Net, data *datasets.Dataset) float64 {
	ws := net.NewWorkspace()
	right := 0
	for i := range data.Len() {
		if float64(net.Predict(data.Row(i), ws)) == data.Y[i] {
			right++
		}
	}
	return float64(right) / float64(data.Len())
}
