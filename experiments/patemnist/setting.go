package patemnist

import (
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noisymax"
)

// PATE's MNIST setting (the PATE paper, Table 2): 250 teachers,
// Confident-GNMax with T = 200, σ1 = 150, σ2 = 40, GNMax with σ = 40, and
// δ = 1e-5.
const (
	Teachers  = 250
	threshold = 200.0
	sigma1    = 150.0
	sigma2    = 40.0
	Delta     = 1e-5
)

// Mechanisms returns the paper's two aggregators of C-class votes with
// their settings: Confident-GNMax (T = 200, σ1 = 150, σ2 = 40) and GNMax
// (σ = 40), both with darrm's discrete Gaussian noise, their guarantees at
// Delta.
func Mechanisms() []ensemble.Mechanism {
	delta := Delta
	return []ensemble.Mechanism{
		ensemble.ConfidentGNMax{Threshold: threshold, Sigma1: sigma1, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: Delta}, Sigma2: sigma2, Noise: noisymax.DiscreteNoise}},
		ensemble.GNMax{Target: ensemble.Target{Delta: delta}, Sigma2: sigma2, Noise: noisymax.DiscreteNoise},
	}
}

// TunedOn is the data set the teachers' hyperparameters (those of the MNIST
// experiment) and the constants of pate's data-free smooth-sensitivity rule
// were tuned on: an experiment on it runs on its own tuning data, whose
// privacy that tuning spent.
const TunedOn = "fashion-mnist"
