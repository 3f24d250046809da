package cache

import (
	"context"
	"testing"

	"github.com/darrm/darrm/gamma"
)

// BenchmarkSolveCached measures a cache hit: read, checksum, checks.
func BenchmarkSolveCached(b *testing.B) {
	d, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	prior := gamma.UniformPrior()
	if _, _, _, err := d.Solve(context.Background(), testParams, prior, gamma.OptOptions{}, nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_, cached, _, err := d.Solve(context.Background(), testParams, prior, gamma.OptOptions{}, nil)
		if err != nil || !cached {
			b.Fatalf("cached = %v, err = %v", cached, err)
		}
	}
}
