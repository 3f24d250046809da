package shuffleg

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
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

// Calibrate returns the smallest σ with which pl's algorithm is (ε, δ)-DP
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
func (pl Plan) Calibrate(clip float64, target accountant.Guarantee, conv accountant.Conversion, rule accountant.AlphaRule) (Calibration, error) {
	if !(clip > 0) || math.IsInf(clip, 0) {
		return Calibration{}, &param.Error{Name: "clip", Value: clip, Rule: "a private algorithm needs a finite clipping norm > 0 (it is the Lipschitz constant G of the privacy analysis)"}
	}
	if clip < 1e-150 || clip > 1e150 {
		// Said of the clip, where the analysis said "coef = 0" or
		// "+Inf": G² times the analysis' factors under- or overflows
		// near the square's own bounds.
		return Calibration{}, &param.Error{Name: "clip", Value: clip, Rule: "must be in [1e-150, 1e150]: its square, G² in the privacy analysis, under- or overflows beyond"}
	}
	if !pl.Algorithm.Private() || pl.PrivEpochs < 1 {
		return Calibration{}, fmt.Errorf("%v: uses no private data, there is no noise to calibrate", pl.Algorithm)
	}
	sigma, alpha, eps, err := pl.PABI(clip).Calibrate(target, conv, rule)
	if err != nil {
		return Calibration{}, fmt.Errorf("calibrate %v: %w", pl.Algorithm, err)
	}
	return Calibration{Sigma: sigma, Eps: eps, Delta: target.Delta, Alpha: alpha, AlphaRule: rule, Conversion: conv, Reference: pl.Algorithm.Reference()}, nil
}
