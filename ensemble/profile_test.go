package ensemble

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/bigmath"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
)

// labelPairs returns the label's distributions (Pr[0], Pr[1]) at every
// ordered pair of neighbouring vote counts of agg in the one-vote relation
// (l, l±1), and at equal counts, as the sampler draws them.
func labelPairs(agg Aggregator) [][2][2]float64 {
	g, k := agg.Gamma(), agg.K()
	dist := func(l int) [2]float64 { p := probOne(g, l); return [2]float64{1 - p, p} }
	pairs := [][2][2]float64{{dist(0), dist(0)}}
	for l := range k {
		pairs = append(pairs, [2][2]float64{dist(l), dist(l + 1)}, [2][2]float64{dist(l + 1), dist(l)})
	}
	return pairs
}

// adaptiveDelta returns the hockey-stick divergence at e^eps of k
// releases of one bit whose pairs of distributions on two neighbouring
// inputs are pairs, each release's pair chosen by an adversary who has
// seen the earlier labels: the exact worst case of adaptive composition.
// The divergence is E_P[max(0, 1 - e^(eps - L))] for the privacy loss L of
// the whole transcript, which the adversary steers one release at a time,
// so a dynamic programme over the loss so far gives it exactly.
func adaptiveDelta(pairs [][2][2]float64, k int, eps float64) float64 {
	// Losses that agree to 1e-12 are one state (they differ by rounding),
	// kept as the first value found.
	type state = int64
	key := func(r float64) state { return int64(math.Round(r * 1e12)) }
	levels := []map[state]float64{{0: 0}}
	for n := 0; n < k; n++ {
		next := map[state]float64{}
		for _, r := range levels[n] {
			for _, pq := range pairs {
				for o := range 2 {
					if p, q := pq[0][o], pq[1][o]; p > 0 && q > 0 {
						if s := r + math.Log(p/q); next[key(s)] == 0 {
							next[key(s)] = s
						}
					}
				}
			}
		}
		levels = append(levels, next)
	}
	value := map[state]float64{}
	for kr, r := range levels[k] {
		value[kr] = math.Max(0, -math.Expm1(eps-r))
	}
	for n := k - 1; n >= 0; n-- {
		prev := map[state]float64{}
		for kr, r := range levels[n] {
			best := 0.0
			for _, pq := range pairs {
				v := 0.0
				for o := range 2 {
					switch p, q := pq[0][o], pq[1][o]; {
					case p == 0:
					case q == 0:
						v += p // infinite loss: the whole mass counts
					default:
						v += p * value[key(r+math.Log(p/q))]
					}
				}
				best = math.Max(best, v)
			}
			prev[kr] = best
		}
		value = prev
	}
	return value[0]
}

// TestOneVoteProfileAdaptive checks the profile of DaRRM's label in the
// one-vote relation, and the totals composed from it, against the exact
// worst case over adversaries that choose each query's pair of vote counts
// after seeing the earlier labels: gamma_opt's ramps (ending at K, and
// reaching 1 before it), a gamma below gamma_opt, randomized response's
// constant, and pure DP.
func TestOneVoteProfileAdaptive(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name       string
		k          int
		eps, delta float64
		scale      float64 // gamma_opt scaled by this
		rr         bool
	}{
		{"ramp to K", 5, 0.5, 1e-3, 1, false},
		{"ramp reaches 1", 7, 0.7, 0.05, 1, false},
		{"below gamma_opt", 5, 0.5, 1e-2, 0.8, false},
		{"rr", 5, 0.5, 1e-2, 1, true},
		{"pure", 5, 0.4, 0, 1, false},
	} {
		p := constraints.NewOneVote(c.k, c.eps, c.delta)
		g, err := gamma.OneVoteOpt(p)
		if c.rr {
			var b gamma.Baseline
			b, err = gamma.RRBaseline(p, 0, 0)
			g = b.Gamma
		}
		if err != nil {
			t.Fatal(err)
		}
		for l := range g {
			g[l] *= c.scale
		}
		if g, _, err = gamma.Certify(ctx, p, g, gamma.VerifyOptions{}); err != nil {
			t.Fatal(err)
		}
		d, err := newOneVoteDaRRM(ctx, p, g, Options{Memo: testMemo})
		if err != nil {
			t.Fatal(c.name, err)
		}
		priv, pairs := d.Privacy(), labelPairs(d)
		for _, pt := range priv.Profile {
			// The reference is float64: 1e-14 covers its rounding.
			if got := adaptiveDelta(pairs, 1, pt.Eps); got > pt.Delta+1e-14 {
				t.Errorf("%s: profile point %v, but one label's divergence at that eps is %g", c.name, pt, got)
			}
			if pt.Delta >= priv.Delta || pt.Eps < priv.Eps {
				t.Errorf("%s: profile point %v is not beyond the guarantee %v", c.name, pt, priv.Guarantee)
			}
		}
		// Under -short up to 4 labels: the worst adaptive adversary's
		// states, enumerated here, grow fastest with the labels.
		runs := []int{1, 2, 4, 6}
		if testing.Short() {
			runs = runs[:3]
		}
		for _, k := range runs {
			opt, _ := accountant.Composition{Method: accountant.Optimal, DeltaPrime: 1e-3}.Compose(priv.Guarantee, k)
			total, point, err := accountant.ComposeProfile(priv.Guarantee, priv.Profile, k, 1e-3)
			if err != nil {
				t.Fatal(err)
			}
			exact := adaptiveDelta(pairs, k, total.Eps)
			if exact > total.Delta+1e-14 {
				t.Errorf("%s k=%d: total %v (point %v), but the worst adaptive divergence at that eps is %g", c.name, k, total, point, exact)
			}
			t.Logf("%s k=%d: total eps %.4f (profile point %v; the guarantee's optimal composition %.4f) at delta %.3g; exact worst case there %.3g",
				c.name, k, total.Eps, point, opt.Eps, total.Delta, exact)
			// The exact composition of the label's pairs (OneBitSpend):
			// never below the worst adaptive adversary, never above
			// optimal composition of the guarantee.
			run, err := accountant.ComposeRun(testMemo, priv.Spend, k, total.Delta, 1e-3, accountant.ImprovedConversion)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range run {
				if r.Method != accountant.Exact {
					continue
				}
				if worst := adaptiveDelta(pairs, k, r.Guarantee.Eps); worst > r.Guarantee.Delta+1e-14 {
					t.Errorf("%s k=%d: exact composition %v, but the worst adaptive divergence at that eps is %g", c.name, k, r.Guarantee, worst)
				}
				if r.Guarantee.Eps > opt.Eps*(1+1e-9) {
					t.Errorf("%s k=%d: exact composition %v above optimal composition %v", c.name, k, r.Guarantee, opt)
				}
				t.Logf("%s k=%d: exact composition of the pairs %.4f", c.name, k, r.Guarantee.Eps)
			}
		}
	}
}

// TestRRCurve: randomized response in the private-teachers relation
// describes its label by pairs (at the corner multisets; accountant.RRBits
// for many teachers) whose profile at the certified ε is within the
// certified δ, which dominate random teachers' labels, and whose run totals are
// never above optimal composition of the guarantee (Table B.1's K = 35,
// K = 11 with Δ > 0, and pure teachers).
func TestRRCurve(t *testing.T) {
	for _, c := range []struct {
		k           int
		m, eps, del float64
	}{{11, 3, 0.0885, 1e-4}, {35, 6.4521, 0.0885, 1e-4}, {11, 3, 0.1, 0}} {
		p := constraints.New(c.k, c.m, c.eps, c.del)
		r, err := newRR(context.Background(), p, accountant.General, 0.1, Options{Memo: testMemo})
		if err != nil {
			t.Fatal(err)
		}
		priv := r.Privacy()
		if priv.Kind != accountant.OneBitSpend {
			t.Fatalf("%+v: curve %v", c, priv.Kind)
		}
		checkExactBelowOptimal(t, fmt.Sprintf("%+v", c), priv)
		// The pairs' own divergence at the certified ε, both orders, and
		// their domination of random teachers' labels.
		env := bitsEnvelope(priv.Bits)
		if h := env(math.Exp(priv.Eps)); h > priv.Delta+1e-11 {
			t.Errorf("%+v: the pairs reach %g at the certified eps %g, above its delta %g", c, h, priv.Eps, priv.Delta)
		}
		checkRandomTeachers(t, "rr", p, r, env)
	}
}

// TestPrivateTeacherBits: DaRRM in the private-teachers relation
// describes its label by the pairs at every corner multiset (widened by
// their rounding), which meet the certified guarantee at its ε and
// dominate the label's pairs at teachers' vote probabilities drawn at
// random inside their (ε, Δ) region, not only at its corners; its run
// totals are never above optimal composition of the guarantee.
func TestPrivateTeacherBits(t *testing.T) {
	p := constraints.New(11, 3, 0.1, 1e-5)
	d, err := newPrivateDaRRM(context.Background(), p, optGamma(t, p), Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	priv := d.Privacy()
	if priv.Kind != accountant.OneBitSpend || len(priv.Bits) == 0 {
		t.Fatalf("curve %v with %d pairs", priv.Kind, len(priv.Bits))
	}
	envelope := bitsEnvelope(priv.Bits)
	// gamma_opt meets its constraint with equality, and the pairs are
	// widened by their rounding bound (about 1e-12): within that.
	if h := envelope(math.Exp(priv.Eps)); h > priv.Delta+1e-11 {
		t.Errorf("the pairs reach %g at the certified eps %g, above its delta %g", h, priv.Eps, priv.Delta)
	}
	checkRandomTeachers(t, "darrm", p, d, envelope)
	checkExactBelowOptimal(t, "darrm", priv)
}

// TestSubsampleBits: subsampling describes its label by the pairs at
// every corner multiset too, which meet its guarantee at its ε (within
// their rounding) and whose run totals are never above optimal
// composition of the guarantee.
func TestSubsampleBits(t *testing.T) {
	for _, c := range []struct {
		name string
		new  func(context.Context, constraints.Problem, Options) (*subsampleAggregator, error)
		p    constraints.Problem
	}{
		{"subsample", newSubsample, constraints.New(11, 3, 0.1, 1e-5)},
		{"dsub", newDoubleSubsample, constraints.New(11, 3, 0.1, 0)},
	} {
		s, err := c.new(context.Background(), c.p, Options{Memo: testMemo})
		if err != nil {
			t.Fatal(err)
		}
		priv := s.Privacy()
		if priv.Kind != accountant.OneBitSpend {
			t.Fatalf("%s: curve %v", c.name, priv.Kind)
		}
		env := bitsEnvelope(priv.Bits)
		if h := env(math.Exp(priv.Eps)); h > priv.Delta+1e-11 {
			t.Errorf("%s: the pairs reach %g at eps %g, above delta %g", c.name, h, priv.Eps, priv.Delta)
		}
		checkRandomTeachers(t, c.name, c.p, s, env)
		checkExactBelowOptimal(t, c.name, priv)
	}
}

// TestTeacherBitsMemoWithoutM: the pairs of a label do not depend on m or
// the target's delta, which privateTeacherBits' memo leaves out of its key:
// two problems that differ only there give the same pairs, each computed
// afresh, and the memo hands the first's to the second.
func TestTeacherBitsMemoWithoutM(t *testing.T) {
	g, err := gamma.Sub(11, 3)
	if err != nil {
		t.Fatal(err)
	}
	f := labelProbs{one: make([]float64, 12), zero: make([]float64, 12), abs: 1e-14 + 0x1p-53}
	for l := range f.one {
		f.one[l] = probOne(g, l)
		f.zero[l] = 1 - f.one[l]
	}
	for _, c := range []struct{ a, b constraints.Problem }{
		{constraints.New(11, 3, 0.1, 1e-5), constraints.New(11, 3.7, 0.1, 1e-5)},
		{constraints.New(11, 3, 0.1, 0), constraints.Problem{K: 11, M: 3.5, Eps: 0.1, TargetDelta: 1e-3}},
	} {
		want, okA := teacherBitsOf(c.a, f)
		got, okB := teacherBitsOf(c.b, f)
		if !okA || !okB || len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%+v and %+v: %d and %d pairs, equal %t", c.a, c.b, len(want), len(got), slices.Equal(got, want))
		}
		memo := new(accountant.Memo)
		privateTeacherBits(memo, c.a, f)
		if held, ok := teacherBitsIn(memo).get(constraints.Problem{K: 11, Eps: 0.1, Delta: c.b.Delta, Relation: c.b.Relation}, f); !ok || !slices.Equal(held, want) {
			t.Errorf("%+v: the memo holds %d pairs (%t) under the problem without m, want %d", c.a, len(held), ok, len(want))
		}
		if kept, ok := privateTeacherBits(memo, c.b, f); !ok || !slices.Equal(kept, want) {
			t.Errorf("%+v after %+v: %d pairs from the memo, want %d", c.b, c.a, len(kept), len(want))
		}
	}
}

// checkRandomTeachers checks that the label of agg, for teachers of p
// whose vote probabilities are drawn at random inside their (ε, Δ)
// region (mostly near its diagonal, where the worst cases are), never
// has a hockey-stick divergence above envelope at the orders tested.
func checkRandomTeachers(t *testing.T, name string, p constraints.Problem, agg Aggregator, envelope func(float64) float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	e := math.Exp(p.Eps)
	inRegion := func(x, y float64) bool {
		return x <= e*y+p.Delta && y <= e*x+p.Delta && 1-x <= e*(1-y)+p.Delta && 1-y <= e*(1-x)+p.Delta
	}
	hockey := func(a, b, alpha float64) float64 {
		return math.Max(0, a-alpha*b) + math.Max(0, (1-a)-alpha*(1-b))
	}
	g := agg.Gamma()
	// The orders tested, and the envelope at each, computed once.
	alphas, envs := make([]float64, 20), make([]float64, 20)
	for i := range alphas {
		alphas[i] = math.Exp(float64(i) / 20)
		envs[i] = envelope(alphas[i])
	}
	for range 100 {
		ps, qs := make([]float64, p.K), make([]float64, p.K)
		for i := range ps {
			for {
				x := rng.Float64()
				y := x + (rng.Float64()*2-1)*0.06
				if y >= 0 && y <= 1 && inRegion(x, y) {
					ps[i], qs[i] = x, y
					break
				}
			}
		}
		pa, err := g.LabelOne(ps)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := g.LabelOne(qs)
		if err != nil {
			t.Fatal(err)
		}
		for i, alpha := range alphas {
			if h, env := math.Max(hockey(pa, pb, alpha), hockey(pb, pa, alpha)), envs[i]; h > env+1e-12 {
				t.Fatalf("%s: votes %v / %v: divergence %g at α = %g, above the pairs' %g", name, ps, qs, h, alpha, env)
			}
		}
	}
}

// bitsEnvelope returns the largest hockey-stick divergence of the pairs,
// both orders, at α.
func bitsEnvelope(bits []accountant.BitPair) func(float64) float64 {
	return func(alpha float64) float64 {
		var h float64
		for _, b := range bits {
			for _, pq := range [2][2]float64{{b.P, b.Q}, {b.Q, b.P}} {
				h = math.Max(h, math.Max(0, pq[0]-alpha*pq[1])+math.Max(0, (1-pq[0])-alpha*(1-pq[1])))
			}
		}
		return h
	}
}

// checkExactBelowOptimal checks that the exact composition of priv's
// pairs over 1, 20 and 100 runs is never above the optimal composition of
// its guarantee at the same total delta. Under -short 1 and 20 runs:
// 100 composes by the same transform as 20 (the whole window of sums,
// 2^19 points), once more for each caller.
func checkExactBelowOptimal(t *testing.T, name string, priv Privacy) {
	t.Helper()
	runs := []int{1, 20, 100}
	if testing.Short() {
		runs = runs[:2]
	}
	for _, k := range runs {
		opt, err := accountant.Composition{Method: accountant.Optimal, DeltaPrime: 1e-5}.Compose(priv.Guarantee, k)
		if err != nil {
			t.Fatal(err)
		}
		run, err := accountant.ComposeRun(testMemo, priv.Spend, k, opt.Delta, 1e-5, accountant.ImprovedConversion)
		if err != nil {
			t.Fatal(err)
		}
		exact := run[len(run)-1]
		if exact.Method != accountant.Exact || exact.Guarantee.Eps > opt.Eps*(1+1e-9) {
			t.Errorf("%s k=%d: exact %v, optimal composition %v", name, k, exact, opt)
		}
		t.Logf("%s k=%d: exact %.4f, optimal composition of %v: %.4f at delta %.3g", name, k, exact.Guarantee.Eps, priv.Guarantee, opt.Eps, opt.Delta)
	}
}

// issue55 is the problem of issue 55's count (K = 11, m = 2, teachers
// (0.05, 1e-9)), and issue55Gamma gamma_opt as solved for it, whose
// γ(0) = 1 - 1e-12 gives Pr[1 | L = 0] about 5e-13.
var (
	issue55      = constraints.New(11, 2, 0.05, 1e-9)
	issue55Gamma = gamma.Gamma{0.9999999999990126, 0.9999999999990126, 0.8433986827874304, 0.9999999620924354,
		0.06039173191071856, 0.9986958657115629, 0.9986958657115629, 0.06039173191071856, 0.9999999620924354,
		0.8433986827874304, 0.9999999999990126, 0.9999999999990126}
)

// TestPrivateTeacherBitsAgainstBig: the label's Pr[1] and Pr[0] at every
// corner multiset, as privateTeacherBits computes them in float64
// (cornerProbs), are within the bound it widens them by (labelBounds,
// with the f given taken as exact), and within the absolute rounding
// bound (roundingBound), of the same sums in 200-bit arithmetic from the
// exact corners of the float64 ε and Δ; so the pairs widened by that
// bound, not twice it, dominate the label. At Δ = 1e-9 a Pr[1] of 5e-13
// (all teachers at the corner (Δ, 0), gamma_opt's γ(0) = 1 - 1e-12) keeps
// its size: the absolute bound alone would widen it to 0.
func TestPrivateTeacherBitsAgainstBig(t *testing.T) {
	const prec = 200
	bf := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	corners := func(p constraints.Problem) [][2]*big.Float {
		ei := bigmath.Exp(bf(-p.Eps), prec)
		den := new(big.Float).SetPrec(prec).Add(bf(1), ei)
		hi := new(big.Float).SetPrec(prec).Mul(bf(p.Delta), ei)
		hi.Add(hi, bf(1)).Quo(hi, den)
		lo := new(big.Float).SetPrec(prec).Sub(bf(1), bf(p.Delta))
		lo.Mul(lo, ei).Quo(lo, den)
		one, zero, d := bf(1), bf(0), bf(p.Delta)
		if p.Delta == 0 {
			return [][2]*big.Float{{zero, zero}, {one, one}, {hi, lo}, {lo, hi}}
		}
		oneMinusD := new(big.Float).SetPrec(prec).Sub(one, d)
		return [][2]*big.Float{{zero, zero}, {one, one}, {zero, d}, {d, zero}, {oneMinusD, one}, {one, oneMinusD}, {hi, lo}, {lo, hi}}
	}
	// dist is the law of L on one side of multiset c, in big floats.
	dist := func(cs [][2]*big.Float, c constraints.Config, side int) []*big.Float {
		ps := make([]*big.Float, len(c))
		for j := range c {
			ps[j] = cs[j][side]
		}
		return bigmath.PoissonBinomial(ps, c, prec)
	}
	// exact is the probability of the output whose probabilities given L
	// are f, under the law a.
	exact := func(a []*big.Float, f []float64) *big.Float {
		s := bf(0)
		for l, v := range a {
			s.Add(s, new(big.Float).SetPrec(prec).Mul(v, bf(f[l])))
		}
		return s
	}
	for _, c := range []struct {
		p    constraints.Problem
		kind string
	}{
		{constraints.New(3, 2, 0.5, 1e-4), "sub"},
		{constraints.New(5, 3, 0.1, 1e-5), "sub"},
		{constraints.New(7, 3, 1, 1e-3), "sub"},
		{constraints.New(9, 3, 0.1, 0), "sub"},
		{constraints.New(11, 3, 0.1, 1e-5), "opt"},
		{issue55, "issue55"},
	} {
		var g gamma.Gamma
		switch c.kind {
		case "opt":
			g = optGamma(t, c.p)
		case "issue55":
			g = issue55Gamma
		default:
			var err error
			if g, err = gamma.Sub(c.p.K, gamma.SubSize(c.p.M)); err != nil {
				t.Fatal(err)
			}
		}
		f := labelProbs{one: make([]float64, c.p.K+1), zero: make([]float64, c.p.K+1)}
		for l := range f.one {
			f.one[l] = probOne(g, l)
			f.zero[l] = 1 - f.one[l]
		}
		bound := roundingBound(c.p.K, 0)
		cs := corners(c.p)
		every := 7
		if c.kind == "issue55" {
			every = 29
		}
		if testing.Short() {
			// Under -short the same check at a smaller size: a third of
			// the sample at K >= 9 (the big sums are most of the test).
			every *= 3
		}
		var worst, ratio float64
		n := 0
		err := cornerProbs(c.p, f, func(m *cornerMultiset) {
			n++
			if c.p.K > 7 && n%every != 0 {
				return // a sample of the multisets at K >= 9 (each sum costs O(K²) big products)
			}
			for side := range m.probs {
				a := dist(cs, m.c, side)
				for output, of := range [2][]float64{f.one, f.zero} {
					got, gotErr := m.probs[side][output], m.err(side, output)
					ref := exact(a, of)
					diff, _ := new(big.Float).SetPrec(prec).Sub(bf(got), ref).Float64()
					worst = math.Max(worst, math.Abs(diff))
					if diff != 0 {
						ratio = math.Max(ratio, math.Abs(diff)/gotErr)
					}
					if math.Abs(diff) > math.Min(bound, gotErr) {
						t.Fatalf("%+v, multiset %v: probability %.17g, exact %s: off by %g, above the bounds %g, %g", c.p, m.c, got, ref.Text('g', 20), diff, bound, gotErr)
					}
				}
			}
		}, cornerRel(c.p))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("K=%d (%s, %d multisets): largest error %.3g, absolute bound %.3g; at most %.3g of the bound used", c.p.K, c.kind, n, worst, bound, ratio)
	}
	// Every teacher at (Δ, 0): the pair keeps its Q (Pr[1 | L = 0] of
	// about 5e-13), not 0, and its mirror its 1 - P.
	tb, _ := newTable(issue55Gamma)
	bits, ok := tb.privateTeacherBits(testMemo, issue55)
	if !ok {
		t.Fatal("no pairs")
	}
	for _, b := range bits {
		if b.Q == 0 || b.P == 1 {
			t.Errorf("pair %v: a probability 0 or 1 the label does not have", b)
		}
	}
}

// TestGNMaxBits: two-class GNMax describes its label, as darrm-one-vote
// does, by the pairs of its sampled output probabilities at neighbouring
// vote counts, which meet its guarantee at its ε, and by points of its
// profile, each holding for one label (so that a comparison of the two
// gives each the same families of totals); the exact composition of the
// pairs is never above optimal composition of the guarantee, and far
// below it for the paper's calibration, whose bit is pure DP at a
// quarter of its ε.
func TestGNMaxBits(t *testing.T) {
	for _, search := range []noisymax.GNMaxSearch{noisymax.GNMaxTight, noisymax.GNMaxGrid} {
		g, err := newGNMax(constraints.New(11, 3, 0.0885, 1e-4), search)
		if err != nil {
			t.Fatal(err)
		}
		priv := g.Privacy()
		if priv.Kind != accountant.OneBitSpend || !slices.Equal(priv.Bits, g.oneVoteBits()) || len(priv.Profile) == 0 {
			t.Fatalf("%v: curve %v, %d pairs, %d profile points", search, priv.Kind, len(priv.Bits), len(priv.Profile))
		}
		if h := bitsEnvelope(priv.Bits)(math.Exp(priv.Eps)); h > priv.Delta {
			t.Errorf("%v: the pairs reach %g at the guarantee's eps %g, above its delta %g", search, h, priv.Eps, priv.Delta)
		}
		pairs := labelPairs(g)
		for _, pt := range priv.Profile {
			if got := adaptiveDelta(pairs, 1, pt.Eps); got > pt.Delta+1e-14 {
				t.Errorf("%v: profile point %v, but one label's divergence there is %g", search, pt, got)
			}
		}
		checkExactBelowOptimal(t, search.String(), priv)
	}
	g, err := newGNMax(constraints.New(11, 3, 0.0885, 1e-4), noisymax.GNMaxGrid)
	if err != nil {
		t.Fatal(err)
	}
	priv := g.Privacy()
	opt, err := accountant.Composition{Method: accountant.Optimal, DeltaPrime: 1e-5}.Compose(priv.Guarantee, 100)
	if err != nil {
		t.Fatal(err)
	}
	run, err := accountant.ComposeRun(testMemo, priv.Spend, 100, opt.Delta, 1e-5, accountant.ImprovedConversion)
	if err != nil {
		t.Fatal(err)
	}
	if exact := run[len(run)-1]; exact.Method != accountant.Exact || exact.Guarantee.Eps > opt.Eps/2 {
		t.Errorf("grid calibration, 100 labels: exact composition of the bit %v, optimal composition of the guarantee %v", exact, opt)
	}
}

// TestCurveMissingSaid: a private-teacher label whose pairs are at more
// corner multisets than are listed (subsampling at K = 25, Δ > 0: C(32, 7)
// of them) is composed by its guarantee alone, and the count a budget
// allows, and its totals, say that the exact composition was out of
// reach; one whose pairs are listed says nothing.
func TestCurveMissingSaid(t *testing.T) {
	ctx := context.Background()
	budget := accountant.Guarantee{Eps: 8, Delta: 1e-6}
	for _, c := range []struct {
		p    constraints.Problem
		said bool
	}{{constraints.New(25, 3, 0.1, 1e-9), true}, {constraints.New(11, 3, 0.1, 1e-9), false}} {
		s, err := newSubsample(ctx, c.p, Options{Memo: testMemo})
		if err != nil {
			t.Fatal(err)
		}
		priv := s.Privacy()
		b := provenance.Binding{Teachers: provenance.Teachers{K: c.p.K, Relation: priv.Relation, Each: priv.Teachers}}
		a, err := newAccounting(ctx, priv, b, accountant.Composition{Method: accountant.Optimal, DeltaPrime: 1e-5}, &budget)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := a.Publish(max(1, a.MaxQueries))
		if err != nil {
			t.Fatal(err)
		}
		for _, tot := range []accountant.Total{a.Allows, pub} {
			if said := strings.Contains(tot.Inexact, "corner multisets"); said != c.said {
				t.Errorf("K = %d: %d queries by %s, inexact %q", c.p.K, a.MaxQueries, tot.Name(), tot.Inexact)
			}
		}
	}
}

// TestTeacherBitsMemo asks privateTeacherBits for the pairs of more
// releases than its memo holds, each twice and in turn, some differing
// only in the last bit of one probability or in one problem field, and
// checks that every answer is teacherBitsOf's, bit for bit, and that a
// caller changing its copy changes no later answer.
func TestTeacherBitsMemo(t *testing.T) {
	var cases []struct {
		p constraints.Problem
		f labelProbs
	}
	for _, k := range []int{3, 5} {
		g, err := gamma.Sub(k, 2)
		if err != nil {
			t.Fatal(err)
		}
		tb, _ := newTable(g)
		f := tb.labelProbs()
		nudged := tb.labelProbs()
		nudged.one[1] = math.Nextafter(nudged.one[1], 1)
		for _, p := range []constraints.Problem{constraints.New(k, 2, 0.1, 1e-5), constraints.New(k, 2, 0.1, 1e-3), constraints.New(k, 2, 0.2, 1e-5), constraints.New(k, 2, 0.1, 0)} {
			cases = append(cases, struct {
				p constraints.Problem
				f labelProbs
			}{p, f}, struct {
				p constraints.Problem
				f labelProbs
			}{p, nudged})
		}
	}
	if len(cases) <= maxMemoEntries {
		t.Fatalf("%d cases, not more than the memo's %d entries", len(cases), maxMemoEntries)
	}
	memo := new(accountant.Memo)
	for round := range 2 {
		for i, c := range cases {
			want, ok := teacherBitsOf(c.p, c.f)
			if !ok {
				t.Fatalf("case %d: no pairs", i)
			}
			for range 2 {
				got, ok := privateTeacherBits(memo, c.p, c.f)
				if !ok || !slices.Equal(got, want) {
					t.Errorf("round %d, case %d (%+v): privateTeacherBits gives %d pairs (%v), teacherBitsOf %d", round, i, c.p, len(got), ok, len(want))
				}
				if len(got) > 0 {
					got[0].P = -1
				}
			}
		}
	}
}
