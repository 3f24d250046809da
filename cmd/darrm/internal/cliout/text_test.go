package cliout

import (
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
