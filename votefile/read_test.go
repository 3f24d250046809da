package votefile

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/quotetest"
	"github.com/darrm/darrm/internal/tally"
)

// TestRead: the one reader decides 0/1 votes, counts or class indices
// from the header, the options or the rows, notes only what it decided
// itself, and refuses options that the header contradicts, naming both.
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		opts       Options
		many       bool
		layout     Layout
		k, c       int
		note       bool
		err        string
	}{
		{"0/1 votes", "1,0,1\n0,0,1\n", Options{}, false, LayoutVotes, 3, 2, false, ""},
		{"counts from the rows", "3,1,0\n0,2,2\n", Options{}, true, LayoutCounts, 4, 3, true, ""},
		{"one row is no evidence", "3,1,0\n", Options{}, false, 0, 0, 0, false, `"3" is not a vote`},
		{"counts stated", "3,1,0\n", Options{Layout: LayoutCounts}, true, LayoutCounts, 4, 3, false, ""},
		{"counts under a stated K", "3,1,0\n0,2,1\n", Options{Layout: LayoutCounts, K: 5}, true, LayoutCounts, 5, 3, false, ""},
		{"class indices", "0,1,2,2\n2,2,1,0\n", Options{Classes: 3, Orientation: QueriesInRows}, true, LayoutVotes, 4, 3, false, ""},
		{"the header says counts", countsHead + "3,1,0\n", Options{}, true, LayoutCounts, 4, 3, false, ""},
		{"the header says class indices", classesHead + "0,1,2,2\n", Options{}, true, LayoutVotes, 4, 3, false, ""},
		{"counts against the header", classesHead + "0,1,2,2\n", Options{Layout: LayoutCounts}, false, 0, 0, 0, false, "Options.Layout = counts contradicts the metadata header of v.csv, which states layout votes (class indices)"},
		{"classes against the header", countsHead + "3,1,0\n", Options{Classes: 5}, false, 0, 0, 0, false, "v.csv: the ensemble's classes: 5 given"},
		{"an archive from a stream", "PK\x03\x04", Options{Array: "votes"}, false, 0, 0, 0, false, "an .npz archive is read from a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, notes, err := readVotes(strings.NewReader(tc.data), "v.csv", tc.opts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				var bi interface{ BadInput() bool }
				if !errors.As(err, &bi) || !bi.BadInput() {
					t.Errorf("error %T is not bad input", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (in.Input() == ManyClasses) != tc.many || in.Layout() != tc.layout || in.K() != tc.k || in.Classes() != tc.c {
				t.Errorf("read as many = %v, %v, K = %d, C = %d; want %v, %v, %d, %d", in.Input() == ManyClasses, in.Layout(), in.K(), in.Classes(), tc.many, tc.layout, tc.k, tc.c)
			}
			if got := len(notes) > 0; got != tc.note {
				t.Errorf("notes %v, want a note: %v", notes, tc.note)
			}
			for in.Next() {
			}
			if in.Err() != nil {
				t.Error(in.Err())
			}
		})
	}
}

// TestIsHeader: a vote file and a label file are told by their first
// object's key, and neither is the other.
func TestIsHeader(t *testing.T) {
	vote, label := []byte(metaLine(LayoutCounts, 3, 4)), []byte(`{"darrm-labels":1,"mechanism":"gnmax"}`)
	for _, tc := range []struct {
		obj           []byte
		labels, found bool
	}{{vote, false, true}, {label, true, true}, {[]byte("1,0,1"), false, false}} {
		if labels, ok := IsHeader(tc.obj); labels != tc.labels || ok != tc.found {
			t.Errorf("IsHeader(%s) = %v, %v: a vote or label header not told apart", tc.obj, labels, ok)
		}
	}
}

// FuzzRead: no file makes the one reader panic; a file it reads, however
// it decided, has queries of C counts each within [0, K] that sum to at
// most K, and 0/1 votes that count to their counts.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"1,0,1\n0,0,1\n", "3,1,0\n0,2,2\n", "id,a,b\nq,3,1\nr,0,4\n", "[2,1,0]\n[0,3,0]\n", countsHead + "3,1,0\n", classesHead + "0,1,2,2\n", "1,0,1\n1,2,0\n"} {
		f.Add([]byte(s), 0, 0, false)
	}
	f.Add([]byte("0,1,2\n2,2,1\n"), 3, 0, false)
	f.Add([]byte("3,1\n0,2\n"), 0, 6, true)
	f.Fuzz(func(t *testing.T, data []byte, classes, k int, counts bool) {
		opts := Options{Classes: classes % 8, K: k % 64, Orientation: QueriesInRows}
		if counts {
			opts.Layout = LayoutCounts
		}
		in, _, err := readVotes(bytes.NewReader(data), "fuzz", opts)
		if err != nil {
			quotetest.Check(t, err.Error(), data, 1000)
			return
		}
		for in.Next() {
			q := in.Query()
			sum := 0
			for _, n := range q.Counts {
				if n < 0 || n > in.K() {
					t.Fatalf("query %d: count %d outside [0, K = %d]", q.Index, n, in.K())
				}
				sum += n
			}
			if len(q.Counts) != in.Classes() || sum > in.K() {
				t.Fatalf("query %d: %d counts summing to %d, for C = %d, K = %d", q.Index, len(q.Counts), sum, in.Classes(), in.K())
			}
			if q.Votes != nil {
				if l, err := tally.Votes(in.K(), q.Votes); err != nil || l != q.Counts[1] {
					t.Fatalf("query %d: votes %v count %d (%v), counts %v", q.Index, q.Votes, l, err, q.Counts)
				}
			}
		}
		if err := in.Err(); err != nil {
			quotetest.Check(t, err.Error(), data, 1000)
		}
	})
}
