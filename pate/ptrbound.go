package pate

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/noisymax"
)

// logPass returns intervals that enclose log Pr[answer] and
// log Pr[withhold] of the threshold step at largest count v (the step
// answers when v + Z >= T). With noisymax.ContinuousNoise, Z ~ N(0, σ1²):
// Pr[answer] = erfc(x)/2 and Pr[withhold] = erfc(-x)/2, x = (T - v)/(σ1√2).
// With noisymax.DiscreteNoise, Z ~ N_Z(0, σ1²) and the step answers when
// Z >= k = ⌈T⌉ - v: Pr[answer] = Pr[Z >= k], Pr[withhold] =
// Pr[Z <= k - 1] = Pr[Z >= 1 - k] (discreteTailLog).
func logPass(v int, t, sigma1 float64, kind noisymax.Noise) (answer, withhold outward.Interval) {
	if kind == noisymax.DiscreteNoise {
		// One of k and 1 - k is at most 0, where discreteTailLog takes
		// log(1 - ·) of its tail at the other: that tail is summed once.
		k := math.Ceil(t) - float64(v)
		if k >= 1 {
			a := discreteTailLog(k, sigma1)
			return a, outward.Log1mExp(a)
		}
		w := discreteTailLog(1-k, sigma1)
		return outward.Log1mExp(w), w
	}
	s2 := outward.Exact(sigma1).Mul(outward.Sqrt(outward.Exact(2)))
	x := outward.Exact(t).Sub(outward.Exact(float64(v))).Div(s2)
	half := func(lo, hi float64) outward.Interval { // log(erfc(·)/2) from bounds on log erfc
		return outward.Interval{Lo: lo - math.Ln2 - outward.ULP, Hi: math.Min(0, hi-math.Ln2+outward.ULP)}
	}
	return half(logErfcDown(x.Hi), logErfcUp(x.Lo)), half(logErfcDown(-x.Lo), logErfcUp(-x.Hi))
}

// discreteTailLog returns an interval enclosing log Pr[Z >= k] for
// Z ~ N_Z(0, σ²) and an integer k. For k >= 1 it sums the terms
// e^{-z²/(2σ²)}, z = k, k+1, ..., relative to the first (so that none
// underflows), until a term falls below 1e-20 of the sum, and bounds the
// rest by ∫_z^∞ e^{-u²/(2σ²)}du <= (σ²/z)·e^{-z²/(2σ²)} (Mills' ratio);
// the normaliser N = Σ_z e^{-z²/(2σ²)} lies in [σ√(2π), σ√(2π)(1 +
// 3e^{-2π²σ²})] by Poisson summation (σ >= 1/2). For k <= 0 it is
// log(1 - Pr[Z >= 1 - k]).
func discreteTailLog(k, sigma float64) outward.Interval {
	if k <= 0 {
		return outward.Log1mExp(discreteTailLog(1-k, sigma))
	}
	s2 := outward.Exact(2).Mul(outward.Exact(sigma).Mul(outward.Exact(sigma)))
	kk := outward.Exact(k)
	sum := outward.Exact(0)
	z := k
	for {
		// e^{-(z² - k²)/(2σ²)} with z² - k² = (z - k)(z + k).
		e := outward.Exp(outward.Exact(z - k).Mul(outward.Exact(z).Add(kk)).Neg().Div(s2))
		sum = sum.Add(e)
		z++
		if e.Hi < sum.Lo*1e-20 || e.Hi == 0 {
			// The rest, Σ_{u >= z}: below ∫_{z-1}^∞, at most
			// (σ²/(z-1))·e^{-((z-1)² - k²)/(2σ²)}.
			rest := e.Mul(outward.Exact(sigma * sigma)).Div(outward.Exact(z - 1))
			sum.Hi = outward.AddUp(sum.Hi, outward.Up(rest.Hi, 4))
			break
		}
	}
	logN := outward.Log(outward.Exact(sigma).Mul(outward.Sqrt(outward.Exact(2 * math.Pi).Mul(outward.Interval{Lo: outward.Down(1, 2), Hi: outward.Up(1, 2)}))))
	logN.Hi = outward.AddUp(logN.Hi, outward.Log1p(outward.Exact(3).Mul(outward.Exp(outward.Exact(-2*math.Pi*math.Pi).Mul(outward.Exact(sigma*sigma))))).Hi)
	head := kk.Mul(kk).Neg().Div(s2)
	return head.Add(outward.Log(sum)).Sub(logN)
}

// ptrThreshold tabulates, at one order λ and for the largest counts
// v = 0..K, the two parts of the bound that PTR charges the threshold step
// with (docs/pate.md): with P_v, F_v the probabilities of answering and
// withholding at v,
//
//	D(v, w) = log(F_v^λ F_w^{1-λ} + P_v^λ P_w^{1-λ})/(λ - 1),
//	π(v, w) = P_v^λ P_w^{1-λ}/(F_v^λ F_w^{1-λ} + P_v^λ P_w^{1-λ}),
//
// t(v) the largest D and pi(v) the largest π over w in {v-1, v, v+1} ∩
// [0, K] and both orders of v and w (a changed teacher moves the largest
// count by at most one): a query whose largest count is v costs at most
// t(v) + pi(v)·(e^{(λ-1)B} - 1)/(λ - 1) in both directions, B the GNMax
// step's bound. The tables are made once per settings while mo keeps
// them (maxThresholdIntervals), and shared: callers only read them.
func ptrThreshold(mo *memo, m noisymax.Steps, teachers int, order float64) (t, pi []outward.Interval) {
	key := ptrThresholdKey{m.Threshold, m.Sigma1, m.Noise, teachers, math.Float64bits(order)}
	if tab, ok := mo.thresholds.get(key); ok {
		return tab[0], tab[1]
	}
	t, pi = newPTRThreshold(m, teachers, order)
	mo.thresholds.put(key, [2][]outward.Interval{t, pi}, len(t)+len(pi))
	return t, pi
}

// ptrThresholdKey is what ptrThreshold's tables are a function of: the
// threshold step's settings, K and the order's bits.
type ptrThresholdKey struct {
	threshold, sigma1 float64
	noise             noisymax.Noise
	teachers          int
	order             uint64
}

// maxThresholdIntervals bounds the tables of ptrThreshold a memo keeps.
// Each costs K + 1 tails of the threshold step's noise (40 ms at K = 250,
// σ1 = 150, discrete), and a search asks for the same again: every bound
// a search of a plan's N tests (PTRQueries) is at the same settings and
// order. Its cost is the intervals held (16 bytes each, 2(K + 1) a pair
// of tables), at most 2^21, so that many plans at a large K hold at most
// 32 MiB.
const maxThresholdIntervals = 1 << 21

// newPTRThreshold computes ptrThreshold's tables.
func newPTRThreshold(m noisymax.Steps, teachers int, order float64) (t, pi []outward.Interval) {
	logP := make([]outward.Interval, teachers+1)
	logF := make([]outward.Interval, teachers+1)
	for v := range logP {
		logP[v], logF[v] = logPass(v, m.Threshold, m.Sigma1, m.Noise)
	}
	lam := outward.Exact(order)
	oneMinus := outward.Exact(1).Sub(lam)
	lm1 := lam.Sub(outward.Exact(1))
	pair := func(v, w int) (d, p outward.Interval) {
		a := lam.Mul(logF[v]).Add(oneMinus.Mul(logF[w]))
		b := lam.Mul(logP[v]).Add(oneMinus.Mul(logP[w]))
		s := outward.LogAddExp(a, b)
		d = s.Div(lm1)
		d.Lo = math.Max(d.Lo, 0)
		p = outward.Exp(b.Sub(s))
		p.Hi = math.Min(p.Hi, 1)
		return d, p
	}
	widen := func(x, y outward.Interval) outward.Interval {
		return outward.Interval{Lo: math.Max(x.Lo, y.Lo), Hi: math.Max(x.Hi, y.Hi)}
	}
	t = make([]outward.Interval, teachers+1)
	pi = make([]outward.Interval, teachers+1)
	for v := range t {
		for w := max(v-1, 0); w <= min(v+1, teachers); w++ {
			d1, p1 := pair(v, w)
			d2, p2 := pair(w, v)
			t[v] = widen(t[v], widen(d1, d2))
			pi[v] = widen(pi[v], widen(p1, p2))
		}
	}
	return t, pi
}

// ptrGNMax returns (e^{(λ-1)B} - 1)/(λ - 1) for an interval B: the
// factor the GNMax step's bound B enters PTR's per-query bound with
// (docs/pate.md).
func ptrGNMax(b outward.Interval, order float64) outward.Interval {
	lm1 := outward.Exact(order).Sub(outward.Exact(1))
	return outward.Exp(lm1.Mul(b)).Sub(outward.Exact(1)).Div(lm1)
}

// ptrBound returns, at order λ, the data-dependent Rényi DP of a release
// of the account's queries in both directions that PTR tests (an upper
// end of its exact value, f̂ in docs/pate.md) and its local sensitivity at
// every distance 0..K (A(d)). Each query costs t(v) + π(v)·g(B)
// (ptrThreshold, ptrGNMax) with Confident-GNMax, B with GNMax, B =
// β(Q̃) the GNMax step's bound in both directions; queries compose by
// addition (the votes are fixed, the noises independent). The account
// must be in both directions and of expected cost (no answers known).
func (a *rdpAccount) ptrBound(ctx context.Context, order float64) (f float64, ls []float64, err error) {
	if a.directions != BothDirections || a.mode == answerGiven {
		return 0, nil, fmt.Errorf("PATE PTR: the account must be in both directions, with no answers known")
	}
	if c5, c6 := smoothConditions(a.mo, a.mech.Sigma2, a.classes, order, a.mech.Noise); !c5 || !c6 {
		return 0, nil, fmt.Errorf("PATE PTR: conditions C5 = %v, C6 = %v at sigma2 = %v, C = %d, order %v: the sensitivity analysis does not apply (pick another order or more noise)",
			c5, c6, a.mech.Sigma2, a.classes, order)
	}
	g := newGNMaxLS(a.mo, a.mech.Sigma2, order, a.classes, a.mech.Noise)
	model := lsModel{g: g, scale: 1, ind: g.k.ind.Hi}
	var t, pi []outward.Interval
	if a.mech.Confident() {
		t, pi = ptrThreshold(a.mo, a.mech, a.teachers, order)
		model.th = &thresholdLS{beta: t, lo: a.neighbours().leastMax(a.classes)}
		model.weight = make([]float64, len(pi))
		pad := 0.0
		for v, p := range pi {
			model.weight[v] = p.Hi
			pad = math.Max(pad, p.Hi-p.Lo)
		}
		model.pad = outward.Up(pad, 4) + 1e-15
		// s(B) = (e^{(λ-1)B} - 1)/(λ - 1) and its slope e^{(λ-1)B}, both
		// increasing in B.
		lm1 := outward.Exact(order).Sub(outward.Exact(1))
		model.cost = func(b outward.Interval) (float64, float64) {
			return ptrGNMax(b, order).Hi, outward.Exp(lm1.Mul(b)).Hi
		}
	}
	for i := range a.answers {
		b := g.k.at(a.logq[i][1])
		c := b.Hi
		if t != nil {
			v := a.top(i)
			c = outward.AddUp(t[v].Hi, outward.MulUp(pi[v].Hi, ptrGNMax(b, order).Hi))
		}
		f = outward.AddUp(f, c)
	}
	ls, err = a.sumLocalSensitivity(ctx, model)
	return f, ls, err
}

// reach returns upper bounds on β at every histogram within j = 0..n-1
// changed teachers of one whose Q̃ (or q̃) is e^L: β(B_u^j(e^L)), B_u
// applied j times (qMoves: a changed teacher moves q̃, and Q̃, to at most
// B_u of it), which condition C5 (β non-decreasing below q0) makes
// bounds; from q0 on, β is λ/σ2², its largest value.
func (g *gnmaxLS) reach(L float64, n int) []outward.Interval {
	out := make([]outward.Interval, n)
	for j := range out {
		if L >= g.k.logq0 {
			for ; j < n; j++ {
				out[j] = g.k.ind
			}
			break
		}
		out[j] = g.k.at(L)
		L = g.moves.up(L)
	}
	return out
}
