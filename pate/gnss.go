package pate

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
)

// The GNSS mechanism of the PATE paper (Section 4.3, Appendices B-C):
// the data-dependent Rényi DP f(x) released as f(x) + SS_β(x)·N(0, σ²),
// for a β-smooth upper bound SS_β on f's local sensitivity
// (rdpAccount.localSensitivity).

// smoothSensitivity returns the β-smooth sensitivity max_d e^{-βd}·ls[d]
// of a function whose local sensitivity at distance d is at most ls[d]
// (Nissim, Raskhodnikova and Smith 2007), rounded up.
func smoothSensitivity(ls []float64, beta float64) (float64, error) {
	if err := param.Positive("beta", beta); err != nil {
		return 0, fmt.Errorf("smooth sensitivity: %w", err)
	}
	var ss float64
	for d, l := range ls {
		if !(l >= 0) {
			return 0, fmt.Errorf("smooth sensitivity: local sensitivity at distance %d is %v", d, l)
		}
		ss = math.Max(ss, outward.MulUp(l, outward.Exp(outward.Exact(-beta).Mul(outward.Exact(float64(d)))).Hi))
	}
	return ss, nil
}

// gnssRDP returns the Rényi DP at order λ, 1 < λ < 1/(2β), of the GNSS
// mechanism, which releases f(x) + SS_β(x)·N(0, σ²) for a β-smooth upper
// bound SS_β on the local sensitivity of f. Between neighbours x, x' the
// two outputs are N(f(x), s²) and N(f(x'), s²e^{2r}), s = σ·SS_β(x),
// |r| <= β, |f(x) - f(x')| <= s·min(1, e^r)/σ, and the Rényi divergence of
// two Gaussians (v = λe^{2r} + 1 - λ > 0) is
//
//	λ(f(x) - f(x'))²/(2s²v) + (2λr - log v)/(2(λ - 1)).
//
// On r in [-β, 0] both terms grow as r falls, on [0, β] the first is at
// most λ/(2σ²) and the second grows with r, so the largest is at most
//
//	max(λe^{-2β}/(2σ²v₋) - (2λβ + log v₋)/(2(λ - 1)),
//	    λ/(2σ²) + (2λβ - log v₊)/(2(λ - 1))),  v± = λe^{±2β} + 1 - λ.
//
// The PATE paper's Theorem 23 (arXiv version), λe^{2β}/σ² + (βλ - log(1 -
// 2λβ)/2)/(λ - 1), is below the first term where λβ nears 1/2, at the
// parameters darrm and the PATE authors use (β = 0.4/λ, λ = 20, σ ≈ 10.1:
// 0.268 against 0.456 for x' with the smaller SS_β), so it is not used.
func gnssRDP(beta, sigma, order float64) (float64, error) {
	if err := param.Positive("beta", beta); err != nil {
		return 0, fmt.Errorf("GNSS: %w", err)
	}
	if err := param.Positive("sigma", sigma); err != nil {
		return 0, fmt.Errorf("GNSS: %w", err)
	}
	if err := param.Alpha(order); err != nil {
		return 0, fmt.Errorf("GNSS: %w", err)
	}
	lb := outward.Exact(order).Mul(outward.Exact(beta))
	if !(lb.Hi < 0.5) {
		return 0, fmt.Errorf("GNSS: %w", &param.Error{Name: "order", Value: order, Rule: fmt.Sprintf("must be below 1/(2·beta) = %v", 0.5/beta)})
	}
	l, two := outward.Exact(order), outward.Exact(2)
	s2 := two.Mul(outward.Exact(sigma).Mul(outward.Exact(sigma))) // 2σ²
	den := two.Mul(l.Sub(outward.Exact(1)))                       // 2(λ-1)
	twoLB := two.Mul(lb)
	side := func(r outward.Interval) (e, logv outward.Interval, ok bool) {
		e = outward.Exp(two.Mul(r))
		logv = outward.Log1p(l.Mul(e.Sub(outward.Exact(1)))) // log v = log(1 + λ(e^{2r} - 1))
		return e, logv, !math.IsNaN(logv.Lo) && !math.IsInf(logv.Lo, -1)
	}
	e, logv, ok := side(outward.Exact(-beta))
	if !ok {
		return 0, fmt.Errorf("GNSS: %w", &param.Error{Name: "order", Value: order, Rule: fmt.Sprintf("must be below 1/(2·beta) = %v", 0.5/beta)})
	}
	lower := l.Mul(e).Div(s2.Mul(outward.Exp(logv))).Sub(twoLB.Add(logv).Div(den))
	_, logv, _ = side(outward.Exact(beta))
	upper := l.Div(s2).Add(twoLB.Sub(logv).Div(den))
	return math.Max(lower.Hi, upper.Hi), nil
}

// gnssSigma returns the PATE authors' choice of the GNSS noise for order
// λ, β and smooth sensitivity ss: σ = (λe^{2β}/ss)^{1/3}, the minimiser of
// λe^{2β}/σ² + 2·ss·σ (Theorem 23's Gaussian term, their proxy for GNSS's
// cost, plus two deviations of its noise). It sets σ only: the cost
// charged is gnssRDP's, which at λβ near 1/2 is larger than that term, so
// the σ is a choice for utility, not for privacy.
func gnssSigma(beta, ss, order float64) (float64, error) {
	if err := param.Positive("smooth sensitivity", ss); err != nil {
		return 0, fmt.Errorf("GNSS: %w", err)
	}
	return math.Cbrt(order * math.Exp(2*beta) / ss), nil
}

// gnssChoice is a choice of GNSS parameters.
type gnssChoice struct {
	Beta, SS, Sigma float64
	Cost            float64 // gnssRDP at the order
}

// chooseGNSS picks β on the PATE authors' grid 0.30/λ, 0.31/λ, ...,
// 0.49/λ and σ by gnssSigma, minimising rdp + gnssRDP + 2·SS·σ, for
// local sensitivities ls at order λ. The choice depends on the votes:
// the parameters it returns are not private (fix them in advance for a
// release whose every step is accounted for).
func chooseGNSS(rdp float64, ls []float64, order float64) (gnssChoice, error) {
	best := gnssChoice{Cost: math.Inf(1)}
	bestObj := math.Inf(1)
	for j := 30; j < 50; j++ {
		beta := float64(j) / 100 / order
		ss, err := smoothSensitivity(ls, beta)
		if err != nil {
			return best, err
		}
		if ss == 0 {
			cost, err := gnssRDP(beta, 1, order)
			if err != nil {
				return best, err
			}
			return gnssChoice{Beta: beta, SS: 0, Sigma: 1, Cost: cost}, nil
		}
		sigma, err := gnssSigma(beta, ss, order)
		if err != nil {
			return best, err
		}
		cost, err := gnssRDP(beta, sigma, order)
		if err != nil {
			return best, err
		}
		if obj := rdp + cost + 2*ss*sigma; obj < bestObj {
			bestObj, best = obj, gnssChoice{Beta: beta, SS: ss, Sigma: sigma, Cost: cost}
		}
	}
	return best, nil
}

// gnssLattice is the spacing h of the lattice hZ on which darrm releases a
// data-dependent Rényi DP by GNSS: the noise is the discrete Gaussian on
// hZ centred at the value (discrete.LatticeGaussian), which is sampled
// exactly and whose outputs carry no low-order bits of the value.
const gnssLattice = 0x1p-40

// gnssMaxDeviation is 2^62 lattice steps (2^22), the least deviation that
// discrete.LatticeGaussian does not draw.
const gnssMaxDeviation = gnssLattice * (1 << 62)

// gnssMinSteps is the least deviation of the lattice noise, in lattice
// steps, per square root of the order: it keeps the lattice's excess over
// continuous noise below one ulp (gnssLatticeRDP).
const gnssMinSteps = 1 << 10

// gnssDeviation returns the deviation of darrm's lattice GNSS noise at
// order λ for smooth sensitivity ss and noise multiplier sigma:
// max(ss·sigma, 2^10·h·√λ) (h = gnssLattice), the product rounded up. The
// floor is a constant, so max(ss, floor/sigma) is β-smooth when ss is, and
// still bounds the local sensitivity.
func gnssDeviation(ss, sigma, order float64) (float64, error) {
	if err := param.AtLeast("smooth sensitivity", ss, 0); err != nil {
		return 0, fmt.Errorf("GNSS: %w", err)
	}
	if err := param.Positive("sigma", sigma); err != nil {
		return 0, fmt.Errorf("GNSS: %w", err)
	}
	if err := param.Alpha(order); err != nil {
		return 0, fmt.Errorf("GNSS: %w", err)
	}
	floor := gnssMinSteps * gnssLattice * math.Sqrt(order)
	return math.Max(outward.MulUp(ss, sigma), floor), nil
}

// gnssLatticeRDP returns the Rényi DP at order λ of darrm's GNSS release:
// the discrete Gaussian on hZ (h = gnssLattice) centred at f(x), of
// deviation gnssDeviation. It is gnssRDP at β + 2^-51, for the rounding
// of the deviation (which may change its ratio between neighbours by a
// factor 1 + 2^-52 beyond e^β), plus the lattice's excess over continuous
// noise, which is below one ulp of the result and added as one: by Poisson
// summation a Gaussian function of deviation τ summed over hZ is its
// integral over h times 1 ± 3e^{-2π²τ²/h²}, and every deviation the
// Rényi sum involves (the noise's at either neighbour, and the product's
// τ >= deviation/√λ) is at least e^{-1/2}·2^10 > 614 lattice steps (the
// neighbour's deviation is at least e^{-β} times it, β < 1/(2λ)), so the
// excess is below 9λ/(λ-1)·e^{-2π²·614²}, far below 2^-1074 (docs/pate.md).
func gnssLatticeRDP(beta, sigma, order float64) (float64, error) {
	r, err := gnssRDP(beta+0x1p-51, sigma, order)
	if err != nil {
		return 0, err
	}
	return math.Nextafter(r, math.Inf(1)), nil
}
