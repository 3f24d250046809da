package accountant

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Guarantee is an (ε, δ)-differential-privacy guarantee (Definition 3.3.1).
type Guarantee struct {
	Eps   float64 `json:"eps"`
	Delta float64 `json:"delta"`
}

// MaxDelta is the largest δ of a per-query guarantee that darrm releases
// at or accounts to: the mechanism that publishes its whole input with
// probability δ is (0, δ)-DP, so from δ = 1/2 on a guarantee allows a
// release that is more likely to expose a record than not, and says
// nothing. CheckDelta applies it.
const MaxDelta = 0.5

// CheckDelta checks the δ named name of a per-query guarantee or of the
// total an account reports: a finite number in [0, MaxDelta]; a
// *ParamError otherwise.
func CheckDelta(name string, delta float64) error {
	if !(delta >= 0 && delta <= MaxDelta) {
		return &ParamError{Name: name, Value: delta, Rule: fmt.Sprintf("must be in [0, %v]: from delta = %v on, a guarantee allows publishing a record more often than not", MaxDelta, MaxDelta)}
	}
	return nil
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

// ParamError reports a parameter outside its domain.
type ParamError struct {
	Name  string  // the parameter, e.g. "eps" or "delta'"
	Value float64 // the offending value
	Rule  string  // the rule it breaks, e.g. "must be in (0, 1)"
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("%s = %v: %s", e.Name, e.Value, e.Rule)
}

// Param names the parameter, its value and the rule it breaks.
func (e *ParamError) Param() (name string, value any, rule string) { return e.Name, e.Value, e.Rule }

// SettingError reports a setting, one of named choices, that does not go
// with the others: a search with a conversion it does not use, an order
// rule with another conversion than its own.
type SettingError struct {
	Name  string // the setting, e.g. "search" or "alpha rule"
	Value string // its value, e.g. "grid"
	Rule  string // what it goes with
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Name, e.Value, e.Rule)
}

// Setting names the setting, its value and what it goes with.
func (e *SettingError) Setting() (name, value, rule string) { return e.Name, e.Value, e.Rule }

// checkPositive requires a finite x > 0.
func checkPositive(name string, x float64) error {
	if !(x > 0) || math.IsInf(x, 0) {
		return &ParamError{Name: name, Value: x, Rule: "must be a finite number > 0"}
	}
	return nil
}

// checkAtLeast requires a finite x >= lo.
func checkAtLeast(name string, x, lo float64) error {
	if !(x >= lo) || math.IsInf(x, 0) {
		return &ParamError{Name: name, Value: x, Rule: fmt.Sprintf("must be a finite number >= %v", lo)}
	}
	return nil
}

// checkDelta requires δ in [0, 1).
func checkDelta(name string, x float64) error {
	if !(x >= 0 && x < 1) {
		return &ParamError{Name: name, Value: x, Rule: "must be in [0, 1)"}
	}
	return nil
}

// checkOpenUnit requires x in (0, 1).
func checkOpenUnit(name string, x float64) error {
	if !(x > 0 && x < 1) {
		return &ParamError{Name: name, Value: x, Rule: "must be in (0, 1)"}
	}
	return nil
}

// checkAlpha requires a finite Rényi order α > 1.
func checkAlpha(alpha float64) error {
	if !(alpha > 1) || math.IsInf(alpha, 0) {
		return &ParamError{Name: "alpha", Value: alpha, Rule: "must be a finite number > 1"}
	}
	return nil
}

// checkCount requires an integer n >= lo.
func checkCount(name string, n, lo int) error {
	if n < lo {
		return &ParamError{Name: name, Value: float64(n), Rule: fmt.Sprintf("must be an integer >= %d", lo)}
	}
	return nil
}

// checkStep validates the guarantee of one composed mechanism: ε > 0 and
// δ in [0, 1).
func checkStep(prefix string, g Guarantee) error {
	if err := checkPositive(prefix+"eps", g.Eps); err != nil {
		return err
	}
	return checkDelta(prefix+"delta", g.Delta)
}
