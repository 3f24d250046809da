package noisymax

import (
	"fmt"
	"math"
	"math/big"

	"github.com/darrm/darrm/internal/bigmath"
)

// The exact references of the tests: 256-bit floats, as accountant's
// tests take them.
const refPrec = 256

func bf(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }

func bigExp(x *big.Float) *big.Float { return bigmath.Exp(x, refPrec) }

func bigSqrt(x *big.Float) *big.Float { return new(big.Float).SetPrec(refPrec).Sqrt(x) }

// below reports whether the float64 got is strictly below the exact value.
func below(got float64, exact *big.Float) bool { return bf(got).Cmp(exact) < 0 }

func relErr(got, want float64) float64 {
	return math.Abs(got-want) / math.Max(math.Abs(want), 1e-300)
}

// round formats x with as many decimals as the printed value want has.
func round(x float64, want string) string {
	decimals := 0
	for i, c := range want {
		if c == '.' {
			decimals = len(want) - i - 1
		}
	}
	return fmt.Sprintf("%.*f", decimals, x)
}

var sink float64
