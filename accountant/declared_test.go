package accountant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulps moves x by n units in its last place (n < 0: down).
func ulps(x float64, n int) float64 {
	for ; n > 0; n-- {
		x = math.Nextafter(x, 2)
	}
	for ; n < 0; n++ {
		x = math.Nextafter(x, -1)
	}
	return x
}

// rrPair is randomized response's pair at eps.
func rrPair(eps float64) BitPair {
	hi := math.Exp(eps) / (1 + math.Exp(eps))
	return BitPair{P: hi, Q: 1 - hi}
}

// TestDeclared: a step declared (Declared) holds the same step as another
// build computes it, the quantities it composes exactly a few units in the
// last place either way and its pairs near the diagonal further (the pairs
// of DaRRM at K = 11 that two builds computed differed by 5e-12 relative
// there), and refuses another step: another kind, another (ε, δ) (which
// it keeps, a unit above), a noise or a pair either more or less private.
// What it holds it bounds: every pair is a post-processing of a declared
// one, and every point declared is at least the widened pairs' δ there.
func TestDeclared(t *testing.T) {
	oneBit := Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 0.6, Delta: 6e-5},
		Bits: []BitPair{{P: 0.4397637001073, Q: 0.3172019002753}, {P: 0.17980960374268606, Q: 0.15782599447285142}, {P: 4.022338018277364e-12, Q: 4.0223380180558285e-12}}}
	gauss := Spend{Kind: GaussianSpend, Guarantee: Guarantee{Eps: 0.3, Delta: 1e-6}, Gaussian: []GaussianPart{{Sigma: 150, Coords: 1}, {Sigma: 40, Coords: 2}}}
	laplace := Spend{Kind: LaplaceSpend, Guarantee: Guarantee{Eps: 0.1}, Laplace: &LaplacePart{Scale: 20, Coords: 2}}
	sampled := Spend{Kind: SampledGaussianSpend, Guarantee: Guarantee{Eps: 0.01, Delta: 1e-9}, Q: 0.01, Sigma: 1.1}
	approx := ApproxStep(Guarantee{Eps: 0.5, Delta: 4.99991e-05})
	rng := rand.New(rand.NewPCG(1, 2))
	// another build's digits: each quantity moved by up to 3 ulps either way.
	other := func(s Spend) Spend {
		move := func(x float64) float64 {
			if x == 0 { // a quantity a step does not state
				return 0
			}
			return ulps(x, rng.IntN(7)-3)
		}
		o := s
		o.Q, o.Sigma = move(s.Q), move(s.Sigma)
		o.Gaussian = nil
		for _, p := range s.Gaussian {
			o.Gaussian = append(o.Gaussian, GaussianPart{Sigma: move(p.Sigma), Coords: p.Coords})
		}
		if s.Laplace != nil {
			o.Laplace = &LaplacePart{Scale: move(s.Laplace.Scale), Coords: s.Laplace.Coords}
		}
		o.Bits = nil
		for _, b := range s.Bits {
			if b.P < 1e-6 { // near the diagonal: 5e-12 relative
				o.Bits = append(o.Bits, BitPair{P: b.P * (1 - 5e-12), Q: b.Q * (1 - 5e-12)})
				continue
			}
			o.Bits = append(o.Bits, BitPair{P: move(b.P), Q: move(b.Q)})
		}
		return o
	}
	for _, s := range []Spend{oneBit, gauss, laplace, sampled, approx} {
		d, _ := s.Declared(nil)
		for range 200 {
			o := other(s)
			if !d.Declares(o) {
				t.Fatalf("%v declared does not hold %+v, the same step to other digits", s.Kind, o)
			}
			if !dominated(o, d) {
				t.Fatalf("%v: declared holds %+v, which it does not dominate", s.Kind, o)
			}
		}
		// A step declared before Declared existed holds itself.
		if !s.Declares(s) {
			t.Errorf("%v: a step does not hold itself", s.Kind)
		}
	}

	rr := Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 0.4}, Bits: []BitPair{rrPair(0.4)}}
	d, _ := rr.Declared(nil)
	refused := map[string]Spend{
		"a more private pair, the same guarantee": {Kind: OneBitSpend, Guarantee: rr.Guarantee, Bits: []BitPair{rrPair(0.3)}},
		"a less private pair":                     {Kind: OneBitSpend, Guarantee: rr.Guarantee, Bits: []BitPair{rrPair(0.4 + 1e-9)}},
		"another kind":                            ApproxStep(rr.Guarantee),
		"another guarantee":                       {Kind: OneBitSpend, Guarantee: Guarantee{Eps: 0.4 * (1 + 1e-12)}, Bits: rr.Bits},
		"its guarantee a unit above":              {Kind: OneBitSpend, Guarantee: Guarantee{Eps: math.Nextafter(0.4, 1)}, Bits: rr.Bits},
		"a NaN pair":                              {Kind: OneBitSpend, Guarantee: rr.Guarantee, Bits: []BitPair{{P: math.NaN(), Q: 0.5}}},
	}
	for name, s := range refused {
		if d.Declares(s) {
			t.Errorf("%s: held", name)
		}
	}
	g, _ := gauss.Declared(nil)
	more := gauss
	more.Gaussian = []GaussianPart{{Sigma: 151, Coords: 1}, {Sigma: 40, Coords: 2}}
	less := gauss
	less.Gaussian = []GaussianPart{{Sigma: 150, Coords: 1}, {Sigma: 39.9, Coords: 2}}
	if g.Declares(more) || g.Declares(less) {
		t.Errorf("another sigma held: more noise %v, less %v", g.Declares(more), g.Declares(less))
	}

	// The discrete Gaussian's δ is not monotone in σ: a step of it holds
	// only its own σ.
	discrete := gauss
	discrete.Discrete = true
	dd, _ := discrete.Declared(nil)
	for _, n := range []int{-1, 1} {
		o := discrete
		o.Gaussian = []GaussianPart{{Sigma: ulps(150, n), Coords: 1}, {Sigma: 40, Coords: 2}}
		if dd.Declares(o) {
			t.Errorf("a discrete Gaussian step held σ1 %v ulp away", n)
		}
	}
	if !dd.Declares(discrete) {
		t.Error("a discrete Gaussian step does not hold itself")
	}

	// A step whose noise is widened keeps no point of its profile, which
	// only its own noise made valid; one known by its (ε, δ) keeps them.
	if _, p := gauss.Declared([]Guarantee{{Eps: 3, Delta: 1e-3}}); p != nil {
		t.Errorf("a Gaussian step declared keeps the points %v", p)
	}
	if _, p := approx.Declared([]Guarantee{{Eps: 3, Delta: 1e-3}}); len(p) != 1 || p[0] != (Guarantee{Eps: 3, Delta: 1e-3}) {
		t.Errorf("an approx step declared with the points %v", p)
	}

	// The points declared bound the widened pairs' δ.
	points := []Guarantee{{Eps: 0.6, Delta: 6e-5}, {Eps: 0.3, Delta: 0.05}, {Eps: 0.33, Delta: 0}}
	dBits, dPoints := oneBit.Declared(points)
	for i, p := range dPoints {
		if p.Eps != points[i].Eps || p.Delta < points[i].Delta || p.Delta < bitProfile(dBits.Bits, p.Eps) {
			t.Errorf("point %v declared as %v, under its widened pairs' δ %g", points[i], p, bitProfile(dBits.Bits, p.Eps))
		}
	}
}
