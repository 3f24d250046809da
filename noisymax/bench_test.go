package noisymax

import (
	"testing"

	"github.com/darrm/darrm/accountant"
)

func BenchmarkGNMaxSigmaGrid(b *testing.B) {
	for b.Loop() {
		sink, _, _ = gnmaxSigmaGrid(accountant.Guarantee{Eps: 0.2676, Delta: 3e-4})
	}
}

func BenchmarkGNMaxSigmaExact(b *testing.B) {
	for b.Loop() {
		sink, _, _ = gnmaxSigma(accountant.Guarantee{Eps: 0.2676, Delta: 3e-4}, accountant.PaperConversion)
	}
}
