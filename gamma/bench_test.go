package gamma

import (
	"context"
	"strconv"
	"testing"

	"github.com/darrm/darrm/constraints"
)

func BenchmarkVerify(b *testing.B) {
	for _, p := range []constraints.Problem{constraints.New(11, 3, 0.1, 1e-5), constraints.New(41, 5, 0.1, 1e-5), constraints.New(101, 10, 0.1, 1e-5), constraints.New(101, 10, 0.1, 0)} {
		g, _ := Sub(p.K, int(p.M))
		b.Run(benchName(p), func(b *testing.B) {
			for b.Loop() {
				if _, err := Verify(context.Background(), p, g, VerifyOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchName(p constraints.Problem) string {
	return "K=" + itoa(p.K) + "/m=" + ftoa(p.M) + "/Delta=" + ftoa(p.Delta)
}

func itoa(i int) string     { return strconv.Itoa(i) }
func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
