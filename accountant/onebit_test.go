package accountant

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/darrm/darrm/internal/bigmath"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/roots"
)

// bitHockey is the hockey-stick divergence at α of Bernoulli(p) against
// Bernoulli(q), in float64.
func bitHockey(p, q, alpha float64) float64 {
	return math.Max(0, p-alpha*q) + math.Max(0, (1-p)-alpha*(1-q))
}

// rampPairs are the pairs of a one-bit release in the one-vote relation
// whose Pr[1] at vote count l, of k, is f(l): (f(l), f(l+1)).
func rampPairs(f []float64) []BitPair {
	var out []BitPair
	for l := 0; l+1 < len(f); l++ {
		out = append(out, BitPair{f[l], f[l+1]})
	}
	return out
}

// testBits are sets of pairs: randomized response, a pure ramp, a ramp
// with a δ (a line through (e^ε, δ) and mass at an infinite loss), and
// random pairs.
func testBits() map[string][]BitPair {
	rng := rand.New(rand.NewPCG(3, 5))
	var random []BitPair
	for range 6 {
		random = append(random, BitPair{rng.Float64(), rng.Float64()})
	}
	// A ramp at (0.5, 1e-3), K = 41: Pr[1 | l+1] as large as both
	// outputs' inequalities allow, up to 1/2, mirrored.
	ramp := make([]float64, 42)
	e := math.Exp(0.5)
	for l := 1; l <= 20; l++ {
		ramp[l] = math.Min(0.5, math.Min(e*ramp[l-1]+1e-3, 1-(1-ramp[l-1]-1e-3)/e))
	}
	for l := 21; l <= 41; l++ {
		ramp[l] = 1 - ramp[41-l]
	}
	return map[string][]BitPair{
		"rr":     {{0.6, 0.4}},
		"pure":   rampPairs([]float64{0.3, 0.35, 0.42, 0.5, 0.58, 0.65, 0.7}),
		"delta":  rampPairs(ramp),
		"random": random,
	}
}

// TestOneBitLossEnvelope: the dominating pair's hockey-stick divergence
// is, at every α >= 1 tested, the largest of the pairs', both orders:
// never below it (it dominates) and within 1e-12 (no looser).
func TestOneBitLossEnvelope(t *testing.T) {
	for name, pairs := range testBits() {
		b := oneBitLoss(pairs)
		for i := range 400 {
			alpha := math.Exp(float64(i) / 100)
			var want float64
			for _, p := range pairs {
				want = math.Max(want, math.Max(bitHockey(p.P, p.Q, alpha), bitHockey(p.Q, p.P, alpha)))
			}
			got := b.inf
			for _, a := range b.atoms {
				if a.hi > math.Log(alpha) {
					got += a.mass * -math.Expm1(math.Log(alpha)-a.hi)
				}
			}
			if got < want-1e-15 || got > want+1e-12 {
				t.Errorf("%s: at α = %g the dominating pair has %.17g, the pairs %.17g", name, alpha, got, want)
			}
		}
	}
}

// bigBitDelta is the exact profile at eps of k composed copies of the
// dominating pair of pairs, undiscretised, in 512 bits: the sum over every
// multiset of atoms (a multinomial), for small k.
func bigBitDelta(pairs []BitPair, k int, eps float64) *big.Float {
	b := oneBitLoss(pairs)
	type atom struct{ loss, mass *big.Float }
	var atoms []atom
	for _, a := range b.atoms {
		r := new(big.Float).SetPrec(bigPrec).Quo(new(big.Float).SetPrec(bigPrec).SetInt(a.n), new(big.Float).SetPrec(bigPrec).SetInt(a.d))
		m := new(big.Float).SetPrec(bigPrec).SetInt(a.n)
		atoms = append(atoms, atom{bigmath.Log(r, bigPrec), m.SetMantExp(m, -b.scale)})
	}
	total := new(big.Float).SetPrec(bigPrec)
	one := bf512(1)
	// P[no infinite loss] = (1 - inf)^k.
	keep := bf512(1)
	for range k {
		keep.Mul(keep, new(big.Float).SetPrec(bigPrec).Sub(one, bf512(b.inf)))
	}
	total.Sub(one, keep)
	var rec func(i, left int, loss, prob *big.Float)
	rec = func(i, left int, loss, prob *big.Float) {
		if i == len(atoms)-1 {
			l := new(big.Float).SetPrec(bigPrec).Add(loss, new(big.Float).SetPrec(bigPrec).Mul(atoms[i].loss, bf512(float64(left))))
			p := new(big.Float).SetPrec(bigPrec).Set(prob)
			for range left {
				p.Mul(p, atoms[i].mass)
			}
			d := new(big.Float).SetPrec(bigPrec).Sub(bf512(eps), l)
			if d.Sign() < 0 {
				e := new(big.Float).SetPrec(bigPrec).Sub(one, bigmath.Exp(d, bigPrec))
				total.Add(total, e.Mul(e, p))
			}
			return
		}
		p := new(big.Float).SetPrec(bigPrec).Set(prob)
		for j := 0; j <= left; j++ {
			// C(left, j) for the positions of j copies of atom i.
			c := new(big.Float).SetPrec(bigPrec).SetInt(new(big.Int).Binomial(int64(left), int64(j)))
			l := new(big.Float).SetPrec(bigPrec).Add(loss, new(big.Float).SetPrec(bigPrec).Mul(atoms[i].loss, bf512(float64(j))))
			rec(i+1, left-j, l, new(big.Float).SetPrec(bigPrec).Mul(p, c))
			p.Mul(p, atoms[i].mass)
		}
	}
	if len(atoms) > 0 {
		rec(0, k, new(big.Float).SetPrec(bigPrec), bf512(1))
	}
	return total
}

// TestOneBitRunAgainstBig: the composed profile of k steps is never below
// the exact composition of the dominating pair (512 bits, every multiset
// of atoms); where the losses need no rounding (randomized response) it is
// within 1e-9 of it, and otherwise within what the grid's rounding of
// the loss can add (the exact profile at ε - k·h).
func TestOneBitRunAgainstBig(t *testing.T) {
	// Under -short at a smaller size: at each run (pairs, k) two of the
	// four ε, alternating over the runs (each pairs' runs check every ε).
	every := 1
	if testing.Short() {
		every = 2
	}
	sets := testBits()
	run := 0
	for _, name := range slices.Sorted(maps.Keys(sets)) {
		pairs := sets[name]
		b := oneBitLoss(pairs)
		for _, k := range []int{1, 2, 5, 12} {
			if k > 5 && len(b.atoms) > 4 {
				continue // the reference sums C(k+m-1, m-1) multisets
			}
			run++
			r, err := newBitRun(nil, []bitPart{{b, k}}, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i, eps := range []float64{0.05, 0.3, 1, 2.5} {
				if (i+run)%every != 0 {
					continue
				}
				got := r.delta(eps)
				exact := bigBitDelta(pairs, k, eps)
				ex, _ := exact.Float64()
				if ex < 1e-300 {
					continue
				}
				if bf512(got).Cmp(exact) < 0 {
					t.Errorf("%s k=%d eps=%g: %.17g below the exact %.17g", name, k, eps, got, ex)
				}
				if name == "rr" {
					checkAbove(t, fmt.Sprintf("%s k=%d eps=%g", name, k, eps), got, exact, 1e-9)
					continue
				}
				// Rounding each loss up by less than h moves the profile
				// at most as far as lowering ε by k·h.
				h := r.hi / float64(r.n)
				slack, _ := bigBitDelta(pairs, k, math.Max(0, eps-float64(k)*h)).Float64()
				if got > slack*(1+1e-9)+1e-15 {
					t.Errorf("%s k=%d eps=%g: %.17g above the exact profile %g at eps - k·h (h = %g)", name, k, eps, got, slack, h)
				}
			}
		}
	}
}

// TestOneBitRunAgainstOptimal: the exact total of randomized response is
// optimal composition's (both compose the same pair exactly, within
// 1e-9), and no set of pairs totals more than optimal composition of its
// own guarantee at the same total δ.
func TestOneBitRunAgainstOptimal(t *testing.T) {
	sets := testBits()
	for si, name := range slices.Sorted(maps.Keys(sets)) {
		pairs := sets[name]
		b := oneBitLoss(pairs)
		var g Guarantee
		// The pairs' own guarantee: a pure one at the largest loss, or
		// (ε, δ) with ε = 0.5 and its profile there.
		if b.inf == 0 {
			r, _ := newBitRun(nil, []bitPart{{b, 1}}, 0)
			g = Guarantee{Eps: r.hi}
		} else {
			r, _ := newBitRun(nil, []bitPart{{b, 1}}, 0)
			g = Guarantee{Eps: 0.5, Delta: r.delta(0.5)}
			if name == "random" {
				g = Guarantee{Eps: 2, Delta: r.delta(2)}
			}
		}
		s := Spend{Kind: OneBitSpend, Guarantee: g, Bits: pairs}
		for ki, k := range []int{1, 10, 100, 1000} {
			if testing.Short() && name != "rr" && (ki+si)%2 != 0 {
				// Under -short at a smaller size: each pairs but "rr"
				// (whose total is optimal composition's, checked at every
				// k) at two of the four k, alternating over the pairs, so
				// that every k is composed by some transform.
				continue
			}
			opt, err := composeOptimal(g, k, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			if opt.Delta >= 0.5 {
				continue
			}
			tot, err := ComposeRun(testMemo, s, k, opt.Delta, 1e-5, ImprovedConversion)
			if err != nil {
				t.Fatal(err)
			}
			var exact *Total
			for i := range tot {
				if tot[i].Method == Exact {
					exact = &tot[i]
				}
			}
			if exact == nil {
				t.Fatalf("%s k=%d: no exact total in %v", name, k, tot)
			}
			if exact.Guarantee.Eps > opt.Eps*(1+1e-9) {
				t.Errorf("%s k=%d: exact %v above optimal composition %v", name, k, exact.Guarantee, opt)
			}
			if name == "rr" && exact.Guarantee.Eps < opt.Eps*(1-1e-8) {
				t.Errorf("%s k=%d: exact %v, optimal composition %v: they compose the same pair", name, k, exact.Guarantee, opt)
			}
			t.Logf("%s k=%d: exact %.6g, optimal %.6g at delta %.3g", name, k, exact.Guarantee.Eps, opt.Eps, opt.Delta)
		}
	}
}

// TestRRBitsDominate: randomized response on any bit pair (M, M') that
// meets (ε, δ)-DP, sampled at random, is dominated by RRBits' pairs: its
// hockey-stick divergence at every α tested is at most their envelope's.
func TestRRBitsDominate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, c := range []struct{ keep, eps, delta float64 }{{0.3, 1.1, 1e-3}, {0.9, 0.5, 0}, {0.05, 3, 0.01}} {
		bits, err := RRBits(c.keep, Guarantee{Eps: c.eps, Delta: c.delta})
		if err != nil {
			t.Fatal(err)
		}
		b := oneBitLoss(bits)
		env := func(alpha float64) float64 {
			h := b.inf
			for _, a := range b.atoms {
				if a.hi > math.Log(alpha) {
					h += a.mass * -math.Expm1(math.Log(alpha)-a.hi)
				}
			}
			return h
		}
		e := math.Exp(c.eps)
		for n := 0; n < 2000; {
			m, mp := rng.Float64(), rng.Float64()
			if m > e*mp+c.delta || mp > e*m+c.delta || 1-m > e*(1-mp)+c.delta || 1-mp > e*(1-m)+c.delta {
				continue
			}
			n++
			p, q := (1-c.keep)/2+c.keep*m, (1-c.keep)/2+c.keep*mp
			for i := range 50 {
				alpha := math.Exp(float64(i) / 10)
				if h := bitHockey(p, q, alpha); h > env(alpha)+1e-12 {
					t.Fatalf("%+v: (M, M') = (%g, %g) has %g at α = %g, RRBits' envelope %g", c, m, mp, h, alpha, env(alpha))
				}
			}
		}
	}
}

// TestRRBitsLargeEps: at an ε whose e^ε overflows, in full or only its
// upper end (ε from about 709.09, where e^ε is [0, +Inf]), RRBits' pairs
// are probabilities (the vertex ((e^ε+δ)/(e^ε+1), ·) is 1 in the limit),
// which Check accepts, where one was NaN; below it they are unchanged.
func TestRRBitsLargeEps(t *testing.T) {
	for _, c := range []struct{ keep, eps, delta float64 }{{0, 710, 0}, {0.5, 1e300, 0.5}, {1, 800, 1e-5}, {0.3, math.MaxFloat64, 0}, {0, 709.1, 0}, {0.3, 709.1, 1e-5}, {0.5, 709.3, 0}, {0, 709.6, 0.5}} {
		bits, err := RRBits(c.keep, Guarantee{Eps: c.eps, Delta: c.delta})
		if err != nil {
			t.Errorf("%+v: %v", c, err)
			continue
		}
		if err := (Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: c.eps, Delta: c.delta}, Bits: bits}).Check(); err != nil {
			t.Errorf("%+v: pairs %v: %v", c, bits, err)
		}
		if top, want := bits[2].P, math.Min(1, (1-c.keep)/2+c.keep); top < want || top > want+1e-15 {
			t.Errorf("%+v: the pair of the vertex of e^ε is %v, want P = %v", c, bits[2], want)
		}
	}
}

// TestOneBitGridAgainstBig: the composed profile of the discretised pair
// (the atoms laid on the grid, splitAtoms; the sum's loss as bitRun.loss
// bounds it)
// agrees with a 512-bit sum over every multiset of atoms to 1e-9, and is
// never below it: the convolution and the sum are exact up to their
// bounds.
func TestOneBitGridAgainstBig(t *testing.T) {
	checked := 0
	defer func() {
		if checked < 20 {
			t.Errorf("%d cases checked", checked)
		}
	}()
	for name, pairs := range testBits() {
		b := oneBitLoss(pairs)
		for _, k := range []int{1, 3, 6} {
			if k > 3 && len(b.atoms) > 4 {
				continue
			}
			r, err := newBitRun(nil, []bitPart{{b, k}}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if r.empty {
				continue
			}
			mass, idx := r.grid.comps[0].mass, r.grid.comps[0].idx
			for _, eps := range []float64{0.05, 0.3, 1} {
				total := new(big.Float).SetPrec(bigPrec)
				var rec func(i, left, sum int, prob *big.Float)
				rec = func(i, left, sum int, prob *big.Float) {
					if i == len(mass) {
						if left == 0 {
							if l := r.loss(sum); l > eps {
								e := bf512(-math.Expm1(eps - l))
								total.Add(total, e.Mul(e, prob))
							}
						}
						return
					}
					m := bf512(mass[i])
					p := new(big.Float).SetPrec(bigPrec).Set(prob)
					for j := 0; j <= left; j++ {
						c := new(big.Float).SetPrec(bigPrec).SetInt(new(big.Int).Binomial(int64(left), int64(j)))
						rec(i+1, left-j, sum+j*idx[i], new(big.Float).SetPrec(bigPrec).Mul(p, c))
						p.Mul(p, m)
					}
				}
				rec(0, k, 0, bf512(1))
				ref, _ := total.Float64()
				if ref < 1e-200 {
					continue
				}
				got := r.delta(eps) - r.inf
				checkAbove(t, fmt.Sprintf("%s k=%d eps=%g (n=%d)", name, k, eps, r.n), got, total, 1e-9)
				checked++
			}
		}
	}
}

// TestOneBitScheduleFFTAgainstDirect: runs of different pairs composed
// together by the FFT (the product of each run's transform raised to its
// count) give the direct convolution's profile on the same grid, never
// below it and within 1e-9 plus the transform's bound; the grid is the
// run's of the larger loss, the other's atoms split onto it.
func TestOneBitScheduleFFTAgainstDirect(t *testing.T) {
	parts := []bitPart{{oneBitLoss(testBits()["pure"]), 12}, {oneBitLoss(testBits()["rr"]), 9}}
	r, err := newBitRun(nil, parts, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.ready()
	if r.rel != 0 {
		t.Fatal("composed directly, not by the FFT")
	}
	d := &bitRun{lo: r.lo, hi: r.hi, n: r.n, inf: r.inf}
	d.direct(r.grid.comps)
	d.positive()
	for _, eps := range []float64{0.1, 0.5, 1, 2} {
		got, want := r.delta(eps), d.delta(eps)
		if got < want || got > want*(1+1e-9)+r.err {
			t.Errorf("eps=%g: FFT %.17g, direct %.17g (FFT bound %g)", eps, got, want, r.err)
		}
	}
}

// TestOneBitFFTAgainstDirect: where the composition goes through the FFT
// (a window of Hoeffding's width, the transform's power), its profile is
// never below the direct convolution on the same grid and within 1e-9 of
// it plus the bound of the transform's error. Under -short 20 steps, not
// 60: both are composed by the FFT over a grid of 2^19 points, and the
// direct convolution's work grows with k.
func TestOneBitFFTAgainstDirect(t *testing.T) {
	k := 60
	if testing.Short() {
		k = 20
	}
	for _, name := range []string{"pure", "delta"} {
		b := oneBitLoss(testBits()[name])
		r, err := newBitRun(nil, []bitPart{{b, k}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		r.ready()
		if r.rel != 0 {
			t.Fatalf("%s: k = %d composed directly, not by the FFT", name, k)
		}
		d := &bitRun{lo: r.lo, hi: r.hi, n: r.n, inf: r.inf}
		d.direct(r.grid.comps)
		d.positive()
		for _, eps := range []float64{0.5, 2, 4} {
			got, want := r.delta(eps), d.delta(eps)
			if got < want || got > want*(1+1e-9)+r.err {
				t.Errorf("%s eps=%g: FFT %.17g, direct %.17g (FFT bound %g)", name, eps, got, want, r.err)
			}
		}
		if name != "pure" {
			continue // "delta" has an infinite loss of mass 1e-3 a step
		}
		// Composed for a total δ of 1e-12 the transform is tilted, and
		// its bound is relative: at the ε of δ 1e-12 and a tenth above
		// (beyond the support: δ is 0) it is never below the direct
		// convolution's exact value on the grid and within 1e-5 of it
		// (1e-17 at 0: the tilt's Chernoff bound is within e^8 of δ, so
		// its error is about 3000 times the transform's relative 1e-10),
		// where the untilted bound alone is a hundred times that δ; a
		// tenth below, where the tilted window does not reach, it is
		// still never below.
		tilted := &bitRun{k: k, lo: r.lo, hi: r.hi, inf: r.inf}
		tilted.use(layBitGrid([]bitPart{{b, k}}, b.top(), r.n, 1e-12))
		if tilted.ready(); tilted.lambda == 0 {
			t.Fatalf("%s: composed for 1e-12 without a tilt", name)
		}
		eps12 := roots.Edge(0, 100, 1e-12, func(eps float64) bool { return d.delta(eps) <= 1e-12 })
		for _, eps := range []float64{0.9 * eps12, eps12, 1.1 * eps12} {
			got, raw := tilted.delta(eps), d.rawDelta(eps)
			lower := raw * (1 - d.rel - float64(len(d.p))*outward.ULP)
			if got < lower || eps >= eps12 && got > raw*(1+1e-5)+1e-17 {
				t.Errorf("%s eps=%g: tilted FFT %.17g, direct %.17g (untilted bound %g)", name, eps, got, raw, r.err)
			}
		}
	}
}

// manyBits are pairs as a private-teacher label lists them: thousands,
// most of them inside the envelope of a few.
func manyBits() []BitPair {
	rng := rand.New(rand.NewPCG(7, 11))
	out := make([]BitPair, 5000)
	for i := range out {
		p := 0.05 + 0.9*rng.Float64()
		out[i] = BitPair{P: p, Q: p * math.Exp(-0.3*rng.Float64()) * (1 - 1e-4*rng.Float64())}
	}
	return out
}

// TestOneBitLossPareto: dropping the pairs another is further apart than
// (paretoBits) leaves the dominating pair exactly as the envelope of
// every pair's lines gives it.
func TestOneBitLossPareto(t *testing.T) {
	sets := testBits()
	sets["many"] = manyBits()
	for name, pairs := range sets {
		s := 0
		for _, p := range pairs {
			s = max(s, fracBits(p.P), fracBits(p.Q))
		}
		got, want := oneBitLoss(pairs), envelopeLoss(pairs, s)
		if name == "many" && len(paretoBits(pairs)) > len(pairs)/10 {
			t.Errorf("%s: %d of %d pairs kept", name, len(paretoBits(pairs)), len(pairs))
		}
		if got.inf != want.inf || len(got.atoms) != len(want.atoms) {
			t.Fatalf("%s: %d atoms and %g infinite, want %d and %g", name, len(got.atoms), got.inf, len(want.atoms), want.inf)
		}
		for i, a := range got.atoms {
			w := want.atoms[i]
			x, y := new(big.Int).Mul(a.n, w.d), new(big.Int).Mul(w.n, a.d)
			if x.Cmp(y) != 0 || a.lo != w.lo || a.hi != w.hi || a.mass != w.mass {
				t.Errorf("%s: atom %d is %v/%v [%g, %g] of mass %g, want %v/%v [%g, %g] of mass %g", name, i, a.n, a.d, a.lo, a.hi, a.mass, w.n, w.d, w.lo, w.hi, w.mass)
			}
		}
	}
}

// TestDominatingBits: the pairs Spend.Dominating keeps, which a ledger
// line records, give the loss distribution of all the pairs (atoms of the
// same loss bounds and mass, whatever the scale of their probabilities)
// and so the same charge by every filter, and the same list in any order.
func TestDominatingBits(t *testing.T) {
	sets := testBits()
	sets["many"] = manyBits()
	budget := Guarantee{Eps: 4, Delta: 1e-3}
	filters := []Filter{
		{Parts: []FilterPart{{Method: Simple, Delta: 1e-3}}},
		{Parts: []FilterPart{{Method: RenyiFilter, Delta: 1e-3, Order: 8}}},
		{Parts: []FilterPart{{Method: ZCDPFilter, Delta: 1e-3}}},
	}
	dominating := func(pairs []BitPair) []BitPair {
		return Spend{Kind: OneBitSpend, Bits: pairs}.Dominating(testMemo).Bits
	}
	for name, pairs := range sets {
		kept := dominating(pairs)
		reversed := slices.Clone(pairs)
		slices.Reverse(reversed)
		if !slices.Equal(dominating(reversed), kept) || !slices.Equal(dominating(kept), kept) {
			t.Errorf("%s: the pairs kept depend on the order of the pairs, or are not kept again", name)
		}
		got, want := oneBitLoss(kept), oneBitLoss(pairs)
		if got.inf != want.inf || len(got.atoms) != len(want.atoms) {
			t.Fatalf("%s: %d atoms and %g infinite, want %d and %g", name, len(got.atoms), got.inf, len(want.atoms), want.inf)
		}
		for i, a := range got.atoms {
			w := want.atoms[i]
			x, y := new(big.Int).Mul(a.n, w.d), new(big.Int).Mul(w.n, a.d)
			if x.Cmp(y) != 0 || a.lo != w.lo || a.hi != w.hi || a.mass != w.mass {
				t.Errorf("%s: atom %d is [%g, %g] of mass %g, want [%g, %g] of mass %g", name, i, a.lo, a.hi, a.mass, w.lo, w.hi, w.mass)
			}
		}
		all := Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 2, Delta: 1e-5}, Bits: pairs}
		few := all
		few.Bits = kept
		for _, f := range filters {
			cw, errW := f.Charge(testMemo, all, budget)
			cg, errG := f.Charge(testMemo, few, budget)
			w, _ := json.Marshal(cw)
			g, _ := json.Marshal(cg)
			if string(g) != string(w) || fmt.Sprint(errG) != fmt.Sprint(errW) {
				t.Errorf("%s, %v: charged %s (%v) for the pairs kept, %s (%v) for all", name, f, g, errG, w, errW)
			}
		}
	}
}

// TestDominatingBadBits: pairs Check refuses (a probability NaN or
// outside [0, 1]) are returned as they are, for Check to report, where
// they panicked.
func TestDominatingBadBits(t *testing.T) {
	for _, bits := range [][]BitPair{{{P: math.NaN(), Q: 0.5}}, {{P: 0.5, Q: 2}}, {{P: 0.6, Q: 0.4}, {P: -1, Q: 0.5}}, {{P: math.Inf(1), Q: 0}}} {
		s := Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 1}, Bits: bits}
		got := func() (got Spend) {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%v: panic %v", bits, r)
				}
			}()
			return s.Dominating(nil)
		}()
		if fmt.Sprint(got.Bits) != fmt.Sprint(bits) {
			t.Errorf("%v: Dominating kept %v, want them as they are", bits, got.Bits)
		}
		if err := got.Check(); err == nil {
			t.Errorf("%v: Check accepts them", bits)
		}
	}
}

// TestOneBitRunSearch: the profile summed over the losses above ε only
// is the sum over every entry, exactly, and the inverse guided by the
// estimate (roots.EdgeGuided) is the plain bisection's, exactly, at several
// step counts (direct and by transform) and total δ.
func TestOneBitRunSearch(t *testing.T) {
	sets := testBits()
	sets["many"] = manyBits()
	steps := []int{1, 20, 300, 3000}
	epss := []float64{-0.5, 0, 1e-3, 0.1, 1, 4, 20}
	deltas := []float64{1e-2, 1e-5, 1e-9}
	// Under -short at a smaller size: no 3,000 steps, each pairs at two of
	// the other three step counts (the one left out rotating over the
	// pairs), and at each run half of the ε and of the δ (alternating
	// over a pairs' two runs): every pairs, step count, ε and δ still
	// checked, not every combination.
	every := 1
	if testing.Short() {
		steps = steps[:3] // direct and by transform
		every = 2
	}
	for si, name := range slices.Sorted(maps.Keys(sets)) {
		pairs := sets[name]
		run := 0
		for ki, k := range steps {
			if testing.Short() && ki == si%len(steps) {
				continue
			}
			run++
			r, err := newBitRun(nil, []bitPart{{oneBitLoss(pairs), k}}, 0)
			if err != nil {
				t.Fatal(err)
			}
			r.ready()
			for i, eps := range epss {
				if (i+run)%every != 0 {
					continue
				}
				var want float64
				for i, p := range r.p {
					if l := r.loss(r.first + i); p > 0 && l > eps {
						want += float64(p * -math.Expm1(eps-l)) // as rawDelta rounds
					}
				}
				if got := r.rawDelta(eps); got != want {
					t.Errorf("%s k=%d eps=%g: sum %.17g, over every entry %.17g", name, k, eps, got, want)
				}
				if e := r.estimate(eps); math.Abs(e-r.delta(eps)) > 1e-12*r.delta(eps)+1e-300 {
					t.Errorf("%s k=%d eps=%g: estimate %.17g, delta %.17g", name, k, eps, e, r.delta(eps))
				}
			}
			for i, delta := range deltas {
				if (i+run)%every != 0 {
					continue
				}
				guided := runCurves{k: k, delta: r.delta, guess: r.estimate}
				plain := runCurves{k: k, delta: r.delta}
				g, gok := guided.exactEps(delta, 1)
				p, pok := plain.exactEps(delta, 1)
				if g != p || gok != pok {
					t.Errorf("%s k=%d delta=%g: guided %v (%v), plain %v (%v)", name, k, delta, g, gok, p, pok)
				}
			}
		}
	}
}

// TestOneBitAnswersRemembered: what a Memo remembers of a set of pairs
// (bitCurves) is what computing afresh gives, also when several
// goroutines ask at once.
func TestOneBitAnswersRemembered(t *testing.T) {
	pairs := manyBits()
	r, _ := newBitRun(nil, []bitPart{{oneBitLoss(pairs), 1}}, 0)
	s := Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 2, Delta: r.delta(2)}, Bits: pairs}
	budget := Guarantee{Eps: 8, Delta: 1e-3}
	ask := func(m *Memo) ([]Total, int) {
		all, err := ComposeRun(m, s, 40, 1e-5, 1e-5, ImprovedConversion)
		if err != nil {
			t.Error(err)
		}
		n, _, err := Account{Step: s, Budget: &Budget{budget}}.MaxSteps(context.Background(), m)
		if err != nil {
			t.Error(err)
		}
		return all, n
	}
	memo := new(Memo)
	fresh, n := ask(memo)
	if len(fresh) == 0 || fresh[len(fresh)-1].Method != Exact || n < 1 {
		t.Fatalf("totals %v, %d steps fit", fresh, n)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			again, m := ask(memo)
			if !slices.Equal(again, fresh) || m != n {
				t.Errorf("remembered %v and %d steps, fresh %v and %d", again, m, fresh, n)
			}
		}()
	}
	wg.Wait()
}

// TestTailEdge: the Chernoff window of a k-fold composition leaves at
// most e^-72 of the mass (summed directly, every term nonnegative) beyond
// each side, and where a rare atom sets the range it is far narrower
// than the range; randomized response's window is its whole range only
// where the range is needed.
func TestTailEdge(t *testing.T) {
	for _, c := range []struct {
		name string
		mass []float64
		idx  []int
		k    int
	}{
		{"rr", []float64{0.6, 0.4}, []int{1, -1}, 200},
		{"rare atom", []float64{2e-12, 0.3, 0.3, 0.4 - 2e-5 - 2e-12, 2e-5}, []int{-50, -1, 0, 1, 50}, 150},
		{"skewed", []float64{0.9, 0.1}, []int{0, 7}, 60},
	} {
		// The k-fold convolution, directly.
		imin, imax := c.idx[0], c.idx[0]
		for _, i := range c.idx {
			imin, imax = min(imin, i), max(imax, i)
		}
		p := []float64{1}
		for step := 1; step <= c.k; step++ {
			next := make([]float64, step*(imax-imin)+1)
			for s, v := range p {
				for j, i := range c.idx {
					next[s+i-imin] += v * c.mass[j]
				}
			}
			p = next
		}
		first := c.k * imin
		hi, lo := tailEdge([]bitComp{{mass: c.mass, idx: c.idx, k: c.k}}, 1), -tailEdge([]bitComp{{mass: c.mass, idx: c.idx, k: c.k}}, -1)
		var above, below float64
		for s, v := range p {
			if s+first > hi {
				above += v
			}
			if s+first < lo {
				below += v
			}
		}
		limit := math.Exp(-72)
		if above > limit || below > limit {
			t.Errorf("%s: mass %g above %d and %g below %d, beyond e^-72", c.name, above, hi, below, lo)
		}
		if hi > c.k*imax+1 || lo < c.k*imin-1 {
			t.Errorf("%s: window [%d, %d] beyond the range [%d, %d]", c.name, lo, hi, c.k*imin, c.k*imax)
		}
		t.Logf("%s: window [%d, %d] of the range [%d, %d]", c.name, lo, hi, c.k*imin, c.k*imax)
	}
	// The rare atom's window: about 11 atoms of 50 above, 4 below.
	if hi := tailEdge([]bitComp{{mass: []float64{2e-12, 0.3, 0.3, 0.4 - 2e-5 - 2e-12, 2e-5}, idx: []int{-50, -1, 0, 1, 50}, k: 150}}, 1); hi > 1500 {
		t.Errorf("rare atom: upper edge %d of 7500: the Chernoff bound should cut it", hi)
	}
}

// TestOneBitCurvesKept: a Memo keeps the answers of up to maxBitCurves
// sets of pairs, and the compositions of the most recent maxRunCurves
// only; a set asked again is moved to the front.
func TestOneBitCurvesKept(t *testing.T) {
	m := new(Memo)
	sets := make([][]BitPair, maxBitCurves+2)
	for i := range sets {
		var err error
		if sets[i], err = RRBits(0.2+0.005*float64(i), Guarantee{Eps: 1, Delta: 1e-6}); err != nil {
			t.Fatal(err)
		}
		c := m.curvesOf(sets[i])
		if _, err := c.run(nil, 5, 0); err != nil {
			t.Fatal(err)
		}
	}
	recent := m.bits.recent
	if len(recent) != maxBitCurves {
		t.Fatalf("%d sets kept, want %d", len(recent), maxBitCurves)
	}
	for i, c := range recent {
		if want := sets[len(sets)-1-i]; !slices.Equal(c.pairs, want) {
			t.Fatalf("set %d kept is not the %d-th most recent", i, i)
		}
		if runs := len(c.runs); (i < maxRunCurves) != (runs == 1) || runs > 1 {
			t.Errorf("set %d keeps %d compositions", i, runs)
		}
	}
	old := recent[maxRunCurves+3]
	if c := m.curvesOf(old.pairs); c != old || m.bits.recent[0] != old {
		t.Fatal("a kept set asked again is not moved to the front")
	}
	if len(m.bits.recent[maxRunCurves].runs) != 0 {
		t.Error("the set pushed past the most recent keeps its compositions")
	}
}
