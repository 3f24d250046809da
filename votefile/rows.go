package votefile

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"reflect"
)

// rowsName names votes held in memory in errors.
const rowsName = "votes"

// ReadRows returns the reader of votes held in memory, as Open returns
// the reader of a vote file that opens with the metadata header meta:
// rows[i] is query i+1, a row of the layout meta states. With
// meta.Layout LayoutCounts it is the C = meta.Classes counts of the
// classes, which may sum to fewer than meta.K (teachers that abstained);
// else it is each of the meta.K teachers' class: 0 or 1 for two classes
// (0/1 votes, TwoClass), else in [0, C) or -1 for a teacher that did not
// vote (ManyClasses).
//
// The rows pass the checks a vote file's rows pass: meta must be valid
// (Meta.Validate), and every value is checked against it by the reader
// of a NumPy array as its query is read (the length of every row, and
// 0/1 votes, when the reader is made); an error is a format error naming
// the query and the element, rows[i][j] as "element [i, j]".
// The rows are read where they are, not copied: do not change them while
// the reader reads them. Format returns FormatAuto (no file), BytesRead
// the bytes of the values read at 8 a value.
func ReadRows(rows [][]int, meta *Meta) (Reader, error) {
	bad := func(format string, args ...any) error {
		return &formatError{File: rowsName, Msg: fmt.Sprintf(format, args...)}
	}
	if meta == nil {
		return nil, bad("no metadata header: votes held in memory state their ensemble by one (a *Meta)")
	}
	if err := meta.Validate(); err != nil {
		return nil, bad("metadata header: %v", err)
	}
	width, what := meta.K, "votes, one per teacher: K"
	if meta.Layout == LayoutCounts {
		width, what = meta.Classes, "counts, one per class: C"
	}
	if len(rows) == 0 {
		return nil, bad("no queries: no rows")
	}
	// A matrix read from a file has one width; rows in memory may not.
	// 0/1 votes are checked here too: the reader of class labels below
	// would take -1, a teacher that did not vote, which they cannot hold.
	twoClass := meta.Input() == TwoClass
	for i, row := range rows {
		if len(row) != width {
			return nil, bad("query %d (rows[%d]): %d values, want %s = %d, as the metadata header states", i+1, i, len(row), what, width)
		}
		for j, v := range row {
			if twoClass && v != 0 && v != 1 {
				return nil, bad("element [%d, %d] = %s (query %d, vote of teacher %d): a vote must be 0 or 1", i, j, classShown(v, 2), i+1, j+1)
			}
		}
	}
	vr := &voteReader{name: rowsName, br: bufio.NewReaderSize(&rowBytes{rows: rows}, readBuffer), meta: meta, array: true}
	a := &npyArray{vr: vr, order: binary.LittleEndian, kind: reflect.Int64, size: 8, dtype: "<i8", shape: [2]int{len(rows), width}}
	cr, err := (&voteFile{vr: vr, npy: a}).Classes(classOptions{})
	switch {
	case err != nil:
		return nil, err
	case !twoClass:
		return cr, nil
	}
	cr.q.Votes = make([]byte, cr.k)
	r := &twoClassRows{classReader: cr, rows: rows}
	r.votes()
	return r, nil
}

// twoClassRows reads 0/1 votes held in memory, which ReadRows has
// checked, as the class labels of two classes that the classReader
// reads, each teacher's vote kept (Query.Votes).
type twoClassRows struct {
	*classReader
	rows [][]int
}

// Next advances to the next query; false at the end or on an error.
func (r *twoClassRows) Next() bool {
	if !r.classReader.Next() {
		return false
	}
	r.votes()
	return true
}

// votes sets the current query's votes from its row.
func (r *twoClassRows) votes() {
	for j, v := range r.rows[r.q.Index-1] {
		r.q.Votes[j] = byte(v)
	}
}

// Input returns TwoClass: the rows hold 0/1 votes.
func (r *twoClassRows) Input() Input { return TwoClass }

// MayAbstain reports false: every teacher casts a 0/1 vote.
func (r *twoClassRows) MayAbstain() bool { return false }

// Abstained returns 0: every teacher casts a 0/1 vote.
func (r *twoClassRows) Abstained() int64 { return 0 }

// rowBytes reads rows of ints as the values of a little-endian int64
// NumPy array in C order, the bytes an npyArray decodes.
type rowBytes struct {
	rows    [][]int
	i, j    int // the next value, rows[i][j]
	val     [8]byte
	pending []byte // the bytes of val not yet read
}

func (s *rowBytes) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.pending) == 0 {
			for s.i < len(s.rows) && s.j == len(s.rows[s.i]) {
				s.i, s.j = s.i+1, 0
			}
			if s.i == len(s.rows) {
				break
			}
			binary.LittleEndian.PutUint64(s.val[:], uint64(int64(s.rows[s.i][s.j])))
			s.j++
			s.pending = s.val[:]
		}
		c := copy(p[n:], s.pending)
		n += c
		s.pending = s.pending[c:]
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}
