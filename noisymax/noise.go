package noisymax

import (
	"fmt"

	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/param"
)

// Noise is the distribution of the noise that GNMax and the threshold
// step add to vote counts: DiscreteNoise, what darrm's releases draw, or
// ContinuousNoise, the PATE paper's. The two give different bounds, so the
// zero value, UnsetNoise, names neither: every function that takes a
// Noise (Noise.Check, and this package's functions through it) refuses
// it with an error naming the noise. A mechanism of package ensemble
// whose Noise is left at zero is the exception: its releases, and
// package pate's accounts of them, take it as DiscreteNoise, what they
// draw (Steps.Drawn).
type Noise int

const (
	// UnsetNoise is the zero value: no noise was named. The functions
	// that take a Noise refuse it; only Steps.Drawn, a release's default,
	// takes it for DiscreteNoise.
	UnsetNoise Noise = iota
	// DiscreteNoise is the discrete Gaussian N_Z(0, σ²) on the integers
	// (Canonne, Kamath and Steinke 2020), GNMax's ties broken uniformly at
	// random: what darrm's releases draw. Its Rényi curves are those of the
	// continuous Gaussian; its probability of missing the plurality is
	// bounded by 1 + 3·e^{-π²σ²} times the paper's Proposition 7 at gaps
	// shortened by 1/2.
	DiscreteNoise
	// ContinuousNoise is N(0, σ²), the PATE paper's.
	ContinuousNoise
)

var noiseNames = enum.Names[Noise]{What: "noise", List: []string{DiscreteNoise: "discrete", ContinuousNoise: "continuous"}, Zero: "unset"}

// String returns "discrete", "continuous" or, for the zero value, "unset".
func (n Noise) String() string { return noiseNames.String(n) }

// MarshalText returns the name of n; UnsetNoise, which names no noise, is
// an error.
func (n Noise) MarshalText() ([]byte, error) {
	if err := checkNoiseKind(n); err != nil {
		return nil, err
	}
	return []byte(n.String()), nil
}

// UnmarshalText sets n from its name: "discrete" or "continuous".
func (n *Noise) UnmarshalText(b []byte) error { return noiseNames.Unmarshal(n, b) }

// checkNoiseKind refuses a Noise that is not DiscreteNoise or
// ContinuousNoise, the zero value first of all.
func checkNoiseKind(n Noise) error {
	switch n {
	case DiscreteNoise, ContinuousNoise:
		return nil
	case UnsetNoise:
		return &param.SettingError{Name: "noise", Value: n.String(), Rule: "must be set, to DiscreteNoise (darrm's releases) or ContinuousNoise (the PATE paper's): their bounds differ"}
	}
	return &param.SettingError{Name: "noise", Value: n.String(), Rule: "must be DiscreteNoise or ContinuousNoise"}
}

// MinDiscreteSigma is the least σ accepted with DiscreteNoise (a plan
// searches no lower): the bound on discrete GNMax's probability of missing
// the plurality (package pate's discreteGNMaxExcess) needs π²σ² >= 0.37.
const MinDiscreteSigma = 0.5

// Check checks the kind of noise n (DiscreteNoise or ContinuousNoise)
// and the deviation sigma of the setting name: > 0, and for discrete
// noise at least MinDiscreteSigma and at most the largest scale darrm's
// exact samplers draw.
func (n Noise) Check(name string, sigma float64) error {
	if err := checkNoiseKind(n); err != nil {
		return err
	}
	if err := param.Positive(name, sigma); err != nil {
		return err
	}
	if n == DiscreteNoise && !(sigma >= MinDiscreteSigma && sigma <= discrete.MaxScale) {
		return &param.Error{Name: name, Value: sigma, Rule: fmt.Sprintf("must be in [%v, %v] for discrete Gaussian noise", MinDiscreteSigma, discrete.MaxScale)}
	}
	return nil
}
