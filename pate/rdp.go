package pate

import (
	"fmt"
	"math"
	"slices"

	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/roots"
	"github.com/darrm/darrm/noisymax"
)

// PATE's accounting (Papernot, Song, Mironov, Raghunathan, Talwar and
// Erlingsson, "Scalable Private Learning with PATE", ICLR 2018; "the PATE
// paper" below). Every curve is a Rényi-DP bound at one order λ; bounds
// are rounded outward with intervals (outward.Interval).

// Directions says which Rényi divergences between the output
// distributions at a vote histogram x and at its neighbours x' a
// data-dependent bound covers: BothDirections (a guarantee, the zero
// value) or OneSided (the PATE paper's Theorem 6 as stated, no guarantee).
// A Directions prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type Directions int

const (
	// BothDirections bounds D_λ(M(x)‖M(x')) and D_λ(M(x')‖M(x)) for every
	// neighbour x': a Rényi-DP guarantee at x. It applies the PATE
	// paper's Theorem 6 with a q̃ that bounds the probability of missing
	// the plurality at x and at every neighbour (gnmaxNeighbourLogQ,
	// thresholdTable; docs/pate.md, "Both directions"). The
	// default.
	BothDirections Directions = iota
	// OneSided is Theorem 6 as the PATE paper states and uses it: a bound
	// on D_λ(M(x)‖M(x')) only, with q̃ from x alone. It is what the PATE
	// authors' code computes, kept for reproducing their figures; the
	// other direction can exceed it (for the discrete Gaussian at
	// x = (20, 0, 0), σ = 2, λ = 5: 7.2e-3 against 2.6e-3), so it is not
	// a differential-privacy guarantee.
	OneSided
)

var directionNames = enum.Names[Directions]{What: "directions", List: []string{BothDirections: "both", OneSided: "one-sided"}}

// String returns the name of d.
func (d Directions) String() string { return directionNames.String(d) }

// MarshalText returns the name of d.
func (d Directions) MarshalText() ([]byte, error) { return []byte(directionNames.String(d)), nil }

// UnmarshalText sets d from its name: "both" or "one-sided".
func (d *Directions) UnmarshalText(text []byte) error { return directionNames.Unmarshal(d, text) }

// discreteGNMaxExcess returns r = 1 + 3·e^{-π²σ²}, for σ >= 0.5 an upper
// bound on 2σ√π·θ/N², where N = Σ_k e^{-k²/(2σ²)} normalises the
// discrete Gaussian and θ = max(Σ_k e^{-k²/σ²}, Σ_k e^{-(k-1/2)²/σ²}).
// By Poisson summation N >= σ√(2π) and θ <= σ√π(1 + 2Σ_{j>=1}
// e^{-π²σ²j²}) <= σ√π(1 + 3e^{-π²σ²}). The difference of two independent
// N_Z(0, σ²) takes the value d with probability (θ_{d mod 2}/N²)·
// e^{-d²/(4σ²)}, at most r/(2σ√π)·e^{-d²/(4σ²)}: r times the density of
// N(0, 2σ²) at d.
func discreteGNMaxExcess(sigma float64) float64 {
	e := math.Exp(-math.Pi * math.Pi * sigma * sigma)
	return outward.Up(1+3*outward.Up(e, 4), 2)
}

// logErfcUp returns an upper bound on log erfc(x).
func logErfcUp(x float64) float64 {
	if x >= 26 {
		// erfc(x) <= e^{-x²}/(x√π)·(1 - 1/(2x²) + 3/(4x⁴)) for x > 0
		// (the asymptotic series alternates); erfc itself underflows
		// near 26.5.
		x2 := outward.Exact(x).Mul(outward.Exact(x))
		s := outward.Exact(1).Sub(outward.Exact(0.5).Div(x2)).Add(outward.Exact(0.75).Div(x2.Mul(x2)))
		l := x2.Neg().Sub(outward.Log(outward.Exact(x).Mul(outward.Exact(math.Sqrt(math.Pi))).Mul(outward.Interval{Lo: outward.Down(1, 2), Hi: outward.Up(1, 2)}))).Add(outward.Log(s))
		return l.Hi
	}
	// Go's Erfc is within 1 ulp: log moves by that relative error.
	return outward.LibUp(outward.Ln(math.Erfc(x))) + 4*outward.ULP
}

// logErfcDown returns a lower bound on log erfc(x).
func logErfcDown(x float64) float64 {
	if x >= 26 {
		x2 := outward.Exact(x).Mul(outward.Exact(x))
		s := outward.Exact(1).Sub(outward.Exact(0.5).Div(x2))
		l := x2.Neg().Sub(outward.Log(outward.Exact(x).Mul(outward.Exact(math.Sqrt(math.Pi))).Mul(outward.Interval{Lo: outward.Down(1, 2), Hi: outward.Up(1, 2)}))).Add(outward.Log(s))
		return l.Lo
	}
	return outward.LibDown(outward.Ln(math.Erfc(x))) - 4*outward.ULP
}

// logSumExpUp returns an upper bound on log Σ e^{t_i} for upper bounds t_i.
func logSumExpUp(ts []float64) float64 {
	m := math.Inf(-1)
	for _, t := range ts {
		m = math.Max(m, t)
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := outward.Exact(0)
	var last uint64
	var e outward.Interval
	for i, t := range ts {
		// A run of equal terms (gnmaxLogQ's classes of one count) has one
		// exponential: the same argument, so the same interval; the
		// largest term's, e^[-0, 0], is expOfZero.
		if b := math.Float64bits(t); i == 0 || b != last {
			last, e = b, expOfZero
			if t != m {
				e = outward.Exp(outward.Exact(t).Sub(outward.Exact(m)))
			}
		}
		s = s.Add(e)
	}
	return outward.AddUp(m, outward.Log(s).Hi)
}

// expOfZero is e^{t - t} for a finite t, as logSumExpUp computes it: the
// difference is [-0, 0], whatever t.
var expOfZero = outward.Exp(outward.Exact(1).Sub(outward.Exact(1)))

// neighbours is the relation between the vote histograms of K teachers
// that the data-dependent analysis bounds over: one changed teacher. When
// every teacher votes, its vote moves from one class to another (one
// count down by one, another up by one). When teachers may abstain
// (abstain), a vote may also be withdrawn (one count down) or cast (one
// count up, while fewer than K voted): the histograms then sum to at most
// K, and neighbours differ by one vote added, removed or moved.
type neighbours struct {
	abstain  bool
	teachers int
}

// leastMax returns the least largest count of a histogram in the
// relation: ⌈K/C⌉ when every teacher votes among C classes, 0 when they
// may abstain (a histogram may then hold no vote at all).
func (n neighbours) leastMax(classes int) int {
	if n.abstain {
		return 0
	}
	return leastMaxCount(n.teachers, classes)
}

// countsRule says what the counts of a histogram in the relation rel
// must sum to.
func countsRule(rel neighbours) string {
	if rel.abstain {
		return fmt.Sprintf("must sum to at most K = %d (teachers that abstained cast none)", rel.teachers)
	}
	return fmt.Sprintf("must sum to K = %d (every teacher votes)", rel.teachers)
}

// castVotes returns the sum of counts, capped above the largest
// number of teachers an account takes so that it never overflows.
func castVotes(counts []int) int {
	s := 0
	for _, n := range counts {
		s = min(s+max(min(n, maxAccountTeachers+1), 0), maxAccountTeachers+1)
	}
	return s
}

// gnmaxLogQ returns log q̃, an upper bound on log Pr[GNMax(n) != i*] for
// the vote counts n of C >= 2 classes and noise σ, i* = top the first
// class with the most votes (PATE paper, Proposition 7): with noisymax.ContinuousNoise
//
//	q̃ = min(1 - 1/C, Σ_{i != i*} erfc((n_i* - n_i)/(2σ))/2),
//
// and with noisymax.DiscreteNoise the same with every gap shortened by 1/2,
// a tie's term 1/2 + 1/(4σ√π), and the sum multiplied by
// discreteGNMaxExcess(σ) (see docs/pate.md: for independent discrete
// Gaussians the event "class i beats i*, or ties and wins the uniform
// tie-break" has probability at most r·erfc((g - 1/2)/(2σ))/2 for g >= 1,
// and r·(1/2 + 1/(4σ√π)) at g = 0, which also bounds a tie counted whole;
// classLogQUp).
// The cap 1 - 1/C holds for both: the plurality is the likeliest output.
// The result is -Inf only when no class but i* exists, which C >= 2 rules
// out, so it is always finite.
func gnmaxLogQ(mo *memo, counts []int, top int, sigma float64, noise noisymax.Noise) float64 {
	terms := classTermsOf(mo, sigma, noise, counts[top]+1)
	ts := make([]float64, 0, len(counts)-1)
	last, term := -1, 0.0 // a run of equal counts (sorted histograms) has one term
	for i, n := range counts {
		if i == top {
			continue
		}
		if n != last {
			last, term = n, terms.at(counts[top]-n)
		}
		ts = append(ts, term)
	}
	l := logSumExpUp(ts)
	if noise == noisymax.DiscreteNoise {
		l = outward.AddUp(l, terms.logExcess)
	}
	c := float64(len(counts))
	return math.Min(l, outward.LibUp(math.Log1p(-1/c))+outward.ULP)
}

// classTerms are classLogQUp's terms at the gaps 0..len(up)-1 for one σ
// and noise, and for discrete noise the logarithm of
// discreteGNMaxExcess(σ), rounded up, that gnmaxLogQ adds: it takes them
// for every count of every histogram an account charges, a neighbour's
// search tries and the smooth sensitivity's walk visits, at gaps of at
// most K (an erfc and a logarithm each), at one σ for a whole account.
type classTerms struct {
	sigma     float64
	noise     noisymax.Noise
	up        []float64
	logExcess float64
}

// at returns classLogQUp(gap, σ, noise).
func (t *classTerms) at(gap int) float64 {
	if gap >= 0 && gap < len(t.up) {
		return t.up[gap]
	}
	return classLogQUp(gap, t.sigma, t.noise)
}

// classTermsKey is what classTerms are a function of: σ's bits and the
// noise.
type classTermsKey struct {
	sigma uint64
	noise noisymax.Noise
}

// maxKeptClassTerms bounds the terms a memo keeps: 2^20 of them (8 MiB).
const maxKeptClassTerms = 1 << 20

// maxClassTerms bounds the gaps classTermsOf tabulates: the teachers of
// PATE's experiments, and of most ensembles, are far fewer.
const maxClassTerms = 1 << 14

// classTermsOf returns the terms for σ and noise, tabulated at the gaps
// 0..n-1 at least (to maxClassTerms); at a larger gap, at computes its
// term.
func classTermsOf(mo *memo, sigma float64, noise noisymax.Noise, n int) *classTerms {
	key := classTermsKey{math.Float64bits(sigma), noise}
	n = min(n, maxClassTerms)
	t, ok := mo.classTerms.get(key)
	if ok && len(t.up) >= n {
		return t
	}
	size := max(n, 256)
	if ok {
		size = min(max(size, 2*len(t.up)), maxClassTerms)
	}
	t = &classTerms{sigma: sigma, noise: noise, up: make([]float64, size)}
	for g := range t.up {
		t.up[g] = classLogQUp(g, sigma, noise)
	}
	if noise == noisymax.DiscreteNoise {
		t.logExcess = outward.LibUp(outward.Ln(discreteGNMaxExcess(sigma)))
	}
	mo.classTerms.put(key, t, size)
	return t
}

// classLogQUp returns an upper bound on the log of one class's term of
// q̃ (gnmaxLogQ) at its gap g >= 0 to the plurality: for continuous
// noise log(erfc(g/(2σ))/2); for discrete noise, before the factor
// discreteGNMaxExcess, log(erfc((g - 1/2)/(2σ))/2), whose proof's last
// step (docs/pate.md) needs g >= 1/4, and at a tie log(1/2 + 1/(4σ√π)),
// the proof's bound before that step: the shortened gap's erfc(-1/(4σ))/2
// would fall below Pr[D >= 0] = 1/2 + Pr[D = 0]/2, the probability that a
// tied class ties or beats the plurality (by 0.44% at σ = 1).
func classLogQUp(gap int, sigma float64, noise noisymax.Noise) float64 {
	if noise == noisymax.DiscreteNoise && gap == 0 {
		pi := outward.Interval{Lo: outward.Down(math.Pi, 1), Hi: outward.Up(math.Pi, 1)}
		tie := outward.Exact(0.5).Add(outward.Exact(1).Div(outward.Exact(4 * sigma).Mul(outward.Sqrt(pi))))
		return outward.Log(tie).Hi
	}
	shift := 0.0
	if noise == noisymax.DiscreteNoise {
		shift = 0.5
	}
	// erfc decreases: evaluate it at the lower end of the argument.
	x := outward.DivDirected(float64(gap)-shift, 2*sigma, false)
	return logErfcUp(x) - math.Ln2 + outward.ULP // log(erfc/2), Ln2 rounded
}

// gnmaxNeighbourLogQ returns log Q̃, the largest q̃ of gnmaxLogQ over the
// vote counts and every histogram one changed teacher away from them in
// the relation rel (a vote moved between two classes, and with abstentions
// a vote removed or added). Q̃ bounds the probability that GNMax misses
// the plurality at the counts and, at each neighbour, that neighbour's
// plurality, so the PATE paper's Theorem 6 at Q̃ (curve) bounds the
// Rényi divergence between the two output distributions in both
// directions (BothDirections; docs/pate.md).
//
// q̃ depends on a histogram only through its multiset of counts, so a move between
// two classes is tried once per pair of their counts, between the first
// class of each count (the second, for two classes of one count): D² moves
// for D distinct counts (D <= sqrt(2K) + 1), not a scan of C² pairs of
// classes, which took 35 s for one query of 100,000 classes. With
// abstentions a vote removed from, or added to, a class is likewise tried
// once per count: a removal from the plurality can raise q̃ above every
// move (two classes: (5, 4) to (4, 4), a tie no move reaches).
func gnmaxNeighbourLogQ(mo *memo, counts []int, sigma float64, noise noisymax.Noise, rel neighbours) float64 {
	l := gnmaxLogQ(mo, counts, argmax(counts), sigma, noise)
	var values []int          // the distinct counts, in order of first class
	first := map[int][2]int{} // per count, its first two classes (-1: none)
	for i, n := range counts {
		switch f, ok := first[n]; {
		case !ok:
			values = append(values, n)
			first[n] = [2]int{i, -1}
		case f[1] < 0:
			first[n] = [2]int{f[0], i}
		}
	}
	y := slices.Clone(counts)
	at := func() { l = math.Max(l, gnmaxLogQ(mo, y, argmax(y), sigma, noise)) }
	for _, na := range values {
		if na == 0 {
			continue
		}
		a := first[na][0]
		for _, nb := range values {
			b := first[nb][0]
			if nb == na {
				if b = first[nb][1]; b < 0 {
					continue
				}
			}
			y[a], y[b] = na-1, nb+1
			at()
			y[a], y[b] = na, nb
		}
	}
	if !rel.abstain {
		return l
	}
	room := castVotes(counts) < rel.teachers
	for _, n := range values {
		a := first[n][0]
		if n > 0 {
			y[a] = n - 1
			at()
		}
		if room {
			y[a] = n + 1
			at()
		}
		y[a] = n
	}
	return l
}

// leastMaxCount returns ⌈K/C⌉, the least largest count of K votes among C
// classes.
func leastMaxCount(teachers, classes int) int { return (teachers + classes - 1) / classes }

// maxNear returns the largest f(w) over w in [v-1, v+1] ∩ [lo, hi]: over a
// largest count and those of its neighbours.
func maxNear(f func(w int) float64, v, lo, hi int) float64 {
	l := math.Inf(-1)
	for w := max(v-1, lo); w <= min(v+1, hi); w++ {
		l = math.Max(l, f(w))
	}
	return l
}

// thresholdTable returns, for the largest counts v = 0..K of a histogram
// over C classes in the relation rel, log q̃ of the threshold step as
// directions needs it, and the probability of answering, for the
// threshold t and the noise of deviation sigma1 (thresholdLogQ). For
// OneSided it is q̃ at v. For BothDirections it is Q̃, the largest q̃ at v
// and at v - 1 and v + 1 where they lie in [rel.leastMax(C), K], the
// largest counts one changed teacher can give (a vote moved, added or
// removed moves the largest count by at most one; with abstentions it may
// fall below ⌈K/C⌉), set only for v >= rel.leastMax(C), the counts that
// occur: Theorem 6 at Q̃ (curve) bounds the Rényi divergence in both
// directions.
func thresholdTable(t, sigma1 float64, noise noisymax.Noise, rel neighbours, classes int, directions Directions) (logq, p []float64) {
	own := make([]float64, rel.teachers+1)
	p = make([]float64, rel.teachers+1)
	for v := range own {
		own[v], p[v] = thresholdLogQ(v, t, sigma1, noise)
	}
	if directions == OneSided {
		return own, p
	}
	lo := rel.leastMax(classes)
	logq = slices.Clone(own)
	for v := lo; v <= rel.teachers; v++ {
		logq[v] = maxNear(func(w int) float64 { return own[w] }, v, lo, rel.teachers)
	}
	return logq, p
}

// thresholdLogQ returns, for the threshold step of Confident-GNMax (PATE
// paper, Algorithm 1: answer when the largest count v plus noise
// of deviation σ reaches the threshold T), log q̃ with q̃ an upper bound on
// min(p, 1-p), p the probability of answering, and p itself (summed to
// float64 precision, for expected counts of answered queries; not a
// bound).
//
// With noisymax.ContinuousNoise p = erfc((T - v)/(σ√2))/2 for the largest count v.
// With noisymax.DiscreteNoise the step answers when v + Z >= T, Z ~ N_Z(0, σ²), so
// p = Pr[Z >= k], k = ceil(T) - v, summed over the integers with the
// discrete Gaussian's own normaliser N = Σ_z e^{-z²/(2σ²)}; and for
// k >= 1, Pr[Z >= k] <= (e^{-k²/(2σ²)} + ∫_k^∞ e^{-z²/(2σ²)}dz)/N with
// N >= σ√(2π); 1 - p = Pr[Z >= 1 - k] likewise.
func thresholdLogQ(v int, t, sigma float64, noise noisymax.Noise) (logq, p float64) {
	s2 := outward.Exact(sigma).Mul(outward.Sqrt(outward.Exact(2)))
	if noise == noisymax.ContinuousNoise {
		x := outward.Exact(t).Sub(outward.Exact(float64(v))).Div(s2)
		up1 := logErfcUp(x.Lo) - math.Ln2 + outward.ULP  // log p
		up2 := logErfcUp(-x.Hi) - math.Ln2 + outward.ULP // log(1-p)
		mid := (x.Lo + x.Hi) / 2
		return math.Min(math.Min(up1, up2), 0), math.Erfc(mid) / 2
	}
	k := math.Ceil(t) - float64(v)
	kk := k
	if k <= 0 {
		kk = 1 - k // the rarer side is 1 - p = Pr[Z >= 1 - k]
	}
	return discreteTailLogUp(kk, sigma), discreteTail(k, sigma)
}

// discreteTailLogUp returns an upper bound on log Pr[Z >= k], Z ~ N_Z(0,
// σ²), k >= 1 an integer: log((e^{-k²/(2σ²)} + σ√(π/2)·erfc(k/(σ√2)))/(σ√(2π)))
// = log(erfc(k/(σ√2))/2 + e^{-k²/(2σ²)}/(σ√(2π))).
func discreteTailLogUp(k, sigma float64) float64 {
	s2 := outward.Exact(sigma).Mul(outward.Sqrt(outward.Exact(2)))
	x := outward.Exact(k).Div(s2)
	a := logErfcUp(x.Lo) - math.Ln2 + outward.ULP
	// -k²/(2σ²) - log(σ√(2π))
	ex := x.Mul(x).Neg().Sub(outward.Log(s2.Mul(outward.Sqrt(outward.Exact(math.Pi)).Mul(outward.Interval{Lo: outward.Down(1, 2), Hi: outward.Up(1, 2)}))))
	return math.Min(logSumExpUp([]float64{a, ex.Hi}), 0)
}

// discreteTail returns Pr[Z >= k] for Z ~ N_Z(0, σ²) and an integer k,
// summed over the integers to float64 precision (an estimate, not a
// bound): for 1 <= k <= σ as (1 - Pr[|Z| < k])/2, which is at least 0.1
// there, and otherwise as the sum of the tail's terms, which fall below
// 1e-18 of their total within 9σ of k (so neither loop runs longer than
// 9·max(|k|, σ) terms).
func discreteTail(k, sigma float64) float64 {
	if k <= 0 {
		return 1 - discreteTail(1-k, sigma)
	}
	w := func(z float64) float64 { return math.Exp(-z * z / (2 * sigma * sigma)) }
	n := discreteNorm(sigma)
	if k <= sigma {
		var inner float64 // Σ_{z=1}^{k-1} w(z)
		for z := 1.0; z < k; z++ {
			inner += w(z)
		}
		return (n - 1 - 2*inner) / (2 * n)
	}
	var sum float64
	for z := k; ; z++ {
		t := w(z)
		sum += t
		if t <= sum*1e-18 || t == 0 {
			break
		}
	}
	return sum / n
}

// discreteNorm returns N = Σ_{z∈Z} e^{-z²/(2σ²)}, the normaliser of the
// discrete Gaussian N_Z(0, σ²): for σ < 1 summed directly, otherwise by
// Poisson summation, N = σ√(2π)·(1 + 2Σ_{j>=1} e^{-2π²σ²j²}) (for σ >= 1
// the term j = 2 is below 1e-34).
func discreteNorm(sigma float64) float64 {
	if sigma < 1 {
		n := 1.0
		for z := 1.0; ; z++ {
			t := 2 * math.Exp(-z*z/(2*sigma*sigma))
			n += t
			if t <= n*1e-18 {
				return n
			}
		}
	}
	theta := 1.0
	for j := 1.0; ; j++ {
		t := 2 * math.Exp(-2*math.Pi*math.Pi*sigma*sigma*j*j)
		theta += t
		if t <= 1e-18 {
			return sigma * math.Sqrt(2*math.Pi) * theta
		}
	}
}

// gnmaxSlope returns 1/σ², the slope of GNMax's Rényi curve ε(μ) = μ/σ²:
// its data-independent Rényi DP at order λ is λ/σ² (PATE paper,
// Proposition 8; the Gaussian mechanism on counts whose L2 distance is at
// most √2).
func gnmaxSlope(sigma float64) outward.Interval {
	return outward.Exact(1).Div(outward.Exact(sigma).Mul(outward.Exact(sigma)))
}

// thresholdSlope returns 1/(2σ1²): the threshold step's input, the
// largest count, has sensitivity 1, so its data-independent Rényi DP at
// order λ is λ/(2σ1²).
func thresholdSlope(sigma1 float64) outward.Interval {
	return outward.Exact(1).Div(outward.Exact(2).Mul(outward.Exact(sigma1).Mul(outward.Exact(sigma1))))
}

// curve is the data-dependent bound β(q) at one order λ for a mechanism
// whose Rényi curves are ε(μ) = c·μ, with the crossing point logq0: given
// q̃ = e^logq, an upper bound on the probability of missing the
// plurality, the bound of the PATE paper's Theorem 6 with
// μ2 = σ·sqrt(log 1/q̃), μ1 = μ2 + 1 (Proposition 10; σ = 1/√c, so σ for
// GNMax and √2·σ1 for the threshold step) where it applies and is below
// c·λ, else c·λ. With q̃ from one histogram (gnmaxLogQ, thresholdLogQ) it
// bounds D_λ(M(x)‖M(x')) only (OneSided); with Q̃ over the neighbours
// (gnmaxNeighbourLogQ, thresholdTable) it bounds both directions. It is
// the function β of the smooth-sensitivity analysis: where q̃ is above
// the point q0 at which the two bounds cross it is c·λ (see
// docs/pate.md).
type curve struct {
	c     outward.Interval
	order float64
	ind   outward.Interval // c·λ
	logq0 float64          // below it the data-dependent bound is used
}

// newCurve returns the curve of slope c at order, which it keeps: its
// crossing is a search of Theorem 6's conditions, and every account of
// the same noise makes the same curve at each of its orders again (a
// plan's search, account pate after a release). A curve is never changed
// once made.
func newCurve(mo *memo, c outward.Interval, order float64) *curve {
	key := curveKey{c, order}
	if k, ok := mo.curves.get(key); ok {
		return k
	}
	k := &curve{c: c, order: order, ind: c.Mul(outward.Exact(order))}
	k.logq0 = k.crossing()
	mo.curves.put(key, k, 1)
	return k
}

// curveKey is what a curve is made from.
type curveKey struct {
	c     outward.Interval
	order float64
}

// maxCurves bounds the curves a memo keeps (a hundred orders for each of
// a hundred noise levels); beyond it they are made again.
const maxCurves = 1 << 14

// theorem6 returns the PATE paper's Theorem 6 bound at order λ for
// q̃ = e^L with μ2 = sqrt(-L/c), μ1 = μ2 + 1 and ε_i = c·μ_i (upper ends
// used as the guarantees), and whether its conditions hold: λ < μ1,
// μ2 > 1, -L > ε2 and L <= (μ2-1)ε2 - μ2·log(μ1/(μ1-1)·μ2/(μ2-1)).
// The μ_i are any numbers meeting the conditions, so their float values
// are taken as exact.
func (k *curve) theorem6(L float64) (outward.Interval, bool) {
	mid := (k.c.Lo + k.c.Hi) / 2
	mu2 := math.Sqrt(-L / mid)
	mu1 := mu2 + 1
	if !(mu1 > k.order) || !(mu2 > 1) || math.IsInf(mu1, 0) {
		return outward.Interval{}, false
	}
	e1 := k.c.Mul(outward.Exact(mu1)).Hi
	e2 := k.c.Mul(outward.Exact(mu2)).Hi
	if !(-L > e2) {
		return outward.Interval{}, false
	}
	m1, m2 := outward.Exact(mu1), outward.Exact(mu2)
	m1m1, m2m1 := m1.Sub(outward.Exact(1)), m2.Sub(outward.Exact(1))
	rhs := m2m1.Mul(outward.Exact(e2)).Sub(m2.Mul(outward.Log(m1.Div(m1m1).Mul(m2.Div(m2m1)))))
	if !(L <= rhs.Lo) {
		return outward.Interval{}, false
	}
	lq := outward.Exact(L)
	log1q := outward.Log1mExp(lq)
	x := lq.Add(outward.Exact(e2)).Mul(m2m1.Div(m2))
	if !(x.Hi < 0) {
		return outward.Interval{}, false
	}
	lm1 := outward.Exact(k.order).Sub(outward.Exact(1))
	logA := lm1.Mul(log1q.Sub(outward.Log1mExp(x)))
	logB := lm1.Mul(outward.Exact(e1).Sub(lq.Div(m1m1)))
	s := outward.LogAddExp(log1q.Add(logA), lq.Add(logB))
	r := s.Div(lm1)
	r.Lo = math.Max(r.Lo, 0)
	return r, true
}

// crossing returns log q0: the data-dependent bound is used for
// log q̃ < log q0, where its conditions hold and it is below c·λ. It starts
// from the PATE authors' bracket min(-(1+√c)², -c(λ-0.99)², -c) and
// bisects.
func (k *curve) crossing() float64 {
	better := func(L float64) bool {
		b, ok := k.theorem6(L)
		return ok && b.Hi <= k.ind.Lo
	}
	c := k.c.Hi
	ub := math.Min(math.Min(-(1+math.Sqrt(c))*(1+math.Sqrt(c)), -c*(k.order-0.99)*(k.order-0.99)), -c)
	if better(ub) {
		return ub
	}
	lb := 2 * ub
	for !better(lb) {
		if lb < -1e300 {
			return math.Inf(-1)
		}
		lb *= 1.5
	}
	return roots.Edge(ub, lb, 0, better)
}

// at returns β(q̃) for q̃ = e^L as an interval: Theorem 6's bound below
// log q0 (and wherever it holds and is below c·λ), c·λ otherwise.
func (k *curve) at(L float64) outward.Interval {
	if math.IsInf(L, -1) {
		return outward.Exact(0) // the output is fixed
	}
	if L < k.logq0 {
		if b, ok := k.theorem6(L); ok && b.Hi <= k.ind.Hi {
			return b
		}
	}
	return k.ind
}
