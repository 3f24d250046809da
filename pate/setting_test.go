package pate

import (
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
)

// paperDelta is the δ the tests account at, PATE's MNIST setting's.
const paperDelta = 1e-5

// paperMech is a mechanism of the GNMax family by its name and parameters,
// as an account takes them (AccountOptions).
type paperMech struct {
	Name  provenance.MechanismName
	GNMax noisymax.Steps
}

// mech returns the mechanism, its guarantee at paperDelta.
func (m paperMech) mech() ensemble.Mechanism { return classMechanism(m.Name, m.GNMax, paperDelta) }

// paperMechanisms returns the PATE paper's MNIST aggregators (Table 2; the
// experiment's, experiments/patemnist): Confident-GNMax with T = 200,
// σ1 = 150, σ2 = 40 and GNMax with σ = 40, with discrete Gaussian noise.
func paperMechanisms() []paperMech {
	return []paperMech{
		{Name: ensemble.ConfidentGNMax{}.Name(), GNMax: noisymax.Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}},
		{Name: ensemble.GNMax{}.Name(), GNMax: noisymax.Steps{Sigma2: 40, Noise: noisymax.DiscreteNoise}},
	}
}
