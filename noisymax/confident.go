package noisymax

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
)

// ConfidentGNMax is a PATE aggregator of K teachers' votes over C classes
// (PATE paper, Algorithm 1): when Sigma1 > 0, a query is answered only if
// its largest vote count plus noise of deviation Sigma1 reaches Threshold;
// an answered query gets GNMax's label, the argmax of the counts plus
// noise of deviation Sigma2. Sigma1 = 0 is plain GNMax: every query is
// answered. A label file's header states them by their JSON keys.
type ConfidentGNMax struct {
	Threshold float64 `json:"threshold"`
	Sigma1    float64 `json:"sigma1"`
	Sigma2    float64 `json:"sigma2"`
	Noise     Noise   `json:"noise,omitempty"`
}

// Confident reports whether m has the threshold step.
func (m ConfidentGNMax) Confident() bool { return m.Sigma1 != 0 }

// Validate checks the parameters.
func (m ConfidentGNMax) Validate() error {
	if err := checkNoise("sigma2", m.Sigma2, m.Noise); err != nil {
		return err
	}
	if m.Sigma1 == 0 {
		if m.Threshold != 0 {
			return &accountant.ParamError{Name: "threshold", Value: m.Threshold, Rule: "needs sigma1 > 0 (the threshold step's noise)"}
		}
		return nil
	}
	if err := checkNoise("sigma1", m.Sigma1, m.Noise); err != nil {
		return err
	}
	if math.IsNaN(m.Threshold) || math.IsInf(m.Threshold, 0) {
		return &accountant.ParamError{Name: "threshold", Value: m.Threshold, Rule: "must be a finite number"}
	}
	return nil
}

// thresholdReach is how many σ1 above K a threshold may lie: beyond it the
// step answers no query (Pr[N(0, 1) >= 10] < 10^-23), yet every query is
// charged for it.
const thresholdReach = 10

// ValidateFor checks m (Validate) for K teachers: a threshold step must
// be able to both answer and withhold, so its threshold is in
// [0, K + 10·σ1]. Below 0 it is the threshold 0 (no count is negative);
// beyond, no query is ever answered. A setting that does nothing is
// refused rather than charged.
func (m ConfidentGNMax) ValidateFor(teachers int) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if hi := float64(teachers) + thresholdReach*m.Sigma1; m.Confident() && !(m.Threshold >= 0 && m.Threshold <= hi) {
		return &accountant.ParamError{Name: "threshold", Value: m.Threshold, Rule: fmt.Sprintf("must be in [0, K + %d·sigma1] = [0, %v]: below 0 it is the threshold 0, and beyond no query is ever answered (yet each is charged)", thresholdReach, hi)}
	}
	return nil
}

// RunSlope returns the slope ρ of the data-independent Rényi curve ρ·λ of
// queries threshold steps and labels label steps (for GNMax, which has no
// threshold step, labels steps), rounded up: the curve of a run that asks
// at most queries and labels at most labels of them, whichever they are.
func (m ConfidentGNMax) RunSlope(queries, labels int) (float64, error) {
	if err := m.Validate(); err != nil {
		return 0, fmt.Errorf("PATE: %w", err)
	}
	if queries < 0 || labels < 0 {
		return 0, fmt.Errorf("PATE: %d queries, %d labels: must be >= 0", queries, labels)
	}
	r := gnmaxSlope(m.Sigma2).Mul(outward.Exact(float64(labels)))
	if m.Confident() {
		r = r.Add(thresholdSlope(m.Sigma1).Mul(outward.Exact(float64(queries))))
	}
	return r.Hi, nil
}

// Noise is the distribution of the noise that GNMax and the threshold
// step add to vote counts: DiscreteNoise, what darrm's releases draw, or
// ContinuousNoise, the PATE paper's. The two give different bounds, so the
// zero value, UnsetNoise, names neither: every function that takes a
// Noise (ConfidentGNMax.Validate, and package pate's account through it)
// refuses it with an error naming the noise.
type Noise int

const (
	// UnsetNoise is the zero value: no noise was named. It is refused,
	// never taken for one of the others.
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

// parseNoise parses "discrete" or "continuous".
func parseNoise(s string) (Noise, error) { return noiseNames.Parse(s) }

// MarshalText returns the name of n; UnsetNoise, which names no noise, is
// an error.
func (n Noise) MarshalText() ([]byte, error) {
	if err := checkNoiseKind(n); err != nil {
		return nil, err
	}
	return []byte(n.String()), nil
}

// UnmarshalText sets n from its name (parseNoise).
func (n *Noise) UnmarshalText(b []byte) error { return noiseNames.Unmarshal(n, b) }

// checkNoiseKind refuses a Noise that is not DiscreteNoise or
// ContinuousNoise, the zero value first of all.
func checkNoiseKind(n Noise) error {
	switch n {
	case DiscreteNoise, ContinuousNoise:
		return nil
	case UnsetNoise:
		return &accountant.SettingError{Name: "noise", Value: n.String(), Rule: "must be set, to DiscreteNoise (darrm's releases) or ContinuousNoise (the PATE paper's): their bounds differ"}
	}
	return &accountant.SettingError{Name: "noise", Value: n.String(), Rule: "must be DiscreteNoise or ContinuousNoise"}
}

// MinDiscreteSigma is the least σ accepted with DiscreteNoise (a plan
// searches no lower): the bound on discrete GNMax's probability of missing
// the plurality (package pate's discreteGNMaxExcess) needs π²σ² >= 0.37.
const MinDiscreteSigma = 0.5

// checkNoise checks the kind of noise (DiscreteNoise or ContinuousNoise)
// and its σ: > 0, and for discrete noise at least MinDiscreteSigma and at
// most discrete.MaxScale, the largest scale darrm's exact samplers draw.
func checkNoise(name string, sigma float64, kind Noise) error {
	if err := checkNoiseKind(kind); err != nil {
		return err
	}
	if err := param.Positive(name, sigma); err != nil {
		return err
	}
	if kind == DiscreteNoise && !(sigma >= MinDiscreteSigma && sigma <= discrete.MaxScale) {
		return &accountant.ParamError{Name: name, Value: sigma, Rule: fmt.Sprintf("must be in [%v, %v] for discrete Gaussian noise", MinDiscreteSigma, discrete.MaxScale)}
	}
	return nil
}

// gnmaxSlope returns 1/σ², the slope of GNMax's Rényi curve ε(μ) = μ/σ².
func gnmaxSlope(sigma float64) outward.Interval {
	return outward.Exact(1).Div(outward.Exact(sigma).Mul(outward.Exact(sigma)))
}

// thresholdSlope returns 1/(2σ1²).
func thresholdSlope(sigma1 float64) outward.Interval {
	return outward.Exact(1).Div(outward.Exact(2).Mul(outward.Exact(sigma1).Mul(outward.Exact(sigma1))))
}
