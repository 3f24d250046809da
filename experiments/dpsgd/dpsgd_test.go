package dpsgd

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/nn"
)

// images returns n random images with random labels.
func images(n int, r *rand.Rand) *datasets.Dataset {
	d := &datasets.Dataset{D: nn.Side * nn.Side, X: make([]float64, n*nn.Side*nn.Side), Y: make([]float64, n)}
	for i := range d.X {
		d.X[i] = r.Float64()
	}
	for i := range d.Y {
		d.Y[i] = float64(r.IntN(2))
	}
	return d
}

func TestClip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 100 {
		g := make([]float64, 50)
		for i := range g {
			g[i] = r.NormFloat64() * math.Exp(4*r.NormFloat64())
		}
		before := clipNorm(g, 1)
		var s float64
		for _, v := range g {
			s += v * v
		}
		if n := math.Sqrt(s); n > 1+1e-12 || (before <= 1 && math.Abs(n-before) > 1e-12*before) {
			t.Fatalf("norm %v before, %v after clipping to 1", before, n)
		}
	}
}

// TestNoiseScale runs one full-batch step twice from the same state and
// random stream, without and with noise: the difference of the parameters,
// divided by lr·σ·C/(q·n), or lr·σ·C/Batch with a fixed expected batch,
// must be standard normal in every coordinate.
func TestNoiseScale(t *testing.T) {
	data := images(40, rand.New(rand.NewPCG(2, 2)))
	const sigma, clip, lr = 3.0, 0.5, 0.7
	run := func(s, batch float64) []float64 {
		net, _ := nn.New(8, rand.New(rand.NewPCG(3, 3)))
		cfg := Config{Epochs: 1, Rate: 1, Clip: clip, Sigma: s, LR: lr, Batch: batch}
		if _, err := Private(context.Background(), net, data, cfg, rand.New(rand.NewPCG(4, 4))); err != nil {
			t.Fatal(err)
		}
		return net.Params
	}
	// A fixed expected batch divides the same noise by it instead.
	for _, batch := range []float64{0, 25} {
		div := batch
		if batch == 0 {
			div = float64(data.Len())
		}
		quiet, noisy := run(0, batch), run(sigma, batch)
		var sum, sq float64
		for i := range quiet {
			z := (quiet[i] - noisy[i]) / (lr * sigma * clip / div)
			sum += z
			sq += z * z
		}
		n := float64(len(quiet))
		mean, std := sum/n, math.Sqrt(sq/n-(sum/n)*(sum/n))
		if math.Abs(mean) > 4/math.Sqrt(n) || math.Abs(std-1) > 4/math.Sqrt(2*n) {
			t.Errorf("batch %v: noise per coordinate: mean %v, std %v in units of lr·σ·C/%v; want 0 and 1", batch, mean, std, div)
		}
	}
}

func TestConfigChecks(t *testing.T) {
	ok := Config{Epochs: 1, Rate: 0.5, Clip: 1, Sigma: 1, LR: 0.1}
	bad := []Config{
		{Epochs: 0, Rate: 0.5, Clip: 1, Sigma: 1, LR: 0.1},
		{Epochs: 1, Rate: 0, Clip: 1, Sigma: 1, LR: 0.1},
		{Epochs: 1, Rate: 1.5, Clip: 1, Sigma: 1, LR: 0.1},
		{Epochs: 1, Rate: 0.5, Clip: 0, Sigma: 1, LR: 0.1},
		{Epochs: 1, Rate: 0.5, Clip: 1, Sigma: math.NaN(), LR: 0.1},
		{Epochs: 1, Rate: 0.5, Clip: 1, Sigma: 1, LR: 0},
		{Epochs: 1, Rate: 0.5, Clip: 1, Sigma: 1, LR: 0.1, Batch: -1},
		{Epochs: 1, Rate: 0.5, Clip: 1, Sigma: 1, LR: 0.1, Batch: math.Inf(1)},
	}
	if err := ok.check(); err != nil {
		t.Error(err)
	}
	for _, c := range bad {
		if err := c.check(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if ok.Steps() != 2 {
		t.Errorf("1 epoch at rate 0.5: %d steps, want 2", ok.Steps())
	}
}

// TestTrainingLearns checks that both trainers beat chance on a separable
// task of generated images (bright left half: class 1).
func TestTrainingLearns(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	data := images(400, r)
	for i := range data.Len() {
		row := data.Row(i)
		for p := range row {
			if (p%nn.Side < nn.Side/2) == (data.Y[i] == 1) {
				row[p] = 0.5 + row[p]/2
			} else {
				row[p] /= 2
			}
		}
	}
	net, _ := nn.New(2, r)
	if err := SGD(context.Background(), net, data, 3, 20, 0.1, r); err != nil {
		t.Fatal(err)
	}
	if acc := Accuracy(net, data); acc < 0.9 {
		t.Errorf("SGD: accuracy %v", acc)
	}
	net, _ = nn.New(2, r)
	if _, err := Private(context.Background(), net, data, Config{Epochs: 3, Rate: 0.1, Clip: 1, Sigma: 1, LR: 0.2}, r); err != nil {
		t.Fatal(err)
	}
	if acc := Accuracy(net, data); acc < 0.8 {
		t.Errorf("DP-SGD: accuracy %v", acc)
	}
}
