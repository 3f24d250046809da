package optimal

import (
	"context"
	"testing"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/gamma"
)

// BenchmarkSolveCached measures a cache hit: read, checksum, checks.
func BenchmarkSolveCached(b *testing.B) {
	d, err := cache.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	prior := gamma.UniformPrior()
	if _, _, _, err := Cached(context.Background(), d, params(11, 3, 1e-5), prior, Options{}, nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_, cached, _, err := Cached(context.Background(), d, params(11, 3, 1e-5), prior, Options{}, nil)
		if err != nil || !cached {
			b.Fatalf("cached = %v, err = %v", cached, err)
		}
	}
}
