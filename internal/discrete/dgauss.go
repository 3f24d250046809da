package discrete

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"github.com/darrm/darrm/noise"
)

// Exact sampling of the discrete Gaussian N_Z(0, σ²), the distribution on
// the integers with Pr[Z = z] ∝ exp(-z²/(2σ²)) (Canonne, Kamath and
// Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
// Algorithms 1-3). Every step is a comparison of uniform random integers
// with rationals in exact integer arithmetic, so the output has exactly
// that distribution for σ² the float64's exact value: no floating-point
// number is formed, and the low-order-bit attacks on floating-point
// samplers (Mironov 2012) have nothing to read.

// MaxScale is the largest scale of discrete noise the samplers take (the
// σ of Gaussian, the scale of Laplace): draws, up to 2^63
// in magnitude, then reach 9000 times the scale. A vote count is at most
// 999,999,999, so noise of this scale already makes every label a class
// drawn at random; the accountant refuses larger settings of the
// mechanisms that draw it.
const MaxScale = 1e15

// Gaussian samples N_Z(0, σ²) exactly from a noise.Source.
type Gaussian struct {
	s2 *big.Rat // σ²
	t  int64    // floor(σ) + 1, the scale of the discrete Laplace proposal
	// the acceptance exponent (|y| - σ²/t)²/(2σ²) = (|y|·t - σ²)²/(2σ²t²)
	den *big.Rat // 2σ²t²
	// σ² = p/q in lowest terms, when p, q < 2^32: the exponent is then
	// (|y|·t·q - p)²/(2·p·t²·q), in 64-bit integers while they fit.
	p, q uint64
}

// NewGaussian returns the sampler of N_Z(0, σ²), σ > 0 and at most
// MaxScale.
func NewGaussian(sigma float64) (*Gaussian, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) || sigma > MaxScale {
		return nil, fmt.Errorf("discrete Gaussian: sigma = %v: must be a finite number in (0, %g]", sigma, MaxScale)
	}
	s := new(big.Rat).SetFloat64(sigma)
	s2 := new(big.Rat).Mul(s, s)
	fl := new(big.Int).Quo(s2.Num(), s2.Denom())                              // floor(σ²)
	t := new(big.Int).Sqrt(fl).Int64() + 1                                    // floor(σ) = floor(sqrt(floor(σ²)))
	tt := new(big.Rat).SetInt(new(big.Int).Mul(big.NewInt(t), big.NewInt(t))) // t² passes 2^63 near σ = 3e9
	den := new(big.Rat).Mul(new(big.Rat).SetInt64(2), new(big.Rat).Mul(s2, tt))
	g := &Gaussian{s2: s2, t: t, den: den}
	if s2.Num().BitLen() <= 32 && s2.Denom().BitLen() <= 32 {
		g.p, g.q = s2.Num().Uint64(), s2.Denom().Uint64()
	}
	return g, nil
}

// Sample draws one value (CKS 2020, Algorithm 3): a discrete Laplace
// proposal of scale t = floor(σ)+1, accepted with probability
// exp(-(|y| - σ²/t)²/(2σ²)). The loop takes fewer than 4 proposals in
// expectation at every σ: a proposal is accepted with probability
// Σ_y Pr[y]·exp(-(|y| - σ²/t)²/(2σ²)) = tanh(1/(2t))·e^{-σ²/(2t²)}·
// Σ_y e^{-y²/(2σ²)}, and with Σ_y e^{-y²/(2σ²)} >= max(1, σ√(2π)) and
// t-1 <= σ < t that is above 0.28 (0.46·e^{-1/2} at t = 1, above 0.37
// for t >= 2); each proposal and each Bernoulli(exp(-γ)) takes a bounded
// expected number of draws too.
func (g *Gaussian) Sample(src *noise.Source) int64 {
	for {
		y := discreteLaplace(src, g.t)
		if g.p != 0 {
			if num, den, ok := g.exponent(y); ok {
				if bernoulliExpNegU(src, num, den) {
					return y
				}
				continue
			}
		}
		if bernoulliExpNeg(src, g.acceptance(y)) {
			return y
		}
	}
}

// acceptance returns the acceptance exponent of y, (|y|·t - σ²)²/(2σ²t²),
// in exact rational arithmetic: |y|·t reaches 2^63 at σ near 3e9, so it is
// formed in big integers.
func (g *Gaussian) acceptance(y int64) *big.Rat {
	yt := new(big.Int).Mul(big.NewInt(abs64(y)), big.NewInt(g.t))
	a := new(big.Rat).SetInt(yt)
	a.Sub(a, g.s2)
	a.Mul(a, a)
	return a.Quo(a, g.den)
}

// exponent returns the acceptance exponent of y as num/den in 64-bit
// integers, or false when they would overflow.
func (g *Gaussian) exponent(y int64) (num, den uint64, ok bool) {
	t := uint64(g.t)
	hi, ytq := bits.Mul64(uint64(abs64(y)), t)
	if hi != 0 {
		return 0, 0, false
	}
	if hi, ytq = bits.Mul64(ytq, g.q); hi != 0 {
		return 0, 0, false
	}
	d := ytq - g.p
	if ytq < g.p {
		d = g.p - ytq
	}
	if hi, num = bits.Mul64(d, d); hi != 0 {
		return 0, 0, false
	}
	if hi, den = bits.Mul64(2*g.p, t*t); hi != 0 || t > 1<<31 {
		return 0, 0, false
	}
	if hi, den = bits.Mul64(den, g.q); hi != 0 {
		return 0, 0, false
	}
	return num, den, true
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// randBelow returns a uniform integer in [0, n), n > 0, by rejection.
func randBelow(src *noise.Source, n *big.Int) *big.Int {
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
func bernoulliRat(src *noise.Source, p *big.Rat) bool {
	return randBelow(src, p.Denom()).Cmp(p.Num()) < 0
}

var ratOne = big.NewRat(1, 1)

// bernoulliExpNeg returns true with probability exp(-γ), γ >= 0 rational
// (CKS 2020, Algorithm 1): for γ <= 1 the parity of the first K with
// Bernoulli(γ/K) = 0; beyond 1, floor(γ) draws at γ = 1 and one at the
// fractional part.
func bernoulliExpNeg(src *noise.Source, gamma *big.Rat) bool {
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
	for bernoulliQuo(src, gamma.Num(), gamma.Denom(), k) {
		k++
	}
	return k%2 == 1
}

// bernoulliQuo is bernoulliRat(src, num/(den·k)) for num/den in lowest
// terms: the same fraction in lowest terms, so the same draws, reduced by
// gcd(num, den·k) = gcd(num, k) (num and den are coprime), a gcd of
// 64-bit integers where big.Rat's Quo takes one of big ones.
func bernoulliQuo(src *noise.Source, num, den *big.Int, k int64) bool {
	g := gcd64(new(big.Int).Rem(num, big.NewInt(k)).Uint64(), uint64(k)) // k when num = 0 (den = 1)
	n := num
	if g != 1 {
		n = new(big.Int).Quo(num, new(big.Int).SetUint64(g))
	}
	d := new(big.Int).Mul(den, new(big.Int).SetUint64(uint64(k)/g))
	return randBelow(src, d).Cmp(n) < 0
}

// gcd64 returns the greatest common divisor of a and b, not both 0.
func gcd64(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// bernoulliExpNegU is bernoulliExpNeg for γ = num/den in 64-bit
// integers (den > 0), the same algorithm without allocation; it falls back
// to big integers when den·K would overflow.
func bernoulliExpNegU(src *noise.Source, num, den uint64) bool {
	for num > den {
		if !bernoulliExpNegU(src, 1, 1) {
			return false
		}
		num -= den
	}
	for k := uint64(1); ; k++ {
		hi, dk := bits.Mul64(den, k)
		if hi != 0 {
			// Bernoulli(γ/k) for the remaining k, in big integers.
			g := new(big.Rat).SetFrac(new(big.Int).SetUint64(num), new(big.Int).SetUint64(den))
			for ; ; k++ {
				kr := new(big.Rat).SetFrac(new(big.Int).SetUint64(k), big.NewInt(1))
				if !bernoulliRat(src, new(big.Rat).Quo(g, kr)) {
					return k%2 == 1
				}
			}
		}
		if src.Uint64N(dk) >= num {
			return k%2 == 1
		}
	}
}

// discreteLaplace draws from Pr[Y = y] ∝ exp(-|y|/t), t >= 1 an integer
// (CKS 2020, Algorithm 2 with s = 1).
func discreteLaplace(src *noise.Source, t int64) int64 { return laplace64(src, 1, uint64(t)) }

// laplace64 draws from Pr[Y = y] ∝ exp(-|y|·s/t), s and t >= 1 integers
// (CKS 2020, Algorithm 2): U uniform in [0, t) kept with probability
// exp(-U/t), plus t times a geometric count of Bernoulli(exp(-1))
// successes, divided by s, with a random sign (a negative zero drawn
// again), in 64-bit integers. A y beyond int64 (probability below
// e^-(2^63·s/t)) is drawn again too.
func laplace64(src *noise.Source, s, t uint64) int64 {
	for {
		u := src.Uint64N(t)
		if !bernoulliExpNegU(src, u, t) {
			continue
		}
		var v uint64
		for bernoulliExpNegU(src, 1, 1) {
			v++
		}
		// x = u + t·v, then floor(x/s), in 128 bits.
		hi, lo := bits.Mul64(v, t)
		lo, c := bits.Add64(lo, u, 0)
		hi += c
		if hi >= s {
			continue
		}
		q, _ := bits.Div64(hi, lo, s)
		if q > math.MaxInt64 {
			continue
		}
		if y, ok := randomSign(src, int64(q)); ok {
			return y
		}
	}
}

// randomSign gives the magnitude y >= 0 a uniform sign, and reports false
// for -0: rejecting it leaves 0 with the probability the two-sided
// geometric law gives it, instead of twice that.
func randomSign(src *noise.Source, y int64) (int64, bool) {
	if src.Uint64()&1 == 0 {
		return y, true
	}
	return -y, y != 0
}

// LatticeGaussian draws k·h for the integer k with Pr[k] ∝
// exp(-(k·h - center)²/(2·dev²)), exactly: the discrete Gaussian on the
// lattice hZ centred at center, a real number, for the exact values of
// the float64s center, dev and h (> 0). With μ = center/h = m + r (m an
// integer, 0 <= r < 1) and σ = dev/h, y = k - m is drawn from the discrete
// Laplace proposal of scale t = floor(σ) + 1 and kept with probability
// exp(-(y - r - σ²/t)²/(2σ²)) for y >= 0 and exp(-(y - r + σ²/t)²/(2σ²) -
// 2r/t) for y < 0: the target's ratio to the proposal, exp(-(y - r)²/(2σ²)
// + |y|/t), divided by its largest value exp(r/t + σ²/(2t²)). This is CKS
// 2020's Algorithm 3 with its centre moved off the integers; the result
// k·h is returned as the nearest float64, a function of the draw alone.
// It is darrm's GNSS noise (on the lattice package pate fixes). σ must be below
// 2^62.
func LatticeGaussian(src *noise.Source, center, dev, h float64) (float64, error) {
	for _, v := range []float64{center, dev, h} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("lattice Gaussian: center %v, deviation %v, spacing %v: must be finite", center, dev, h)
		}
	}
	if !(dev > 0) || !(h > 0) {
		return 0, fmt.Errorf("lattice Gaussian: deviation %v, spacing %v: must be > 0", dev, h)
	}
	hr := new(big.Rat).SetFloat64(h)
	mu := new(big.Rat).Quo(new(big.Rat).SetFloat64(center), hr)
	sigma := new(big.Rat).Quo(new(big.Rat).SetFloat64(dev), hr)
	if sigma.Cmp(new(big.Rat).SetInt64(1<<62)) >= 0 {
		return 0, fmt.Errorf("lattice Gaussian: deviation %v is 2^62 or more lattice steps of %v", dev, h)
	}
	m := floorRat(mu)
	r := new(big.Rat).Sub(mu, new(big.Rat).SetInt(m))
	s2 := new(big.Rat).Mul(sigma, sigma)
	t := floorRat(sigma).Int64() + 1
	tr := new(big.Rat).SetInt64(t)
	shift := new(big.Rat).Quo(s2, tr)                                  // σ²/t
	neg := new(big.Rat).Quo(new(big.Rat).Mul(big.NewRat(2, 1), r), tr) // 2r/t
	// The exponent a over common denominators, reduced once a draw (as
	// big.Rat, its lowest terms, the value bernoulliExpNeg draws by):
	// with r = rn/rd and σ²/t = sn/sd, y - r ∓ σ²/t = (y·ad - c∓)/ad for
	// ad = rd·sd and c∓ = rn·sd ± sn·rd, so that
	// a = (y·ad - c∓)²·s2d/base for base = ad²·2·s2n (σ² = s2n/s2d), plus,
	// for y < 0, 2r/t = nn/nd over base·nd.
	ad := new(big.Int).Mul(r.Denom(), shift.Denom())
	rnsd := new(big.Int).Mul(r.Num(), shift.Denom())
	snrd := new(big.Int).Mul(shift.Num(), r.Denom())
	cPos, cNeg := new(big.Int).Add(rnsd, snrd), new(big.Int).Sub(rnsd, snrd)
	base := new(big.Int).Mul(ad, ad)
	base.Mul(base, new(big.Int).Lsh(s2.Num(), 1))
	baseNeg := new(big.Int).Mul(base, neg.Denom())
	negNum := new(big.Int).Mul(neg.Num(), base) // 2r/t over base·nd
	var num, yb big.Int
	a := new(big.Rat)
	for {
		y := discreteLaplace(src, t)
		num.Mul(yb.SetInt64(y), ad)
		if y >= 0 {
			num.Sub(&num, cPos)
		} else {
			num.Sub(&num, cNeg)
		}
		num.Mul(&num, &num)
		num.Mul(&num, s2.Denom())
		if y >= 0 {
			a.SetFrac(&num, base)
		} else {
			num.Mul(&num, neg.Denom())
			num.Add(&num, negNum)
			a.SetFrac(&num, baseNeg)
		}
		if bernoulliExpNeg(src, a) {
			k := new(big.Rat).SetInt(new(big.Int).Add(m, big.NewInt(y)))
			f, _ := k.Mul(k, hr).Float64()
			return f, nil
		}
	}
}

// floorRat returns the largest integer <= x.
func floorRat(x *big.Rat) *big.Int {
	q, rem := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if rem.Sign() < 0 {
		q.Sub(q, big.NewInt(1))
	}
	return q
}

// Laplace samples Pr[Y = y] ∝ exp(-|y|/b) on the integers exactly
// (CKS 2020, Algorithm 2), for b the exact value of a float64: with b =
// t/s in lowest terms, U uniform in [0, t) kept with probability
// exp(-U/t), plus t times a geometric count of Bernoulli(exp(-1))
// successes, divided by s and given a random sign (a negative zero
// rejected). Every step compares uniform integers with rationals.
type Laplace struct {
	s, t *big.Int
	// s and t when both are below 2^62: the 64-bit path.
	s64, t64 uint64
}

// NewLaplace returns the sampler of scale b, > 0 and at most
// MaxScale.
func NewLaplace(b float64) (*Laplace, error) {
	if !(b > 0) || math.IsInf(b, 0) || b > MaxScale {
		return nil, fmt.Errorf("discrete Laplace: scale = %v: must be a finite number in (0, %g]", b, MaxScale)
	}
	r := new(big.Rat).SetFloat64(b)
	l := &Laplace{s: new(big.Int).Set(r.Denom()), t: new(big.Int).Set(r.Num())}
	if l.s.BitLen() <= 62 && l.t.BitLen() <= 62 {
		l.s64, l.t64 = l.s.Uint64(), l.t.Uint64()
	}
	return l, nil
}

// Sample draws one value: with 64-bit integers when s and t fit (every
// scale >= 2^-9), with big integers otherwise.
func (l *Laplace) Sample(src *noise.Source) int64 {
	if l.t64 != 0 {
		return laplace64(src, l.s64, l.t64)
	}
	one := big.NewInt(1)
	for {
		u := randBelow(src, l.t)
		if !bernoulliExpNeg(src, new(big.Rat).SetFrac(u, l.t)) {
			continue
		}
		v := new(big.Int)
		for bernoulliExpNeg(src, ratOne) {
			v.Add(v, one)
		}
		x := v.Mul(v, l.t)
		x.Add(x, u)
		if x.Quo(x, l.s); !x.IsInt64() {
			continue // beyond int64, drawn again as laplace64 does
		}
		if y, ok := randomSign(src, x.Int64()); ok {
			return y
		}
	}
}
