package accountant

import (
	"fmt"
	"math"
	"strings"
)

// Algorithm is a member of the DP-ShuffleG family (Ch. 4).
type Algorithm int

// The algorithms of Sections 4.5 and 4.6.
const (
	// DPShuffleG uses the private data in all K epochs (Lemma 4.5.2).
	DPShuffleG Algorithm = iota
	// PrivPub uses the private data in the first S epochs, then public
	// data (Algorithm 4, Lemma 4.6.2).
	PrivPub
	// PubPriv uses public data in the first S epochs, then the private
	// data (Algorithm 5, Lemma 4.6.2).
	PubPriv
	// Interleaved takes n_d private then n - n_d public steps in every
	// epoch, with noise on all n (Algorithm 6, Lemma 4.6.2).
	Interleaved
)

var algorithmNames = [...]string{DPShuffleG: "dp-shuffleg", PrivPub: "priv-pub", PubPriv: "pub-priv", Interleaved: "interleaved"}

// String returns "dp-shuffleg", "priv-pub", "pub-priv" or "interleaved".
func (a Algorithm) String() string {
	if a < 0 || int(a) >= len(algorithmNames) {
		return fmt.Sprintf("Algorithm(%d)", int(a))
	}
	return algorithmNames[a]
}

// Reference names the lemma that bounds a's privacy.
func (a Algorithm) Reference() string {
	if a == DPShuffleG {
		return "Lemma 4.5.2 (PABI + RDP composition)"
	}
	return "Lemma 4.6.2 (PABI + RDP composition)"
}

// ParseAlgorithm parses the names that Algorithm.String returns.
func ParseAlgorithm(s string) (Algorithm, error) {
	for a, name := range algorithmNames {
		if s == name {
			return Algorithm(a), nil
		}
	}
	return 0, fmt.Errorf("algorithm %q: must be one of %s", s, strings.Join(algorithmNames[:], ", "))
}

// ShuffleG describes a run of a DP-ShuffleG algorithm for privacy
// accounting. The fields an algorithm does not use are ignored.
type ShuffleG struct {
	Algorithm Algorithm
	G         float64 // Lipschitz constant of every f(·; d) (the clipping norm; G* for Interleaved)
	Epochs    int     // K, the number of epochs
	S         int     // PrivPub and PubPriv: epochs before the switch, 1 <= S <= K-1
	N         int     // Interleaved: steps per epoch n
	ND        int     // Interleaved: private steps per epoch n_d, 1 <= n_d <= n
}

func (p ShuffleG) validate() error {
	if p.Algorithm < DPShuffleG || p.Algorithm > Interleaved {
		return fmt.Errorf("unknown algorithm %v", p.Algorithm)
	}
	if err := checkPositive("G", p.G); err != nil {
		return err
	}
	if err := checkCount("epochs", p.Epochs, 1); err != nil {
		return err
	}
	switch p.Algorithm {
	case PrivPub, PubPriv:
		if p.S < 1 || p.S > p.Epochs-1 {
			return &ParamError{Name: "S", Value: float64(p.S), Rule: fmt.Sprintf("must be an integer in [1, epochs-1] = [1, %d]", p.Epochs-1)}
		}
	case Interleaved:
		if err := checkCount("n", p.N, 1); err != nil {
			return err
		}
		if p.ND < 1 || p.ND > p.N {
			return &ParamError{Name: "n_d", Value: float64(p.ND), Rule: fmt.Sprintf("must be an integer in [1, n] = [1, %d]", p.N)}
		}
	}
	return nil
}

// PrivateEpochs returns the number of epochs that touch the private data:
// K, S, K - S and K for DPShuffleG, PrivPub, PubPriv and Interleaved.
func (p ShuffleG) PrivateEpochs() int {
	switch p.Algorithm {
	case PrivPub:
		return p.S
	case PubPriv:
		return p.Epochs - p.S
	}
	return p.Epochs
}

// coef returns the total RDP slope times σ²: every private epoch is
// (α, 2αG²/σ²)-RDP by privacy amplification by iteration, divided by
// n + 1 - n_d for Interleaved.
func (p ShuffleG) coef() float64 {
	c := 2 * p.G * p.G * float64(p.PrivateEpochs())
	if p.Algorithm == Interleaved {
		c /= float64(p.N + 1 - p.ND)
	}
	return c
}

// EpochRho returns the slope ρ of one private epoch's RDP curve ε(α) = ρα
// with noise σ: 2G²/σ² (Lemma 4.5.2 and 4.6.2), divided by n + 1 - n_d for
// Interleaved (Lemma 4.6.2).
func (p ShuffleG) EpochRho(sigma float64) (float64, error) {
	if err := p.check(sigma); err != nil {
		return 0, err
	}
	rho := 2 * p.G * p.G / (sigma * sigma)
	if p.Algorithm == Interleaved {
		rho /= float64(p.N + 1 - p.ND)
	}
	return rho, nil
}

// Rho returns the slope of the whole run's RDP curve: EpochRho composed
// over PrivateEpochs (Proposition 4.3.5).
func (p ShuffleG) Rho(sigma float64) (float64, error) {
	if err := p.check(sigma); err != nil {
		return 0, err
	}
	return p.coef() / (sigma * sigma), nil
}

// Eps returns the smallest ε such that the run is (ε, δ)-DP with noise σ
// under conversion c, over every order α > 1, and that α. With
// PaperConversion it is the bound of Lemma 4.5.2 / 4.6.2 at its best α.
func (p ShuffleG) Eps(sigma, delta float64, c Conversion) (eps, alpha float64, err error) {
	rho, err := p.Rho(sigma)
	if err != nil {
		return 0, 0, err
	}
	eps, alpha, err = RhoToDP(rho, delta, c)
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %w", p.Algorithm, err)
	}
	return eps, alpha, nil
}

// Sigma returns the smallest noise σ with which the run is (ε, δ)-DP under
// conversion c, choosing α exactly, and that α. With PaperConversion,
// σ = sqrt(coef)/(sqrt(L+ε) - sqrt(L)), where L = log(1/δ) and coef·α/σ² is
// the run's RDP (Lemma 4.5.2 / 4.6.2).
func (p ShuffleG) Sigma(target Guarantee, c Conversion) (sigma, alpha float64, err error) {
	if err := p.validate(); err != nil {
		return 0, 0, fmt.Errorf("%v: %w", p.Algorithm, err)
	}
	rho, _, err := RhoForDP(target, c)
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %w", p.Algorithm, err)
	}
	sigma, alpha, err = sigmaFor(p.coef(), rho, target, c)
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %w", p.Algorithm, err)
	}
	return sigma, alpha, nil
}

// SigmaTable43 returns the smallest σ with which the run is (ε, δ)-DP under
// PaperConversion when α is set by the rule of Table 4.3 and Section 4.5.3,
// α = sqrt(log(1/δ)/ρ) for the run's RDP slope ρ (e.g. α = σ·sqrt(log(1/δ))/(G·sqrt(2K))
// for DP-ShuffleG), rather than minimised; and that α. Since the rule's α
// is not the minimiser 1 + sqrt(log(1/δ)/ρ), this σ is slightly larger than
// Sigma's.
//
// With y = sqrt(ρ) and L = log(1/δ) the bound is y·sqrt(L) + L·y/(sqrt(L) - y),
// which is increasing for y < sqrt(L); it equals ε at
// y = 2ε·sqrt(L)/(2L + ε + sqrt(4L² + ε²)), where α > 1.
func (p ShuffleG) SigmaTable43(target Guarantee) (sigma, alpha float64, err error) {
	if err := p.validate(); err != nil {
		return 0, 0, fmt.Errorf("%v: %w", p.Algorithm, err)
	}
	if err := checkPositive("eps", target.Eps); err != nil {
		return 0, 0, fmt.Errorf("%v: %w", p.Algorithm, err)
	}
	if err := checkOpenUnit("delta", target.Delta); err != nil {
		return 0, 0, fmt.Errorf("%v: %w", p.Algorithm, err)
	}
	eps, L := target.Eps, -math.Log(target.Delta)
	y := 2 * eps * math.Sqrt(L) / (2*L + eps + math.Sqrt(4*L*L+eps*eps))
	rho := y * y
	// The rule ties α to σ; check the bound at the rounded pair and raise σ
	// (one ulp, then geometrically more) if rounding left it above ε.
	coef := p.coef()
	sigma = math.Sqrt(coef / rho)
	step := math.Nextafter(sigma, math.Inf(1)) - sigma
	for range 1100 {
		r := coef / (sigma * sigma)
		if a := math.Sqrt(L / r); a > 1 && a*r+L/(a-1) <= eps {
			return sigma, a, nil
		}
		sigma += step
		step *= 2
	}
	return 0, 0, fmt.Errorf("%v: no sigma near %v meets %v in floating point", p.Algorithm, math.Sqrt(coef/rho), target)
}

func (p ShuffleG) check(sigma float64) error {
	if err := p.validate(); err != nil {
		return fmt.Errorf("%v: %w", p.Algorithm, err)
	}
	if err := checkPositive("sigma", sigma); err != nil {
		return fmt.Errorf("%v: %w", p.Algorithm, err)
	}
	return nil
}
