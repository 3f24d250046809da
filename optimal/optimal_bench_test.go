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
	cases := []constraints.Problem{constraints.New(11, 3, 0.1, 1e-5), constraints.New(41, 5, 0.1, 1e-5), constraints.New(101, 10, 0.1, 0)}
	if os.Getenv("DARRM_LONG_BENCH") != "" {
		cases = append(cases, constraints.New(71, 9, 0.1, 1e-5), constraints.New(101, 10, 0.1, 1e-5), constraints.New(1001, 40, 0.1, 0))
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

func benchName(p constraints.Problem) string {
	return "K=" + strconv.Itoa(p.K) + "/m=" + ftoa(p.M) + "/Delta=" + ftoa(p.Delta)
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// BenchmarkSolveOneVote times cold solves in the one-vote relation: the
// greatest private gamma, its certificate and the LP's bound. K = 1001 at
// eps = 0.05, delta = 1e-5 is the target of docs/solve.md (under a second
// end to end).
func BenchmarkSolveOneVote(b *testing.B) {
	for _, p := range []constraints.Problem{
		constraints.NewOneVote(11, 0.3, 1e-5), constraints.NewOneVote(101, 0.1, 0),
		constraints.NewOneVote(1001, 0.05, 1e-5), constraints.NewOneVote(1001, 0.05, 0),
	} {
		b.Run("K="+strconv.Itoa(p.K)+"/eps="+ftoa(p.Eps)+"/delta="+ftoa(p.TargetDelta), func(b *testing.B) {
			for b.Loop() {
				if _, err := Solve(context.Background(), p, gamma.UniformPrior(), Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
