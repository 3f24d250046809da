package accountant

import (
	"errors"
	"math"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/roots"
)

// pointFor returns the point of s's privacy profile of least cost, as
// a charge states it and at least as a charge must (least): its
// guarantee, or its pure point (a one-bit release's largest loss,
// Spend.pureEps, margined as stated). Ties keep the guarantee.
func pointFor(m *Memo, s Spend, cost func(Guarantee) float64) (stated, least Guarantee) {
	g := s.Guarantee
	if eps, ok := s.pureEps(m); ok {
		if p := (Guarantee{Eps: margined(eps)}); cost(p) < cost(g) {
			return p, Guarantee{Eps: eps}
		}
	}
	return g, g
}

// mostStepsPoint returns the point of a one-bit release's privacy
// profile at which a part holds the most steps of s, as a charge states
// it and at least as a charge must (least), or g, gl (pointFor's), when
// g holds as many: for each k the point (ε_k, δ(ε_k)), δ margined as
// stated, ε_k = epsFor(k) the largest ε at which k steps meet the part's
// condition on ε, holds k steps when holds(k, point) (both its
// conditions, summed as Filter.Total sums them), and the largest such k
// is found by search (δ(ε_k) grows with k); least is (ε_k, δ(ε_k)), the
// point a charge stated before charges carried a margin. The simple
// part's ε_k is the same on every build; the advanced part's (its
// condition takes a logarithm) may not be, and a line whose ε_k is
// below the reader's is refused. It depends on the step's description
// and the budget alone, so it is chosen before the step runs, as the
// simple and advanced filters allow; g is returned for every other step.
func mostStepsPoint(m *Memo, s Spend, g, gl Guarantee, epsFor func(k int) float64, holds func(k int, p Guarantee) bool) (stated, least Guarantee) {
	if s.Kind != OneBitSpend || len(s.Bits) == 0 {
		return g, gl
	}
	pairs := m.curvesOf(s.Bits).dominating
	at := func(k int) (Guarantee, bool) {
		e := epsFor(k)
		p := Guarantee{Eps: e, Delta: margined(bitProfile(pairs, e))}
		return p, e > 0 && holds(k, p)
	}
	k, err := roots.Last(0, CountLimit, func(k int) (bool, error) {
		if k == 0 {
			return true, nil
		}
		_, ok := at(k)
		return ok, nil
	})
	if errors.Is(err, roots.ErrLimitFits) {
		k = CountLimit
	} else if err != nil || k == 0 {
		return g, gl
	}
	if holds(k, g) {
		return g, gl
	}
	p, _ := at(k)
	return p, Guarantee{Eps: p.Eps, Delta: bitProfile(pairs, p.Eps)}
}

// largestBelow returns e, or the first value below it, stepping down an
// ulp at a time and then by doubling steps, at which ok holds (0 when
// none above 0 does): an estimate e of the largest ε that a rounded
// condition allows, made to meet it.
func largestBelow(e float64, ok func(float64) bool) float64 {
	for i := 0; e > 0 && !ok(e); i++ {
		if i < 8 {
			e = math.Nextafter(e, 0)
		} else {
			e = outward.Down(e, math.Ldexp(1, i-8))
		}
	}
	return math.Max(e, 0)
}

// bitProfile returns an upper bound of the privacy profile at eps of one
// step of the one-bit release whose dominating pairs (each larger first)
// are pairs: the largest hockey-stick divergence H_α, α = e^eps, of its
// pairs in either order, max(0, P - αQ, (1-Q) - α(1-P)) (oneBitLoss).
func bitProfile(pairs []BitPair, eps float64) float64 {
	alpha := outward.Exp(outward.Exact(eps)).Lo
	// line returns a - α·b, rounded up; 0 when α·b is infinite.
	line := func(a, b float64) float64 {
		if b == 0 {
			return a
		}
		ab := outward.MulDown(alpha, b)
		if math.IsInf(ab, 1) {
			return 0
		}
		return outward.AddUp(a, -ab)
	}
	var d float64
	for _, p := range pairs {
		d = math.Max(d, line(p.P, p.Q))
		d = math.Max(d, line(outward.AddUp(1, -p.Q), outward.AddDown(1, -p.P)))
	}
	return d
}

// stepRho returns the least zCDP slope that s proves, rounded up, and
// whether it has one: its own (Spend.Rho: Gaussian noise, a pure
// guarantee), the pure point's ε²/2 (Bun and Steinke 2016, Prop. 1.4),
// and for discrete Laplace noise its coordinates' Coords·(1/b)²/2, each
// coordinate randomized response with ε = 1/b (laplaceRun), zCDP
// composing by adding.
func stepRho(m *Memo, s Spend) (float64, bool) {
	best, ok := s.rho()
	take := func(r float64) {
		if !ok || r < best {
			best, ok = r, true
		}
	}
	if eps, pure := s.pureEps(m); pure {
		take(upPositive(eps*eps/2, 2))
	}
	if s.Kind == LaplaceSpend {
		e := s.Laplace.coordEps()
		take(outward.MulUp(float64(s.Laplace.Coords), upPositive(e*e/2, 2)))
	}
	return best, ok
}

// stepMu2 returns the least μ² of Gaussian DP that s proves, rounded
// up, with the total-variation distance set aside for it, and whether
// it has one: Gaussian noise (of a GaussianSpend, or the noise a one-bit
// release is computed from) Σ Coords·μ_σ², μ_σ = 1/σ for continuous
// noise (a coordinate moved by at most 1 is N(0, σ²) against N(1, σ²),
// and Gaussian DP composes by adding μ², Dong, Roth and Su 2022, Cor.
// 3.3) and the certified μ of dgCertify for discrete noise, with its
// window's tail per coordinate; discrete Laplace noise Coords·μ_{1/b}²
// (each coordinate randomized response with ε = 1/b, pureMu); a pure
// step or a one-bit release's pure point μ_ε² (pureMu).
func stepMu2(memo *Memo, s Spend) (mu2, tail float64, ok bool) {
	take := func(m, t float64) {
		if !ok || m < mu2 {
			mu2, tail, ok = m, t, true
		}
	}
	if len(s.Gaussian) > 0 {
		var m, t float64
		held := true
		for _, p := range s.Gaussian {
			c := float64(p.Coords)
			if !s.Discrete {
				r := 1 / p.Sigma
				m = outward.AddUp(m, upPositive(c*r*r, 4))
				continue
			}
			g := memo.dgCert(p.Sigma)
			if !g.ok {
				held = false
				break
			}
			m = outward.AddUp(m, outward.MulUp(c, outward.MulUp(g.mu, g.mu)))
			t = outward.AddUp(t, outward.MulUp(c, g.tail))
		}
		if held {
			take(m, t)
		}
	}
	if s.Kind == LaplaceSpend {
		if m, good := pureMu(s.Laplace.coordEps()); good {
			take(outward.MulUp(float64(s.Laplace.Coords), outward.MulUp(m, m)), 0)
		}
	}
	eps, pure := s.pureEps(memo)
	if s.pure() {
		eps, pure = s.Eps, true
	}
	if pure {
		if m, good := pureMu(eps); good {
			take(outward.MulUp(m, m), 0)
		}
	}
	return mu2, tail, ok
}

// stepRenyi returns the least Rényi divergence at order alpha that s
// proves, rounded up, and whether it has one: its own curve
// (Spend.RDP: zCDP steps, the sampled Gaussian at integer orders),
// randomized response's exactly for a pure step or point and for each
// coordinate of discrete Laplace noise (rrRenyi), and a one-bit
// release's dominating pair's when none of its losses is infinite
// (bitRenyi).
func stepRenyi(m *Memo, s Spend, alpha float64) (float64, bool) {
	best, ok := s.rdp(m, alpha)
	take := func(r float64, good bool) {
		if good && (!ok || r < best) {
			best, ok = r, true
		}
	}
	if s.pure() {
		take(rrRenyi(s.Eps, alpha))
	}
	if eps, pure := s.pureEps(m); pure {
		take(rrRenyi(eps, alpha))
	}
	if s.Kind == LaplaceSpend {
		if r, good := rrRenyi(s.Laplace.coordEps(), alpha); good {
			take(outward.MulUp(float64(s.Laplace.Coords), r), true)
		}
	}
	if s.Kind == OneBitSpend && len(s.Bits) > 0 {
		take(bitRenyi(m.curvesOf(s.Bits).loss, alpha))
	}
	return best, ok
}

// rrRenyi returns an upper bound of the Rényi divergence at order alpha
// of randomized response with ε, which bounds every ε-DP step's (its
// pair is a post-processing of randomized response's, Kairouz, Oh and
// Viswanath 2015, Thm 2.1; the divergence is symmetric):
// D_α = log(cosh((α - 1/2)ε) / cosh(ε/2)) / (α - 1).
func rrRenyi(eps, alpha float64) (float64, bool) {
	if !(eps > 0) || math.IsInf(eps, 0) || !(alpha > 1) || math.IsInf(alpha, 0) {
		return 0, false
	}
	// log cosh x = x + log1p(e^-2x) - log 2, without overflow; for small
	// x, log1p(2·sinh²(x/2)), without cancellation.
	logCosh := func(x float64) float64 {
		if x > 1 {
			return x + math.Log1p(math.Exp(-2*x)) - math.Ln2
		}
		h := math.Sinh(x / 2)
		return math.Log1p(2 * h * h)
	}
	a, b := logCosh((alpha-0.5)*eps), logCosh(eps/2)
	d := (a - b) / (alpha - 1)
	if !(d >= 0) || math.IsInf(d, 0) {
		return 0, false
	}
	// Each log cosh within a few ulps of itself, the difference of two
	// such (a > b) within 16 ulps of a, and the quotient an ulp: raised by
	// a relative 2^-40 of a over the difference, the cancellation's worst.
	return outward.Up(d+(math.Abs(a)+math.Abs(b))*0x1p-40/(alpha-1), 4) + math.SmallestNonzeroFloat64, true
}

// bitRenyi returns an upper bound of the Rényi divergence at order
// alpha of a one-bit release's dominating pair (oneBitLoss), and whether
// it is finite (no infinite loss): D_α = log E_P[e^((α-1)L)] / (α - 1),
// the sum over its atoms of mass·e^((α-1)·loss), with each mass and loss
// an upper bound. The pair's hockey-stick curve is symmetric, so it is
// its own reverse and the divergence holds in both orders.
func bitRenyi(b bitLoss, alpha float64) (float64, bool) {
	if b.inf > 0 || len(b.atoms) == 0 || !(alpha > 1) || math.IsInf(alpha, 0) {
		return 0, false
	}
	t := alpha - 1
	// log Σ m_j e^(t·ℓ_j), the largest exponent taken out.
	top := math.Inf(-1)
	for _, a := range b.atoms {
		top = math.Max(top, t*a.hi+outward.Ln(a.mass))
	}
	var sum float64
	for _, a := range b.atoms {
		sum += math.Exp(t*a.hi + outward.Ln(a.mass) - top)
	}
	n := float64(len(b.atoms))
	d := (top + outward.Ln(sum)) / t
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return 0, false
	}
	// Each exponent within a few ulps of its magnitude, each exp and log
	// an ulp, the sum n roundings: a relative (n + 8)·2^-52 of the sum and
	// an absolute 8 ulps of the largest exponent's size.
	slack := ((n+8)*0x1p-52 + 8*0x1p-52*(math.Abs(top)+t*maxAtomLoss(b))) / t
	return math.Max(0, outward.Up(d, 4)+slack), true
}

// maxAtomLoss returns the largest |loss| among b's atoms.
func maxAtomLoss(b bitLoss) float64 {
	var m float64
	for _, a := range b.atoms {
		m = math.Max(m, math.Max(math.Abs(a.lo), math.Abs(a.hi)))
	}
	return m
}

// advancedBudget returns V, the largest Σε_i² whose advanced-composition
// bound √(2·log(1/δ')·V) + V/2 is at most eps, rounded down: with
// L = log(1/δ'), √V = √(2L + 2ε) - √(2L) = 2ε/(√(2L + 2ε) + √(2L)).
func advancedBudget(eps, slack float64) float64 {
	l := -outward.Ln(slack)
	r := 2 * eps / (math.Sqrt(2*l+2*eps) + math.Sqrt(2*l))
	return outward.Down(r*r, 16)
}

// advancedEps returns the advanced-composition bound of Σε_i² sq with
// slack δ', rounded up: √(2·log(1/δ')·sq) + sq/2.
func advancedEps(sq, slack float64) float64 {
	l := outward.Up(-outward.Ln(slack), 2)
	return outward.AddUp(outward.Up(math.Sqrt(outward.MulUp(2*l, sq)), 2), sq/2)
}

// gdpBounds returns a GDPFilter part's δ for μ and its δ_T for the
// tails (Filter's doc): δ_f(1 - 2^-20) and 2^-20·δ_f/(1 + e^ε), each
// rounded down.
func gdpBounds(p FilterPart, eps float64) (muDelta, tails float64) {
	r := p.Delta * gdpReserve
	return outward.Down(p.Delta-r, 1), outward.Down(r/outward.AddUp(1, outward.Up(math.Exp(eps), 2)), 2)
}

// gdpEps returns the least ε at which μ-Gaussian DP, μ² <= mu2, is
// (ε, delta)-DP, to a relative 1e-9 and rounded up (gdpDelta decreases
// in ε); 0 for μ = 0.
func gdpEps(mu2, delta float64) float64 {
	if mu2 == 0 {
		return 0
	}
	ok := func(eps float64) bool { return gdpDelta(eps, mu2) <= delta }
	hi := 1.0
	for !ok(hi) {
		if hi > 1e300 {
			return math.Inf(1)
		}
		hi *= 2
	}
	return roots.Edge(0, hi, 1e-9, ok)
}
