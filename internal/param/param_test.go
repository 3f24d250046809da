package param

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestChecks: every check passes the edge of its domain and refuses what
// lies outside it, NaN and infinities included, with an *Error naming the
// parameter, its value and the rule.
func TestChecks(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name string
		ok   []float64
		bad  []float64
		fn   func(x float64) error
	}{
		{"positive", []float64{1e-300, 5}, []float64{0, -1, nan, inf}, func(x float64) error { return Positive("x", x) }},
		{"at least 2", []float64{2, 3}, []float64{1.9, nan, inf}, func(x float64) error { return AtLeast("x", x, 2) }},
		{"delta", []float64{0, 0.999}, []float64{-1e-9, 1, nan}, func(x float64) error { return Delta("x", x) }},
		{"guarantee delta", []float64{0, 0.5}, []float64{-1e-9, 0.5000001, nan}, func(x float64) error { return GuaranteeDelta("x", x) }},
		{"conversion delta", []float64{1e-300, 0.999}, []float64{0, 1, nan}, func(x float64) error { return ConversionDelta("x", x) }},
		{"delta'", []float64{1e-300, 0.999}, []float64{0, 1, nan}, DeltaPrime},
		{"open unit", []float64{1e-300, 0.999}, []float64{0, 1, nan}, func(x float64) error { return OpenUnit("x", x) }},
		{"alpha", []float64{1.0000001, 100}, []float64{1, 0.5, nan, inf}, func(x float64) error { return Alpha(x) }},
		{"count >= 1", []float64{1, 7}, []float64{0, -3}, func(x float64) error { return Count("x", int(x), 1) }},
		{"teachers", []float64{1, 4}, []float64{0, -1}, func(x float64) error { return Teachers(int(x), false) }},
		{"two-class teachers", []float64{1, 3}, []float64{0, 2, 4}, func(x float64) error { return Teachers(int(x), true) }},
		{"m of 5 teachers", []float64{1, 2.5, 5}, []float64{0.99, 5.01, nan, inf}, func(x float64) error { return M(x, 5) }},
		{"count in [1, 2^53]", []float64{1, 1 << 53}, []float64{0, 1<<53 + 2, 1e18}, func(x float64) error { return CountIn("x", int(x), 1, 1<<53) }},
	} {
		for _, x := range tc.ok {
			if err := tc.fn(x); err != nil {
				t.Errorf("%s: %v refused: %v", tc.name, x, err)
			}
		}
		for _, x := range tc.bad {
			err := tc.fn(x)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Errorf("%s: %v: error %v is not an *Error", tc.name, x, err)
				continue
			}
			name, _, rule := pe.Param()
			if !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), rule) {
				t.Errorf("%s: %v: message %q does not state the parameter and the rule", tc.name, x, err)
			}
		}
	}
	se := &SettingError{Name: "search", Value: "grid", Rule: "needs the paper's conversion"}
	if n, v, r := se.Setting(); n != "search" || v != "grid" || r == "" || se.Error() != "search grid: needs the paper's conversion" {
		t.Errorf("setting error %q", se)
	}
}

// TestQuote: a value is quoted whole up to 32 bytes, and cut to at most
// its first 32 bytes after them, at the start of a character, its escapes
// as strconv.Quote writes them.
func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"gnmax", `"gnmax"`},
		{strings.Repeat("a", 32), `"` + strings.Repeat("a", 32) + `"`},
		{strings.Repeat("a", 33), `"` + strings.Repeat("a", 32) + `"...`},
		{"a\nb", `"a\nb"`},
		{strings.Repeat(`\`, 40), `"` + strings.Repeat(`\\`, 32) + `"...`},
		// The cut falls at the start of a character, never inside one.
		{"a" + strings.Repeat("é", 20), `"a` + strings.Repeat("é", 15) + `"...`},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
