package votefile

import (
	"slices"
	"strings"
	"testing"
)

// TestCountsView: every reader gives each query's counts, whichever path
// read the row (the plain CSV row, a row with quotes or blanks, JSON
// lines, the first row and the later ones), so that any vote file can be
// read as counts.
func TestCountsView(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Reader
		want [][]int
	}{
		{"csv", mustVotes(t, "1,0,1\n0,0,0\n\"1\", 1 ,1\n1,1,0\n"), [][]int{{1, 2}, {3, 0}, {0, 3}, {1, 2}}},
		{"jsonl", mustVotes(t, "[1,0,1]\n{\"votes\":[0,0,1]}\n"), [][]int{{1, 2}, {2, 1}}},
		{"counts", mustMulti(t, "2,1,0\n0,0,3\n", classOptions{Input: inputCounts}), [][]int{{2, 1, 0}, {0, 0, 3}}},
		{"class indices", mustMulti(t, "0,2,2\n1,1,1\n", classOptions{Input: inputClasses, Classes: 3, Orientation: QueriesInRows}), [][]int{{1, 0, 2}, {0, 3, 0}}},
	} {
		var got [][]int
		for tc.in.Next() {
			got = append(got, slices.Clone(tc.in.Query().Counts))
		}
		if tc.in.Err() != nil || !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, tc.in.Err(), tc.want)
		}
	}
}

func mustVotes(t *testing.T, s string) Reader {
	t.Helper()
	r, err := newVoteReader(strings.NewReader(s), "v", readOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustMulti(t *testing.T, s string, opts classOptions) Reader {
	t.Helper()
	r, err := newClassReader(strings.NewReader(s), "v", opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
