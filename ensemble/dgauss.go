package ensemble

import (
	"fmt"
	"math"
	"math/big"
)

// Exact sampling of the discrete Gaussian N_Z(0, σ²), the distribution on
// the integers with Pr[Z = z] ∝ exp(-z²/(2σ²)) (Canonne, Kamath and
// Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
// Algorithms 1-3). Every step is a comparison of uniform random integers
// with rationals in exact integer arithmetic, so the output has exactly
// that distribution for σ² the float64's exact value: no floating-point
// number is formed, and the low-order-bit attacks on floating-point
// samplers (Mironov 2012) have nothing to read.

// DiscreteGaussian samples N_Z(0, σ²) exactly from a Source.
type DiscreteGaussian struct {
	s2 *big.Rat // σ²
	t  int64    // floor(σ) + 1, the scale of the discrete Laplace proposal
	// the acceptance exponent (|y| - σ²/t)²/(2σ²) = (|y|·t - σ²)²/(2σ²t²)
	den *big.Rat // 2σ²t²
}

// NewDiscreteGaussian returns the sampler of N_Z(0, σ²), σ finite and > 0.
func NewDiscreteGaussian(sigma float64) (*DiscreteGaussian, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) || sigma > 1e15 {
		return nil, fmt.Errorf("discrete Gaussian: sigma = %v: must be a finite number in (0, 1e15]", sigma)
	}
	s := new(big.Rat).SetFloat64(sigma)
	s2 := new(big.Rat).Mul(s, s)
	fl := new(big.Int).Quo(s2.Num(), s2.Denom()) // floor(σ²)
	t := new(big.Int).Sqrt(fl).Int64() + 1       // floor(σ) = floor(sqrt(floor(σ²)))
	tt := new(big.Rat).SetInt64(t * t)
	den := new(big.Rat).Mul(new(big.Rat).SetInt64(2), new(big.Rat).Mul(s2, tt))
	return &DiscreteGaussian{s2: s2, t: t, den: den}, nil
}

// Sample draws one value (CKS 2020, Algorithm 3): a discrete Laplace
// proposal of scale t = floor(σ)+1, accepted with probability
// exp(-(|y| - σ²/t)²/(2σ²)).
func (g *DiscreteGaussian) Sample(src *Source) int64 {
	for {
		y := discreteLaplace(src, g.t)
		a := new(big.Rat).SetInt64(abs64(y) * g.t)
		a.Sub(a, g.s2)
		a.Mul(a, a)
		a.Quo(a, g.den)
		if bernoulliExpNeg(src, a) {
			return y
		}
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// randBelow returns a uniform integer in [0, n), n > 0, by rejection.
func randBelow(src *Source, n *big.Int) *big.Int {
	if n.IsUint64() {
		u := n.Uint64()
		if u <= math.MaxInt {
			return new(big.Int).SetUint64(uint64(src.IntN(int(u))))
		}
	}
	bits := n.BitLen()
	words := (bits + 63) / 64
	buf := make([]big.Word, words)
	for {
		for i := range buf {
			buf[i] = big.Word(src.Uint64())
		}
		if extra := words*64 - bits; extra > 0 {
			buf[words-1] &= big.Word(^uint64(0) >> extra)
		}
		x := new(big.Int).SetBits(buf)
		if x.Cmp(n) < 0 {
			return x
		}
		buf = make([]big.Word, words)
	}
}

// bernoulliRat returns true with probability p = num/den in [0, 1].
func bernoulliRat(src *Source, p *big.Rat) bool {
	return randBelow(src, p.Denom()).Cmp(p.Num()) < 0
}

var ratOne = big.NewRat(1, 1)

// bernoulliExpNeg returns true with probability exp(-γ), γ >= 0 rational
// (CKS 2020, Algorithm 1): for γ <= 1 the parity of the first K with
// Bernoulli(γ/K) = 0; beyond 1, floor(γ) draws at γ = 1 and one at the
// fractional part.
func bernoulliExpNeg(src *Source, gamma *big.Rat) bool {
	if gamma.Cmp(ratOne) > 0 {
		whole := new(big.Int).Quo(gamma.Num(), gamma.Denom())
		for i := new(big.Int); i.Cmp(whole) < 0; i.Add(i, big.NewInt(1)) {
			if !bernoulliExpNeg(src, ratOne) {
				return false
			}
		}
		return bernoulliExpNeg(src, new(big.Rat).Sub(gamma, new(big.Rat).SetInt(whole)))
	}
	k := int64(1)
	for {
		if !bernoulliRat(src, new(big.Rat).Quo(gamma, new(big.Rat).SetInt64(k))) {
			break
		}
		k++
	}
	return k%2 == 1
}

// discreteLaplace draws from Pr[Y = y] ∝ exp(-|y|/t), t >= 1 an integer
// (CKS 2020, Algorithm 2 with s = 1).
func discreteLaplace(src *Source, t int64) int64 {
	for {
		u := int64(src.IntN(int(t)))
		if !bernoulliExpNeg(src, big.NewRat(u, t)) {
			continue
		}
		var v int64
		for bernoulliExpNeg(src, ratOne) {
			v++
		}
		x := u + t*v
		neg := src.Uint64()&1 == 1
		if neg && x == 0 {
			continue
		}
		if neg {
			return -x
		}
		return x
	}
}

// latticeScale is 2^20: StandardNormalLattice draws on the lattice
// 2^-20·Z.
const latticeScale = 1 << 20

var standardLattice, _ = NewDiscreteGaussian(latticeScale)

// StandardNormalLattice returns Z/2^20 with Z ~ N_Z(0, 2^40), exactly: a
// discrete Gaussian of deviation about 1 on the lattice of spacing 2^-20,
// for noise on a released real number (darrm account pate's eps_released).
// Only the lattice point is drawn; a caller that scales it and adds it to
// a float rounds the sum to float64.
func StandardNormalLattice(src *Source) (float64, error) {
	return float64(standardLattice.Sample(src)) / latticeScale, nil
}
