package main

import (
	"github.com/darrm/darrm/noisymax"
)

// classFlags are the settings of the multi-class mechanisms.
type classFlags struct {
	Sigma2       float64 `flag:"sigma2" help:"gnmax, confident-gnmax: noise on each class count (> 0)"`
	Threshold    float64 `flag:"threshold" help:"confident-gnmax: answer when the noisy top count reaches this"`
	Sigma1       float64 `flag:"sigma1" help:"confident-gnmax: noise of the threshold step (> 0)"`
	LaplaceScale float64 `flag:"laplace-scale" help:"lnmax: scale b of the Laplace noise on each count (> 0)"`
}

// settings returns s with the multi-class settings of the flags, whose
// noise releases draw: discrete.
func (f *classFlags) settings(s mechanismSettings) mechanismSettings {
	s.Threshold, s.Sigma1, s.Sigma2, s.Scale, s.Noise = f.Threshold, f.Sigma1, f.Sigma2, f.LaplaceScale, noisymax.DiscreteNoise
	return s
}
