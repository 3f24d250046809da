package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWrap: a table's texts are wrapped at 100 columns at spaces, and a
// path longer than a line after its slashes; nothing is lost.
func TestWrap(t *testing.T) {
	path := "/home/someone/.local/state/darrm/pate-draws/" + strings.Repeat("0123456789abcdef", 4)
	for _, s := range []string{
		"short",
		"draw_record: " + path,
		strings.Repeat("word ", 60) + path + " tail",
		"guarantee: " + strings.Repeat("x", 120) + " end",
	} {
		lines := wrap(s, 100)
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
