package accountant

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
)

// SpendKind is what a Spend knows of its mechanism beyond its (ε, δ):
// ApproxSpend (nothing), PureSpend (ε-DP), GaussianSpend (Gaussian noise
// on integer coordinates), SampledGaussianSpend (a DP-SGD step),
// OneBitSpend (a one-bit release, by its pairs of output probabilities)
// or LaplaceSpend (discrete Laplace noise on integer coordinates).
// A SpendKind prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type SpendKind int

const (
	// ApproxSpend is known by its (ε, δ) guarantee alone.
	ApproxSpend SpendKind = iota
	// PureSpend is ε-DP (δ = 0): Laplace noise (LNMax), randomized
	// response, a one-bit release whose output probabilities are all
	// positive, pure-DP teachers' majority.
	PureSpend
	// GaussianSpend adds Gaussian noise, continuous or discrete, to
	// integer coordinates of which neighbouring inputs move each by at
	// most 1 (Gaussian parts): GNMax and Confident-GNMax.
	GaussianSpend
	// SampledGaussianSpend is one step of the sampled Gaussian mechanism
	// (DP-SGD: Poisson rate Q, noise multiplier Sigma).
	SampledGaussianSpend
	// OneBitSpend releases one bit, and Bits lists the pairs of its
	// output probabilities on neighbouring inputs (or pairs that dominate
	// them): DaRRM in the one-vote relation, randomized response
	// (RRBits).
	OneBitSpend
	// LaplaceSpend adds discrete Laplace noise of scale Laplace.Scale to
	// integer coordinates of which neighbouring inputs move Laplace.Coords
	// by at most 1 each: LNMax.
	LaplaceSpend
)

var spendKindNames = enum.Names[SpendKind]{What: "spend kind", List: []string{ApproxSpend: "approx", PureSpend: "pure", GaussianSpend: "gaussian", SampledGaussianSpend: "sampled-gaussian", OneBitSpend: "one-bit", LaplaceSpend: "laplace"}}

// String returns the name of s.
func (s SpendKind) String() string { return spendKindNames.String(s) }

// MarshalText returns the name of s.
func (s SpendKind) MarshalText() ([]byte, error) { return []byte(spendKindNames.String(s)), nil }

// UnmarshalText sets s from its name.
func (s *SpendKind) UnmarshalText(text []byte) error { return spendKindNames.Unmarshal(s, text) }

// GaussianPart is Coords coordinates of a query, each moved by at most 1
// between neighbouring inputs and released with Gaussian noise of
// standard deviation Sigma: GNMax's label is two such coordinates (a
// changed vote moves two counts), Confident-GNMax's threshold step one.
type GaussianPart struct {
	Sigma  float64 `json:"sigma"`
	Coords int     `json:"coords"`
}

// Spend describes one step of a mechanism, so that the accountant can
// compose the strongest curve it knows for it: its kind, its (ε, δ) (for
// an ApproxSpend the only thing composed; for the others one point of
// their guarantee, kept as information), and the parameters of its kind.
type Spend struct {
	Kind SpendKind `json:"kind"`
	Guarantee
	// Gaussian and Discrete describe a GaussianSpend: its parts, and
	// whether the noise is the discrete Gaussian. On a OneBitSpend they
	// are the noise its bit is computed from (two-class GNMax: the
	// argmax of two noisy counts), whose zCDP slope bounds the bit's, a
	// post-processing of it (Rho), where its pairs give the exact
	// composition.
	Gaussian []GaussianPart `json:"gaussian,omitempty"`
	Discrete bool           `json:"discrete,omitempty"`
	// Q and Sigma describe a SampledGaussianSpend.
	Q     float64 `json:"q,omitempty"`
	Sigma float64 `json:"sigma,omitempty"`
	// Bits describes a OneBitSpend: every pair (Pr[1] on one input, Pr[1]
	// on a neighbouring one) the release can produce, in either order, or
	// for each a pair further apart (P larger and Q smaller where P > Q),
	// which dominates it.
	Bits []BitPair `json:"bits,omitempty"`
	// Laplace describes a LaplaceSpend.
	Laplace *LaplacePart `json:"laplace,omitempty"`
}

// LaplacePart is Coords coordinates of a query, each moved by at most 1
// between neighbouring inputs and released with discrete Laplace noise,
// Pr[Y = y] ∝ e^(-|y|/Scale): LNMax's counts, of which a changed vote
// moves two.
type LaplacePart struct {
	Scale  float64 `json:"scale"`
	Coords int     `json:"coords"`
}

// coordEps returns the ε of one coordinate of a LaplaceSpend, 1/Scale
// rounded up: its output on two inputs that differ by 1 is randomized
// response with that ε (laplaceRun).
func (p LaplacePart) coordEps() float64 { return outward.Exact(1).Div(outward.Exact(p.Scale)).Hi }

// ApproxStep returns the description of a step known only by its
// guarantee g: a PureSpend when g.Delta = 0, else an ApproxSpend.
func ApproxStep(g Guarantee) Spend {
	if g.Delta == 0 {
		return Spend{Kind: PureSpend, Guarantee: g}
	}
	return Spend{Kind: ApproxSpend, Guarantee: g}
}

// Check reports whether s is a description the accountant can use: a
// valid guarantee, and the parameters its kind needs.
func (s Spend) Check() error {
	if err := checkStep("", s.Guarantee); err != nil {
		return fmt.Errorf("%v spend: %w", s.Kind, err)
	}
	switch s.Kind {
	case ApproxSpend:
	case PureSpend:
		if s.Delta != 0 {
			return fmt.Errorf("pure spend: %w", &param.Error{Name: "delta", Value: s.Delta, Rule: "must be 0 for a pure-DP step"})
		}
	case GaussianSpend:
		if len(s.Gaussian) == 0 {
			return fmt.Errorf("gaussian spend: no noise parts")
		}
		if err := checkGaussianParts(s.Gaussian); err != nil {
			return fmt.Errorf("gaussian spend: %w", err)
		}
	case SampledGaussianSpend:
		if !(s.Q > 0 && s.Q <= 1) {
			return fmt.Errorf("sampled Gaussian spend: %w", &param.Error{Name: "q", Value: s.Q, Rule: "must be in (0, 1]"})
		}
		if err := param.Positive("sigma", s.Sigma); err != nil {
			return fmt.Errorf("sampled Gaussian spend: %w", err)
		}
	case OneBitSpend:
		if len(s.Bits) == 0 {
			return fmt.Errorf("one-bit spend: no pairs of output probabilities")
		}
		if err := checkBits(s.Bits); err != nil {
			return fmt.Errorf("one-bit spend: %w", err)
		}
		if err := checkGaussianParts(s.Gaussian); err != nil {
			return fmt.Errorf("one-bit spend: %w", err)
		}
	case LaplaceSpend:
		if s.Laplace == nil {
			return fmt.Errorf("laplace spend: no noise")
		}
		if err := param.Positive("scale", s.Laplace.Scale); err != nil {
			return fmt.Errorf("laplace spend: %w", err)
		}
		if err := param.Count("coords", s.Laplace.Coords, 1); err != nil {
			return fmt.Errorf("laplace spend: %w", err)
		}
	default:
		return fmt.Errorf("unknown spend kind %v", s.Kind)
	}
	return nil
}

// checkBits checks the probabilities of a one-bit spend's pairs.
func checkBits(bits []BitPair) error {
	for _, b := range bits {
		for _, x := range [2]float64{b.P, b.Q} {
			if !(x >= 0 && x <= 1) {
				return &param.Error{Name: "bits", Value: x, Rule: "a probability must be in [0, 1]"}
			}
		}
	}
	return nil
}

// checkGaussianParts checks the parts of Gaussian noise of a spend.
func checkGaussianParts(parts []GaussianPart) error {
	for _, p := range parts {
		if err := param.Positive("sigma", p.Sigma); err != nil {
			return err
		}
		if err := param.Count("coords", p.Coords, 1); err != nil {
			return err
		}
	}
	return nil
}

// rho returns the slope ρ of a zCDP bound of one step, D_α <= ρα for every
// α > 1, rounded up, and whether s has one: a GaussianSpend
// Σ Coords/(2σ²) (Bun and Steinke 2016, Prop. 1.6; the discrete Gaussian
// the same, Canonne, Kamath and Steinke 2020, Prop. 5), a PureSpend ε²/2
// (Bun and Steinke 2016, Prop. 1.4), as is a pure OneBitSpend or
// LaplaceSpend; a OneBitSpend computed from Gaussian noise that of its
// noise (post-processing).
func (s Spend) rho() (float64, bool) {
	switch {
	case s.pure():
		return upPositive(s.Eps*s.Eps/2, 2), true
	case s.Kind == GaussianSpend, s.Kind == OneBitSpend && len(s.Gaussian) > 0:
		var rho float64
		for _, p := range s.Gaussian {
			r := 1 / p.Sigma
			rho = outward.AddUp(rho, upPositive(float64(p.Coords)*r*r/2, 4))
		}
		return rho, true
	}
	return 0, false
}

// rdp returns an upper bound of one step's Rényi divergence at order
// alpha > 1 (both directions), and whether s has an RDP curve: ρα for a
// zCDP step, capped at ε for a PureSpend (Bun and Steinke 2016, Prop.
// 3.3), and the sampled Gaussian's at integer orders (sgmRDP).
func (s Spend) rdp(m *Memo, alpha float64) (float64, bool) {
	if rho, ok := s.rho(); ok {
		r := outward.MulUp(rho, alpha)
		if s.pure() {
			r = math.Min(r, s.Eps)
		}
		return r, true
	}
	if s.Kind == SampledGaussianSpend && alpha == math.Trunc(alpha) && alpha >= 2 && alpha <= maxSGMOrder {
		r, err := m.sgmRDPAt(s.Q, s.Sigma, int(alpha))
		return r, err == nil && !math.IsInf(r, 1)
	}
	return 0, false
}

// pure reports whether s is ε-DP with a known ε: a PureSpend, or a
// OneBitSpend or LaplaceSpend whose guarantee has δ = 0. Its zCDP slope is
// its guarantee's ε²/2, as a ledger, which records the guarantee of such
// a step, recomputes it.
func (s Spend) pure() bool {
	return s.Delta == 0 && (s.Kind == PureSpend || s.Kind == OneBitSpend || s.Kind == LaplaceSpend)
}

// mu2 returns μ² = Σ Coords/σ² of a GaussianSpend, rounded up: one step
// is dominated by N(0, 1) against N(μ, 1), μ-Gaussian DP (Dong, Roth and
// Su 2022), when its noise is continuous.
func (s Spend) mu2() float64 {
	rho, _ := s.rho()
	return 2 * rho
}

// upPositive is outward.Up of x, the float64 value of a product of
// positive numbers, which is 0 when the product underflowed: then the
// least positive float64, which is above it (ε = 1e-300 has ε²/2 > 0).
func upPositive(x, n float64) float64 {
	if x == 0 {
		return math.SmallestNonzeroFloat64
	}
	return outward.Up(x, n)
}
