package shuffleexp

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/shuffleg"
)

// accountingPlan returns the plan the privacy analysis sees for algorithm a
// over K = epochs epochs, given the thesis' own parameters rather than a
// private fraction: s, the epochs before the switch of PrivPub and PubPriv
// (Algorithms 4 and 5, 1 <= s <= K−1), and n and n_d, the steps and
// private steps per epoch of Interleaved (Algorithm 6, 1 <= n_d <= n).
// Parameters an algorithm does not use are ignored.
func accountingPlan(a shuffleg.Algorithm, epochs, s, n, nd int) (shuffleg.Plan, error) {
	if epochs < 1 {
		return shuffleg.Plan{}, &param.Error{Name: "epochs", Value: epochs, Rule: "must be an integer >= 1"}
	}
	pl := shuffleg.Plan{Algorithm: a, Epochs: epochs, PrivEpochs: epochs}
	switch a {
	case shuffleg.DPShuffleG:
	case shuffleg.PrivPub, shuffleg.PubPriv:
		if epochs < 2 {
			return shuffleg.Plan{}, fmt.Errorf("%v: %w", a, &param.Error{Name: "epochs", Value: epochs, Rule: "must be >= 2: the algorithm switches between private and public epochs"})
		}
		if s < 1 || s > epochs-1 {
			return shuffleg.Plan{}, fmt.Errorf("%v: %w", a, &param.Error{Name: "S", Value: s, Rule: fmt.Sprintf("must be an integer in [1, epochs-1] = [1, %d]", epochs-1)})
		}
		pl.PrivEpochs = s
		if a == shuffleg.PubPriv {
			pl.PrivEpochs = epochs - s
		}
	case shuffleg.Interleaved:
		if n < 1 {
			return shuffleg.Plan{}, fmt.Errorf("%v: %w", a, &param.Error{Name: "n", Value: n, Rule: "must be an integer >= 1"})
		}
		if nd < 1 || nd > n {
			return shuffleg.Plan{}, fmt.Errorf("%v: %w", a, &param.Error{Name: "n_d", Value: nd, Rule: fmt.Sprintf("must be an integer in [1, n] = [1, %d]", n)})
		}
		pl.N, pl.ND = n, nd
	default:
		return shuffleg.Plan{}, fmt.Errorf("%v: uses no private data, there is nothing to account", a)
	}
	return pl, nil
}

// calibrateVariants calibrates plan to target in the three ways the thesis
// and darrm compare, in this order: the paper's conversion at Table 4.3's
// order, the paper's conversion at the exactly optimal order, and the
// improved conversion at the exactly optimal order.
func calibrateVariants(plan shuffleg.Plan, clip float64, target accountant.Guarantee) ([]shuffleg.Calibration, error) {
	variants := []struct {
		conv accountant.Conversion
		rule accountant.AlphaRule
	}{{accountant.PaperConversion, accountant.AlphaTable43}, {accountant.PaperConversion, accountant.AlphaExact}, {accountant.ImprovedConversion, accountant.AlphaExact}}
	cals := make([]shuffleg.Calibration, len(variants))
	for i, v := range variants {
		var err error
		if cals[i], err = plan.Calibrate(clip, target, v.conv, v.rule); err != nil {
			return nil, err
		}
	}
	return cals, nil
}

// EpsVariants returns the ε with which plan's algorithm is (ε, δ)-DP at
// noise σ when every gradient is clipped to norm clip, by the paper's and
// by the improved conversion, each at the exactly optimal order: what
// the last two of calibrateVariants invert.
func EpsVariants(plan shuffleg.Plan, clip, sigma, delta float64) ([]shuffleg.Calibration, error) {
	var cals []shuffleg.Calibration
	for _, c := range []accountant.Conversion{accountant.PaperConversion, accountant.ImprovedConversion} {
		eps, alpha, err := plan.PABI(clip).Eps(sigma, delta, c)
		if err != nil {
			return nil, err
		}
		cals = append(cals, shuffleg.Calibration{Sigma: sigma, Eps: eps, Delta: delta, Alpha: alpha, AlphaRule: accountant.AlphaExact, Conversion: c, Reference: plan.Algorithm.Reference()})
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
	Algorithms       []shuffleg.Algorithm
	Epochs, S, N, ND int
	G, Delta         float64
	Sigma            *float64
	Targets          []float64
}

// Noise is an algorithm's plan and its calibrations: to the target ε
// Target, or, when Target is 0, at the given σ.
type Noise struct {
	Plan         shuffleg.Plan
	Target       float64
	Calibrations []shuffleg.Calibration
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
