package optimal

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// BenchmarkSolve times cold solves. The large cases of docs/solve.md run only
// with DARRM_LONG_BENCH=1 (they take seconds to a minute each).
func BenchmarkSolve(b *testing.B) {
	cases := []constraints.Params{params(11, 3, 1e-5), params(41, 5, 1e-5), params(101, 10, 0)}
	if os.Getenv("DARRM_LONG_BENCH") != "" {
		cases = append(cases, params(71, 9, 1e-5), params(101, 10, 1e-5), params(1001, 40, 0))
	}
	for _, p := range cases {
		b.Run(benchName(p), func(b *testing.B) {
			for b.Loop() {
				if _, err := Solve(context.Background(), p, gamma.UniformPrior(), Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchName(p constraints.Params) string {
	return "K=" + strconv.Itoa(p.K) + "/m=" + ftoa(p.M) + "/Delta=" + ftoa(p.Delta)
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
