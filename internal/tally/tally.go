// Package tally checks and counts the votes of one query, as the readers
// and writers of vote files, the aggregators and plans take them: K 0/1
// votes (Votes) or C class counts (Counts), each refusal an error that
// names the rule it breaks.
package tally

import "fmt"

// VoteError reports votes that cannot be counted (Votes): the wrong
// number of them, or a value other than 0 and 1.
type VoteError struct {
	K     int // the teachers the aggregator has
	Len   int // the votes given
	Index int // the first vote that is not 0 or 1, or -1
	Value byte
}

func (e *VoteError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("votes: got %d, want one per teacher, K = %d", e.Len, e.K)
	}
	msg := fmt.Sprintf("votes[%d] = %d: a vote must be the byte value 0 or 1", e.Index, e.Value)
	if e.Value == '0' || e.Value == '1' {
		msg += fmt.Sprintf(" (this is the character %q: convert with v - '0')", e.Value)
	}
	return msg
}

// Votes counts the 1-votes of k teachers, checking that there are k
// votes, each the byte value 0 or 1; else it returns a *VoteError.
func Votes(k int, votes []byte) (int, error) {
	if len(votes) != k {
		return 0, &VoteError{K: k, Len: len(votes), Index: -1}
	}
	var l int
	for i, v := range votes {
		if v > 1 {
			return 0, &VoteError{K: k, Len: len(votes), Index: i, Value: v}
		}
		l += int(v)
	}
	return l, nil
}

// CountsError reports counts that cannot be taken (Counts).
type CountsError struct{ Msg string }

func (e *CountsError) Error() string { return "counts: " + e.Msg }

// Counts checks the counts of one query: C = classes counts, each >= 0,
// summing to at most K = teachers (fewer when teachers abstained); else
// it returns a *CountsError. It returns the index of the first largest.
//
// A sum below K leaves the mechanisms' data-independent analysis as it
// is: a teacher's vote that changes, or is withdrawn (or cast), moves at
// most one count down by one and one count up by one, the sensitivity
// that analysis assumes (docs/pate.md, "Abstaining teachers").
func Counts(counts []int, teachers, classes int) (top int, err error) {
	if len(counts) != classes {
		return 0, &CountsError{Msg: fmt.Sprintf("got %d, want C = %d", len(counts), classes)}
	}
	// The sum is checked as it grows, against what is left of K: a plain
	// sum wrapped around, and counts of MaxInt, MaxInt, 7 summed to 5.
	sum := 0
	for i, n := range counts {
		switch {
		case n < 0:
			return 0, &CountsError{Msg: fmt.Sprintf("class %d: a count must be >= 0", i)}
		case n > teachers-sum:
			return 0, &CountsError{Msg: fmt.Sprintf("sum to more than K = %d (not quoted: a query's votes are private)", teachers)}
		}
		sum += n
		if n > counts[top] {
			top = i
		}
	}
	return top, nil
}
