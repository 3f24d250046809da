package cliout

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FloatUp formats x with at most n significant digits, rounded up (toward
// +Inf): the way to print a privacy total, which must not read smaller
// than it is (0.30000000000000004 prints as 0.300001 with n = 6, not 0.3).
func FloatUp(x float64, n int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return Float(x)
	}
	s := strconv.FormatFloat(x, 'e', n-1, 64)
	if v, _ := strconv.ParseFloat(s, 64); v >= x {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	// Rounded down: add one unit in the last digit, in decimal, so that
	// no binary rounding brings it back below x.
	mant, exp, _ := strings.Cut(s, "e")
	neg := strings.HasPrefix(mant, "-")
	digits := strings.Replace(strings.TrimPrefix(mant, "-"), ".", "", 1)
	d, _ := strconv.ParseUint(digits, 10, 64)
	e, _ := strconv.Atoi(exp)
	if neg {
		d-- // toward +Inf is toward zero for a negative x
	} else {
		d++
	}
	v, _ := strconv.ParseFloat(fmt.Sprintf("%s%de%d", map[bool]string{true: "-"}[neg], d, e-(len(digits)-1)), 64)
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Escape makes s safe to print on a terminal: control characters (ESC
// among them, which a terminal acts on) and invalid UTF-8 bytes are
// written as Go escapes (\x1b, \u009b); everything else stays as it is.
func Escape(s string) string {
	clean := true
	for i, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError && isInvalid(s, i) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isInvalid reports whether the rune at byte i of s is an invalid byte
// rather than an encoded U+FFFD.
func isInvalid(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size <= 1
}
