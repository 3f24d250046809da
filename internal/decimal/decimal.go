// Package decimal multiplies numbers as the decimals they are written as,
// and prints the bounds computed from them as those decimals.
// darrm's users give parameters in decimal (--m 3 --eps 0.1), and a
// parameter derived from two of them by a product, such as the per-query
// eps m·eps, is the product of those decimals: 3 × 0.1 = 0.3, where the
// product of their float64 values is 0.30000000000000004 (Mul); a bound
// printed for reading is that decimal, never one below the bound
// (FormatBound).
package decimal

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
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
	// The digits of each, an integer of at most 17 digits and a power of
	// ten: where their product holds in 64 bits (3 × 0.1, 6.4521 × 0.1),
	// strconv rounds the decimal product to the nearest float64, as
	// big.Rat does, without its allocations (a certificate asks for m·eps
	// at every multiset).
	if ma, ea, oka := digits(a); oka {
		if mb, eb, okb := digits(b); okb {
			if hi, lo := bits.Mul64(ma, mb); hi == 0 {
				f, _ := strconv.ParseFloat(strconv.FormatUint(lo, 10)+"e"+strconv.Itoa(ea+eb), 64) // ±Inf beyond the range, as big.Rat's
				if (a < 0) != (b < 0) {
					f = -f
				}
				return f
			}
		}
	}
	return mulRat(a, b)
}

// mulRat is Mul by big.Rat, for any finite nonzero a and b.
func mulRat(a, b float64) float64 {
	x, okx := new(big.Rat).SetString(strconv.FormatFloat(a, 'g', -1, 64))
	y, oky := new(big.Rat).SetString(strconv.FormatFloat(b, 'g', -1, 64))
	if !okx || !oky {
		return a * b // not reached: strconv's forms are decimals big.Rat reads
	}
	f, _ := x.Mul(x, y).Float64()
	return f
}

// digits returns |x| as the integer m of the digits of its shortest
// decimal form (strconv's) times 10^e, and whether m holds in 64 bits.
func digits(x float64) (m uint64, e int, ok bool) {
	s := strconv.FormatFloat(math.Abs(x), 'e', -1, 64) // d.ddde±XX
	i := strings.IndexByte(s, 'e')
	if i < 0 {
		return 0, 0, false
	}
	exp, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return 0, 0, false
	}
	mant := s[:i]
	if j := strings.IndexByte(mant, '.'); j >= 0 {
		exp -= len(mant) - j - 1
		mant = mant[:j] + mant[j+1:]
	}
	m, err = strconv.ParseUint(mant, 10, 64)
	return m, exp, err == nil
}

// FormatBound formats a privacy parameter (an ε or δ, an upper bound on a
// loss) for reading: at most six significant digits, rounded up, so that
// the text never understates it. A value within 8 ulps above a shorter
// decimal prints as that decimal: the difference is float64 rounding of
// the inputs, as in 3 × 0.1 = 0.30000000000000004, which prints 0.3.
// Machine-readable outputs keep every digit.
func FormatBound(x float64) string { return Format(x, 6, true, 8) }

// pow10 returns 10^n for n in [0, 18].
func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// Format formats x to at most digits significant digits (1 to 17), rounded
// up (up) or down, so that the text reads back on that side of x: a
// setting that must not be less noise than x, or a bound that must not be
// below it. A value within slack ulps of the nearest decimal on the other
// side prints as that decimal (FormatBound). Zero, negative, infinite and
// NaN values print as strconv's shortest form.
func Format(x float64, digits int, up bool, slack int) string {
	if !(x > 0) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	near, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', digits, 64), 64)
	ulp := math.Nextafter(x, math.Inf(1)) - x
	if near == x || near > x == up || math.Abs(x-near) <= float64(slack)*ulp {
		return strconv.FormatFloat(near, 'g', -1, 64)
	}
	// The nearest decimal is on the other side of x: step its last digit.
	e := strconv.FormatFloat(x, 'e', digits-1, 64) // d.ddde±XX
	i := strings.IndexByte(e, 'e')
	mant, _ := strconv.ParseInt(strings.Replace(e[:i], ".", "", 1), 10, 64)
	exp, _ := strconv.Atoi(e[i+1:])
	if up {
		mant++
	} else if mant--; mant < pow10(digits-1) {
		// 1000 down is 999, a digit short: 9999 a decade lower.
		mant, exp = mant*10+9, exp-1
	}
	v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", mant, exp-(digits-1)), 64)
	return strconv.FormatFloat(v, 'g', -1, 64)
}
