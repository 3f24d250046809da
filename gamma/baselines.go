package gamma

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/param"
)

// maxK is the most teachers a noise function is made for: far above the
// certificate's bound (10,001), which no larger gamma passes, and its K+1
// values are 8 MiB; an unbounded K ran the constructors out of memory.
const maxK = 1<<20 + 1

// checkK checks the K of a noise function: odd, at least 1, at most maxK.
func checkK(k int) error {
	if k < 1 || k%2 == 0 || k > maxK {
		return &param.Error{Name: "K", Value: k, Rule: fmt.Sprintf("must be odd and in [1, %d]", maxK)}
	}
	return nil
}

// Sub returns gamma_Sub of Lemma 3.4.1: DaRRM with it releases exactly the
// majority of s teachers subsampled without replacement (ties, for even s,
// broken by a fair coin).
func Sub(k, s int) (Gamma, error) {
	if err := checkK(k); err != nil {
		return nil, fmt.Errorf("gamma_Sub: %w", err)
	}
	if s < 1 || s > k {
		return nil, fmt.Errorf("gamma_Sub: subsample size %d: must be in [1, K] = [1, %d]", s, k)
	}
	g := make(Gamma, k+1)
	for l := (k + 1) / 2; l <= k; l++ {
		pmf := hypergeometric(k, l, s)
		// Pr[majority of the subsample is 1], counting a tie as 1/2.
		var win float64
		for j := s; 2*j > s; j-- {
			win += pmf[j]
		}
		if s%2 == 0 {
			win += pmf[s/2] / 2
		}
		v := math.Min(math.Max(2*win-1, 0), 1)
		g[l], g[k-l] = v, v
	}
	return g, nil
}

// DSub returns gamma_DSub of Theorem 3.5.1 for k teachers at privacy
// allowance m: with s = floor(m) (SubSize), 1 everywhere when
// s >= (K+1)/2, otherwise the majority of 2s-1 subsampled teachers. The
// theorem states it for an integer m in [1, K]; at a non-integer m it is
// the theorem's gamma at floor(m), whose (floor(m)·eps)-DP implies
// (m·eps)-DP. The theorem proves it for i.i.d. pure-DP teachers; Verify
// decides whether it holds for the problem at hand. An m outside [1, K]
// (or NaN) is an error naming m.
func DSub(k int, m float64) (Gamma, error) {
	if err := checkK(k); err != nil {
		return nil, fmt.Errorf("gamma_DSub: %w", err)
	}
	if !(m >= 1 && m <= float64(k)) {
		return nil, fmt.Errorf("gamma_DSub: m = %v: must be in [1, K] = [1, %d] (a non-integer m is taken as floor(m))", m, k)
	}
	s := SubSize(m)
	if 2*s >= k+1 {
		return Const(k, 1)
	}
	return Sub(k, 2*s-1)
}

// Const returns the constant noise function gamma(l) = p: randomized
// response (Algorithm 7) with success probability p.
func Const(k int, p float64) (Gamma, error) {
	if err := checkK(k); err != nil {
		return nil, fmt.Errorf("gamma_const: %w", err)
	}
	if math.IsNaN(p) || p < 0 || p > 1 {
		return nil, fmt.Errorf("gamma_const: p = %v: must be in [0, 1]", p)
	}
	g := make(Gamma, k+1)
	for l := range g {
		g[l] = p
	}
	return g, nil
}

// hypergeometric returns pmf[j] = C(l, j)·C(k-l, s-j)/C(k, s), the law of
// the number of 1-votes among s of k teachers drawn without replacement
// when l of them vote 1. The terms are built by their ratios from the mode
// and normalised, which is accurate to a few ulps without big numbers.
func hypergeometric(k, l, s int) []float64 {
	pmf := make([]float64, s+1)
	lo, hi := max(0, s-(k-l)), min(s, l)
	mode := (s + 1) * (l + 1) / (k + 2)
	mode = min(max(mode, lo), hi)
	pmf[mode] = 1
	for j := mode; j < hi; j++ { // pmf[j+1]/pmf[j]
		pmf[j+1] = pmf[j] * float64(l-j) * float64(s-j) / (float64(j+1) * float64(k-l-s+j+1))
	}
	for j := mode; j > lo; j-- { // pmf[j-1]/pmf[j]
		pmf[j-1] = pmf[j] * float64(j) * float64(k-l-s+j) / (float64(l-j+1) * float64(s-j+1))
	}
	var sum float64
	for _, v := range pmf {
		sum += v
	}
	for j := range pmf {
		pmf[j] /= sum
	}
	return pmf
}
