package cliout

import (
	"strconv"
	"testing"
)

func TestFloatUp(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		n    int
		want string
	}{
		{0.30000000000000004, 6, "0.300001"},
		{0.3, 6, "0.3"},
		{5.386763227701528, 6, "5.38677"},
		{0.0006098170359847831, 6, "0.000609818"},
		{6, 6, "6"},
		{0, 6, "0"},
		{-0.30000000000000004, 6, "-0.3"},
		{1e-300, 3, "1e-300"},
		{9.9999999, 3, "10"},
	} {
		got := FloatUp(tc.x, tc.n)
		v, _ := strconv.ParseFloat(got, 64)
		if got != tc.want || v < tc.x {
			t.Errorf("FloatUp(%v, %d) = %s, want %s (>= x)", tc.x, tc.n, got, tc.want)
		}
	}
}

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
