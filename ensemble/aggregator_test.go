package ensemble

import (
	"context"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/fixtures"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
)

// optGamma returns gamma_opt for constraints.New(11, 3, 0.1, 1e-5), as darrm solve
// wrote it to the shared fixture (package optimal keeps it current).
func optGamma(t testing.TB, p constraints.Problem) gamma.Gamma {
	t.Helper()
	g, err := fixtures.GammaK11M3()
	if err != nil {
		t.Fatal(err)
	}
	if p != constraints.New(11, 3, 0.1, 1e-5) {
		t.Fatalf("optGamma has a fixture for K=11 m=3 only, not %+v", p)
	}
	return g
}

// arrange returns K votes with l ones, placed by a fixed scattering so
// that position-dependent bugs show.
func arrange(k, l, shift int) []byte {
	v := make([]byte, k)
	for i := range l {
		v[(i*5+shift)%k] = 1
	}
	return v
}

// draw aggregates the votes with l ones n times, for every l, and returns
// the counts of 1.
func draw(t testing.TB, agg Aggregator, src *noise.Source, n, shift int) []int {
	k := agg.K()
	ones := make([]int, k+1)
	for l := range ones {
		votes := arrange(k, l, shift)
		for range n {
			label, err := agg.Aggregate(votes, src)
			if err != nil {
				t.Fatal(err)
			}
			ones[l] += int(label)
		}
	}
	return ones
}

// gof returns the chi-square p-value of the counts of 1 in n draws for
// votes with l ones against want(l) = Pr[label = 1]. Cells with want 0 or
// 1 must match exactly (else the p-value is 0).
func gof(ones []int, n int, want func(l int) float64) float64 {
	var chi2 float64
	df := 0
	for l, o := range ones {
		p := want(l)
		if p <= 0 || p >= 1 {
			if float64(o) != p*float64(n) {
				return 0
			}
			continue
		}
		e := float64(n) * p
		chi2 += (float64(o) - e) * (float64(o) - e) / (e * (1 - p))
		df++
	}
	if df == 0 {
		return 1
	}
	return distuv.ChiSquared{K: float64(df)}.Survival(chi2)
}

// checkDistribution tests agg's output against the exact distribution
// want, and that the same test rejects a distribution 0.02 closer to a
// fair coin in every cell (so the test can fail).
func checkDistribution(t *testing.T, agg Aggregator, seed uint64, want func(l int) float64) {
	t.Helper()
	const n, alpha = 20000, 1e-4
	// One sample for both tests: the second checks the first's power.
	ones := draw(t, agg, noise.NewSeededSource(seed), n, 0)
	if pv := gof(ones, n, want); pv < alpha {
		t.Errorf("%s: output distribution differs from the exact one: p-value %.3g", agg.Name(), pv)
	}
	wrong := func(l int) float64 {
		p := want(l)
		if p > 0.5 {
			return p - 0.02
		}
		return p + 0.02
	}
	if pv := gof(ones, n, wrong); pv >= alpha {
		t.Errorf("%s: the test does not reject a distribution off by 0.02: p-value %.3g", agg.Name(), pv)
	}
}

func TestDaRRMDistribution(t *testing.T) {
	p := constraints.New(11, 3, 0.1, 1e-5)
	g := optGamma(t, p)
	d, err := newPrivateDaRRM(context.Background(), p, g, Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	for l, v := range d.Gamma() {
		if v > g[l] || g[l]-v >= 0x1p-53 {
			t.Errorf("sampled gamma(%d) = %v, gamma = %v: want within 2^-53 below", l, v, g[l])
		}
	}
	if c := d.Privacy().Certificate; c == nil || c.Status != gamma.Certified {
		t.Fatalf("certificate %+v", c)
	}
	// m·eps is 3 × 0.1 as the decimals multiply, the target certified.
	if got := d.Privacy().Guarantee; got.Eps != 0.3 || got.Eps != p.MEps() || got.Delta != p.TargetDelta || d.Privacy().Certificate.Budget != p.Budget() {
		t.Errorf("guarantee %v, want (m·eps, delta) = (0.3, %v), certified", got, p.TargetDelta)
	}
	// Algorithm 1 directly: majority with probability gamma(l), else a coin.
	checkDistribution(t, d, 1, func(l int) float64 {
		if 2*l > p.K {
			return g[l] + (1-g[l])/2
		}
		return (1 - g[l]) / 2
	})
}

func TestRRDistribution(t *testing.T) {
	p := constraints.New(11, 3, 0.1, 1e-5)
	r, err := newRR(context.Background(), p, accountant.Simple, 0, Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	// Lemma B.1.1 as printed, with simple composition: tau = K, lambda =
	// K·Delta.
	em, et, lambda := math.Exp(3*0.1), math.Exp(11*0.1), 11e-5
	pc := (em - 1 + 2*p.TargetDelta) / (2*(et-em+(1+em)*lambda)/(et+1) + em - 1)
	if math.Abs(r.PConst()-pc) > 1e-15 || r.PConst() > pc {
		t.Errorf("p_const = %v, Lemma B.1.1 gives %v", r.PConst(), pc)
	}
	checkDistribution(t, r, 2, func(l int) float64 {
		if 2*l > p.K {
			return (1 + pc) / 2
		}
		return (1 - pc) / 2
	})
}

// subsetMajority returns Pr[label = 1] for the majority of s of the votes
// drawn without replacement, ties by a fair coin, by enumerating every
// s-subset: an independent reference for Lemma 3.4.1.
func subsetMajority(votes []byte, s int) float64 {
	k := len(votes)
	var one, total float64
	var rec func(start, left, ones int)
	rec = func(start, left, ones int) {
		if left == 0 {
			total++
			switch {
			case 2*ones > s:
				one++
			case 2*ones == s:
				one += 0.5
			}
			return
		}
		for i := start; i <= k-left; i++ {
			rec(i+1, left-1, ones+int(votes[i]))
		}
	}
	rec(0, s, 0)
	return one / total
}

func TestSubsampleDistribution(t *testing.T) {
	for _, tc := range []struct {
		m    float64
		size int
	}{{3, 3}, {2, 2}, {1, 1}, {3.7, 3}} {
		p := constraints.New(11, tc.m, 0.1, 1e-5)
		s, err := newSubsample(context.Background(), p, Options{Memo: testMemo})
		if err != nil {
			t.Fatal(err)
		}
		if s.Size() != tc.size {
			t.Errorf("m = %v: subsample size %d, want %d", tc.m, s.Size(), tc.size)
		}
		for shift := range 2 {
			want := func(l int) float64 { return subsetMajority(arrange(11, l, shift), tc.size) }
			// Under -short the sampled law in arrangement 1 alone: that of
			// arrangement 0 is checkDistribution's below, against
			// DaRRM(gamma_Sub)'s law, which the loop here finds equal.
			if !testing.Short() || shift == 1 {
				if pv := gof(draw(t, s, noise.NewSeededSource(uint64(3+shift)), 20000, shift), 20000, want); pv < 1e-4 {
					t.Errorf("m = %v, arrangement %d: p-value %.3g", tc.m, shift, pv)
				}
			}
			// Lemma 3.4.1: the same law as DaRRM with gamma_Sub.
			for l := 0; l <= 11; l++ {
				if d := math.Abs(want(l) - probOne(s.Gamma(), l)); d > 1e-14 {
					t.Errorf("m = %v, l = %d: subset enumeration %v, DaRRM(gamma_Sub) %v", tc.m, l, want(l), probOne(s.Gamma(), l))
				}
			}
		}
		checkDistribution(t, s, 5, func(l int) float64 { return probOne(s.Gamma(), l) })
	}
}

func TestSubsampleGuarantee(t *testing.T) {
	ctx := context.Background()
	// m = 3: gamma_Sub certifies (m·eps, delta) with room to spare.
	s, err := newSubsample(ctx, constraints.New(11, 3, 0.1, 1e-5), Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	if s.Privacy().Certificate == nil || !strings.Contains(s.Privacy().Source, "certificate") {
		t.Errorf("m = 3: source %q, certificate %v", s.Privacy().Source, s.Privacy().Certificate)
	}
	// m = 1: gamma_Sub is exactly tight (Lemma 3.4.2); composition proves it.
	s, err = newSubsample(ctx, constraints.New(11, 1, 0.1, 1e-5), Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	if s.Privacy().Certificate != nil || !strings.Contains(s.Privacy().Source, "composition") {
		t.Errorf("m = 1: source %q, certificate %v", s.Privacy().Source, s.Privacy().Certificate)
	}
	// Delta = 0, m > 1: gamma_Sub is exactly tight at s·eps, and the target
	// m·eps is the decimals' product. 3 × 0.7 = 2.1 lies above 3 times the
	// float64 0.7 (2.0999999999999996): composition proves it. 3 × 0.1 =
	// 0.3 lies below 3 times the float64 0.1 (0.30000000000000004):
	// composition falls short by that rounding, and c·gamma_Sub is
	// certified at 0.3 itself, c = 1 - O(1e-13).
	for _, tc := range []struct {
		eps, meps float64
		scaled    bool
	}{{0.7, 2.1, false}, {0.1, 0.3, true}} {
		s, err := newSubsample(ctx, constraints.New(11, 3, tc.eps, 0), Options{Memo: testMemo})
		if err != nil {
			t.Fatalf("eps = %v, Delta = 0: %v", tc.eps, err)
		}
		priv, scale := s.Privacy(), discrete.Realised(s.keep)
		if priv.Guarantee.Eps != tc.meps || priv.Guarantee.Delta != 0 {
			t.Errorf("eps = %v, Delta = 0: guarantee %v, want (%v, 0)", tc.eps, priv.Guarantee, tc.meps)
		}
		switch {
		case !tc.scaled && (scale != 1 || priv.Certificate != nil || !strings.Contains(priv.Source, "composition")):
			t.Errorf("eps = %v, Delta = 0: scale %v, source %q: want composition", tc.eps, scale, priv.Source)
		case tc.scaled && (scale >= 1 || scale < 1-1e-11 || priv.Certificate == nil || priv.Certificate.Status != gamma.Certified || priv.Certificate.Budget != math.Expm1(tc.meps)):
			t.Errorf("eps = %v, Delta = 0: scale %v, certificate %+v: want c·gamma_Sub certified at %v", tc.eps, scale, priv.Certificate, tc.meps)
		}
		g, _ := gamma.Sub(11, 3)
		checkDistribution(t, s, 7, func(l int) float64 { return probOne(g.Scale(scale), l) })
	}
}

func TestDoubleSubsample(t *testing.T) {
	ctx := context.Background()
	if _, err := newDoubleSubsample(ctx, constraints.New(11, 3, 0.1, 1e-5), Options{Memo: testMemo}); err == nil || !strings.Contains(err.Error(), "Delta = 0") {
		t.Errorf("Delta > 0: err = %v", err)
	}
	for _, tc := range []struct {
		m    float64
		size int
	}{{3, 5}, {1, 1}, {6, 11}} {
		p := constraints.New(11, tc.m, 0.1, 0)
		d, err := newDoubleSubsample(ctx, p, Options{Memo: testMemo})
		if err != nil {
			t.Fatalf("m = %v: %v", tc.m, err)
		}
		if d.Size() != tc.size || d.Name() != "dsub" {
			t.Errorf("m = %v: %s of size %d, want dsub of %d", tc.m, d.Name(), d.Size(), tc.size)
		}
		c := d.Privacy().Certificate
		if c == nil || c.Status != gamma.Certified {
			t.Fatalf("m = %v: certificate %+v", tc.m, c)
		}
		g, _ := gamma.DSub(11, tc.m)
		scale := discrete.Realised(d.keep)
		if scale > 1 || scale < 1-1e-11 {
			t.Errorf("m = %v: scale %v, want 1 - O(1e-13)", tc.m, scale)
		}
		checkDistribution(t, d, 6, func(l int) float64 { return probOne(g.Scale(scale), l) })
	}
	// With delta > 0 the budget has room: no scaling.
	p := constraints.New(11, 3, 0.1, 0)
	p.TargetDelta = 1e-6
	d, err := newDoubleSubsample(ctx, p, Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	if d.keep != discrete.Unit53 {
		t.Errorf("Delta = 0, delta = 1e-6: scale %v, want 1", discrete.Realised(d.keep))
	}
}

func TestGNMax(t *testing.T) {
	p := constraints.New(11, 3, 0.1, 1e-4) // the MNIST setting of Table 3.2: (0.3, ~3e-4)
	p.Eps = 0.0892
	p.TargetDelta = 3e-4
	g, err := newGNMax(p, noisymax.GNMaxGrid)
	if err != nil {
		t.Fatal(err)
	}
	sigma, _ := g.Sigma()
	if math.Abs(sigma-21.46) > 0.005 {
		t.Errorf("sigma = %v, Table B.2 gives 21.46", sigma)
	}
	// Two Gaussian counts: label 1 iff (2L-K) + N(0, 2σ²) > 0.
	noise := distuv.Normal{Mu: 0, Sigma: sigma * math.Sqrt2}
	want := func(l int) float64 { return 1 - noise.CDF(-float64(2*l-p.K)) }
	for l := 0; l <= p.K; l++ {
		if d := math.Abs(probOne(g.Gamma(), l) - want(l)); d > 1e-14 {
			t.Errorf("l = %d: Pr[1] = %v, Gaussian %v", l, probOne(g.Gamma(), l), want(l))
		}
	}
	checkDistribution(t, g, 7, want)
	if e := g.BitEpsilon(); e < 0.06 || e > 0.075 {
		t.Errorf("bit epsilon = %v, want about 0.067", e)
	}
	p.TargetDelta, p.Delta = 0, 0
	if _, err := newGNMax(p, noisymax.GNMaxGrid); err == nil {
		t.Error("GNMax accepted delta = 0")
	}
}

// TestGNMaxTight: the tight calibration gives the released bit's own
// least noise (σ = 7.73 for the MNIST target of Table 3.2 with darrm's
// teachers, against 21.6 by the paper's grid search), its sampled label
// probabilities meet the target exactly, and it works where the grid has
// no point.
func TestGNMaxTight(t *testing.T) {
	for _, tc := range []struct {
		k           int
		m, eps      float64
		Delta       float64
		sigmaLo, hi float64
	}{
		{11, 3, 0.08846, 1e-4, 7.72, 7.74},
		{11, 3, 0.08539, 1e-4, 7.91, 7.93},
		{11, 1, 0.1, 1e-5, 0, math.Inf(1)},
		{101, 5, 0.1, 1e-6, 0, math.Inf(1)},
		{3, 1, 0.5, 1e-3, 0, math.Inf(1)},
	} {
		p := constraints.New(tc.k, tc.m, 0.1, tc.Delta)
		p.Eps = tc.eps
		g, err := newGNMax(p, noisymax.GNMaxTight)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		sigma, lambda := g.Sigma()
		if sigma < tc.sigmaLo || sigma > tc.hi || lambda != 0 || !strings.Contains(g.Privacy().Source, "tight") {
			t.Errorf("%+v: sigma %v, lambda %v, source %q", tc, sigma, lambda, g.Privacy().Source)
		}
		target := g.Privacy().Guarantee
		if _, hs := bitPrivacy(g.Gamma(), target.Eps); hs > target.Delta {
			t.Errorf("%+v: sampled probabilities at delta %v, target %v", tc, hs, target)
		}
		if grid, err := newGNMax(p, noisymax.GNMaxGrid); err == nil {
			if gs, _ := grid.Sigma(); !(sigma < gs) {
				t.Errorf("%+v: tight sigma %v, grid %v", tc, sigma, gs)
			}
		}
	}
}

func TestDaRRMRejects(t *testing.T) {
	ctx := context.Background()
	p := constraints.New(11, 1, 0.1, 1e-5)
	one, _ := gamma.Const(11, 1) // the plain majority is not eps-DP
	for name, tc := range map[string]struct {
		g    gamma.Gamma
		want string
	}{
		"not certified": {one, "violated"},
		"wrong K":       {make(gamma.Gamma, 8), "want K+1 = 12"},
		"asymmetric":    {gamma.Gamma{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.5}, "symmetric"},
		"out of range":  {gamma.Gamma{2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}, "[0, 1]"},
	} {
		_, err := newPrivateDaRRM(ctx, p, tc.g, Options{Memo: testMemo})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, tc.want)
		}
		if notCert := errors.Is(err, gamma.ErrNotCertified); notCert != (name == "not certified") {
			t.Errorf("%s: errors.Is(err, gamma.ErrNotCertified) = %v", name, notCert)
		}
	}
	// gamma_Sub at m = 1 meets the budget exactly: tight, not certified.
	sub, _ := gamma.Sub(11, 1)
	if _, err := newPrivateDaRRM(ctx, p, sub, Options{Memo: testMemo}); !errors.Is(err, gamma.ErrNotCertified) || !strings.Contains(err.Error(), "tight") {
		t.Errorf("tight gamma: err = %v", err)
	}
}

// TestSubAccuracy checks gamma.Sub against exact rational arithmetic, the
// bound behind subSlack.
func TestSubAccuracy(t *testing.T) {
	for _, k := range []int{11, 41, 101} {
		for _, s := range []int{1, 2, 3, 5, 10, k} {
			g, err := gamma.Sub(k, s)
			if err != nil {
				t.Fatal(err)
			}
			for l := 0; l <= k; l++ {
				// gamma = |2·Pr[subsample majority = 1] - 1|, ties count 1/2.
				win := new(big.Rat)
				for j := 0; j <= s; j++ {
					num := new(big.Int).Mul(new(big.Int).Binomial(int64(l), int64(j)), new(big.Int).Binomial(int64(k-l), int64(s-j)))
					if num.Sign() == 0 || 2*j < s {
						continue
					}
					term := new(big.Rat).SetFrac(num, new(big.Int).Binomial(int64(k), int64(s)))
					if 2*j == s {
						term.Quo(term, big.NewRat(2, 1))
					}
					win.Add(win, term)
				}
				exact := new(big.Rat).Sub(new(big.Rat).Mul(win, big.NewRat(2, 1)), big.NewRat(1, 1))
				exact.Abs(exact)
				e, _ := exact.Float64()
				if d := math.Abs(e - g[l]); d > 1e-15 {
					t.Errorf("K = %d, s = %d, l = %d: gamma_Sub = %v, exact %v (error %g)", k, s, l, g[l], e, d)
				}
			}
		}
	}
}

func TestAgreement(t *testing.T) {
	g, _ := gamma.Sub(5, 3)
	p := []float64{0.9, 0.8, 0.7, 0.4, 0.1}
	a, err := g.Agreement(p)
	if err != nil {
		t.Fatal(err)
	}
	// Brute force over the 2^5 vote vectors.
	var want float64
	for mask := 0; mask < 32; mask++ {
		pr, l := 1.0, 0
		votes := make([]byte, 5)
		for i := range 5 {
			if mask>>i&1 == 1 {
				pr *= p[i]
				l++
				votes[i] = 1
			} else {
				pr *= 1 - p[i]
			}
		}
		pOne := subsetMajority(votes, 3)
		if 2*l > 5 {
			want += pr * pOne
		} else {
			want += pr * (1 - pOne)
		}
	}
	if math.Abs(a-want) > 1e-15 {
		t.Errorf("Agreement = %v, brute force %v", a, want)
	}
	if _, err := g.Agreement(p[:3]); err == nil {
		t.Error("Agreement accepted 3 probabilities for K = 5")
	}
}

// testMemo is the memo of the package's tests: the certificates, pairs
// and compositions that many tests ask of the same aggregators are made
// once per test binary, as a command's one Memo makes them once for its
// run. A test that counts what is computed holds a Memo of its own.
var testMemo = new(accountant.Memo)
