package votefile

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestAdvice: an error of Read that advises setting an option says which
// (its Hints), and its text has each hint as Hint.String says it, for a
// caller to reword.
func TestAdvice(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		opts Options
		want []Hint
	}{
		{"counts against the header", classesHead + "0,1,2,2\n", Options{Layout: LayoutCounts}, []Hint{{optLayout, "counts"}}},
		{"classes against the header", countsHead + "3,1,0\n", Options{Classes: 5}, []Hint{{optClasses, ""}}},
		{"a count among 0/1 votes", "1,0,5\n", Options{}, []Hint{{optLayout, "counts"}, {optClasses, "C"}}},
		{"teachers in rows of counts", "3,1,0\n", Options{Layout: LayoutCounts, Orientation: TeachersInRows}, []Hint{{optOrientation, "teachers-in-rows"}, {optClasses, "C"}}},
		{"class labels, orientation unstated", "0,1,2\n", Options{Classes: 3}, []Hint{{optOrientation, "teachers-in-rows"}, {optOrientation, "queries-in-rows"}}},
		{"counts of no votes", "0,0,0\n", Options{Layout: LayoutCounts}, []Hint{{optK, ""}}},
		{"a zip archive", "PK\x03\x04rest", Options{}, []Hint{{optArray, "NAME"}}},
	} {
		_, _, err := readVotes(strings.NewReader(tc.data), "v.csv", tc.opts)
		var a interface{ Hints() []Hint }
		if !errors.As(err, &a) {
			t.Errorf("%s: %v, want advice", tc.name, err)
			continue
		}
		if !slices.Equal(a.Hints(), tc.want) {
			t.Errorf("%s: hints %v, want %v", tc.name, a.Hints(), tc.want)
		}
		for _, h := range a.Hints() {
			if !strings.Contains(err.Error(), h.String()) {
				t.Errorf("%s: %q does not say %q", tc.name, err, h)
			}
		}
	}
	if got := (Hint{optClasses, "C"}).String(); got != "Options.Classes = C" {
		t.Errorf("hint %q", got)
	}
}
