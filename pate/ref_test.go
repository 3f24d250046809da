package pate

import (
	"math/big"

	"github.com/darrm/darrm/internal/bigmath"
)

// The exact references of the tests: 256-bit floats, as accountant's
// tests take them.
const refPrec = 256

func bf(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }

func bigExp(x *big.Float) *big.Float { return bigmath.Exp(x, refPrec) }

func bigLog(y *big.Float) *big.Float { return bigmath.Log(y, refPrec) }

// below reports whether the float64 got is strictly below the exact value.
func below(got float64, exact *big.Float) bool { return bf(got).Cmp(exact) < 0 }

func second[T any](_ T, err error) error { return err }
