package accountant

import (
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
		n, _ := MaxSteps(step, Budget{Guarantee: budget, Composition: Composition{Method: Optimal, DeltaPrime: 1e-4}})
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
		sink, _, _ = run.Sigma(Guarantee{5, 1e-6}, ImprovedConversion)
	}
}

func BenchmarkPConst(b *testing.B) {
	for b.Loop() {
		sink, _ = PConst(0.1, 3, 3e-5, 14.0328, 0.1003)
	}
}
