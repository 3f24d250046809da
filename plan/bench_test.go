package plan

import (
	"context"
	"testing"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/votefile"
)

// BenchmarkConfidentGNMax plans 1,000 Confident-GNMax queries of 250
// teachers over 10 classes at (2, 1e-5) on 1,000 proxy queries (issue 39:
// under 10 s on 2 cores).
func BenchmarkConfidentGNMax(b *testing.B) {
	r := request(ensemble.ConfidentGNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: 250, TargetDelta: 1e-5}, 10, 2, 1e-5)
	proxy := synth(1000, 250, 10, 1)
	for b.Loop() {
		if _, err := confidentGNMax(context.Background(), r, 1000, proxy); err != nil {
			b.Fatal(err)
		}
	}
}
