package shuffleg

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
)

// Calibration is the noise of one algorithm calibrated to a target (ε, δ)
// by the shared accountant.
type Calibration struct {
	Sigma      float64               // the noise standard deviation σ
	Eps        float64               // the ε the accountant certifies at Sigma (at most the target)
	Delta      float64               // δ
	Alpha      float64               // the Rényi order of the bound
	AlphaRule  accountant.AlphaRule  // how Alpha was chosen
	Conversion accountant.Conversion // the RDP-to-DP rule used
	Reference  string                // the lemma that bounds the algorithm's privacy
}

// Calibrate returns the smallest σ with which plan's algorithm is (ε, δ)-DP
// when every gradient is clipped to norm clip (the Lipschitz constant G of
// Assumption 4.4.3, and G* for Interleaved, whose public gradients are
// clipped alike): per private epoch (α, 2αG²/σ²)-RDP by privacy
// amplification by iteration, divided by n + 1 − n_d for Interleaved,
// composed over the private epochs and converted to (ε, δ)-DP with conv at
// the order α that rule picks: the exact minimiser, or Table 4.3's
// α = sqrt(log(1/δ)/ρ) (Lemmas 4.5.2 and 4.6.2). The accountant does the
// arithmetic; Calibrate maps the plan onto it.
//
// PublicOnly touches no private data and has no noise to calibrate.
func Calibrate(plan Plan, clip float64, target accountant.Guarantee, conv accountant.Conversion, rule accountant.AlphaRule) (Calibration, error) {
	if !(clip > 0) || math.IsInf(clip, 0) {
		return Calibration{}, fmt.Errorf("clip = %v: a private algorithm needs a finite clipping norm > 0 (it is the Lipschitz constant G of the privacy analysis)", clip)
	}
	if !plan.Algorithm.Private() || plan.PrivEpochs < 1 {
		return Calibration{}, fmt.Errorf("%v: uses no private data, there is no noise to calibrate", plan.Algorithm)
	}
	sigma, alpha, eps, err := plan.PABI(clip).Calibrate(target, conv, rule)
	if err != nil {
		return Calibration{}, fmt.Errorf("calibrate %v: %w", plan.Algorithm, err)
	}
	return Calibration{Sigma: sigma, Eps: eps, Delta: target.Delta, Alpha: alpha, AlphaRule: rule, Conversion: conv, Reference: plan.Algorithm.Reference()}, nil
}

// calibrateVariants calibrates plan to target in the three ways the thesis
// and darrm compare, in this order: the paper's conversion at Table 4.3's
// order, the paper's conversion at the exactly optimal order, and the
// improved conversion at the exactly optimal order.
func calibrateVariants(plan Plan, clip float64, target accountant.Guarantee) ([]Calibration, error) {
	variants := []struct {
		conv accountant.Conversion
		rule accountant.AlphaRule
	}{{accountant.PaperConversion, accountant.AlphaTable43}, {accountant.PaperConversion, accountant.AlphaExact}, {accountant.ImprovedConversion, accountant.AlphaExact}}
	cals := make([]Calibration, len(variants))
	for i, v := range variants {
		var err error
		if cals[i], err = Calibrate(plan, clip, target, v.conv, v.rule); err != nil {
			return nil, err
		}
	}
	return cals, nil
}

// EpsVariants returns the ε with which plan's algorithm is (ε, δ)-DP at
// noise σ when every gradient is clipped to norm clip, by the paper's and
// by the improved conversion, each at the exactly optimal order: what
// the last two of calibrateVariants invert.
func EpsVariants(plan Plan, clip, sigma, delta float64) ([]Calibration, error) {
	var cals []Calibration
	for _, c := range []accountant.Conversion{accountant.PaperConversion, accountant.ImprovedConversion} {
		eps, alpha, err := plan.PABI(clip).Eps(sigma, delta, c)
		if err != nil {
			return nil, err
		}
		cals = append(cals, Calibration{Sigma: sigma, Eps: eps, Delta: delta, Alpha: alpha, AlphaRule: accountant.AlphaExact, Conversion: c, Reference: plan.Algorithm.Reference()})
	}
	return cals, nil
}

// NoiseRequest is what the privacy of private algorithms is asked for,
// without running them: for each of Algorithms, planned by accountingPlan
// with Epochs, S, N and ND and gradients clipped to norm G, the ε of the
// noise Sigma at Delta under each conversion (EpsVariants) when Sigma is
// set, and its noise calibrated to each (Target, Delta) of Targets
// (calibrateVariants).
type NoiseRequest struct {
	Algorithms       []Algorithm
	Epochs, S, N, ND int
	G, Delta         float64
	Sigma            *float64
	Targets          []float64
}

// Noise is an algorithm's plan and its calibrations: to the target ε
// Target, or, when Target is 0, at the given σ.
type Noise struct {
	Plan         Plan
	Target       float64
	Calibrations []Calibration
}

// Run returns the calibrations of a, by algorithm, the given σ first.
func (a NoiseRequest) Run() ([]Noise, error) {
	var out []Noise
	for _, alg := range a.Algorithms {
		plan, err := accountingPlan(alg, a.Epochs, a.S, a.N, a.ND)
		if err != nil {
			return nil, err
		}
		if a.Sigma != nil {
			cals, err := EpsVariants(plan, a.G, *a.Sigma, a.Delta)
			if err != nil {
				return nil, err
			}
			out = append(out, Noise{Plan: plan, Calibrations: cals})
		}
		for _, eps := range a.Targets {
			cals, err := calibrateVariants(plan, a.G, accountant.Guarantee{Eps: eps, Delta: a.Delta})
			if err != nil {
				return nil, err
			}
			out = append(out, Noise{Plan: plan, Target: eps, Calibrations: cals})
		}
	}
	return out, nil
}
