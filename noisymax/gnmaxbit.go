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

// bitProb bounds p_l, the probability that two-class GNMax releases 1
// from l votes for class 1, and its complement 1 - p_l, each bounded on
// its own (a complement near 0 is not 1 minus a bound near 1).
type bitProb struct{ lo, hi, cLo, cHi float64 }

// gnmaxBitProbs returns bounds of p_l for l = 0, …, k: with noise n of
// deviation sigma on each of the two counts, the label is 1 when
// l + Z1 > (k - l) + Z0, ties broken by a fair coin, so
//
//	p_l = Pr[D < 2l - k] + Pr[D = 2l - k]/2,  D = Z0 - Z1.
//
// ContinuousNoise: D ~ N(0, 2σ²) and p_l = erfc(-(2l - k)/(2σ))/2.
// DiscreteNoise (N_Z(0, σ²), σ >= 0.5): discreteSmallSide.
func gnmaxBitProbs(sigma float64, k int, n Noise) ([]bitProb, error) {
	if err := n.Check("sigma", sigma); err != nil {
		return nil, err
	}
	if err := param.CountIn("K", k, 1, maxBitTeachers); err != nil {
		return nil, err
	}
	out := make([]bitProb, k+1)
	if n == ContinuousNoise {
		twoSigma := 2 * sigma // exact
		for l := range out {
			d := float64(2*l - k) // exact for any k a caller can allocate votes for
			lo, hi := erfcBounds(-d, twoSigma)
			cLo, cHi := erfcBounds(d, twoSigma)
			out[l] = bitProb{lo / 2, hi / 2, cLo / 2, cHi / 2} // halving is exact
		}
		return out, nil
	}
	small := discreteSmallSide(sigma, k)
	for l := range out {
		t := k - 2*l
		s := small[abs(t)]
		c := outward.Exact(1).Sub(s)
		switch {
		case t > 0:
			out[l] = bitProb{s.Lo, s.Hi, c.Lo, c.Hi}
		case t < 0:
			out[l] = bitProb{c.Lo, c.Hi, s.Lo, s.Hi}
		default:
			out[l] = bitProb{0.5, 0.5, 0.5, 0.5}
		}
	}
	return out, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// discreteSmallSide returns, for t = 0, …, k, bounds of
// s_t = Pr[D > t] + Pr[D = t]/2, D the difference of two independent
// N_Z(0, σ²), σ >= 0.5: the probability of the minority label when the
// majority leads by t votes (s_0 = 1/2). The difference takes the value d
// with probability q_d = c_{d mod 2}·e^{-d²/(4σ²)} (z² + (z-d)² =
// 2(z - d/2)² + d²/2), where c_j = θ_j/N², N = Σ_z e^{-z²/(2σ²)} normalises
// N_Z(0, σ²), θ_0 = Σ_z e^{-z²/σ²} and θ_1 = Σ_z e^{-(z-1/2)²/σ²}. By
// Poisson summation, with a = π²σ²,
//
//	N = σ√(2π)·Σ_j e^{-2aj²},  θ_0 = σ√π·Σ_j e^{-aj²},  θ_1 = σ√π·Σ_j (-1)^j e^{-aj²},
//
// so c_j = S_j/(2σ√π·S_N²) for those sums S over j in Z, which j <= 8
// give to within 1e-80 (a >= 2.46). The tail beyond k is summed term by
// term up to d²/(4σ²) >= 700, the rest bounded by
// e^{-700}·(1 + 2σ²/M), M the first term left out
// (Σ_{j>=0} e^{-(M+j)²/(4σ²)} <= e^{-M²/(4σ²)}/(1 - e^{-M/(2σ²)})); when
// that would take more than max(2^16, 16k) terms (σ above about 1,240 and
// k/3), as 1/2 - q_0/2 - Σ_{d=1..k} q_d instead, which is then above
// 0.01. Every step is an outward-rounded interval.
func discreteSmallSide(sigma float64, k int) []outward.Interval {
	pi := outward.Interval{Lo: math.Pi, Hi: math.Nextafter(math.Pi, 4)}
	sig := outward.Exact(sigma)
	a := pi.Mul(pi).Mul(sig).Mul(sig)
	const rest = 1e-80
	sN, s0, s1 := outward.Exact(1), outward.Exact(1), outward.Exact(1)
	for j := 1; j <= 8; j++ {
		jj := outward.Exact(float64(j * j))
		e := outward.Exp(a.Mul(jj).Neg()).Mul(outward.Exact(2))
		sN = sN.Add(outward.Exp(a.Mul(jj).Mul(outward.Exact(2)).Neg()).Mul(outward.Exact(2)))
		s0 = s0.Add(e)
		if j%2 == 1 {
			s1 = s1.Sub(e)
		} else {
			s1 = s1.Add(e)
		}
	}
	sN.Hi, s0.Hi = outward.AddUp(sN.Hi, rest), outward.AddUp(s0.Hi, rest)
	s1 = outward.Interval{Lo: outward.AddDown(s1.Lo, -rest), Hi: outward.AddUp(s1.Hi, rest)}
	den := outward.Exact(2).Mul(sig).Mul(outward.Sqrt(pi)).Mul(sN).Mul(sN)
	c := [2]outward.Interval{s0.Div(den), s1.Div(den)}
	var4 := outward.Exact(4).Mul(sig).Mul(sig)
	x := func(d int) outward.Interval {
		dd := outward.Exact(float64(d))
		return dd.Mul(dd).Div(var4)
	}
	q := func(d int) outward.Interval { return outward.Exp(x(d).Neg()).Mul(c[d&1]) }
	half := outward.Exact(0.5)
	// tail = Σ_{d > k} q_d.
	var tail outward.Interval
	if stop := math.Ceil(math.Sqrt(2800) * sigma); stop-float64(k) <= float64(max(1<<16, 16*k)) {
		var sums [2]outward.Interval // Σ e^{-d²/(4σ²)} over even and odd d
		d := k + 1
		for ; ; d++ {
			xd := x(d)
			if xd.Lo >= 700 {
				break
			}
			sums[d&1] = sums[d&1].Add(outward.Exp(xd.Neg()))
		}
		m := float64(d)
		r := outward.MulUp(outward.LibUp(math.Exp(-700)), outward.AddUp(1, outward.DivDirected(outward.MulUp(2*sigma, sigma), m, true)))
		for j := range sums {
			sums[j].Hi = outward.AddUp(sums[j].Hi, r)
			tail = tail.Add(sums[j].Mul(c[j]))
		}
	} else {
		tail = half.Sub(q(0).Mul(half))
		for d := 1; d <= k; d++ {
			tail = tail.Sub(q(d))
		}
		tail.Lo = math.Max(tail.Lo, 0)
	}
	out := make([]outward.Interval, k+1)
	for t := k; t >= 1; t-- {
		qt := q(t)
		out[t] = tail.Add(qt.Mul(half))
		tail = tail.Add(qt)
	}
	out[0] = half
	return out
}

// maxBitTeachers bounds the K of the two-class GNMax bit's curve, which
// costs O(K) at each ε and σ: a calibration evaluates it about a hundred
// times, 0.3 s at this K (DaRRM's problems stop at 10001), and hours at
// a K near 2^63.
const maxBitTeachers = 1 << 14

// gnmaxBitDelta returns an upper bound of δ(ε), the exact privacy curve at
// ε of the label that two-class GNMax with noise σ releases from k
// teachers' votes, when a record changes at most one teacher's vote (the
// formula above). Every probability is bracketed outward, so the bound
// holds for the exact real-number curve; it exceeds it by a few ulps.
func gnmaxBitDelta(eps, sigma float64, k int) (float64, error) {
	if err := param.Positive("eps", eps); err != nil {
		return 0, fmt.Errorf("GNMax bit: %w", err)
	}
	ps, err := gnmaxBitProbs(sigma, k, ContinuousNoise)
	if err != nil {
		return 0, fmt.Errorf("GNMax bit: %w", err)
	}
	e := outward.Down(math.Exp(eps), 2)
	// div bounds H(a, b) from above.
	div := func(a, b bitProb) float64 {
		return outward.AddUp(math.Max(0, outward.AddUp(a.hi, -outward.MulDown(e, b.lo))), math.Max(0, outward.AddUp(a.cHi, -outward.MulDown(e, b.cLo))))
	}
	var worst float64
	for l := range k {
		worst = math.Max(worst, math.Max(div(ps[l], ps[l+1]), div(ps[l+1], ps[l])))
	}
	return math.Min(worst, 1), nil
}

// GNMaxBitPairs returns the pairs of output probabilities of the label
// that two-class GNMax with noise n of deviation sigma on each count
// releases from k teachers' votes, as an accountant.OneBitSpend lists
// them, when a record changes at most one teacher's vote: for l votes for
// class 1 and l + 1, (Pr[1 | l + 1], Pr[1 | l]), the larger rounded up and
// the smaller down (a pair further apart dominates the exact one). By the
// symmetry p_{k-l} = 1 - p_l the pair at l is the pair at k - 1 - l with
// its outputs exchanged, the same lines of the hockey-stick envelope, so
// only l <= (k-1)/2 are listed, whose probabilities are at most about 1/2
// and keep their relative precision far in the tails. The accountant
// composes them exactly (the privacy loss distribution of their envelope),
// which is what the label's privacy is: tighter than the Gaussian noise
// on the counts that it is computed from.
func GNMaxBitPairs(sigma float64, k int, n Noise) ([]accountant.BitPair, error) {
	ps, err := gnmaxBitProbs(sigma, k, n)
	if err != nil {
		return nil, fmt.Errorf("GNMax bit: %w", err)
	}
	out := make([]accountant.BitPair, (k+1)/2)
	for l := range out {
		out[l] = accountant.BitPair{P: math.Min(ps[l+1].hi, 1), Q: math.Max(ps[l].lo, 0)}
	}
	return out, nil
}

// GNMaxBitProbs returns Pr[label = 1 | l] for l = 0, …, k of two-class
// GNMax with noise n of deviation sigma on each count, ties broken by a
// fair coin: the midpoints of the bounds GNMaxBitPairs rounds outward,
// within 1e-11 of the exact values (1e-13 relative at σ <= 14;
// TestGNMaxBitProbs). It gives the label's accuracy, GNMaxBitPairs its
// privacy.
func GNMaxBitProbs(sigma float64, k int, n Noise) ([]float64, error) {
	ps, err := gnmaxBitProbs(sigma, k, n)
	if err != nil {
		return nil, fmt.Errorf("GNMax bit: %w", err)
	}
	out := make([]float64, k+1)
	for l, p := range ps {
		out[l] = p.lo + (p.hi-p.lo)/2
	}
	return out, nil
}

// GNMaxSigmaTight returns the noise σ of two-class GNMax over k teachers
// calibrated on the released bit's exact privacy curve (gnmaxBitDelta):
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
		d, err := gnmaxBitDelta(target.Eps, sigma, k)
		return err == nil && d <= target.Delta
	}
	lo, hi := 1.0, 1.0
	for !meets(hi) {
		lo, hi = hi, 2*hi
		if hi > 1e15 {
			return 0, fmt.Errorf("GNMax tight: %w", &param.Error{Name: "eps", Value: target.Eps, Rule: "too small: no sigma up to 1e15 meets it"})
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
