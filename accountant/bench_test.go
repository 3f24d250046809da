package accountant

import (
	"context"
	"testing"
)

var sink float64

func BenchmarkComposeGeneral(b *testing.B) {
	step := Guarantee{0.1, 1e-5}
	for b.Loop() {
		g, _ := composeGeneral(step, 10000, 1e-5)
		sink = g.Eps
	}
}

func benchOptimal(b *testing.B, eps float64, k int) {
	step := Guarantee{eps, 1e-6}
	for b.Loop() {
		g, _ := composeOptimal(step, k, 1e-5)
		sink = g.Eps
	}
}

func BenchmarkMaxStepsOptimal(b *testing.B) {
	step, budget := Guarantee{0.01, 1e-7}, Guarantee{2, 1e-3}
	for b.Loop() {
		n, _ := MaxSteps(step, Budget{Guarantee: budget}, Composition{Method: Optimal, DeltaPrime: 1e-4})
		sink = float64(n)
	}
}

func BenchmarkStepEpsOptimal10000(b *testing.B) {
	for b.Loop() {
		sink, _ = StepEps(5, 1e-7, 10000, Optimal, 1e-5)
	}
}

func BenchmarkRhoToDPImproved(b *testing.B) {
	for b.Loop() {
		sink, _, _ = RhoToDP(0.37, 1e-6, ImprovedConversion)
	}
}

func BenchmarkRhoForDPImproved(b *testing.B) {
	for b.Loop() {
		sink, _, _ = rhoForDP(Guarantee{5, 1e-6}, ImprovedConversion)
	}
}

func BenchmarkPABISigmaImproved(b *testing.B) {
	run := PABI{G: 10, Epochs: 50, Dilution: 501}
	for b.Loop() {
		sink, _, _ = run.sigma(Guarantee{5, 1e-6}, ImprovedConversion)
	}
}

// forgetCompositions empties what the process keeps of one-bit
// compositions and sums of discrete Gaussians, so that an iteration
// composes afresh.
func forgetCompositions() {
	bitCurvesCache.Lock()
	bitCurvesCache.recent = nil
	bitCurvesCache.Unlock()
	dgSums.Lock()
	dgSums.recent = nil
	dgSums.Unlock()
}

// oneBitSpend returns the OneBitSpend of pairs with the guarantee of
// their profile at ε = 0.5.
func oneBitSpend(pairs []BitPair) Spend {
	r, _ := newBitRun([]bitPart{{oneBitLoss(pairs), 1}}, 0)
	return Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 0.5, Delta: r.delta(0.5)}, Bits: pairs}
}

// BenchmarkOneBitCompose: one composition of 20 steps, a transform of
// 2^19 points, and its profile at one ε.
func BenchmarkOneBitCompose(b *testing.B) {
	loss := oneBitLoss(testBits()["delta"])
	for b.Loop() {
		r, _ := newBitRun([]bitPart{{loss, 20}}, 0)
		sink = r.delta(1)
	}
}

// BenchmarkMaxStepsOneBit: a count's search of a one-bit release, from
// nothing kept.
func BenchmarkMaxStepsOneBit(b *testing.B) {
	s := oneBitSpend(testBits()["delta"])
	budget := Guarantee{Eps: 8, Delta: 0.05}
	for b.Loop() {
		forgetCompositions()
		n, _, _ := Account{Step: s, Budget: &Budget{budget}}.MaxSteps(context.Background())
		sink = float64(n)
	}
}

// BenchmarkFitsRepeatedSearch: whether 20 steps fit, for 12 sets of
// pairs, asked twice, from nothing kept: a plan's search for a
// noise level, done twice by a command that plans or simulates twice
// (more sets of pairs than compositions kept).
func BenchmarkFitsRepeatedSearch(b *testing.B) {
	budget := Guarantee{Eps: 4, Delta: 0.05}
	var steps []Spend
	for i := range 12 {
		pairs := append(testBits()["delta"], BitPair{P: 0.4 + 0.001*float64(i), Q: 0.3})
		steps = append(steps, oneBitSpend(pairs))
	}
	for b.Loop() {
		forgetCompositions()
		for range 2 {
			for _, s := range steps {
				ok, _ := Account{Step: s, Steps: 20, Budget: &Budget{budget}}.Fits()
				if ok {
					sink++
				}
			}
		}
	}
}

// BenchmarkMaxStepsDiscreteGaussian: a count's search of two discrete
// Gaussian steps (Confident-GNMax's), its total and totals, from
// nothing kept.
func BenchmarkMaxStepsDiscreteGaussian(b *testing.B) {
	s := Spend{Kind: GaussianSpend, Guarantee: Guarantee{Eps: 1, Delta: 1e-6}, Discrete: true, Gaussian: []GaussianPart{{Sigma: 150, Coords: 1}, {Sigma: 40, Coords: 1}}}
	budget := Guarantee{Eps: 2, Delta: 1e-5}
	for b.Loop() {
		forgetCompositions()
		a := Account{Step: s, Budget: &Budget{budget}}
		n, _, _ := a.MaxSteps(context.Background())
		a.Steps = n
		all, _ := a.Totals()
		sink = float64(n + len(all))
	}
}
