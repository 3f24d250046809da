// Package param checks the numbers darrm's privacy analyses take and
// reports one out of its domain as an *Error naming the parameter, its
// value and the rule it breaks, and settings that do not go together as a
// *SettingError: the one error type of each kind that every package of
// darrm returns, which callers tell apart by their methods (Param,
// Setting).
package param

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Error reports a parameter outside its domain.
type Error struct {
	Name  string // the parameter, e.g. "eps" or "delta'"
	Value any    // the offending value, as the caller gave it
	Rule  string // the rule it breaks, e.g. "must be in (0, 1)"
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s = %v: %s", e.Name, e.Value, e.Rule)
}

// Param names the parameter, its value and the rule it breaks.
func (e *Error) Param() (name string, value any, rule string) { return e.Name, e.Value, e.Rule }

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

// Positive requires a finite x > 0.
func Positive(name string, x float64) error {
	if !(x > 0) || math.IsInf(x, 0) {
		return &Error{Name: name, Value: x, Rule: "must be a finite number > 0"}
	}
	return nil
}

// AtLeast requires a finite x >= lo.
func AtLeast(name string, x, lo float64) error {
	if !(x >= lo) || math.IsInf(x, 0) {
		return &Error{Name: name, Value: x, Rule: fmt.Sprintf("must be a finite number >= %v", lo)}
	}
	return nil
}

// Delta requires δ in [0, 1).
func Delta(name string, x float64) error {
	if !(x >= 0 && x < 1) {
		return &Error{Name: name, Value: x, Rule: "must be in [0, 1)"}
	}
	return nil
}

// maxGuaranteeDelta is the largest δ of a per-query guarantee that darrm
// releases at or accounts to: the mechanism that publishes its whole input
// with probability δ is (0, δ)-DP, so above δ = 1/2 a guarantee allows a
// release that is more likely to expose a record than not, and says
// nothing.
const maxGuaranteeDelta = 0.5

// GuaranteeDelta checks the δ named name of a per-query guarantee or of
// the total an account reports: a finite number in [0, 0.5] (above
// δ = 1/2, a guarantee says nothing).
func GuaranteeDelta(name string, delta float64) error {
	if !(delta >= 0 && delta <= maxGuaranteeDelta) {
		return &Error{Name: name, Value: delta, Rule: fmt.Sprintf("must be in [0, %v]: above delta = %v, a guarantee allows publishing a record more often than not", maxGuaranteeDelta, maxGuaranteeDelta)}
	}
	return nil
}

// ConversionDelta checks the δ named name at which a Rényi DP bound is
// converted to (ε, δ)-DP: in (0, 1), and at δ = 0 it says the
// conversion's own rule (no finite ε bounds it there), which a δ that
// GuaranteeDelta takes may break.
func ConversionDelta(name string, delta float64) error {
	if delta == 0 {
		return &Error{Name: name, Value: delta, Rule: "must be > 0 to convert Renyi DP to (eps, delta)-DP (at delta = 0 no finite eps bounds it)"}
	}
	return OpenUnit(name, delta)
}

// DeltaPrime checks the slack δ' of a composition (general or optimal,
// Theorem 3.3.3; the teachers' cap's; a conversion's): in (0, 1), named
// "delta'".
func DeltaPrime(deltaPrime float64) error { return OpenUnit("delta'", deltaPrime) }

// OpenUnit requires x in (0, 1).
func OpenUnit(name string, x float64) error {
	if !(x > 0 && x < 1) {
		return &Error{Name: name, Value: x, Rule: "must be in (0, 1)"}
	}
	return nil
}

// Alpha requires a finite Rényi order α > 1.
func Alpha(alpha float64) error {
	if !(alpha > 1) || math.IsInf(alpha, 0) {
		return &Error{Name: "alpha", Value: alpha, Rule: "must be a finite number > 1"}
	}
	return nil
}

// Count requires an integer n >= lo.
func Count(name string, n, lo int) error {
	if n < lo {
		return &Error{Name: name, Value: n, Rule: fmt.Sprintf("must be an integer >= %d", lo)}
	}
	return nil
}

// CountIn requires an integer n in [lo, hi].
func CountIn(name string, n, lo, hi int) error {
	if n < lo || n > hi {
		return &Error{Name: name, Value: n, Rule: fmt.Sprintf("must be an integer in [%d, %d]", lo, hi)}
	}
	return nil
}

// Teachers checks K, a number of teachers: an integer >= 1 (Count), odd
// for two-class votes, whose majority an even number of votes can tie. It
// is the one check of K, whichever command or header states it.
func Teachers(k int, twoClass bool) error {
	if err := Count("K", k, 1); err != nil {
		return err
	}
	if twoClass && k%2 == 0 {
		return &Error{Name: "K", Value: k, Rule: "must be odd for two-class votes (the majority of an even number of votes can tie)"}
	}
	return nil
}

// M checks m, the multiple of the teachers' eps that each release of K = k
// teachers' majority is held to (m·eps): in [1, K]. It is the one check of
// m, whichever problem, command or experiment takes it.
func M(m float64, k int) error {
	if !(m >= 1 && m <= float64(k)) {
		return &Error{Name: "m", Value: m, Rule: fmt.Sprintf("must be in [1, K] = [1, %d]", k)}
	}
	return nil
}

// MaxMEps bounds m·eps, the eps of each release of DaRRM's problem
// (constraints.Problem.Validate), and so the eps a search for it tries:
// beyond it e^{m·eps} overflows the arithmetic and the guarantee is
// vacuous anyway.
const MaxMEps = 100.0

// MaxWorkers bounds a number of goroutines for parallel work: each is
// started whether or not there is work for it, so a number near 2^63
// never returned.
const MaxWorkers = 1 << 10

// Workers checks a number of goroutines for parallel work (0: all cores),
// named "workers": every option that passes it on to a separation
// (constraints.SeparateOptions.Workers) and the command's --workers.
func Workers(n int) error {
	if n < 0 || n > MaxWorkers {
		return &Error{Name: "workers", Value: n, Rule: fmt.Sprintf("must be in [0, %d] (0: all cores)", MaxWorkers)}
	}
	return nil
}

// cutMost is the most of a value Cut keeps.
const cutMost = 32

// Cut returns s cut for an error message to its first 32 bytes, at the
// start of a character, and whether it cut: a field of a file may be as
// long as its line, and an error names the value, it does not repeat it.
func Cut(s string) (string, bool) {
	if len(s) <= cutMost {
		return s, false
	}
	n := cutMost
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// Quote quotes a value a user gave, for an error message, cut (Cut).
func Quote(s string) string {
	c, cut := Cut(s)
	if cut {
		return strconv.Quote(c) + "..."
	}
	return strconv.Quote(c)
}
