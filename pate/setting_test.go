package pate

import (
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// paperDelta is the δ the tests account at, PATE's MNIST setting's.
const paperDelta = 1e-5

// paperMechanisms returns the PATE paper's MNIST aggregators (Table 2; the
// experiment's, experiments/patemnist): Confident-GNMax with T = 200,
// σ1 = 150, σ2 = 40 and GNMax with σ = 40, with discrete Gaussian noise.
func paperMechanisms() []ensemble.Mechanism {
	return []ensemble.Mechanism{
		{Name: provenance.ConfidentGNMax, Input: votefile.ManyClasses, GNMax: noisymax.ConfidentGNMax{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}},
		{Name: provenance.GNMax, Input: votefile.ManyClasses, GNMax: noisymax.ConfidentGNMax{Sigma2: 40, Noise: noisymax.DiscreteNoise}},
	}
}
