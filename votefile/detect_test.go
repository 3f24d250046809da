package votefile

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/quotetest"
)

// detect opens data and detects its layout.
func detect(t *testing.T, data string, opts readOptions) (Layout, error) {
	t.Helper()
	f, err := open(strings.NewReader(data), "votes", FormatAuto)
	if err != nil {
		t.Fatalf("open(%q): %v", data, err)
	}
	return f.detectLayout(opts)
}

// TestDetectLayout: the rule of docs/aggregate.md, "Vote counts without a
// flag", on each of its cases: 0/1 votes whatever they sum to, counts by
// their shape and equal sums (or K), the header's word, the ambiguous
// files refused, and files that are neither left to the vote reader.
func TestDetectLayout(t *testing.T) {
	const (
		votes  = "votes"
		counts = "counts"
		refuse = "refuse"
	)
	for _, tc := range []struct {
		name string
		data string
		opts readOptions
		want string
	}{
		{"0/1 votes", "0,1,1\n1,1,0\n", readOptions{}, votes},
		{"0/1 votes of equal sums", "0,1,1\n1,1,0\n1,0,1\n", readOptions{}, votes},
		{"one 0/1 row", "0,1,0\n", readOptions{}, votes},
		{"K = 1 counts look like votes", "0,1,0\n1,0,0\n", readOptions{}, votes},
		{"header and ids", "id,t1,t2,t3\nq1,0,1,1\nq2,1,1,1\n", readOptions{}, votes},
		{"numeric ids, sums differ", "17,0,1,1\n18,1,0,1\n", readOptions{}, votes},
		{"PATE counts", "240,5,5,0\n200,30,10,10\n90,80,50,30\n250,0,0,0\n", readOptions{}, counts},
		{"one counts row: no evidence", "240,10\n", readOptions{}, votes},
		{"one row with a typo", "1,0,2,1,0,1,0,1,1,0,1\n", readOptions{}, votes},
		{"a typo, then a row of 0/1 votes of equal sum", "0,1,2,0,1\n1,1,1,1,0\n", readOptions{}, votes},
		{"JSON lines, one counts row: no evidence", "[240,10]\n", readOptions{}, votes},
		{"counts with ids", "q1,240,10\nq2,200,50\n", readOptions{}, counts},
		{"counts with a header", "id,c0,c1,c2\n0,5,3,2\n1,10,0,0\n", readOptions{}, counts},
		{"counts, first row 0/1, K given", "1,1,0,1,0\n3,0,0,0,0\n", readOptions{K: 3}, counts},
		{"0/1 votes, K given", "1,1,0,1,0\n0,0,0,0,1\n", readOptions{K: 5}, votes},
		{"counts summing to more than K", "240,5,5,0\n200,30,10,10\n", readOptions{K: 249}, votes},
		{"counts short of K, abstentions", "240,5,5,0\n200,30,10,9\n", readOptions{K: 251}, counts},
		{"integral floats", "240.0,5.0,5.0,0.0\n200.0,30.0,10.0,10.0\n", readOptions{}, counts},
		{"counts of unequal sums", "240,5,5,0\n200,30,10,11\n", readOptions{}, votes},
		{"a typo in a vote file", "0,1,2,0,1\n0,1,1,0,1\n", readOptions{}, votes},
		{"class indices", "3,7,1,0,9\n2,2,8,1,0\n", readOptions{}, votes},
		{"one column", "5\n5\n", readOptions{}, votes},
		{"no teacher voted", "0,0\n2,0\n", readOptions{}, votes},
		{"id then votes, or counts", "17,0,1,1\n18,0,0,1\n", readOptions{}, refuse},
		{"one row: id then votes, or counts", "17,0,1,1\n", readOptions{}, refuse},
		{"ambiguous, the id declared", "17,0,1,1\n18,0,0,1\n", readOptions{ID: present}, votes},
		{"ambiguous, no id column", "17,0,1,1\n18,0,0,1\n", readOptions{ID: absent}, counts},
		{"ambiguous, K of the votes", "17,0,1,1\n18,0,0,1\n", readOptions{K: 3}, votes},
		{"ambiguous, K of the counts", "17,0,1,1\n18,0,0,1\n", readOptions{K: 19}, counts},
		{"an even number of votes after the number", "17,0,1\n18,0,0\n", readOptions{}, counts},
		{"JSON lines votes", "[0,1,1]\n[1,1,0]\n", readOptions{}, votes},
		{"JSON lines counts", "[240,5,5,0]\n[200,30,10,10]\n", readOptions{}, counts},
		{"JSON lines objects", `{"id":1,"votes":[240,10]}` + "\n" + `{"id":2,"votes":[200,50]}` + "\n", readOptions{}, counts},
		{"JSON lines say counts", `{"id":1,"counts":[1,0]}` + "\n", readOptions{}, counts},
		{"JSON lines of unequal sums", "[240,5]\n[200,6]\n", readOptions{}, votes},
		{"the header says votes", "# " + metaLine(LayoutVotes, 3, 3) + "\n2,1,0\n", readOptions{}, votes},
		{"the header says counts", "# " + metaLine(LayoutCounts, 2, 1) + "\n0,1\n", readOptions{}, counts},
		{"a comment line in the data", "240,10\n200,50\n# x\n", readOptions{}, counts},
	} {
		got, err := detect(t, tc.data, tc.opts)
		var fe *formatError
		switch {
		case tc.want == refuse && (!errors.As(err, &fe) || !strings.Contains(err.Error(), "Options.ID = yes") || !strings.Contains(err.Error(), "Options.Layout = counts")):
			t.Errorf("%s: %v, %v; want it refused, saying how to say which", tc.name, got, err)
		case tc.want != refuse && (err != nil || got.String() != tc.want):
			t.Errorf("%s: %v, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}

// TestDetectNeverCounts01: a genuine vote file (0/1 votes, odd K, with or
// without ids, a header row, in CSV or JSON lines) is never taken for
// counts, and only one whose numeric ids and votes make rows of equal
// sums is refused as ambiguous.
func TestDetectNeverCounts01(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		k := 1 + 2*rng.IntN(6)
		n := 1 + rng.IntN(20)
		ids := rng.IntN(3) // none, q-ids, numeric ids from a random start
		start := rng.IntN(2000)
		header, jsonl := rng.IntN(3) == 0, rng.IntN(4) == 0
		var b strings.Builder
		if header && !jsonl {
			if ids > 0 {
				b.WriteString("id,")
			}
			for j := range k {
				fmt.Fprintf(&b, "t%d,", j+1)
			}
			b.WriteString("\n")
		}
		sums := map[int]bool{}
		for q := range n {
			v := make([]string, k)
			sum := 0
			for j := range v {
				x := rng.IntN(2)
				v[j], sum = fmt.Sprint(x), sum+x
			}
			id := ""
			switch ids {
			case 1:
				id = fmt.Sprintf("q%d", q)
			case 2:
				id = fmt.Sprint(start + q)
				sums[start+q+sum] = true
			}
			switch {
			case jsonl && id != "":
				fmt.Fprintf(&b, `{"id":%q,"votes":[%s]}`+"\n", id, strings.Join(v, ","))
			case jsonl:
				fmt.Fprintf(&b, "[%s]\n", strings.Join(v, ","))
			case id != "":
				fmt.Fprintf(&b, "%s,%s\n", id, strings.Join(v, ","))
			default:
				fmt.Fprintf(&b, "%s\n", strings.Join(v, ","))
			}
		}
		got, err := detect(t, b.String(), readOptions{})
		ambiguous := ids == 2 && !jsonl && !header && start >= 2 && len(sums) == 1
		switch {
		case err != nil && !ambiguous:
			t.Fatalf("case %d: %v\n%s", i, err, b.String())
		case err == nil && got != LayoutVotes:
			t.Fatalf("case %d: read as %v\n%s", i, got, b.String())
		}
	}
}

// TestDetectCounts: counts files of two rows or more, none all 0 and 1,
// are read as counts, with or without ids and a header, in CSV and JSON
// lines, unless a number is followed by 0/1 votes in every row (refused);
// one row is read as counts only when it says so (a JSON object's
// "counts").
func TestDetectCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := 3000
	if testing.Short() {
		// Under -short at a smaller size: the first 1,000 of the same
		// files, which are read as counts (943) and as votes for want of
		// evidence (53), as the 3,000 are (2,848 and 140).
		cases = 1000
	}
	for i := range cases {
		c := 2 + rng.IntN(9)
		k := 2 + rng.IntN(300)
		n := 1 + rng.IntN(20)
		ids, header, jsonl := rng.IntN(2) == 1, rng.IntN(3) == 0, rng.IntN(4) == 0
		var b strings.Builder
		if header && !jsonl {
			if ids {
				b.WriteString("id,")
			}
			for j := range c {
				fmt.Fprintf(&b, "c%d,", j)
			}
			b.WriteString("\n")
		}
		allVotesAfterFirst, anyRow01 := true, false
		var firstRow []int
		for q := range n {
			counts := make([]int, c)
			for range k {
				counts[rng.IntN(1+rng.IntN(c))]++
			}
			if q == 0 {
				firstRow = counts
			}
			row01 := true
			v := make([]string, c)
			for j, x := range counts {
				row01 = row01 && x <= 1
				v[j] = fmt.Sprint(x)
				if j > 0 && x > 1 {
					allVotesAfterFirst = false
				}
			}
			anyRow01 = anyRow01 || row01 && q <= detectRows // the rows detection looks at
			switch {
			case jsonl && ids:
				fmt.Fprintf(&b, `{"id":"q%d","counts":[%s]}`+"\n", q, strings.Join(v, ","))
			case jsonl:
				fmt.Fprintf(&b, "[%s]\n", strings.Join(v, ","))
			case ids:
				fmt.Fprintf(&b, "q%d,%s\n", q, strings.Join(v, ","))
			default:
				fmt.Fprintf(&b, "%s\n", strings.Join(v, ","))
			}
		}
		firstIs01 := true
		for _, x := range firstRow {
			firstIs01 = firstIs01 && x <= 1
		}
		if firstIs01 && !(jsonl && ids) {
			continue // read as votes, by the rule
		}
		got, err := detect(t, b.String(), readOptions{})
		ambiguous := !ids && !jsonl && allVotesAfterFirst && c%2 == 0 && firstRow[0] >= 2
		noEvidence := (n == 1 || anyRow01) && !(jsonl && ids)
		switch {
		case ambiguous && err == nil:
			t.Fatalf("case %d: read as %v, want refused\n%s", i, got, b.String())
		case !ambiguous && noEvidence && (err != nil || got != LayoutVotes):
			t.Fatalf("case %d: %v, %v; want votes (no evidence of counts)\n%s", i, got, err, b.String())
		case !ambiguous && !noEvidence && (err != nil || got != LayoutCounts):
			t.Fatalf("case %d: %v, %v; want counts\n%s", i, got, err, b.String())
		}
	}
}

// FuzzDetectLayout: whatever the file, detection fails only on an
// ambiguous file (a *formatError), and never takes for counts a file that
// the 0/1 vote reader reads whole; no error quotes more of the file than
// a value (quotetest.Check).
func FuzzDetectLayout(f *testing.F) {
	for _, s := range []string{"0,1,1\n", "240,5,5,0\n200,30,10,10\n", "17,0,1,1\n", "id,a\nq,3\n", "[1,2]\n", `{"counts":[1]}`, "0.5,0,1,1\n", strings.Repeat("9", 200) + ",0,1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vf, err := open(strings.NewReader(s), "f", FormatAuto)
		if err != nil || vf.Meta() != nil {
			return
		}
		l, err := vf.detectLayout(readOptions{})
		var fe *formatError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("%q: %v", s, err)
		}
		vr, err := vf.Votes(readOptions{})
		if err != nil {
			quotetest.Check(t, err.Error(), []byte(s), 1000)
			return
		}
		for vr.Next() {
		}
		if err := vr.Err(); err != nil {
			quotetest.Check(t, err.Error(), []byte(s), 1000)
		} else if l == LayoutCounts {
			t.Fatalf("%q: a file of 0/1 votes was taken for counts", s)
		}
	})
}

// TestIndexHeader: pandas' to_csv header (an empty first field over the
// index column) is a header row, and the index an id column, in every
// reader; a data row with an empty id is still data.
func TestIndexHeader(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		layout     Layout
		ids        []string
	}{
		{"pandas counts, default names", ",0,1,2\n0,240.0,5.0,5.0\n1,200.0,30.0,20.0\n", LayoutCounts, []string{"0", "1"}},
		{"pandas counts, named", ",cat,dog,owl\nq1,240,5,5\nq2,200,30,20\n", LayoutCounts, []string{"q1", "q2"}},
		{"pandas 0/1 votes", ",0,1,2\n0,0,1,1\n1,1,1,0\n", LayoutVotes, []string{"0", "1"}},
		{"empty id, 0/1 votes", ",1,0,1\n,0,0,1\n", LayoutVotes, []string{"", ""}},
	} {
		f, err := open(strings.NewReader(tc.data), "p.csv", FormatAuto)
		if err != nil {
			t.Fatal(err)
		}
		layout, err := f.detectLayout(readOptions{})
		if err != nil || layout != tc.layout {
			t.Errorf("%s: layout %v, %v; want %v", tc.name, layout, err, tc.layout)
			continue
		}
		var r Reader
		if layout == LayoutCounts {
			r, err = f.Classes(classOptions{Input: inputCounts})
		} else {
			r, err = f.Votes(readOptions{})
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var ids []string
		for r.Next() {
			ids = append(ids, string(r.Query().ID))
		}
		if r.Err() != nil || !slices.Equal(ids, tc.ids) {
			t.Errorf("%s: ids %q, %v; want %q", tc.name, ids, r.Err(), tc.ids)
		}
	}
}
