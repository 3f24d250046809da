package cliout

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"mnist58-k11":       "mnist58-k11",
		"a\x1b[31mred":      `a\x1b[31mred`,
		"tab\there":         `tab\x09here`,
		"del\x7f":           `del\x7f`,
		"c1\u009b2J":        `c1\u009b2J`,
		"bad\xffbyte":       `bad\xffbyte`,
		"ünïcode \ufffd ok": "ünïcode \ufffd ok",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWrap: lines of at most the width, broken at spaces, continuation
// lines indented two spaces more, every word kept in order, a word
// wider than the width on its own line.
func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"short line", 20, []string{"short line"}},
		{"a b c d e f", 5, []string{"a b c", "  d e", "  f"}},
		{"  indented words here", 12, []string{"  indented", "    words", "    here"}},
		{"x averyveryverylongword y", 8, []string{"x", "  averyveryverylongword", "  y"}},
		{"ε × δ — ρ", 5, []string{"ε × δ", "  — ρ"}},
		{"", 10, []string{""}},
	} {
		got := Wrap(tc.in, tc.width)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// TestJoinWithin: items joined on lines of at most the width, an item
// wider than it wrapped on lines of its own.
func TestJoinWithin(t *testing.T) {
	got := joinWithin([]string{"a=1", "b=2", "c=3", "long=x y z w", "d=4"}, "  ", 8)
	want := []string{"a=1  b=2", "c=3", "long=x y", "  z w", "d=4"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("joinWithin = %q, want %q", got, want)
	}
}
