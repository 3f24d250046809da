package accountant

import (
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/darrm/darrm/internal/outward"
	"gonum.org/v1/gonum/dsp/fourier"
)

// erfcIval returns a lower and an upper bound of erfc over the interval
// x: erfc decreases, and each value is widened by math.Erfc's error (as
// erfcBounds does).
func erfcIval(x outward.Interval) (lo, hi float64) {
	lo = outward.Down(math.Erfc(x.Hi), outward.ErfcULPs)
	hi = outward.Up(math.Erfc(x.Lo), outward.ErfcULPs) + 0x1p-1022
	return math.Max(lo, 0), math.Min(hi, 2)
}

// gdpDelta returns an upper bound of the privacy profile at eps of
// N(0, 1) against N(μ, 1), μ² at most mu2:
// δ(ε) = Φ(μ/2 - ε/μ) - e^ε·Φ(-μ/2 - ε/μ) (Balle and Wang 2018, Thm 8;
// Dong, Roth and Su 2022, Cor. 2.13). It grows with μ, so an upper bound
// of μ² gives an upper bound of δ. Composition adds μ² (Dong, Roth and
// Su, Cor. 3.3): this is the exact composition of continuous Gaussians.
func gdpDelta(eps, mu2 float64) float64 {
	mu := outward.Sqrt(outward.Exact(mu2))
	e := outward.Exact(eps)
	half := outward.Interval{Lo: mu.Lo / 2, Hi: mu.Hi / 2}
	root2 := outward.Interval{Lo: outward.Down(math.Sqrt2, 1), Hi: outward.Up(math.Sqrt2, 1)}
	// Φ(x) = erfc(-x/√2)/2.
	_, a := erfcIval(e.Div(mu).Sub(half).Div(root2))
	b, _ := erfcIval(e.Div(mu).Add(half).Div(root2))
	// A lower bound of e^ε·Φ(-μ/2 - ε/μ): beyond e^709 (ε of a budget no
	// one publishes, but one a user may type) in log space, where e^ε
	// overflows and Inf·Φ would be no bound; 0 when Φ's bound is 0.
	var term float64
	if ee := outward.Exp(e); !math.IsInf(ee.Lo, 1) {
		term = outward.MulDown(ee.Lo, b/2)
	} else if b > 0 {
		term = outward.Down(math.Exp(outward.AddDown(e.Lo, outward.Down(outward.Ln(b/2), 2))), 2)
	}
	d := outward.AddUp(a/2, -term)
	return math.Min(math.Max(d, 0), 1)
}

// dgSum is the distribution of the sum S of N independent discrete
// Gaussians N_Z(0, σ²): P[i] = Pr[S = i - W], with err bounding the
// total absolute error of P (truncation, aliasing and the transform's
// rounding, and the mass the rounding made negative, cut to 0) and rel
// the relative error of each entry beyond it (the closed form's
// rounding): a relative bound keeps its meaning in the tails, where a
// total δ of 10^-12 is decided.
type dgSum struct {
	sigma float64
	n     int
	w     int
	p     []float64
	err   float64
	rel   float64
	// prefix holds the prefix sums of discreteGaussianDelta, which do
	// not depend on ε: made on first use.
	prefix  dgPrefix
	prefixO sync.Once
	// deltas remembers discreteGaussianDelta's answers of the sums whose
	// first is this one: a count's search and the totals at the count
	// found, a plan's search and its check, bisect ε at the same points
	// of the same sums (half the sums a plan's tests made were repeats).
	mu     sync.Mutex
	deltas map[dgQuery]float64
	// inverse remembers, as deltas does, the least ε at a total δ that
	// the exact composition of the same sums gives (dgEpsAt): a release's
	// count, its total and its analysis totals, a plan's count, its
	// ledger's and its check, each ask for it at the same δ of the same
	// count (a plan asks four times), and each search evaluates the
	// estimate some thirty times, which deltas does not keep.
	inverse map[dgEpsQuery]bitAnswer
	// blocks holds, for dgDelta's estimate of this sum first, each
	// dgAnchor entries' sums of P[i] and of P[i]·e^(d/σ²), d = i mod
	// dgAnchor: made on first use.
	blocks  dgBlocks
	blocksO sync.Once
}

// dgBlocks are a dgSum's sums by blocks of dgAnchor entries.
type dgBlocks struct {
	p, q []float64
}

// blockSums returns d's dgBlocks.
func (d *dgSum) blockSums() dgBlocks {
	d.blocksO.Do(func() {
		v := d.sigma * d.sigma
		var up [dgAnchor]float64
		for i := range up {
			up[i] = math.Exp(float64(i) / v)
		}
		n := len(d.p) / dgAnchor
		b := dgBlocks{p: make([]float64, n), q: make([]float64, n)}
		for i, p := range d.p[:n*dgAnchor] {
			b.p[i/dgAnchor] += p
			b.q[i/dgAnchor] += p * up[i%dgAnchor]
		}
		d.blocks = b
	})
	return d.blocks
}

// dgQuery is a question to discreteGaussianDelta of the sums whose first
// is kept: the second's σ and count (n -1: none), and ε, by their bits
// (a sum is newDGSum's of its σ and count, whichever copy).
type dgQuery struct {
	sigma, eps uint64
	n          int
}

// dgEpsQuery is a question to dgEpsAt of the sums whose first is kept:
// the second's σ and count (n -1: none), the total δ and the ε the
// search starts from, by their bits.
type dgEpsQuery struct {
	sigma, delta, hi uint64
	n                int
}

// maxDGAnswers bounds the answers a sum remembers: beyond it they are
// forgotten.
const maxDGAnswers = 1 << 12

// dgPrefix is F[i] = Σ_{j<i} P[j] and G[i] = Σ_{j<i} P[j]·e^(s_j/σ² - m)
// of a dgSum, s_j = j - W, scaled by m = W/σ², the largest exponent.
type dgPrefix struct {
	F, G []float64
	m    float64
}

// prefixes returns d's dgPrefix.
func (d *dgSum) prefixes() dgPrefix {
	d.prefixO.Do(func() {
		v := d.sigma * d.sigma
		m := float64(d.w) / v
		F := make([]float64, len(d.p)+1)
		G := make([]float64, len(d.p)+1)
		for j, p := range d.p {
			F[j+1] = F[j] + p
			G[j+1] = G[j] + p*math.Exp(float64(j-d.w)/v-m)
		}
		d.prefix = dgPrefix{F: F, G: G, m: m}
	})
	return d.prefix
}

// maxDGPoints bounds the points of the sums of discrete Gaussians a
// Memo keeps (the most recent is kept whatever its size): a count's
// search, the release's total at the count found and its totals ask
// for the same sums.
const maxDGPoints = 1 << 22

// recentDGSums is the sums of discrete Gaussians a Memo keeps, the last
// made, most recent first.
type recentDGSums struct {
	sync.Mutex
	recent []*dgSum
}

// dgSum returns newDGSum(sigma, n), made once while it is among the sums
// m last asked for (every time when m is nil). The sum is made outside
// the lock: goroutines that compose at other σ or counts do not wait for
// it.
func (m *Memo) dgSum(sigma float64, n int) (*dgSum, error) {
	if m == nil {
		return newDGSum(sigma, n)
	}
	if d := m.dgSums.find(sigma, n); d != nil {
		return d, nil
	}
	d, err := newDGSum(sigma, n)
	if err != nil {
		return nil, err
	}
	m.dgSums.Lock()
	defer m.dgSums.Unlock()
	recent := append([]*dgSum{d}, m.dgSums.recent...)
	held := 0
	for i, r := range recent {
		held += len(r.p)
		if i > 0 && held > maxDGPoints {
			recent = recent[:i]
			break
		}
	}
	m.dgSums.recent = recent
	return d, nil
}

// find returns the kept sum of n discrete Gaussians of parameter sigma,
// moved to the front, or nil.
func (s *recentDGSums) find(sigma float64, n int) *dgSum {
	s.Lock()
	defer s.Unlock()
	recent := s.recent
	for i, d := range recent {
		if d.sigma == sigma && d.n == n {
			copy(recent[1:i+1], recent[:i])
			recent[0] = d
			return d
		}
	}
	return nil
}

// dgTails bounds the discrete Gaussian's tails: |Z| > 12σ + 1 has mass
// below 2e^-72 of the total (Canonne, Kamath and Steinke 2020, Prop. 25:
// it is sub-Gaussian with variance proxy σ²), and so does a sum of n
// beyond 12σ√n.
const dgTails = 12

// maxDGWindow bounds the half-width of the window of a sum of discrete
// Gaussians (newDGSum).
const maxDGWindow = 1 << 21

// newDGSum returns the distribution of the sum of n discrete Gaussians
// of parameter sigma on a window of ±(12σ√n + 12σ + 1), which holds all
// but 2e^-72 of S: in closed form from σ = dgClosedSigma on
// (closedDGSum), else by a transform (fftDGSum).
func newDGSum(sigma float64, n int) (*dgSum, error) {
	// The window is sized in float64 first: at σ near discrete.MaxScale or
	// n near 2^53 its points are far beyond an int.
	z1f := math.Ceil(dgTails*sigma) + 1
	wf := math.Ceil(dgTails*sigma*math.Sqrt(float64(n))) + z1f
	// Beyond 2^21 points (a transform of 2^22) the evaluation would take
	// seconds and a few hundred MB: the run is left to its RDP total.
	if !(wf <= maxDGWindow) {
		return nil, fmt.Errorf("discrete Gaussian composition: sigma %g over %d steps needs a window of %g points, more than %d", sigma, n, 2*wf+1, 2*maxDGWindow+1)
	}
	z1, w := int(z1f), int(wf)
	switch {
	case sigma >= dgClosedSigma:
		return closedDGSum(sigma, n, w), nil
	case float64(n)*float64(2*w+1)*float64(2*z1+1) <= maxDGDirect:
		return directDGSum(sigma, n, z1, w), nil
	}
	return fftDGSum(sigma, n, z1, w), nil
}

// maxDGDirect bounds the work (steps × window × one step's points) of
// a direct convolution of discrete Gaussians: beyond it, a transform.
const maxDGDirect = 1 << 27

// directDGSum returns the sum of n discrete Gaussians of parameter sigma
// on the window ±w, convolving the mass function truncated at ±z1 one
// step at a time, each step's sum cut to the window. Every entry is a
// sum of products of nonnegative numbers, so its error is relative, and
// keeps its meaning in the tails that decide a δ of 10^-12, where the
// transform's absolute rounding (about 10^-13·n) does not: with
// u = 2^-53 the masses e^(-z²/2σ²) are within (2 + 3.03·z1²/2σ²)u of
// theirs, their normaliser (a sum of 2z1+1) within (2z1+1)u, the
// quotient u; each step adds (2z1+2)u. The truncation of each step at
// ±z1 and of each partial sum at ±w (which holds all but 2e^-72 of it,
// as newDGSum's window) loses at most 4e^-72 a step, in err.
func directDGSum(sigma float64, n, z1, w int) *dgSum {
	const u = 0x1p-53
	one := make([]float64, 2*z1+1)
	var total float64
	for z := -z1; z <= z1; z++ {
		v := math.Exp(-float64(z) * float64(z) / (2 * sigma * sigma))
		one[z+z1] = v
		total += v
	}
	for i := range one {
		one[i] /= total
	}
	cur, half := []float64{1}, 0 // cur[i] = Pr[S = i - half]
	for range n {
		nh := min(w, half+z1)
		next := make([]float64, 2*nh+1)
		for i, v := range cur {
			if v == 0 {
				continue
			}
			s := i - half
			for z := max(-z1, -nh-s); z <= min(z1, nh-s); z++ {
				next[s+z+nh] += v * one[z+z1]
			}
		}
		cur, half = next, nh
	}
	d := &dgSum{sigma: sigma, n: n, w: w, p: make([]float64, 2*w+1)}
	copy(d.p[w-half:], cur)
	zf := float64(z1)
	d.rel = float64(n) * ((2+3.03*zf*zf/(2*sigma*sigma))*u + float64(2*z1+1)*u + u + float64(2*z1+2)*u) * 1.01
	d.err = float64(n+1) * 4 * math.Exp(-dgTails*dgTails/2)
	return d
}

// fftDGSum returns the sum of n discrete Gaussians of parameter sigma on
// the window ±w: the one-dimensional mass function, truncated at ±z1,
// transformed, raised to the n-th power and transformed back.
func fftDGSum(sigma float64, n, z1, w int) *dgSum {
	size := 1 << bits.Len(uint(2*w+1))
	one := make([]float64, size)
	var total float64
	for z := -z1; z <= z1; z++ {
		v := math.Exp(-float64(z) * float64(z) / (2 * sigma * sigma))
		one[(z+size)%size] = v
		total += v
	}
	for i := range one {
		one[i] /= total
	}
	f := fourier.NewFFT(size)
	var c []complex128
	onOwnStack(func() { c = f.Coefficients(nil, one) })
	for i, v := range c {
		// The mass function is symmetric, so its transform is real.
		c[i] = complex(math.Pow(real(v), float64(n)), 0)
	}
	var seq []float64
	onOwnStack(func() { seq = f.Sequence(nil, c) })
	d := &dgSum{sigma: sigma, n: n, w: w, p: make([]float64, 2*w+1)}
	var neg float64
	for s := -w; s <= w; s++ {
		v := seq[(s+size)%size] / float64(size)
		if v < 0 {
			neg -= v
			v = 0
		}
		d.p[s+w] = v
	}
	// The transform's rounding: a relative 2^-50 per level of the
	// transform and per power, over the window in l1 (√size times l2).
	lg := float64(bits.Len(uint(size)))
	d.err = neg + math.Sqrt(float64(size))*(float64(n)+8*lg)*0x1p-50 + float64(n+1)*2*math.Exp(-dgTails*dgTails/2)
	return d
}

// dgClosedSigma is the least σ at which newDGSum takes the sum of n
// discrete Gaussians for the discrete Gaussian of parameter σ√n
// (closedDGSum) instead of transforming it: there the two differ by less
// than 1e-33·n at every point.
const dgClosedSigma = 4

// closedDGSum returns the sum S of n discrete Gaussians of parameter
// sigma >= dgClosedSigma on the window ±w as the discrete Gaussian of
// parameter σ√n, with the bound of their difference. Both are integer
// valued, so each point's mass is (1/2π)∫ over [-π, π] of the
// characteristic function times e^(-its), and two masses differ by at
// most the largest difference of the characteristic functions there. By
// Poisson summation N_Z(0, σ²) has φ(t) = Σ_k e^(-σ²(t+2πk)²/2) / Σ_k
// e^(-2π²σ²k²), which for |t| <= π is within η = 4.0002·e^(-π²σ²/2) of
// e^(-σ²t²/2) (the terms k ≠ 0 are at most 2.0001·e^(-π²σ²/2), the
// normalisation is within 2.0001·e^(-2π²σ²) of 1). Moduli at most 1 give
// |φ^n - e^(-nσ²t²/2)| <= nη, and N_Z(0, nσ²)'s own function is within
// η of e^(-nσ²t²/2): so every mass is within (n+1)η, the window's within
// (2w+1)(n+1)η in l1. Its normalisation Σ_z e^(-z²/2nσ²) is
// √(2πn)·σ to a relative e^(-2π²nσ²) (Poisson summation again), so no
// sum is needed. S is sub-Gaussian with variance proxy nσ² (Canonne,
// Kamath and Steinke 2020, Prop. 25), so the window holds all but 2e^-72
// of it, as it does of N_Z(0, nσ²). At σ = 4, η < 3e-34: the error is far
// below the transform's, and the work O(w) instead of a transform of the
// next power of two above 2w+1.
//
// Each mass e^(-s²/2v)/√(2πv), v = nσ², is computed with a relative
// error, not an absolute one: v takes two roundings, s² is exact
// (|s| <= 2^21), so the exponent s²/2v is within 3.03 units of roundoff
// u = 2^-53 relative, at most 3.03u·w²/2v absolute; exp adds an ulp
// (2u), the normaliser (2π, v, the square root) 4u and the quotient u.
func closedDGSum(sigma float64, n, w int) *dgSum {
	d := &dgSum{sigma: sigma, n: n, w: w, p: make([]float64, 2*w+1)}
	v := float64(n) * sigma * sigma
	norm := math.Sqrt(2 * math.Pi * v)
	// s² is exact, so s and -s have the same mass, to the bit: half the
	// exponentials.
	for s := -w; s <= 0; s++ {
		m := math.Exp(-float64(s)*float64(s)/(2*v)) / norm
		d.p[s+w], d.p[w-s] = m, m
	}
	eta := 4.0002 * math.Exp(-math.Pi*math.Pi*sigma*sigma/2)
	d.err = float64(2*w+1)*float64(n+1)*eta + 4*math.Exp(-dgTails*dgTails/2)
	wf := float64(w)
	d.rel = (3.1*wf*wf/(2*v)+8)*0x1p-53 + math.Exp(-2*math.Pi*math.Pi*v)
	return d
}

// discreteGaussianDelta returns an upper bound of the privacy profile at
// eps of k composed steps of a discrete GaussianSpend, whose dominating
// pair is the product of its coordinates' N_Z(0, σ²) against N_Z(1, σ²)
// (a coordinate moved by less than 1 is a post-processing of one moved by
// 1, and the two directions are mirror images): with S_g the sum of the
// noise of the n_g coordinates of parameter σ_g, the privacy loss is
// L = Σ_g n_g/(2σ_g²) - S_g/σ_g², exactly, and δ(ε) = E[(1 - e^(ε-L))+].
// At most two distinct σ are supported (Confident-GNMax's two steps),
// where the sum over the second is a prefix sum: O(window) per ε once
// sums holds the distributions (discreteSums).
//
// The bound of its rounding is relative, so that it holds its meaning
// at a δ of 10^-12 (an absolute allowance of an ulp per term came to
// 1.5·10^-10 at GNMax's 1,800 coordinates of σ = 40, and made the exact
// composition give way to RDP there). With u = 2^-53: the prefix sums
// F (of P_b) and G (of P_b·e^(s/σ_b² - m)) are sums of nonnegative
// terms, within a relative rel_b + (n_b + 1)u, G's terms further within
// the error of their exponent (3u per unit of its range X_b = 2W_b/σ_b²)
// and of exp (2u). For each s_a, inner = F - E·G with E = e^(ε-c+s_a/σ_a²+m),
// whose exponent is within 5u·Y (Y the largest sum of its terms'
// magnitudes); every term it sums has e^(ε-L) < 1, so E·G <= F and its
// error is at most θ·F, θ the sum of those relative errors and three
// roundings. The terms on the boundary L = ε are decided by a threshold
// raised by a margin τ above its rounding: a term included with L <= ε
// adds at least -p(e^(2τ/σ_b²) - 1) >= -(3τ/σ_b²)·p, which θ covers too
// (it is in F). The outer sum of nonnegative terms adds a relative
// rel_a + (n_a + 2)u, and the entries' absolute errors err_a + err_b
// (inner <= 1). So δ is at most (Σ P_a·inner + θ·Σ P_a·F)·(1 + those)
// plus err_a + 1.01·err_b.
func discreteGaussianDelta(eps float64, sums []*dgSum) float64 {
	q := dgQuery{eps: math.Float64bits(eps)}
	q.sigma, q.n = secondSum(sums)
	a := sums[0]
	return recall(&a.mu, &a.deltas, q, func() float64 { return dgDelta(eps, sums, false) })
}

// dgEpsAt returns search(), the least ε at total δ delta, searched up
// from hi, of the exact composition of sums (runCurves.exactEps), as
// remembered: the search evaluates functions of the sums, delta and hi
// alone, so an answer remembered is the one it would find again.
func dgEpsAt(sums []*dgSum, delta, hi float64, search func() (float64, bool)) (float64, bool) {
	q := dgEpsQuery{delta: math.Float64bits(delta), hi: math.Float64bits(hi)}
	q.sigma, q.n = secondSum(sums)
	a := sums[0]
	v := recall(&a.mu, &a.inverse, q, func() (v bitAnswer) {
		v.eps, v.ok = search()
		return v
	})
	return v.eps, v.ok
}

// secondSum returns what identifies the second of sums, its σ's bits and
// its count, or (0, -1) when there is none: the first keeps the answers.
func secondSum(sums []*dgSum) (sigma uint64, n int) {
	if len(sums) == 2 {
		return math.Float64bits(sums[1].sigma), sums[1].n
	}
	return 0, -1
}

// recall returns the answer to q that *m remembers, or else compute's,
// which it remembers, beyond maxDGAnswers after forgetting the others;
// mu guards *m.
func recall[Q comparable, V any](mu *sync.Mutex, m *map[Q]V, q Q, compute func() V) V {
	mu.Lock()
	v, ok := (*m)[q]
	mu.Unlock()
	if ok {
		return v
	}
	v = compute()
	mu.Lock()
	if *m == nil || len(*m) >= maxDGAnswers {
		*m = map[Q]V{}
	}
	(*m)[q] = v
	mu.Unlock()
	return v
}

// dgAnchor is how many terms of dgDelta's estimate take their
// exponential from the term before's, times e^(1/σ_a²), before one takes
// math.Exp again.
const dgAnchor = 64

// dgDelta is discreteGaussianDelta, computed; with estimate set, the same
// sum but for rounding, which only guides the search of the profile's
// inverse (roots.EdgeGuided, which confirms its answer by the profile):
// consecutive terms' exponents are 1/σ_a² apart but for their rounding,
// so each exponential is carried over from the term before as a product
// by e^(1/σ_a²), from math.Exp every dgAnchor terms: within a relative
// 10^-14 (about 2·dgAnchor roundings), where the exponentials are most of
// the profile's cost, and a search for ε evaluates it some thirty times.
// The estimate adds a block of dgAnchor terms whose last sums the whole
// of the second sum's window (every s_b has L > ε, so for each term of
// the block it does) at once, from the block's sums (blockSums) and the
// totals F and G: one exponential a block. Of two sums that is the left
// of the first's window, often a third of it; of one sum alone (the
// second then a single point) every block but the last before ε. It
// leaves out the rounding that makes a term on the boundary negative,
// cut to 0 in the profile: at most τ of its mass.
func dgDelta(eps float64, sums []*dgSum, estimate bool) float64 {
	const u = 0x1p-53
	a := sums[0]
	b := &dgSum{sigma: 1, p: []float64{1}}
	if len(sums) == 2 {
		b = sums[1]
	}
	ca := float64(a.n) / (2 * a.sigma * a.sigma)
	cb := float64(b.n) / (2 * b.sigma * b.sigma)
	va, vb := a.sigma*a.sigma, b.sigma*b.sigma
	pre := b.prefixes()
	F, G, m := pre.F, pre.G, pre.m
	nb := float64(len(b.p))
	xb := 2 * float64(b.w) / vb
	y := math.Abs(eps) + ca + cb + float64(a.w)/va + m
	tau := 16 * u * (y*vb + float64(b.w) + 1)
	theta := 1.02 * (2*b.rel + 2*(nb+1)*u + 3*u*xb + 2*u + 5*u*y + 2*u + 4*u + 3*tau/vb)
	// The terms' constant parts, as the sums below group them.
	above, shift := ca+cb-eps, eps-ca-cb
	var sum, sumF float64
	up, e := math.Exp(1/va), 0.0
	var blocks dgBlocks
	if estimate {
		blocks = a.blockSums()
	}
	whole := len(b.p)
	for i := 0; i < len(a.p); i++ {
		if k := i / dgAnchor; i%dgAnchor == 0 && k < len(blocks.p) {
			// The whole of b at the block's last term (j = len(b.p), as
			// below), so at each of its terms.
			if last := float64(i + dgAnchor - 1 - a.w); vb*(above-last/va)+tau > float64(b.w)+1 {
				sumF += F[whole] * blocks.p[k]
				sum += F[whole]*blocks.p[k] - math.Exp(shift+float64(i-a.w)/va+m)*G[whole]*blocks.q[k]
				i += dgAnchor - 1
				continue
			}
		}
		p := a.p[i]
		sa := float64(i - a.w)
		// L > ε  ⇔  s_b < σ_b²(c_a + c_b - ε - s_a/σ_a²); the threshold
		// is raised by τ, so that no term with L > ε is left out. It
		// falls as s_a rises (each rounding is monotone): once no term
		// of s_b is left, none is for the s_a after.
		x := sa / va
		t := vb*(above-x) + tau
		j := 0
		switch {
		case t > float64(b.w)+1:
			j = len(b.p)
		case t > -float64(b.w):
			j = int(math.Ceil(t)) + b.w
		}
		if j == 0 {
			break
		}
		if estimate {
			if i%dgAnchor == 0 {
				e = math.Exp(shift + x + m)
			} else {
				e *= up
			}
		}
		if p == 0 {
			continue
		}
		if !estimate {
			e = math.Exp(shift + x + m)
		}
		sumF += p * F[j]
		inner := F[j] - e*G[j]
		if inner > 0 {
			sum += p * inner
		}
	}
	na := float64(len(a.p))
	total := (sum + theta*sumF) * (1 + a.rel + (na+2)*u*1.02)
	return math.Min(1, outward.Up(total, 4)+a.err+1.01*b.err)
}

// discreteSums returns the noise sums of k steps of a discrete
// GaussianSpend, one per distinct σ; an error when there are more than
// two.
func discreteSums(m *Memo, parts []GaussianPart, k int) ([]*dgSum, error) {
	var sigmas []float64
	count := map[float64]int{}
	for _, p := range parts {
		if count[p.Sigma] == 0 {
			sigmas = append(sigmas, p.Sigma)
		}
		n, ok := steps(p.Coords, k)
		if ok {
			n, ok = addSteps(count[p.Sigma], n)
		}
		if !ok {
			return nil, fmt.Errorf("discrete Gaussian composition: %d coordinates over %d steps: more than %d", p.Coords, k, CountLimit)
		}
		count[p.Sigma] = n
	}
	if len(sigmas) > 2 {
		return nil, fmt.Errorf("discrete Gaussian composition: %d distinct sigmas, at most 2 are supported", len(sigmas))
	}
	var out []*dgSum
	for _, s := range sigmas {
		d, err := m.dgSum(s, count[s])
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
