package pate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noisymax"
)

// benchPATE returns an account of Confident-GNMax in PATE's MNIST setting
// (T = 200, σ1 = 150, σ2 = 40, K = 250, C = 10) with n queries of skewed
// votes, at the default orders.
func benchPATE(b *testing.B, n int) *rdpAccount {
	a, err := newRDPAccount(noisymax.Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}, 250, 10, rdpOptions{memo: testMemo})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		if err := a.add(randomCounts(r, 250, 10), answerUnknown); err != nil {
			b.Fatal(err)
		}
	}
	return a
}

// BenchmarkPATEAccount is the data-independent and data-dependent cost
// of 1,000 queries at the 238 default orders, converted to (ε, δ).
func BenchmarkPATEAccount(b *testing.B) {
	for b.Loop() {
		if _, err := benchPATE(b, 1000).result(1e-5, accountant.PaperConversion); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPATESmooth is the smooth-sensitivity analysis of 1,000
// queries at one order: local sensitivities at every distance and the
// data-dependent total there.
func BenchmarkPATESmooth(b *testing.B) {
	a := benchPATE(b, 1000)
	for b.Loop() {
		if _, err := a.localSensitivity(b.Context(), 20); err != nil {
			b.Fatal(err)
		}
		if _, err := a.rdpDependent(20); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGNMaxNeighbourLogQManyClasses is the neighbours' log q̃ of one
// query of 100,000 classes with one vote each (issue 40: account pate took
// 66 s for one such query).
func BenchmarkGNMaxNeighbourLogQManyClasses(b *testing.B) {
	h := make([]int, 100_000)
	for i := range h {
		h[i] = 1
	}
	for b.Loop() {
		gnmaxNeighbourLogQ(testMemo, h, 40, noisymax.DiscreteNoise, neighbours{teachers: len(h)})
	}
}

// BenchmarkPTRTestRDP is the test's Rényi DP of a PTR release (issue 69:
// a plan computes it at 13 orders or more, and ptrSigma's search
// ptrBitRDP at its coarser width twenty times): σ, z and λ of the plan
// of 300 queries by Confident-GNMax (σ2 = 40, C = 10) within (2, 1e-5),
// at ptrTestRDP's width and at the search's, computed each time
// (newPTRBitRDP: ptrBitRDP keeps its bounds).
func BenchmarkPTRTestRDP(b *testing.B) {
	const sigma, z, order = 4.982195872260795, 4.269400382763706, 10.213254313486772
	for b.Loop() {
		for _, width := range []float64{math.Min(ptrWidth, 1/(256*sigma)), ptrSearchWidth} {
			if _, err := newPTRBitRDP(sigma, z, order, width); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// testMemo is the memo of the package's tests: the terms, curves,
// conditions and PTR tables that many tests and many histograms of one
// test ask for again are made once per test binary, as a program holding
// one accountant.Memo makes them once.
var testMemo = memoIn(ptrMemo)
