package accountant

import (
	"math"
	"sync"

	"github.com/darrm/darrm/internal/outward"
)

// A step is μ-Gaussian DP (Dong, Roth and Su 2022) when the trade-off
// function of every pair of its output distributions on neighbouring
// inputs, in both orders, is at least G_μ(α) = Φ(Φ⁻¹(1-α) - μ): no test
// tells them apart better than it tells N(0, 1) from N(μ, 1). The
// Gaussian-DP filter (Smith and Thakurta 2022) composes the μ² of such
// steps; this file gives a μ for the steps that are not Gaussian noise
// on real coordinates.
//
// A pair's trade-off function is convex and, for outputs ordered by
// their likelihood ratio, piecewise linear between the vertices of the
// tests that reject above a threshold; G_μ is convex too, so the pair is
// dominated by G_μ exactly when every vertex lies on or above it (on a
// segment the pair's function is the chord of its two vertices, at or
// above G_μ's values there, which are at or above G_μ between them).

// probitBounds returns a lower and an upper bound of Φ⁻¹(y), y in
// (0, 1): the inverse of math.Erfcinv, confirmed by Φ's bounds (erfc
// widened by its error, erfcIval) at points moved outward until they
// bracket y. false when y is not in (0, 1) or no bracket is found.
func probitBounds(y float64) (lo, hi float64, ok bool) {
	if !(y > 0 && y < 1) {
		return 0, 0, false
	}
	x := probit(y)
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, 0, false
	}
	phi := func(x float64) (float64, float64) {
		root2 := outward.Interval{Lo: outward.Down(math.Sqrt2, 1), Hi: outward.Up(math.Sqrt2, 1)}
		l, h := erfcIval(outward.Exact(-x).Div(root2))
		return outward.Down(l/2, 0), outward.Up(h/2, 0)
	}
	eta := 0x1p-50 * math.Max(1, math.Abs(x))
	lo, hi = math.Inf(-1), math.Inf(1)
	for range 40 {
		if math.IsInf(hi, 1) {
			if l, _ := phi(x + eta); l >= y {
				hi = x + eta
			}
		}
		if math.IsInf(lo, -1) {
			if _, h := phi(x - eta); h <= y {
				lo = x - eta
			}
		}
		if !math.IsInf(lo, -1) && !math.IsInf(hi, 1) {
			return lo, hi, true
		}
		eta *= 4
	}
	return 0, 0, false
}

// probit returns Φ⁻¹(y), y in (0, 1), to about machine precision (no
// bound: probitBounds confirms it): math.Erfcinv, which takes 1 - 2y
// and loses the relative precision of a small y, refined by Newton's
// method on log Φ (Φ through erfc, whose relative error holds in the
// tail), from the tail's asymptote where y is small.
func probit(y float64) float64 {
	if y > 0.5 {
		return -probit(1 - y)
	}
	x := -math.Sqrt2 * math.Erfcinv(2*y)
	if y < 1e-8 {
		// Φ(x) ≈ φ(x)/|x|: x² ≈ 2L - log(2πL·2), L = log(1/y).
		l := -outward.Ln(y)
		x = -math.Sqrt(2*l - outward.Ln(4*math.Pi*l))
	}
	for range 8 {
		p := math.Erfc(-x/math.Sqrt2) / 2
		if !(p > 0) {
			break
		}
		d := math.Exp(-x*x/2) / math.Sqrt(2*math.Pi)
		step := (outward.Ln(p) - outward.Ln(y)) * p / d
		x -= step
		if math.Abs(step) <= 1e-16*math.Abs(x) {
			break
		}
	}
	return x
}

// pureMu returns an upper bound of μ_ε = 2Φ⁻¹(e^ε/(1+e^ε)), and
// whether there is one: every ε-DP step is μ_ε-Gaussian DP. Its pair is
// dominated by randomized response with ε (Kairouz, Oh and Viswanath
// 2015, Thm 2.1), whose trade-off function max(0, 1 - e^ε·α,
// e^-ε·(1 - α)) has one vertex, at α = 1/(1+e^ε) on the diagonal, where
// G_μ meets it for μ = -2Φ⁻¹(1/(1+e^ε)).
func pureMu(eps float64) (float64, bool) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, false
	}
	if eps < 1e-5 {
		// Near 1/2 the quantile of a probability within rounding of it
		// loses μ's relative precision. With h = tanh(ε/2)/2 <= ε/4 and
		// x = √(2π)·h·(1 + 4h²): Φ(x) - 1/2 >= x·φ(x) >= h (φ decreases
		// on [0, x], and (1 + 4h²)·e^(-πh²(1+4h²)²) >= 1 for h <= 0.1), so
		// Φ⁻¹(1/2 + h) <= x, and μ_ε <= √(2π)·(ε/2)·(1 + ε²/4).
		return outward.Up(math.Sqrt(2*math.Pi)*(eps/2)*(1+eps*eps/4), 4), true
	}
	// q = 1/(1+e^ε), rounded down: e^ε is within an ulp.
	q := outward.Down(1/outward.AddUp(1, outward.Up(math.Exp(eps), 2)), 1)
	lo, _, ok := probitBounds(q)
	if !ok {
		return 0, false
	}
	return outward.Up(-2*lo, 1), true
}

// dgGDP is the Gaussian-DP certificate of one coordinate of discrete
// Gaussian noise N_Z(0, σ²) moved by 1 between neighbouring inputs
// (dgCertify).
type dgGDP struct {
	// mu is the certified μ of the pair restricted to the window, tail
	// the mass outside it of each of the two distributions (an upper
	// bound); ok is false when no certificate could be made.
	mu, tail float64
	ok       bool
}

// dgWindowSigmas is the half-width of dgCertify's window in units of σ:
// beyond 16σ + 1 each distribution keeps less than 2e^-128 (the discrete
// Gaussian is sub-Gaussian with variance proxy σ², Canonne, Kamath and
// Steinke 2020, Prop. 25).
const dgWindowSigmas = 16

// maxDGCertSigma bounds the σ dgCertify certifies: its window has about
// 16σ vertices to check.
const maxDGCertSigma = 1 << 11

// dgCertify certifies a μ for one coordinate of discrete Gaussian noise
// of parameter sigma, moved by 1 between neighbouring inputs: the pair
// P = N_Z(0, σ²), Q = N_Z(1, σ²) (moved by -1 it is the mirror image, by
// less a post-processing). The discrete Gaussian is not exactly
// μ-Gaussian DP for μ = 1/σ (its trade-off function lies below G_{1/σ}
// near the middle, by about 1/(24σ²) in μ), so the certificate checks
// the pair itself.
//
// On the window W = [-S, S+1], S = ceil(16σ) + 1 (symmetric under
// y -> 1 - y, which exchanges P and Q), the pair restricted and
// renormalised, P' and Q', has a likelihood ratio that grows with y, so
// its trade-off function has the vertices (P'(Y >= t), Q'(Y < t)), and
// lies above G_μ exactly when μ >= Φ⁻¹(A_t) - Φ⁻¹(B_t) for every t, with
// A_t = P'(Y < t) and B_t = Q'(Y < t) = P'(Y < t - 1) up to the edge; by
// the mirror the vertices t and 2 - t give the same condition, so those
// with t <= 1 (A_t <= 1/2 up to the middle's mass) are checked. The
// masses e^(-y²/2σ²) are computed to a relative (2x + 4)·2^-53, x their
// exponent, their prefix sums to a further (2S + 6)·2^-53; each
// difference of quantiles is bounded above by Φ⁻¹ of the upper end of
// A_t's interval less Φ⁻¹ of the lower end of B_t's (probitBounds).
//
// P and Q differ from P' and Q' by at most tail in total variation each:
// the filter that charges μ² also charges that tail (Charge.MuDelta,
// Filter's GDP part).
func dgCertify(sigma float64) dgGDP {
	if !(sigma > 0) || sigma > maxDGCertSigma {
		return dgGDP{}
	}
	s := int(math.Ceil(dgWindowSigmas*sigma)) + 1
	v2 := 2 * sigma * sigma
	// pa[i] = Σ_{y=-S}^{i-S-2} e^(-y²/2σ²), the window's masses below
	// t = i - S - 1 (A_t is pa[t+S+1]), and pb[i] the same from y = -S-1:
	// Q' = Q restricted to W is P moved up by one, so B_t sums P's masses
	// from -S-1 to t-2, pb[t+S]. Both sums over the window are the same
	// (the mirror).
	n := 2*s + 3
	pa, pb := make([]float64, n+1), make([]float64, n+1)
	var xmax float64
	for i := 1; i <= n; i++ {
		y := float64(i - s - 2)
		x := y * y / v2
		xmax = math.Max(xmax, x)
		w := math.Exp(-x)
		pa[i] = pa[i-1]
		if i > 1 {
			pa[i] += w
		}
		pb[i] = pb[i-1] + w
	}
	total := pa[n]
	const u = 0x1p-53
	// Each mass within (2x + 4)u relative (its exponent's two roundings
	// times x, exp's ulp), each sum of nonnegative terms a further
	// (n + 4)u; a quotient of two sums within twice that and a rounding.
	relSum := (2*xmax+4)*u + float64(n+4)*u
	rel := 1.05 * (2*relSum + u)
	mu := 0.0
	for t := -s + 1; t <= 1; t++ {
		a := pa[t+s+1] / total
		b := pb[t+s] / total
		_, qa, okA := probitBounds(math.Min(1, a*(1+rel)+0x1p-1074))
		qb, _, okB := probitBounds(b * (1 - rel))
		if !okA || !okB {
			return dgGDP{}
		}
		mu = math.Max(mu, outward.AddUp(qa, -qb))
	}
	// Each distribution's mass beyond the window: Pr[|Y| >= S+1] <=
	// 2e^(-(S+1)²/2σ²).
	sf := float64(s + 1)
	tail := outward.Up(2*math.Exp(-sf*sf/v2), 4)
	return dgGDP{mu: outward.Up(mu, 4), tail: tail, ok: mu > 0}
}

// dgCertTable is dgCertify's answers a Memo keeps, by σ: a ledger
// charges the same noise run after run.
type dgCertTable struct {
	sync.Mutex
	by map[float64]dgGDP
}

// maxDGCerts bounds the σ whose certificates are kept.
const maxDGCerts = 64

// dgCert returns dgCertify(sigma), made once while m keeps it (every
// time when m is nil).
func (m *Memo) dgCert(sigma float64) dgGDP {
	if m == nil {
		return dgCertify(sigma)
	}
	t := &m.dgCerts
	t.Lock()
	g, ok := t.by[sigma]
	t.Unlock()
	if ok {
		return g
	}
	g = dgCertify(sigma)
	t.Lock()
	defer t.Unlock()
	if t.by == nil || len(t.by) >= maxDGCerts {
		t.by = map[float64]dgGDP{}
	}
	t.by[sigma] = g
	return g
}
