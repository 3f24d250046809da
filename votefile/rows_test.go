package votefile

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rowsMeta is the header of k non-private teachers voting among c
// classes in layout l, parsed from its JSON as a file's is.
func rowsMeta(t *testing.T, l Layout, c, k int) *Meta {
	t.Helper()
	m, err := parseMeta([]byte(metaLine(l, c, k)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// csvRows writes rows as the CSV vote file that opens with meta.
func csvRows(l Layout, c, k int, rows [][]int) string {
	var b strings.Builder
	b.WriteString("# " + metaLine(l, c, k) + "\n")
	for _, row := range rows {
		for j, v := range row {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(v))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestReadRowsAsFile: rows in memory read as the vote file that holds
// them under the same header: the same kind of votes, K, classes and
// layout, the same queries (votes and counts), and abstentions allowed
// where the file allows them.
func TestReadRowsAsFile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		layout  Layout
		c, k    int
		rows    [][]int
		input   Input
		abstain bool
	}{
		{"0/1 votes", LayoutVotes, 2, 3, [][]int{{1, 0, 1}, {0, 0, 0}, {1, 1, 1}}, TwoClass, false},
		{"counts", LayoutCounts, 3, 4, [][]int{{2, 1, 1}, {0, 0, 4}, {1, 1, 0}}, ManyClasses, true},
		{"class indices", LayoutVotes, 3, 4, [][]int{{0, 2, 2, -1}, {1, 1, 1, 1}}, ManyClasses, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, err := ReadRows(tc.rows, rowsMeta(t, tc.layout, tc.c, tc.k))
			if err != nil {
				t.Fatal(err)
			}
			file, _, err := readVotes(strings.NewReader(csvRows(tc.layout, tc.c, tc.k, tc.rows)), "votes.csv", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if mem.Input() != tc.input || file.Input() != tc.input {
				t.Errorf("input %v (file %v), want %v", mem.Input(), file.Input(), tc.input)
			}
			if mem.K() != file.K() || mem.Classes() != file.Classes() || mem.Layout() != file.Layout() || mem.Meta() == nil {
				t.Errorf("K %d, %d classes, layout %v; the file's %d, %d, %v", mem.K(), mem.Classes(), mem.Layout(), file.K(), file.Classes(), file.Layout())
			}
			if mem.MayAbstain() != tc.abstain || file.MayAbstain() != tc.abstain {
				t.Errorf("abstentions allowed %v (file %v), want %v", mem.MayAbstain(), file.MayAbstain(), tc.abstain)
			}
			n := 0
			for mem.Next() {
				if !file.Next() {
					t.Fatalf("query %d: the file has no more", n+1)
				}
				m, f := mem.Query(), file.Query()
				n++
				if m.Index != n || m.Key() != strconv.Itoa(n) || !slices.Equal(m.Counts, f.Counts) || !slices.Equal(m.Votes, f.Votes) {
					t.Errorf("query %d (%s): votes %v, counts %v; the file's %v, %v", m.Index, m.Key(), m.Votes, m.Counts, f.Votes, f.Counts)
				}
			}
			if mem.Err() != nil || file.Next() || n != len(tc.rows) {
				t.Errorf("%d queries, %v; want %d", n, mem.Err(), len(tc.rows))
			}
			if mem.Abstained() != file.Abstained() {
				t.Errorf("abstained %d, the file's %d", mem.Abstained(), file.Abstained())
			}
		})
	}
}

// TestReadRowsRefused: every rule a file's rows keep, rows in memory
// keep, and the error names the query and the element, whether it is
// found when the reader is made or when the query is read.
func TestReadRowsRefused(t *testing.T) {
	counts := rowsMeta(t, LayoutCounts, 3, 4)
	votes := rowsMeta(t, LayoutVotes, 2, 3)
	classes := rowsMeta(t, LayoutVotes, 3, 4)
	bad := *counts
	bad.K = 0
	for _, tc := range []struct {
		name string
		rows [][]int
		meta *Meta
		want string
	}{
		{"no header", [][]int{{1, 0, 1}}, nil, "votes: no metadata header"},
		{"invalid header", [][]int{{1, 0, 1}}, &bad, "votes: metadata header: header field K = 0"},
		{"no rows", nil, counts, "no queries"},
		{"ragged", [][]int{{1, 1, 2}, {1, 3}}, counts, "query 2 (rows[1]): 2 values, want counts, one per class: C = 3"},
		{"0/1 ragged", [][]int{{1, 0, 1, 1}}, votes, "query 1 (rows[0]): 4 values, want votes, one per teacher: K = 3"},
		{"negative count", [][]int{{1, 1, 2}, {1, -1, 2}}, counts, "element [1, 1] = -1 (query 2, count of class 1): a vote count must be a whole number"},
		{"counts above K", [][]int{{1, 1, 2}, {2, 2, 1}}, counts, "query 2: counts sum to more than K = 4 teachers (as the metadata header states)"},
		{"count too large", [][]int{{1_000_000_000, 0, 0}}, counts, "element [0, 0] = 1000000000"},
		{"vote 2", [][]int{{1, 0, 1}, {1, 2, 0}}, votes, "element [1, 1] = above 1 (not quoted: a vote file's counts are private) (query 2, vote of teacher 2): a vote must be 0 or 1"},
		{"first vote -1", [][]int{{1, -1, 0}}, votes, "element [0, 1] = -1 (query 1, vote of teacher 2): a vote must be 0 or 1"},
		{"later vote -1", [][]int{{1, 1, 0}, {0, 0, -1}}, votes, "element [1, 2] = -1 (query 2, vote of teacher 3)"},
		{"class 3 of 3", [][]int{{0, 1, 2, 3}}, classes, "element [0, 3] = 3 or above (not quoted: a teacher's vote is private) (query 1, class label of teacher 4): a class label must be a class in [0, 3)"},
		{"class -2", [][]int{{0, 1, 2, 1}, {0, -2, 1, 1}}, classes, "element [1, 1] = -2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ReadRows(tc.rows, tc.meta)
			if err == nil {
				for r.Next() {
				}
				err = r.Err()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if fe, ok := err.(*formatError); !ok || !fe.BadInput() || fe.File != "votes" {
				t.Errorf("error %T %#v: want a *formatError of votes", err, err)
			}
		})
	}
}

// TestRowBytesShortReads: the bytes of the rows come whole however
// short the reads.
func TestRowBytesShortReads(t *testing.T) {
	rows := [][]int{{1, -2}, {}, {1 << 40, 7}}
	want := make([]byte, 0, 32)
	long := &rowBytes{rows: rows}
	buf := make([]byte, 64)
	n, _ := long.Read(buf)
	want = append(want, buf[:n]...)
	for _, size := range []int{1, 3, 5, 8} {
		s := &rowBytes{rows: rows}
		var got []byte
		p := make([]byte, size)
		for {
			n, err := s.Read(p)
			got = append(got, p[:n]...)
			if err != nil {
				break
			}
		}
		if len(want) != 32 || !slices.Equal(got, want) {
			t.Errorf("reads of %d bytes: %x; want the %d bytes %x", size, got, len(want), want)
		}
	}
}

// TestVoteNotQuoted: an error on a teacher's vote that is a whole number
// outside the classes stated does not quote it (with its place, it says
// how the teacher voted on a private query), whatever reads it: CSV and
// JSON lines class labels, a NumPy array of them (as ReadRows reads rows
// in memory), and 0/1 votes from a file or from memory.
func TestVoteNotQuoted(t *testing.T) {
	const vote = 987 // a teacher's class, C stated as 4
	classes := Options{Classes: 4, Orientation: QueriesInRows}
	npy := npyFile("<i8", []int{2, 3}, false, []float64{0, 1, 2, 3, vote, 0})
	for _, tc := range []struct {
		name string
		data []byte
		opts Options
	}{
		{"CSV class labels", []byte("0,1,2\n3,987,0\n"), classes},
		{"JSON lines class labels", []byte("[0,1,2]\n[3,987,0]\n"), classes},
		{"NumPy class labels", npy, classes},
		{"0/1 votes", []byte("0,1,1\n1,987,0\n"), Options{}},
	} {
		tc.opts.In = strings.NewReader(string(tc.data))
		r, err := Open("votes", tc.opts)
		for err == nil && r.Next() {
		}
		if err == nil {
			err = r.Err()
		}
		if err == nil || strings.Contains(err.Error(), strconv.Itoa(vote)) || !strings.Contains(err.Error(), "not quoted") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	for _, tc := range []struct {
		name string
		meta *Meta
	}{
		{"0/1 votes in memory", rowsMeta(t, LayoutVotes, 2, 3)},
		{"class labels in memory", rowsMeta(t, LayoutVotes, 4, 3)},
	} {
		r, err := ReadRows([][]int{{0, 1, 1}, {1, vote, 0}}, tc.meta)
		for err == nil && r.Next() {
		}
		if err == nil {
			err = r.Err()
		}
		if err == nil || strings.Contains(err.Error(), strconv.Itoa(vote)) || !strings.Contains(err.Error(), "not quoted") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
