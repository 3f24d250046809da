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

// Width is the widest line, in columns, that a summary printed as text
// writes: a terminal of 100 columns shows it without folding.
const Width = 100

// Wrap returns s as lines of at most width columns (one column a rune),
// broken at spaces; each continuation line is indented two spaces more
// than s itself. A word wider than the width stays whole, on a line of
// its own.
func Wrap(s string, width int) []string {
	indent := len(s) - len(strings.TrimLeft(s, " "))
	words := strings.Fields(s)
	var out []string
	line := strings.Repeat(" ", indent)
	cont := strings.Repeat(" ", indent+2)
	n, start := indent, true
	for _, w := range words {
		wn := utf8.RuneCountInString(w)
		if !start && n+1+wn > width {
			out = append(out, line)
			line, n, start = cont, len(cont), true
		}
		if !start {
			line += " "
			n++
		}
		line += w
		n += wn
		start = false
	}
	return append(out, line)
}

// WriteWrapped writes each line of s wrapped to Width columns (Wrap).
func WriteWrapped(w io.Writer, s string) error {
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		for _, part := range Wrap(l, Width) {
			if _, err := fmt.Fprintln(w, part); err != nil {
				return err
			}
		}
	}
	return nil
}
