// Package gamma provides DaRRM noise functions: the subsampling baselines
// (Sub, Lemma 3.4.1; DSub, Theorem 3.5.1), randomized response (Const,
// Lemma B.1.1) and user tables; the exhaustive privacy certificate of any
// noise function (Verify, Certify); and their utility (objective, surrogate
// error, true expected TV error). The optimal noise function, found by
// linear programming (thesis Section 3.6), is in package optimal, the only
// one that needs the LP solver; this package is pure Go.
//
// DaRRM (Algorithm 1) counts the teachers' votes L and releases the true
// majority with probability gamma(L), a fair coin otherwise.
//
// Reference: Shuli Jiang, "Communication Efficient and Differentially
// Private Optimization", PhD thesis, Carnegie Mellon University,
// CMU-RI-TR-25-46, 2025 ("the thesis": lemma, section, table and figure
// numbers are its own). Its Chapter 3 and Appendix B are based
// on Jiang, Zhang and Joshi, "Optimized Tradeoffs for Private Prediction
// with Majority Ensembling", TMLR 2024.
package gamma

import (
	"fmt"
	"math"
)

// Gamma is a noise function: Gamma[l] = gamma(l), the probability of
// releasing the true majority when l of the K = len-1 teachers vote 1.
// Noise functions used by darrm are symmetric, gamma(l) = gamma(K-l),
// which Lemma 3.4.4 assumes and costs no utility (Section 3.4.3).
type Gamma []float64

// K returns the number of teachers.
func (g Gamma) K() int { return len(g) - 1 }

// check verifies that g is a symmetric noise function for an odd number of
// teachers with values in [0, 1], naming the first offending value.
func (g Gamma) check() error {
	if err := g.checkValues(); err != nil {
		return err
	}
	k := g.K()
	for l := 0; l < (k+1)/2; l++ {
		if g[l] != g[k-l] {
			return fmt.Errorf("gamma(%d) = %v but gamma(%d) = %v: gamma must be symmetric, gamma(l) = gamma(K-l) (Lemma 3.4.4)", l, g[l], k-l, g[k-l])
		}
	}
	return nil
}

// checkValues is check without the symmetry: K+1 values for an odd K,
// each in [0, 1]. What measures a gamma asks no more: a gamma computed
// from the probabilities of a label (GNMax's, each rounded) may differ
// from its mirror image by an ulp.
func (g Gamma) checkValues() error {
	switch n := len(g); {
	case n < 2:
		return fmt.Errorf("gamma has %d values: need K+1 >= 2 values, one for each vote count l = 0..K (K odd)", n)
	case n%2 != 0:
		return fmt.Errorf("gamma has %d values: need K+1 values for an odd K, an even number (%d for K = %d or %d for K = %d)", n, n-1, n-2, n+1, n)
	}
	for l, v := range g {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return fmt.Errorf("gamma(%d) = %v: must be in [0, 1]", l, v)
		}
	}
	return nil
}

// CheckFor verifies that g is a symmetric noise function for the k
// teachers of a problem, k odd: k+1 values in [0, 1], naming the first
// offending value.
func (g Gamma) CheckFor(k int) error {
	if len(g) != k+1 {
		return fmt.Errorf("gamma has %d values, want K+1 = %d (one for each vote count l = 0..%d)", len(g), k+1, k)
	}
	return g.check()
}

// FromUpper builds the symmetric noise function whose values at l = H..K
// are upper, H = (K+1)/2, clamping to [0, 1] (LP solutions may leave the bounds by the
// solver's tolerance). It panics unless K >= 1 is odd and upper holds its
// K+1-H values, as gonum's constructors do on a dimension mismatch: a
// shorter upper would leave the other values 0 unsaid.
func FromUpper(k int, upper []float64) Gamma {
	h := (k + 1) / 2
	if k < 1 || k%2 == 0 || len(upper) != k+1-h {
		panic(fmt.Sprintf("gamma: FromUpper: K = %d with %d values: want K odd, >= 1, and (K+1)/2 values", k, len(upper)))
	}
	g := make(Gamma, k+1)
	for i, v := range upper {
		v = math.Min(math.Max(v, 0), 1)
		g[h+i], g[k-h-i] = v, v
	}
	return g
}

// upper returns gamma(H..K).
func (g Gamma) upper() []float64 { return g[(g.K()+1)/2:] }

// Scale returns c·g.
func (g Gamma) Scale(c float64) Gamma {
	s := make(Gamma, len(g))
	for l, v := range g {
		s[l] = c * v
	}
	return s
}

// Realised returns the noise function that a sampler of 53-bit uniform
// integers realises for g: floor(gamma(l)·2^53)/2^53, exact in float64
// and at most gamma(l). ensemble's samplers release the majority when such
// an integer is below floor(gamma(L)·2^53), so this, not g, is what a
// certificate of a sampled DaRRM must hold for.
func (g Gamma) Realised() Gamma {
	r := make(Gamma, len(g))
	for l, v := range g {
		r[l] = realised(v)
	}
	return r
}

// realised returns floor(p·2^53)/2^53, the probability in [0, 1] that a
// sampler of 53-bit uniforms realises for p.
func realised(p float64) float64 { return math.Floor(p*0x1p53) / 0x1p53 }
