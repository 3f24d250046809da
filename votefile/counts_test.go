package votefile

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/quotetest"
)

// Metadata headers of multi-class files: counts of K = 4 teachers over C =
// 3 classes (CSV and JSON lines), class indices of 4 teachers among 3
// classes, and 0/1 votes of 3 teachers.
var (
	countsHead     = "# " + metaLine(LayoutCounts, 3, 4) + "\n"
	countsHeadJSON = metaLine(LayoutCounts, 3, 4) + "\n"
	classesHead    = "# " + metaLine(LayoutVotes, 3, 4) + "\n"
	binaryHead     = "# " + metaLine(LayoutVotes, 2, 3) + "\n"
)

func metaLine(l Layout, c, k int) string {
	m := &Meta{Ensemble: "pate-test", K: k, Classes: c, Layout: l, Relation: "one-vote", Kind: "fixed", Partition: "keyed-hash",
		Teachers: []TeacherGroup{{Count: k, Source: TeacherSource{Method: "none"}}}}
	b, err := m.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestClassReader(t *testing.T) {
	cases := []struct {
		name, in string
		opts     classOptions
		k, c     int
		rows     [][]int
		err      string
	}{
		{"counts csv", "3,1,0\n0,4,0\n", classOptions{Input: inputCounts}, 4, 3, [][]int{{3, 1, 0}, {0, 4, 0}}, ""},
		{"counts header id", "id,a,b\nq1,2,3\nq2,5,0\n", classOptions{Input: inputCounts}, 5, 2, [][]int{{2, 3}, {5, 0}}, ""},
		{"counts jsonl", "[1,2,3]\n{\"id\":\"x\",\"counts\":[6,0,0]}\n", classOptions{Input: inputCounts}, 0, 0, nil, "line 2: \"id\" present in some rows"},
		{"counts jsonl ids", "{\"id\":1,\"votes\":[1,2,3]}\n{\"id\":\"x\",\"counts\":[6,0,0]}\n", classOptions{Input: inputCounts}, 6, 3, [][]int{{1, 2, 3}, {6, 0, 0}}, ""},
		{"classes", "0,2,2,1,2\n1,1,1,1,1\n", classOptions{Input: inputClasses, Classes: 3, Orientation: QueriesInRows}, 5, 3, [][]int{{1, 1, 3}, {0, 5, 0}}, ""},
		{"bad sum", "3,1,0\n0,3,0\n", classOptions{Input: inputCounts}, 0, 0, nil, "line 2: counts do not sum to K = 4 (as in the first data row) (not quoted: a query's votes are private"},
		{"bad class", "0,1,2\n0,3,1\n", classOptions{Input: inputClasses, Classes: 3, Orientation: QueriesInRows}, 0, 0, nil, "line 2, column 2: vote 2: class 3"},
		{"negative", "3,1,0\n3,-1,2\n", classOptions{Input: inputCounts}, 0, 0, nil, "line 2, column 2: count \"-1\": must be a non-negative integer"},
		// A first row of numbers is data however malformed, never a header
		// row, and a number in its first column is a count, never an id.
		{"first row negative", "260,-10,0,0\n250,0,0,0\n", classOptions{Input: inputCounts}, 0, 0, nil, "line 1, column 2: count \"-10\": must be a non-negative integer"},
		{"first row fraction", "1,0,2.5,247\n250,0,0,0\n", classOptions{Input: inputCounts}, 0, 0, nil, "line 1, column 3: count \"2.5\": must be a non-negative integer"},
		{"first row fraction first", "240.5,5,5,0\n240,5,5,0\n", classOptions{Input: inputCounts}, 0, 0, nil, "line 1, column 1: count \"240.5\": must be a non-negative integer of at most 9 digits (7 or 7.0) (if column 1 is a query id, declare the id column)"},
		{"first row id, fraction", "q1,1,0,2.01\n", classOptions{Input: inputCounts}, 0, 0, nil, "line 1, column 4: count \"2.01\""},
		{"first row exponent", "1e2,3,0\n", classOptions{Input: inputCounts}, 0, 0, nil, "line 1, column 1: count \"1e2\""},
		{"header row named", "c0,c1,c2\n3,1,0\n", classOptions{Input: inputCounts}, 4, 3, [][]int{{3, 1, 0}}, ""},
		{"comment among counts", "3,1,0\n# a note\n0,4,0\n", classOptions{Input: inputCounts}, 0, 0, nil, "line 2, column 1: a line starting with # is a comment line, and the only one a vote file may have is its metadata header"},
		{"comment among counts with ids", "q1,3,1,0\n#q2,0,4,0\n", classOptions{Input: inputCounts}, 0, 0, nil, "line 2, column 1: a line starting with # is a comment line"},
		{"no classes", "0,1\n", classOptions{Input: inputClasses}, 0, 0, nil, "needs the number of classes"},
		{"too many classes", "0,1\n", classOptions{Input: inputClasses, Classes: MaxClasses + 1}, 0, 0, nil, "need C in [2, 524288]"},
		{"classes near 2^63", "0,1\n", classOptions{Input: inputClasses, Classes: 9_000_000_000_000_000_000}, 0, 0, nil, "need C in [2, 524288]"},
		{"wrong C", "1,2\n", classOptions{Input: inputCounts, Classes: 3}, 0, 0, nil, "2 counts, want C = 3"},
		{"columns", "1,2,3\n1,5\n", classOptions{Input: inputCounts}, 0, 0, nil, "line 2: 2 counts, want 3"},
		{"no layout", "1,2,3\n", classOptions{}, 0, 0, nil, "no metadata header: say whether the rows are vote counts or class indices"},
		{"header counts", countsHead + "id,a,b,c\nq1,3,1,0\nq2,0,0,4\n", classOptions{}, 4, 3, [][]int{{3, 1, 0}, {0, 0, 4}}, ""},
		{"header counts repeated", countsHead + "3,1,0\n", classOptions{Input: inputCounts, Classes: 3, K: 4}, 4, 3, [][]int{{3, 1, 0}}, ""},
		{"header counts jsonl", countsHeadJSON + "{\"id\":\"a\",\"counts\":[1,3,0]}\n", classOptions{}, 4, 3, [][]int{{1, 3, 0}}, ""},
		{"header classes", classesHead + "0,2,2,1\n", classOptions{}, 4, 3, [][]int{{1, 1, 2}}, ""},
		{"header binary", binaryHead + "0,1,1\n", classOptions{}, 3, 2, [][]int{{1, 2}}, ""},
		{"header contradicts C", countsHead + "3,1,0\n", classOptions{Classes: 5}, 0, 0, nil, "line 1: the metadata header states classes = 3, but C = 5 was given"},
		{"header contradicts K", countsHead + "3,1,0\n", classOptions{K: 6}, 0, 0, nil, "line 1: the metadata header states K = 4, but K = 6 was given"},
		{"header contradicts layout", countsHead + "3,1,0\n", classOptions{Input: inputClasses, Classes: 3}, 0, 0, nil, "line 1: the metadata header states layout counts, but class indices were asked for"},
		{"header layout votes", classesHead + "0,1,2,2\n", classOptions{Input: inputCounts}, 0, 0, nil, "header states layout votes, but counts were asked for"},
		{"header K, data", countsHead + "3,1,1\n", classOptions{}, 0, 0, nil, "line 2: counts sum to more than K = 4 teachers (as the metadata header, line 1, states) (the sum is not quoted"},
		{"header C, data", countsHead + "3,1\n", classOptions{}, 0, 0, nil, "line 2: 2 counts, want C = 3 (as the metadata header, line 1, states)"},
		{"header classes, data", classesHead + "0,1,3,1\n", classOptions{}, 0, 0, nil, "line 2, column 3: vote 3: class 3"},
		{"header classes, K", classesHead + "0,1,1\n", classOptions{}, 0, 0, nil, "line 2: 3 votes, want K = 4 (as the metadata header"},
	}
	for _, c := range cases {
		r, err := newClassReader(strings.NewReader(c.in), "v.csv", c.opts)
		var rows [][]int
		if err == nil {
			for r.Next() {
				rows = append(rows, append([]int(nil), r.Query().Counts...))
			}
			err = r.Err()
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			var fe *formatError
			if err != nil && !errors.As(err, &fe) {
				t.Errorf("%s: %T is not a *formatError", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if r.K() != c.k || r.Classes() != c.c || len(rows) != len(c.rows) {
			t.Errorf("%s: K %d C %d rows %v", c.name, r.K(), r.Classes(), rows)
			continue
		}
		for i := range rows {
			for j := range rows[i] {
				if rows[i][j] != c.rows[i][j] {
					t.Errorf("%s: row %d = %v, want %v", c.name, i, rows[i], c.rows[i])
				}
			}
		}
	}
}

// No error quotes a whole row (quotetest.Check). A row
// read has C counts, none negative, summing to K, or, where teachers may
// abstain (class labels -1, counts with K stated), to at most K, the
// votes not cast counted as abstained.
func FuzzClassReader(f *testing.F) {
	for _, s := range []string{"3,1,0\n0,4,0\n", "id,a,b\nq1,2,3\n", "[1,2,3]\n[6,0,0]\n", "{\"id\":1,\"votes\":[1,2]}\n", "0,2,2\n1,9,1\n"} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(1))
	}
	for _, h := range []string{countsHead, countsHeadJSON, classesHead, binaryHead} {
		f.Add([]byte(h+"3,1,0\n0,2,2\n"), uint8(2))
	}
	long := strings.Repeat("1,", 100)
	f.Add([]byte(long+"x\n"), uint8(0))
	f.Add([]byte("3,1,0\n"+long+"1\n"), uint8(0))
	f.Fuzz(func(t *testing.T, in []byte, mode uint8) {
		opts := classOptions{Input: inputCounts}
		switch mode % 3 {
		case 1:
			opts = classOptions{Input: inputClasses, Classes: 3, Orientation: QueriesInRows}
		case 2:
			opts = classOptions{} // the header's layout
		}
		r, err := newClassReader(bytes.NewReader(in), "f", opts)
		if err == nil {
			var notCast int64
			for r.Next() {
				q := r.Query()
				sum := 0
				for _, n := range q.Counts {
					if n < 0 {
						t.Fatalf("negative count %v", q.Counts)
					}
					sum += n
				}
				if sum > r.K() || sum < r.K() && !r.MayAbstain() || len(q.Counts) != r.Classes() {
					t.Fatalf("row %v: K %d C %d, may abstain %v", q.Counts, r.K(), r.Classes(), r.MayAbstain())
				}
				notCast += int64(r.K() - sum)
			}
			if err = r.Err(); err == nil && r.Abstained() != notCast {
				t.Fatalf("abstained %d, but the rows lack %d votes", r.Abstained(), notCast)
			}
		}
		if err != nil {
			quotetest.Check(t, err.Error(), in, 1000)
		}
	})
}

// WriteCounts writes what newClassReader reads back, header and all.
func TestWriteCounts(t *testing.T) {
	m, err := parseMeta([]byte(metaLine(LayoutCounts, 3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	counts := [][]int{{4, 0, 0}, {1, 2, 1}}
	var b bytes.Buffer
	if err := WriteCounts(&b, m, []string{"x", "y"}, counts); err != nil {
		t.Fatal(err)
	}
	r, err := newClassReader(&b, "w", classOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; r.Next(); i++ {
		q := r.Query()
		if string(q.ID) != []string{"x", "y"}[i] || q.Counts[1] != counts[i][1] || q.Counts[0] != counts[i][0] {
			t.Errorf("row %d: %s %v", i, q.ID, q.Counts)
		}
	}
	if r.Err() != nil || r.Meta() == nil || r.Meta().Ensemble != "pate-test" {
		t.Errorf("read back: %v, header %v", r.Err(), r.Meta())
	}
	if err := WriteCounts(&b, m, nil, [][]int{{4, 0, 0}, {1, 1, 1}}); err == nil {
		t.Error("counts summing to 3 written for K = 4")
	}
	if err := WriteCounts(&b, m, nil, [][]int{{2, 2}}); err == nil {
		t.Error("2 classes written under a header of 3")
	}
}

// TestCheckClasses: a stated number of classes is refused outside
// [2, MaxClasses], naming the value and the bound, as a header's is.
func TestCheckClasses(t *testing.T) {
	for _, tc := range []struct {
		c  int
		ok bool
	}{{-1, false}, {0, false}, {1, false}, {2, true}, {10, true}, {MaxClasses, true}, {MaxClasses + 1, false}} {
		err := CheckClasses(tc.c)
		if (err == nil) != tc.ok {
			t.Errorf("CheckClasses(%d) = %v, want ok = %v", tc.c, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("classes %d: must be in [2, %d]", tc.c, MaxClasses)) {
			t.Errorf("CheckClasses(%d) = %q: want the value and the rule", tc.c, err)
		}
		m := Meta{Ensemble: "e", K: 3, Classes: tc.c}
		if herr := m.Validate(); tc.ok != !strings.Contains(fmt.Sprint(herr), "classes") {
			t.Errorf("header with classes %d: Validate() = %v, want ok = %v", tc.c, herr, tc.ok)
		}
	}
}

// TestAbstainHint: a -1 read as a count, when nothing stated that the
// values are counts, is pointed at the classes (Options.Classes): it is
// how class labels mark an abstaining teacher; not a -1 among counts that
// a header states, nor another bad count.
func TestAbstainHint(t *testing.T) {
	const hint = "-1 is no count: it is how class labels mark a teacher that did not vote; if the"
	labels := [][]int{{0, 2, -1, 1}, {1, 1, 2, 0}}
	for _, c := range []struct {
		name string
		read func() error
		want bool
	}{
		{"npy", func() error {
			_, _, err := readNPY(npyFile("<i8", []int{2, 4}, false, floats(labels)), classOptions{})
			return err
		}, true},
		{"npy, -2", func() error {
			_, _, err := readNPY(npyFile("<i8", []int{2, 4}, false, []float64{0, 2, -2, 1, 1, 1, 2, 0}), classOptions{})
			return err
		}, false},
		{"csv", func() error { return readCounts("0,2,-1,1\n1,1,2,0\n", classOptions{Input: inputCounts}) }, true},
		{"jsonl", func() error { return readCounts("[0,2,-1,1]\n", classOptions{Input: inputCounts}) }, true},
		{"csv, -10", func() error { return readCounts("0,2,-10,1\n", classOptions{Input: inputCounts}) }, false},
		{"csv, header counts", func() error { return readCounts(countsHead+"3,-1,0\n", classOptions{}) }, false},
	} {
		err := c.read()
		if err == nil {
			t.Errorf("%s: read", c.name)
			continue
		}
		var hints []Hint
		if a, ok := err.(interface{ Hints() []Hint }); ok {
			hints = a.Hints()
		}
		if got := strings.Contains(err.Error(), hint); got != c.want || c.want && !slices.Contains(hints, Hint{optClasses, "C"}) {
			t.Errorf("%s: %v (hints %v): want the hint %v", c.name, err, hints, c.want)
		}
	}
}

// readCounts reads every query of the text in with opts.
func readCounts(in string, opts classOptions) error {
	r, err := newClassReader(strings.NewReader(in), "v.csv", opts)
	if err != nil {
		return err
	}
	for r.Next() {
	}
	return r.Err()
}
