package optimal

import (
	"context"
	"testing"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// BenchmarkSolveCached measures a cache hit: read, checksum, checks.
func BenchmarkSolveCached(b *testing.B) {
	d, err := cache.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	prior := gamma.UniformPrior()
	if _, err := cached(context.Background(), d, constraints.New(11, 3, 0.1, 1e-5), prior, Options{}, nil, verifier(0)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		l, err := cached(context.Background(), d, constraints.New(11, 3, 0.1, 1e-5), prior, Options{}, nil, verifier(0))
		if err != nil || !l.Cached {
			b.Fatalf("cached %v, err = %v", l.Cached, err)
		}
	}
}
