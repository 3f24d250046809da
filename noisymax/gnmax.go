package noisymax

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
)

// GNMax's grid search as App. B.4.1 describes it: λ from λ_min in steps of
// 0.5 up to 500.
const (
	gnmaxGridStep = 0.5
	gnmaxGridMax  = 500
)

// GNMaxObjective returns the objective of App. B.4.1's search (Figure B.8)
// at each order λ of lambdas, or with lambdas nil at each order of the
// paper's grid, λ = λ_min + 0.5j <= 500 for j = 0, 1, ..., with
// λ_min = log(1/δ)/ε + 1: the noise variance σ² = λ/(ε - log(1/δ)/(λ-1))
// with which GNMax, (λ, λ/σ²)-RDP, is (ε, δ)-DP by Theorem B.4.1 at order
// λ. It keeps the orders where σ² is finite, with their σ²: none at
// λ <= λ_min, where no noise suffices, and none at λ_min up to rounding,
// where the denominator is pure cancellation. An order of lambdas must be
// finite and > 1.
func GNMaxObjective(target accountant.Guarantee, lambdas []float64) (lambda, sigma2 []float64, err error) {
	if err := checkGNMaxTarget(target); err != nil {
		return nil, nil, fmt.Errorf("GNMax: %w", err)
	}
	if lambdas == nil {
		lmin := -outward.Ln(target.Delta)/target.Eps + 1
		for j := 0; lmin+gnmaxGridStep*float64(j) <= gnmaxGridMax; j++ {
			// λ_min rounded to 1 (ε so large that log(1/δ)/ε vanishes)
			// has no bound at order 1: the grid starts after it.
			if l := lmin + gnmaxGridStep*float64(j); l > 1 {
				lambdas = append(lambdas, l)
			}
		}
	}
	for _, l := range lambdas {
		if !(l > 1) || math.IsInf(l, 1) {
			return nil, nil, fmt.Errorf("GNMax: %w", &param.Error{Name: "lambda", Value: l, Rule: "must be a finite order > 1"})
		}
		den := target.Eps + outward.Ln(target.Delta)/(l-1)
		if den > 1e-12*target.Eps {
			lambda, sigma2 = append(lambda, l), append(sigma2, l/den)
		}
	}
	return lambda, sigma2, nil
}

// checkGNMaxTarget checks a per-query target of GNMax's calibration: ε > 0
// and δ in (0, 1).
func checkGNMaxTarget(target accountant.Guarantee) error {
	if err := param.Positive("eps", target.Eps); err != nil {
		return err
	}
	return param.ConversionDelta("delta", target.Delta)
}

// gnmaxSigmaGrid returns the noise σ of GNMax for a per-query (ε, δ) target
// by the paper's grid search (App. B.4.1): the smallest GNMaxObjective on
// its grid, and the λ it picked.
//
// For (0.2676, 3e-4) it gives σ = 21.46 at λ = 62.31 (Table B.2 prints
// σ_min = 21.46 but λ = 34.31, which the search as described does not give).
// gnmaxSigma finds the exact minimum instead.
func gnmaxSigmaGrid(target accountant.Guarantee) (sigma, lambda float64, err error) {
	if err := checkGNMaxTarget(target); err != nil {
		return 0, 0, fmt.Errorf("GNMax grid: %w", err)
	}
	grid, s2, err := GNMaxObjective(target, nil)
	if err != nil {
		return 0, 0, err
	}
	best := math.Inf(1)
	for i, l := range grid {
		if s2[i] < best {
			best, lambda = s2[i], l
		}
	}
	if math.IsInf(best, 1) {
		return 0, 0, fmt.Errorf("GNMax grid search: %w", &param.Error{Name: "eps", Value: target.Eps,
			Rule: fmt.Sprintf("too small for the grid: lambda_min = log(1/delta)/eps + 1 = %v leaves no grid point below %v", -outward.Ln(target.Delta)/target.Eps+1, float64(gnmaxGridMax))})
	}
	return math.Sqrt(best), lambda, nil
}

// gnmaxSigma returns the smallest noise σ for which GNMax, which is
// (λ, λ/σ²)-RDP for every λ > 1 (Papernot et al. 2018, Section 4.1), meets a
// per-query (ε, δ) target under conversion c, minimising exactly over λ, and
// the optimal λ. With accountant.PaperConversion this is the exact minimum of the
// objective that gnmaxSigmaGrid samples: σ = 1/(sqrt(L+ε) - sqrt(L)),
// λ = 1 + sqrt(L)/(sqrt(L+ε) - sqrt(L)), L = log(1/δ).
func gnmaxSigma(target accountant.Guarantee, c accountant.Conversion) (sigma, lambda float64, err error) {
	sigma, lambda, err = c.SigmaFor(1, target)
	if err != nil {
		return 0, 0, fmt.Errorf("GNMax: %w", err)
	}
	return sigma, lambda, nil
}

// GNMaxSearch selects how GNMax's Rényi order λ, and with it σ, is
// chosen: GNMaxGrid (the paper's grid, the zero value), GNMaxExact
// (minimised exactly) or GNMaxTight (the exact privacy curve, no RDP).
// A GNMaxSearch prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type GNMaxSearch int

const (
	// GNMaxGrid is the paper's grid search over λ with the paper's
	// conversion (App. B.4.1, gnmaxSigmaGrid): σ = 21.46 for (0.2676, 3e-4),
	// as in Table B.2. It is darrm's default, the thesis' baseline.
	GNMaxGrid GNMaxSearch = iota
	// GNMaxExact minimises the bound exactly over λ (gnmaxSigma).
	GNMaxExact
	// GNMaxTight calibrates on the exact privacy curve of the bit that
	// two-class GNMax releases (GNMaxSigmaTight): no RDP, no conversion,
	// and it depends on the number of teachers, so CalibrateGNMax, which
	// has no K, refuses it.
	GNMaxTight
)

var gnmaxSearchNames = enum.Names[GNMaxSearch]{What: "GNMax search", List: []string{GNMaxGrid: "grid", GNMaxExact: "exact", GNMaxTight: "tight"}}

// String returns the name of g.
func (g GNMaxSearch) String() string { return gnmaxSearchNames.String(g) }

// MarshalText returns the name of g.
func (g GNMaxSearch) MarshalText() ([]byte, error) { return []byte(gnmaxSearchNames.String(g)), nil }

// UnmarshalText sets g from its name: "grid", "exact" or "tight".
func (g *GNMaxSearch) UnmarshalText(text []byte) error { return gnmaxSearchNames.Unmarshal(g, text) }

// CalibrateGNMax returns GNMax's noise σ and order λ for a per-query target
// by search s under conversion c: gnmaxSigmaGrid, which is defined with the
// paper's conversion only, or gnmaxSigma. GNMaxTight, which needs the
// number of teachers, is GNMaxSigmaTight's.
func CalibrateGNMax(target accountant.Guarantee, s GNMaxSearch, c accountant.Conversion) (sigma, lambda float64, err error) {
	switch s {
	case GNMaxGrid:
		if c != accountant.PaperConversion {
			return 0, 0, &param.SettingError{Name: "search", Value: s.String(), Rule: fmt.Sprintf("the paper's search uses the paper's conversion only, not %v (use the exact search)", c)}
		}
		return gnmaxSigmaGrid(target)
	case GNMaxExact:
		return gnmaxSigma(target, c)
	case GNMaxTight:
		return 0, 0, &param.SettingError{Name: "search", Value: s.String(), Rule: "depends on the number of teachers K: use GNMaxSigmaTight"}
	}
	return 0, 0, fmt.Errorf("GNMax: unknown search %v", s)
}
