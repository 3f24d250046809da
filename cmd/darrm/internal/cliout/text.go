package cliout

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

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

// Note returns a function that prints a library's notes on its progress
// (a training, a cache file replaced) on w, as darrm's messages.
func Note(w io.Writer) func(string) {
	return func(s string) { fmt.Fprintf(w, "darrm: %s\n", s) }
}
