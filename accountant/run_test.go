package accountant

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/bigmath"
)

// bigPrec is the precision of the references: 512 bits.
const bigPrec = 512

func bf512(x float64) *big.Float { return new(big.Float).SetPrec(bigPrec).SetFloat64(x) }

// bigGDPDelta is Φ(μ/2 - ε/μ) - e^ε·Φ(-μ/2 - ε/μ) in 512 bits.
func bigGDPDelta(eps, mu2 float64) *big.Float {
	mu := new(big.Float).SetPrec(bigPrec).Sqrt(bf512(mu2))
	root2 := new(big.Float).SetPrec(bigPrec).Sqrt(bf512(2))
	ratio := new(big.Float).SetPrec(bigPrec).Quo(bf512(eps), mu)
	half := new(big.Float).SetPrec(bigPrec).Quo(mu, bf512(2))
	// Φ(x) = erfc(-x/√2)/2
	a := new(big.Float).SetPrec(bigPrec).Sub(ratio, half)
	a.Quo(a, root2)
	b := new(big.Float).SetPrec(bigPrec).Add(ratio, half)
	b.Quo(b, root2)
	d := bigmath.Erfc(a, bigPrec)
	t := bigmath.Erfc(b, bigPrec)
	t.Mul(t, bigmath.Exp(bf512(eps), bigPrec))
	d.Sub(d, t)
	return d.Quo(d, bf512(2))
}

// checkAbove fails unless got is at least the reference and within rel of
// it.
func checkAbove(t *testing.T, name string, got float64, ref *big.Float, rel float64) {
	t.Helper()
	r, _ := ref.Float64()
	if bf512(got).Cmp(ref) < 0 {
		t.Errorf("%s = %.17g, below the exact %.17g", name, got, r)
	}
	if math.Abs(got-r) > rel*r {
		t.Errorf("%s = %.17g, exact %.17g: relative error %.3g > %g", name, got, r, math.Abs(got-r)/r, rel)
	}
}

// TestGDPDeltaAgainstBig: the closed form of Gaussian DP is never below a
// 512-bit evaluation and within 1e-9 of it. Beyond ε = 709.78, where e^ε
// overflows, it is taken in log space, of an erfc that is subnormal there:
// math.Log's -709.09 for every subnormal (golang/go#56600) made
// gdpDelta(710, 1150) 0, exactly 3.05e-5, and the filter of (710, 1e-5)
// held 1,403 steps of ε = 1 where 747 fit.
// There the erfc's few significant bits, widened by its ulps, leave the
// bound looser (8% at ε = 740), never below.
func TestGDPDeltaAgainstBig(t *testing.T) {
	for _, c := range []struct{ eps, mu2, rel float64 }{
		{2, 194 * (2.0/1600 + 1.0/22500), 1e-9}, {0.5, 0.01, 1e-9}, {1, 1, 1e-9}, {3, 0.5, 1e-9}, {0.1, 4, 1e-9}, {5, 2, 1e-9}, {0.2, 0.05, 1e-9},
		{710, 1150, 1e-9}, {720, 1180, 1e-6}, {740, 1300, 0.1},
	} {
		checkAbove(t, fmt.Sprintf("gdpDelta(%g, %g)", c.eps, c.mu2), gdpDelta(c.eps, c.mu2), bigGDPDelta(c.eps, c.mu2), c.rel)
	}
}

// bigDGSum is the distribution of the sum of n discrete Gaussians of
// parameter sigma, truncated at ±20σ per term (a tail below e^-200), in 512 bits: index i is
// the sum i - n·z.
func bigDGSum(sigma float64, n int) ([]*big.Float, int) {
	z := int(20 * sigma)
	one := make([]*big.Float, 2*z+1)
	total := bf512(0)
	for i := range one {
		x := float64(i - z)
		one[i] = bigmath.Exp(bf512(-x*x/(2*sigma*sigma)), bigPrec)
		total.Add(total, one[i])
	}
	for _, v := range one {
		v.Quo(v, total)
	}
	dist := []*big.Float{bf512(1)}
	pq := bf512(0) // each product, rounded to 512 bits as a new one would be
	for range n {
		next := make([]*big.Float, len(dist)+2*z)
		for i := range next {
			next[i] = bf512(0)
		}
		for i, p := range dist {
			for j, q := range one {
				next[i+j].Add(next[i+j], pq.Mul(p, q))
			}
		}
		dist = next
	}
	return dist, n * z
}

// bigDiscreteDelta is E[(1 - e^(ε-L))+] for the privacy loss
// L = Σ_g n_g/(2σ_g²) - S_g/σ_g² of k steps of parts, in 512 bits.
func bigDiscreteDelta(eps float64, parts []GaussianPart, k int) *big.Float {
	type group struct {
		p      []*big.Float
		off    int
		sigma2 float64
		n      int
	}
	var gs []group
	for _, pt := range parts {
		p, off := bigDGSum(pt.Sigma, pt.Coords*k)
		gs = append(gs, group{p, off, pt.Sigma * pt.Sigma, pt.Coords * k})
	}
	if len(gs) == 1 {
		gs = append(gs, group{[]*big.Float{bf512(1)}, 0, 1, 0})
	}
	a, b := gs[0], gs[1]
	// e^(ε-L) = e^(ε - c)·e^(s_a/σ_a²)·e^(s_b/σ_b²), each factor once.
	c := new(big.Float).SetPrec(bigPrec).Quo(bf512(float64(a.n)), bf512(2*a.sigma2))
	c.Add(c, new(big.Float).SetPrec(bigPrec).Quo(bf512(float64(b.n)), bf512(2*b.sigma2)))
	expOf := func(g group) []*big.Float {
		out := make([]*big.Float, len(g.p))
		for i := range g.p {
			out[i] = bigmath.Exp(new(big.Float).SetPrec(bigPrec).Quo(bf512(float64(i-g.off)), bf512(g.sigma2)), bigPrec)
		}
		return out
	}
	ea, eb := expOf(a), expOf(b)
	base := bigmath.Exp(new(big.Float).SetPrec(bigPrec).Sub(bf512(eps), c), bigPrec)
	one := bf512(1)
	sum, x := bf512(0), bf512(0)
	for i, pa := range a.p {
		fa := new(big.Float).SetPrec(bigPrec).Mul(base, ea[i])
		for j, pb := range b.p {
			// e^(s_b/σ_b²) rises with j, so once a term's factor is 1 or
			// more every later one's is: none of them adds to the sum.
			if x.Mul(fa, eb[j]); x.Cmp(one) >= 0 {
				break
			}
			w := x.Sub(one, x)
			w.Mul(w, pa)
			sum.Add(sum, w.Mul(w, pb))
		}
	}
	return sum
}

// TestDiscreteGaussianDeltaAgainstBig: the exact composition of discrete
// Gaussians is never below a 512-bit enumeration of the privacy loss and
// within 1e-9 of it, with one σ and with two (Confident-GNMax's shape).
func TestDiscreteGaussianDeltaAgainstBig(t *testing.T) {
	for _, c := range []struct {
		eps   float64
		parts []GaussianPart
		k     int
	}{
		{0.5, []GaussianPart{{Sigma: 2, Coords: 2}}, 1},
		{1, []GaussianPart{{Sigma: 1.5, Coords: 2}}, 2},
		{0.3, []GaussianPart{{Sigma: 2, Coords: 2}, {Sigma: 3, Coords: 1}}, 2},
		{1, []GaussianPart{{Sigma: 1, Coords: 1}, {Sigma: 2.5, Coords: 2}}, 1},
		// The closed form's tails, where δ is 2.5e-16 and 4e-21: its
		// rounding bound is relative.
		{4, []GaussianPart{{Sigma: 4, Coords: 2}}, 2},
		{3.6, []GaussianPart{{Sigma: 4, Coords: 2}, {Sigma: 6, Coords: 1}}, 1},
		// Below σ = 4 the sum is convolved directly, its error relative
		// too: the transform's absolute bound is 1e-13 here.
		{9, []GaussianPart{{Sigma: 2, Coords: 2}}, 2},
		{6, []GaussianPart{{Sigma: 2, Coords: 2}, {Sigma: 3, Coords: 1}}, 1},
	} {
		sums, err := discreteSums(testMemo, c.parts, c.k)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("discrete delta(%g; %v x %d)", c.eps, c.parts, c.k)
		ref := bigDiscreteDelta(c.eps, c.parts, c.k)
		r, _ := ref.Float64()
		t.Logf("%s: exact %.6g", name, r)
		checkAbove(t, name, discreteGaussianDelta(c.eps, sums), ref, 1e-9)
	}
}

// confident is Confident-GNMax with σ1 = 150, σ2 = 40 and discrete noise,
// every query charged: the reference case of docs/accountant.md
// ("Described mechanisms: one run and a ledger"), whose
// counts TestMaxSteps and TestRenyiStepsConfident check.
var confident = Spend{Kind: GaussianSpend, Guarantee: Guarantee{Eps: 0.173291, Delta: 1e-5}, Discrete: true,
	Gaussian: []GaussianPart{{Sigma: 40, Coords: 2}, {Sigma: 150, Coords: 1}}}

// TestRenyiStepsConfident: the queries that fit (2, 1e-5) by the RDP
// curve, against the independent reference counts: 167 by zCDP with the
// improved conversion, 123 with the paper's (194 by exact composition:
// TestMaxSteps).
func TestRenyiStepsConfident(t *testing.T) {
	for _, c := range []struct {
		conv Conversion
		want int
	}{{ImprovedConversion, 167}, {PaperConversion, 123}} {
		renyi := func(k int) float64 {
			tot, err := ComposeRun(testMemo, confident, k, 1e-5, 1e-5, c.conv)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range tot {
				if x.Method == Renyi {
					return x.Guarantee.Eps
				}
			}
			t.Fatal("no RDP total")
			return 0
		}
		if renyi(c.want) > 2 || renyi(c.want+1) <= 2 {
			t.Errorf("%v conversion: %d queries give eps %g, %d give %g; want the last within 2", c.conv, c.want, renyi(c.want), c.want+1, renyi(c.want+1))
		}
	}
}

// TestComposeRunExactBelowRenyi: the exact composition is valid and never
// looser than RDP's, and its ε meets the total δ (the profile at it is
// within δ, and 1e-6 less ε is not), on a table of cases.
func TestComposeRunExactBelowRenyi(t *testing.T) {
	for _, s := range []Spend{
		confident,
		{Kind: GaussianSpend, Guarantee: Guarantee{Eps: 1, Delta: 1e-6}, Gaussian: []GaussianPart{{Sigma: 5, Coords: 2}}},
		{Kind: GaussianSpend, Guarantee: Guarantee{Eps: 1, Delta: 1e-6}, Discrete: true, Gaussian: []GaussianPart{{Sigma: 5, Coords: 2}}},
	} {
		for _, k := range []int{1, 10, 100} {
			tot, err := ComposeRun(testMemo, s, k, 1e-6, 1e-5, ImprovedConversion)
			if err != nil {
				t.Fatal(err)
			}
			exact, renyi := tot[len(tot)-1], tot[len(tot)-2]
			if exact.Method != Exact || renyi.Method != Renyi || exact.Guarantee.Eps > renyi.Guarantee.Eps {
				t.Errorf("%v x %d: exact %v, rdp %v", s.Gaussian, k, exact, renyi)
			}
			r := newRunCurves(testMemo, s, k, 1e-6)
			if e := exact.Guarantee.Eps; r.delta(e) > 1e-6 || r.delta(e*(1-1e-6)) <= 1e-6 {
				t.Errorf("%v x %d: exact eps %g: delta %g there, %g at 1e-6 less", s.Gaussian, k, e, r.delta(e), r.delta(e*(1-1e-6)))
			}
		}
	}
}

// TestOneBitOfGaussian: a OneBitSpend that carries the Gaussian noise its
// bit is computed from (two-class GNMax: [n1 - n0 + Z1 - Z0 > 0]) has the
// noise's zCDP slope, so a run has its RDP total and a ledger's filter
// can charge it, and its exact composition, of the bit's pairs, is below
// the noise's; a bad part is refused.
func TestOneBitOfGaussian(t *testing.T) {
	const k, sigma = 11, 15.0
	noise := Spend{Kind: GaussianSpend, Guarantee: Guarantee{Eps: 0.45, Delta: 1e-5}, Gaussian: []GaussianPart{{Sigma: sigma, Coords: 2}}}
	bit := noise
	bit.Kind = OneBitSpend
	p := func(l int) float64 { return math.Erfc(-float64(2*l-k)/(2*sigma)) / 2 }
	for l := range k {
		// Wider than erfc's error: a pair further apart dominates.
		bit.Bits = append(bit.Bits, BitPair{P: p(l+1) * (1 + 1e-13), Q: p(l) * (1 - 1e-13)})
	}
	rn, okN := noise.rho()
	rb, okB := bit.rho()
	if !okN || !okB || rn != rb {
		t.Errorf("rho of the bit %v (%v), of its noise %v (%v)", rb, okB, rn, okN)
	}
	for _, q := range []int{10, 100} {
		nt, err := ComposeRun(testMemo, noise, q, 1e-5, 1e-5, ImprovedConversion)
		if err != nil {
			t.Fatal(err)
		}
		bt, err := ComposeRun(testMemo, bit, q, 1e-5, 1e-5, ImprovedConversion)
		if err != nil {
			t.Fatal(err)
		}
		methods := map[Method]Guarantee{}
		for _, x := range bt {
			methods[x.Method] = x.Guarantee
		}
		if _, ok := methods[Renyi]; !ok {
			t.Errorf("%d steps: no RDP total among %v", q, bt)
		}
		if e, g := methods[Exact], nt[len(nt)-1]; g.Method != Exact || e.Eps >= g.Guarantee.Eps {
			t.Errorf("%d steps: exact total of the bit %v, of the noise %v", q, e, g)
		}
	}
	bad := bit
	bad.Gaussian = []GaussianPart{{Sigma: 0, Coords: 2}}
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "sigma") {
		t.Errorf("a one-bit spend of noise sigma 0: %v", err)
	}
}

// TestClosedDGSum: from σ = dgClosedSigma on, the sum of n discrete
// Gaussians in closed form (closedDGSum) agrees in l1 with its transform
// (fftDGSum) within the two error bounds, and with a direct convolution
// in 512-bit arithmetic for n = 2.
func TestClosedDGSum(t *testing.T) {
	for _, c := range []struct {
		sigma float64
		n     int
	}{{4, 1}, {4, 2}, {4, 50}, {6.5, 3}, {40, 200}, {150, 100}} {
		z1 := int(math.Ceil(dgTails*c.sigma)) + 1
		w := int(math.Ceil(dgTails*c.sigma*math.Sqrt(float64(c.n)))) + z1
		closed, fft := closedDGSum(c.sigma, c.n, w), fftDGSum(c.sigma, c.n, z1, w)
		var l1 float64
		for i := range closed.p {
			l1 += math.Abs(closed.p[i] - fft.p[i])
		}
		// The closed form's rounding is relative: at most rel in l1 (the
		// masses sum to at most 1 + err).
		bound := closed.err + closed.rel*(1+closed.err) + fft.err
		if l1 > bound {
			t.Errorf("sigma %g, n %d: l1 distance %g to the transform, above the bounds %g", c.sigma, c.n, l1, bound)
		}
		if c.n != 2 {
			continue
		}
		// P[S = s] = Σ_z p(z)·p(s - z), p the mass function on ±z1.
		one := make([]*big.Float, 2*z1+1)
		norm := bf512(0)
		for z := -z1; z <= z1; z++ {
			one[z+z1] = bf512(math.Exp(-float64(z*z) / (2 * c.sigma * c.sigma)))
			norm.Add(norm, one[z+z1])
		}
		var dist float64
		for s := -w; s <= w; s++ {
			p := bf512(0)
			for z := max(-z1, s-z1); z <= min(z1, s+z1); z++ {
				p.Add(p, new(big.Float).SetPrec(bigPrec).Mul(one[z+z1], one[s-z+z1]))
			}
			p.Quo(p, norm).Quo(p, norm)
			ref, _ := p.Float64()
			dist += math.Abs(closed.p[s+w] - ref)
		}
		if dist > closed.err+closed.rel {
			t.Errorf("sigma %g, n 2: l1 distance %g to the direct convolution, above the bound %g", c.sigma, dist, closed.err+closed.rel)
		}
	}
}

// TestDGSumKept: a sum of discrete Gaussians asked again of a Memo is the
// one made first, equal to one made afresh, and the sums kept hold at
// most maxDGPoints points beside the most recent.
func TestDGSumKept(t *testing.T) {
	m := new(Memo)
	a, err := m.dgSum(3, 40)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := m.dgSum(3, 40); b != a {
		t.Error("the sum asked again was made again")
	}
	fresh, _ := newDGSum(3, 40)
	if !slices.Equal(a.p, fresh.p) || a.err != fresh.err {
		t.Error("the sum kept differs from one made afresh")
	}
	// Windows of 1.44, 1.49 and 1.54 million points: the last two are
	// kept.
	for _, sigma := range []float64{3e4, 3.1e4, 3.2e4} {
		if _, err := m.dgSum(sigma, 1); err != nil {
			t.Fatal(err)
		}
	}
	held := 0
	for _, d := range m.dgSums.recent[1:] {
		held += len(d.p)
	}
	if held > maxDGPoints || len(m.dgSums.recent) != 2 {
		t.Errorf("%d sums kept, %d points beside the most recent", len(m.dgSums.recent), held)
	}
}

// TestDiscreteGaussianSearchGuided: the estimate of the exact composition
// of discrete Gaussians is within 10^-12 of it, and the search for ε that
// it guides finds the same ε, to the bit, as the search by the profile
// alone, with one σ and with two; sums in closed form, convolved and
// transformed.
func TestDiscreteGaussianSearchGuided(t *testing.T) {
	for _, c := range []struct {
		parts []GaussianPart
		k     int
	}{
		{[]GaussianPart{{Sigma: 2, Coords: 2}}, 3},
		{[]GaussianPart{{Sigma: 1, Coords: 1}, {Sigma: 2.5, Coords: 2}}, 2},
		{[]GaussianPart{{Sigma: 3, Coords: 1}}, 400},
		{[]GaussianPart{{Sigma: 40, Coords: 2}}, 300},
		{[]GaussianPart{{Sigma: 40, Coords: 2}, {Sigma: 150, Coords: 1}}, 200},
		{[]GaussianPart{{Sigma: 6, Coords: 1}, {Sigma: 4.5, Coords: 3}}, 50},
	} {
		s := Spend{Kind: GaussianSpend, Discrete: true, Gaussian: c.parts}
		m := new(Memo) // the sums, made once for the three deltas
		for _, delta := range []float64{1e-3, 1e-6, 1e-10} {
			guided := newRunCurves(m, s, c.k, delta)
			if guided.delta == nil || guided.guess == nil {
				t.Fatalf("%v x %d: no exact composition: %s", c.parts, c.k, guided.missing)
			}
			for _, eps := range []float64{0, 0.01, 0.3, 1, 3, 10} {
				d, e := guided.delta(eps), guided.guess(eps)
				if math.Abs(e-d) > 1e-12*d+1e-300 {
					t.Errorf("%v x %d, eps %g: estimate %.17g, delta %.17g", c.parts, c.k, eps, e, d)
				}
			}
			plain := runCurves{k: c.k, delta: guided.delta}
			g, gok := guided.exactEps(delta, 1)
			p, pok := plain.exactEps(delta, 1)
			if g != p || gok != pok {
				t.Errorf("%v x %d, delta %g: guided %v (%v), plain %v (%v)", c.parts, c.k, delta, g, gok, p, pok)
			}
		}
	}
}
