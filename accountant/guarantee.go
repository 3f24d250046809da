package accountant

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/darrm/darrm/internal/param"
)

// Guarantee is an (ε, δ)-differential-privacy guarantee (Definition 3.3.1).
type Guarantee struct {
	Eps   float64 `json:"eps"`
	Delta float64 `json:"delta"`
}

// String formats g as "(ε, δ)-DP", each number by FormatBound.
func (g Guarantee) String() string {
	return fmt.Sprintf("(%s, %s)-DP", FormatBound(g.Eps), FormatBound(g.Delta))
}

// FormatBound formats a privacy parameter (an ε or δ, an upper bound on a
// loss) for reading: at most six significant digits, rounded up, so that
// the text never understates it. A value within 8 ulps above a shorter
// decimal prints as that decimal: the difference is float64 rounding of
// the inputs, as in 3 × 0.1 = 0.30000000000000004, which prints 0.3.
// Machine-readable outputs keep every digit.
func FormatBound(x float64) string {
	if !(x > 0) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	near, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	if near >= x || x-near <= 8*(math.Nextafter(x, math.Inf(1))-x) {
		return strconv.FormatFloat(near, 'g', -1, 64)
	}
	// The six-digit decimal nearest x lies below it: raise its last digit.
	e := strconv.FormatFloat(x, 'e', 5, 64) // d.ddddde±XX
	i := strings.IndexByte(e, 'e')
	mant, _ := strconv.ParseInt(e[:1]+e[2:i], 10, 64)
	exp, _ := strconv.Atoi(e[i+1:])
	v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", mant+1, exp-5), 64)
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// ParamError reports a parameter outside its domain: its Name, Value and
// the Rule it breaks.
type ParamError = param.Error

// SettingError reports a setting, one of named choices, that does not go
// with the others: a search with a conversion it does not use, an order
// rule with another conversion than its own.
type SettingError = param.SettingError

// checkStep validates the guarantee of one composed mechanism: ε > 0 and
// δ in [0, 1).
func checkStep(prefix string, g Guarantee) error {
	if err := param.Positive(prefix+"eps", g.Eps); err != nil {
		return err
	}
	return param.Delta(prefix+"delta", g.Delta)
}
