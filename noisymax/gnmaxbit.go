package noisymax

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/roots"
)

// With two classes, GNMax (Papernot et al. 2018, Section 4.1) releases one
// bit, [n1 - n0 + Z1 - Z0 > 0] with Z0, Z1 ~ N(0, σ²). Among K teachers with
// l votes for class 1 the bit is 1 with probability
//
//	p_l = Φ((2l - K)/(√2·σ)) = erfc(-(2l - K)/(2σ))/2,
//
// and when a record changes at most one teacher's vote (PATE's relation),
// neighbouring datasets give vote counts l and l+1 for some l in [0, K-1].
// The bit is then (ε, δ)-DP exactly when, for every such l, the
// hockey-stick divergence of Bernoulli(p_l) and Bernoulli(p_{l+1}), in
// both directions, is at most δ:
//
//	δ(ε) = max over l of max(H(p_l, p_{l+1}), H(p_{l+1}, p_l)),
//	H(a, b) = max(0, a - e^ε·b) + max(0, (1 - a) - e^ε·(1 - b)).
//
// That is the bit's exact privacy curve for K teachers, not a bound on it.
// It lies below the curve of the Gaussian mechanism on n1 - n0
// (sensitivity 2, noise √2·σ; Balle and Wang 2018, Theorem 8), which is the
// supremum of the same divergence over every real threshold: the K + 1
// vote counts only reach thresholds within K/(√2·σ) of the centre, and
// for K = 11 the Gaussian's worst threshold lies beyond them. For the
// thesis' per-query target (0.2654, 3e-4) at K = 11 the bit needs σ = 7.73
// where the Gaussian's curve needs σ = 13.0 and the RDP bound of the
// paper's grid search σ = 21.4.

// erfcBounds returns a lower and an upper bound of erfc(n/d) for n, d
// finite and d > 0: the quotient is bracketed by its neighbours (it is
// rounded correctly), erfc is decreasing, and each value is widened by
// math.Erfc's error; below the normal range the error is absolute, so
// the upper bound adds the smallest normal number.
func erfcBounds(n, d float64) (lo, hi float64) {
	x := n / d
	lo = outward.Down(math.Erfc(math.Nextafter(x, math.Inf(1))), outward.ErfcULPs)
	hi = outward.Up(math.Erfc(math.Nextafter(x, math.Inf(-1))), outward.ErfcULPs) + 0x1p-1022
	return math.Max(lo, 0), math.Min(hi, 2)
}

// maxBitTeachers bounds the K of the two-class GNMax bit's curve, which
// costs O(K) at each ε and σ: a calibration evaluates it about a hundred
// times, 0.3 s at this K (DaRRM's problems stop at 10001), and hours at
// a K near 2^63.
const maxBitTeachers = 1 << 14

// GNMaxBitDelta returns an upper bound of δ(ε), the exact privacy curve at
// ε of the label that two-class GNMax with noise σ releases from k
// teachers' votes, when a record changes at most one teacher's vote (the
// formula above). Every probability is bracketed outward, so the bound
// holds for the exact real-number curve; it exceeds it by a few ulps.
func GNMaxBitDelta(eps, sigma float64, k int) (float64, error) {
	if err := param.Positive("eps", eps); err != nil {
		return 0, fmt.Errorf("GNMax bit: %w", err)
	}
	if err := param.Positive("sigma", sigma); err != nil {
		return 0, fmt.Errorf("GNMax bit: %w", err)
	}
	if err := param.CountIn("K", k, 1, maxBitTeachers); err != nil {
		return 0, fmt.Errorf("GNMax bit: %w", err)
	}
	e := outward.Down(math.Exp(eps), 2)
	twoSigma := 2 * sigma // exact
	// one returns bounds of p_l = erfc(-(2l-K)/(2σ))/2 and of
	// 1 - p_l = erfc((2l-K)/(2σ))/2; halving is exact.
	type prob struct{ lo, hi, cLo, cHi float64 }
	one := func(l int) prob {
		d := float64(2*l - k) // exact for any k a caller can allocate votes for
		lo, hi := erfcBounds(-d, twoSigma)
		cLo, cHi := erfcBounds(d, twoSigma)
		return prob{lo / 2, hi / 2, cLo / 2, cHi / 2}
	}
	// div bounds H(a, b) from above.
	div := func(a, b prob) float64 {
		return outward.AddUp(math.Max(0, outward.AddUp(a.hi, -outward.MulDown(e, b.lo))), math.Max(0, outward.AddUp(a.cHi, -outward.MulDown(e, b.cLo))))
	}
	var worst float64
	prev := one(0)
	for l := 0; l < k; l++ {
		next := one(l + 1)
		worst = math.Max(worst, math.Max(div(prev, next), div(next, prev)))
		prev = next
	}
	return math.Min(worst, 1), nil
}

// GNMaxSigmaTight returns the noise σ of two-class GNMax over k teachers
// calibrated on the released bit's exact privacy curve (GNMaxBitDelta):
// the least σ, to a relative 1e-12 and rounded up, at which the bit is
// (target.Eps, target.Delta)-DP when a record changes at most one
// teacher's vote. target.Delta may be 0: with finitely many vote counts
// the bit is pure DP for every σ > 0.
//
// It needs no Rényi order and no conversion. It assumes two classes and
// a release of the bit alone (never the noisy counts), as ensemble's
// GNMax does. The search bisects on σ between one that fails the target
// and one that meets it, and the σ returned always meets it. For
// ε <= 0.7, δ(ε) decreases with σ on every case TestGNMaxSigmaTight
// checks (K up to 1001), so the σ is the least; for larger ε the curve
// is not monotone everywhere (at K = 3, ε = 0.85 it rises near σ = 1):
// the σ returned is a crossing of the target, and more noise than it
// may not meet the target.
func GNMaxSigmaTight(target accountant.Guarantee, k int) (float64, error) {
	if err := param.Positive("eps", target.Eps); err != nil {
		return 0, fmt.Errorf("GNMax tight: %w", err)
	}
	if err := param.Delta("delta", target.Delta); err != nil {
		return 0, fmt.Errorf("GNMax tight: %w", err)
	}
	if err := param.CountIn("K", k, 1, maxBitTeachers); err != nil {
		return 0, fmt.Errorf("GNMax tight: %w", err)
	}
	meets := func(sigma float64) bool {
		d, err := GNMaxBitDelta(target.Eps, sigma, k)
		return err == nil && d <= target.Delta
	}
	lo, hi := 1.0, 1.0
	for !meets(hi) {
		lo, hi = hi, 2*hi
		if hi > 1e15 {
			return 0, fmt.Errorf("GNMax tight: %w", &accountant.ParamError{Name: "eps", Value: target.Eps, Rule: "too small: no sigma up to 1e15 meets it"})
		}
	}
	for lo == hi || meets(lo) {
		hi, lo = lo, lo/2
		if lo < 1e-300 {
			return hi, nil
		}
	}
	return roots.Edge(lo, hi, 1e-12, meets), nil
}
