package cliout

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
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

// TestWrapPaths: a path wider than a line is broken after its slashes,
// each piece on a line of its own within the width; nothing is lost.
func TestWrapPaths(t *testing.T) {
	path := "/home/someone/.local/state/darrm/pate-draws/" + strings.Repeat("0123456789abcdef", 4)
	for _, s := range []string{
		"short",
		"draw_record: " + path,
		strings.Repeat("word ", 60) + path + " tail",
		"guarantee: " + strings.Repeat("x", 120) + " end",
	} {
		lines := Wrap(s, 100)
		joined := ""
		for i, l := range lines {
			if utf8.RuneCountInString(l) > 100 && !strings.Contains(l, strings.Repeat("x", 120)) {
				t.Errorf("%.20q: line %d has %d columns: %q", s, i, utf8.RuneCountInString(l), l)
			}
			if i > 0 && !strings.HasPrefix(l, "  ") {
				t.Errorf("%.20q: line %d not indented: %q", s, i, l)
			}
			joined += strings.TrimPrefix(l, "  ") + "\n"
		}
		if got := strings.Join(strings.Fields(strings.ReplaceAll(strings.ReplaceAll(joined, "/\n", "/"), "\n", " ")), " "); got != strings.Join(strings.Fields(s), " ") {
			t.Errorf("wrapped %q, got back %q", s, got)
		}
	}
}

// TestWriteTableSplits: a table wider than Width is split into tables
// that each repeat the first column, in the columns' order, every line
// within Width; one that fits is one table.
func TestWriteTableSplits(t *testing.T) {
	header := []string{"mechanism"}
	row := []string{"gamma_opt (darrm-one-vote)"}
	for i := range 8 {
		header = append(header, fmt.Sprintf("column %d", i))
		row = append(row, strings.Repeat("9", 12))
	}
	var b strings.Builder
	if err := WriteTable(&b, header, [][]string{row}); err != nil {
		t.Fatal(err)
	}
	tables := strings.Count(b.String(), "┌")
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	if tables < 2 || strings.Count(b.String(), "gamma_opt (darrm-one-vote)") != tables || strings.Count(b.String(), "column ") != 8 ||
		strings.Index(b.String(), "column 0") > strings.Index(b.String(), "column 7") {
		t.Errorf("%d tables:\n%s", tables, b.String())
	}
	b.Reset()
	if err := WriteTable(&b, header[:3], [][]string{row[:3]}); err != nil || strings.Count(b.String(), "┌") != 1 {
		t.Errorf("a table that fits: %v\n%s", err, b.String())
	}
}

// TestWriteRecordNotes: a record's value wider than a cell is a numbered
// note under its table, the same text one note.
func TestWriteRecordNotes(t *testing.T) {
	long := "Mironov, Talwar and Zhang 2019 (sampled Gaussian RDP); Canonne-Kamath-Steinke 2020 Prop. 12 / Balle et al. 2020 Thm 21"
	var b strings.Builder
	if err := WriteRecord(&b, Table, Record{{"sigma", 12.0}, {"reference", long}, {"again", long}, {"conversion", "improved"}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "│ reference  │ [1]") || !strings.Contains(out, "│ again      │ [1]") || !strings.Contains(out, "│ conversion │ improved") ||
		!strings.Contains(strings.Join(strings.Fields(out), " "), "[1] "+long) || strings.Count(out, "[2]") != 0 {
		t.Errorf("record:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
}
