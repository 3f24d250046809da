package tally

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestVotes: the 1-votes are counted, and votes of the wrong number or
// value are a *VoteError naming the first at fault.
func TestVotes(t *testing.T) {
	for _, tc := range []struct {
		votes []byte
		ones  int
		index int // the VoteError's Index; -2: no error
	}{
		{[]byte{1, 0, 1}, 2, -2},
		{[]byte{1, 0}, 0, -1},
		{[]byte{1, '1', 2}, 0, 1},
	} {
		l, err := Votes(3, tc.votes)
		var ve *VoteError
		switch {
		case tc.index == -2 && (err != nil || l != tc.ones):
			t.Errorf("Votes(3, %v) = %d, %v: want %d", tc.votes, l, err, tc.ones)
		case tc.index != -2 && (!errors.As(err, &ve) || ve.Index != tc.index):
			t.Errorf("Votes(3, %v): %v, want a VoteError at %d", tc.votes, err, tc.index)
		}
	}
}

// TestCounts: the first largest count is the top, and counts of the wrong
// length, a negative count or a sum above K are a *CountsError; a sum below
// K (abstaining teachers) is not, however large the counts.
func TestCounts(t *testing.T) {
	for _, tc := range []struct {
		counts []int
		top    int
		ok     bool
	}{
		{[]int{1, 3, 3}, 1, true},
		{[]int{0, 2, 1}, 1, true},
		{[]int{1, 3}, 0, false},
		{[]int{-1, 3, 3}, 0, false},
		{[]int{2, 3, 3}, 0, false},
		// A plain sum wraps around to 5 (the
		// mechanisms labelled such counts).
		{[]int{math.MaxInt, math.MaxInt, 7}, 0, false},
		{[]int{7, math.MaxInt, 0}, 0, false},
	} {
		top, err := Counts(tc.counts, 7, 3)
		var ce *CountsError
		if tc.ok && (err != nil || top != tc.top) || !tc.ok && !errors.As(err, &ce) {
			t.Errorf("Counts(%v, 7, 3) = %d, %v: want %d, ok %v", tc.counts, top, err, tc.top, tc.ok)
		}
	}
}

// TestCountsNotQuoted: counts that sum to more than K are refused without
// quoting a count: they are a private query's votes.
func TestCountsNotQuoted(t *testing.T) {
	_, err := Counts([]int{4, 6, 0}, 7, 3)
	if err == nil || strings.Contains(err.Error(), "6") || strings.Contains(err.Error(), "4") {
		t.Errorf("Counts([4 6 0], 7, 3): %v: want an error that quotes no count", err)
	}
}
