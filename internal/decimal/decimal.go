// Package decimal multiplies numbers as the decimals they are written as.
// darrm's users give parameters in decimal (--m 3 --eps 0.1), and a
// parameter derived from two of them by a product, such as the per-query
// eps m·eps, is the product of those decimals: 3 × 0.1 = 0.3, where the
// product of their float64 values is 0.30000000000000004.
package decimal

import (
	"math"
	"math/big"
	"strconv"
)

// Mul returns the product of a and b as the decimals they print as
// (strconv's shortest form, which reads back as each), rounded to the
// nearest float64: Mul(3, 0.1) is 0.3. The result may lie a few units in
// the last place from the product of the float64 values, above or below:
// a caller that derives a guarantee from it holds the mechanism to the
// result itself, never to a bound of the float product. A zero, infinite
// or NaN operand gives a·b.
func Mul(a, b float64) float64 {
	if a == 0 || b == 0 || math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return a * b
	}
	x, okx := new(big.Rat).SetString(strconv.FormatFloat(a, 'g', -1, 64))
	y, oky := new(big.Rat).SetString(strconv.FormatFloat(b, 'g', -1, 64))
	if !okx || !oky {
		return a * b // not reached: strconv's forms are decimals big.Rat reads
	}
	f, _ := x.Mul(x, y).Float64()
	return f
}
