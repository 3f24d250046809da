package votefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/darrm/darrm/internal/param"
)

// classLayout is the layout of a many-class vote file: inputCounts (a row
// of C counts per query), inputClasses (a class index per teacher), or
// inputFromHeader (as the header says).
type classLayout int

const (
	// inputFromHeader takes the layout from the file's metadata header
	// (LayoutCounts or LayoutVotes); a file without one is refused.
	inputFromHeader classLayout = iota
	// inputCounts: one row per query of C non-negative integer vote
	// counts summing to K (the layout of PATE's published vote matrices).
	inputCounts
	// inputClasses: one row per query of K class indices in [0, C).
	inputClasses
)

// classOptions describe a multi-class vote file.
type classOptions struct {
	Input  classLayout
	Format Format   // FormatAuto, FormatCSV or FormatJSONL
	Header Presence // CSV only
	ID     Presence
	// Classes is C: required for inputClasses without a header; 0 takes
	// it from the header or, for counts, the first data row; else the
	// header and every row must have C classes.
	Classes int
	// K is the number of teachers; 0 takes it from the header or the
	// first data row, else both must have K. A K stated, here or in the
	// header, lets a row of counts sum to fewer than K: the teachers
	// that abstained.
	K int
	// Orientation is the axis of the teachers in a matrix of class labels
	// (Options.Orientation).
	Orientation Orientation
}

// maxCount bounds a count or class index: 9 decimal digits.
const maxCount = 999_999_999

// MaxClasses bounds the number of classes C, as the header's "classes", a
// reader's classOptions.Classes and the aggregators' C: it is as many as a
// row of counts can hold within a line's 1 MiB (each count a digit and
// a comma), so that a file of class indices can state no more classes than a
// counts file can hold. Reading and releasing keep a few 8-byte counters per
// class (about 12 MiB at the bound) and draw one noise value per class and
// query; the bound is checked before anything is allocated.
const MaxClasses = maxLineBytes / 2

// CheckClasses checks a number of classes C that a caller states
// (Options.Classes): it must be in [2, MaxClasses], the rule of the
// header's "classes" too.
func CheckClasses(c int) error {
	if !validClasses(c) {
		return fmt.Errorf("classes %d: must be in [2, %d] (at most as many classes as a row of counts can hold within a line's %d bytes)", c, MaxClasses, maxLineBytes)
	}
	return nil
}

// validClasses reports whether c classes are within [2, MaxClasses].
func validClasses(c int) bool { return c >= 2 && c <= MaxClasses }

// classReader streams a multi-class vote file in constant memory: CSV
// (an optional header row, then rows of [id,]x_1,...,x_n) or JSON lines
// (per line an array [x_1, ..., x_n] or an object {"id": ...,
// "votes": [...]}, "counts" also accepted as the key), or a 2-D NumPy
// array (npy.go; a query that is a column of it, and a CSV matrix read
// with TeachersInRows, is gathered from the whole array in memory). The x
// are counts or class indices (classOptions.Input), non-negative decimal
// integers (7.0 is 7), or for class indices -1, a teacher that abstained.
// Errors are format errors: file, line, column and rule, never a row.
type classReader struct {
	lr     *voteReader // line reading and CSV splitting
	opts   classOptions
	format Format
	header bool
	hasID  bool
	k, c   int
	n      int // fields per row (C for counts, K for classes)
	q      Query
	rows
	vals []int
	npy  *npyArray // a NumPy file's array
	// member is an .npz archive's array, closed at the end of its rows.
	member io.Closer
	// abstained counts the votes not cast: class labels -1, and what
	// counts fall short of a stated K.
	abstained int64
}

// Classes reads the file as counts or class indices, a step of Open. A
// metadata header fixes the layout, C and K: opts may repeat them, and a
// value that contradicts the header is a format error naming both.
// opts.Format is not used.
func (f *voteFile) Classes(opts classOptions) (*classReader, error) {
	name := f.vr.name
	if (opts.Classes != 0 && !validClasses(opts.Classes)) || opts.K < 0 {
		return nil, &formatError{File: name, Msg: fmt.Sprintf("C = %d, K = %d: need C in [2, %d] (or 0 to detect) and K >= 0", opts.Classes, opts.K, MaxClasses)}
	}
	if m := f.vr.meta; m != nil {
		bad := func(format string, args ...any) error {
			return f.vr.headerErrorf(format, args...)
		}
		layout := inputClasses
		if m.Layout == LayoutCounts {
			layout = inputCounts
		}
		switch {
		case opts.Input != inputFromHeader && opts.Input != layout:
			return nil, bad("the metadata header states layout %v, but %s were asked for", m.Layout, opts.Input)
		case opts.Classes != 0 && opts.Classes != m.Classes:
			return nil, bad("the metadata header states classes = %d, but C = %d was given", m.Classes, opts.Classes)
		case opts.K != 0 && opts.K != m.K:
			return nil, bad("the metadata header states K = %d, but K = %d was given", m.K, opts.K)
		}
		// A header on a file's first line states a row per query; one in
		// a sidecar states what its "orientation" says, and without it
		// leaves the orientation to the caller, as a file without a header
		// does.
		stated := m.Orientation
		switch {
		case f.vr.metaFile == "" && stated == TeachersInRows:
			return nil, bad("the metadata header states orientation %v, which only a header in a sidecar may state: a file with its header on its first line has a row per query", stated)
		case f.vr.metaFile == "":
			stated = QueriesInRows
		}
		switch {
		case stated == orientationUnstated:
			stated = opts.Orientation
		case opts.Orientation != orientationUnstated && opts.Orientation != stated:
			return nil, adviceError(name, advise("the metadata header states orientation %v: leave out %v", stated, orientationHint(opts.Orientation)))
		}
		opts.Input, opts.Classes, opts.K, opts.Orientation = layout, m.Classes, m.K, stated
	}
	if opts.Input == inputFromHeader && f.npy != nil {
		// A NumPy array holds counts unless the classes are given.
		opts.Input = inputCounts
	}
	switch opts.Input {
	case inputFromHeader:
		return nil, &formatError{File: name, Msg: "no metadata header: say whether the rows are vote counts or class indices (and C)"}
	case inputClasses:
		if opts.Classes < 2 {
			return nil, adviceError(name, advise("a file of class indices needs the number of classes C >= 2 (%v), got %d", Hint{optClasses, ""}, opts.Classes))
		}
	case inputCounts:
	default:
		return nil, &formatError{File: name, Msg: fmt.Sprintf("input %d: must be counts or class indices", opts.Input)}
	}
	mr := &classReader{lr: f.vr, opts: opts, format: f.vr.format, npy: f.npy, member: f.member}
	if opts.Input == inputClasses {
		mr.c = opts.Classes
	}
	if f.npy == nil && f.vr.format == FormatJSONL && opts.Orientation != TeachersInRows {
		opts.Orientation = QueriesInRows // a JSON line is a query
	}
	switch {
	case opts.Orientation == TeachersInRows && (opts.Input != inputClasses || f.npy == nil && f.vr.format != FormatCSV):
		return nil, adviceError(name, advise("%v reads class labels (%v) of a NumPy array or a CSV file, one row per teacher", teachersInRows, Hint{optClasses, "C"}))
	case opts.Input == inputClasses && opts.Orientation == orientationUnstated:
		without := "without a metadata header"
		if f.vr.meta != nil {
			without = fmt.Sprintf("whose metadata header (%s) does not state its orientation", f.vr.headerAt())
		}
		shape := ""
		if f.npy != nil {
			shape = ", shape " + shapeText(f.npy.shape[:]) + ","
		}
		return nil, adviceError(name, advise("a matrix of class labels%s %s: state which axis holds the teachers, %v (a row per teacher, the layout of PATE's published votes) or %v (a row per query), whatever its shape: it reads either way, and one way is false",
			shape, without, teachersInRows, queriesInRows))
	}
	if f.npy == nil && opts.Orientation == TeachersInRows {
		var err error
		if mr.npy, err = mr.csvMatrix(f.first); err != nil {
			return nil, err
		}
	}
	line := f.first
	var err error
	if a := mr.npy; a != nil {
		if err := a.settle(opts.Orientation == TeachersInRows); err != nil {
			return nil, err
		}
		if err := a.checkShape(opts); err != nil {
			return nil, err
		}
		if line, err = a.nextNonBlank(); err != nil {
			return nil, err
		}
	}
	if mr.format == FormatCSV && mr.npy == nil {
		if line, err = mr.csvHeader(line); err != nil {
			return nil, err
		}
	}
	if err := mr.parse(line, true); err != nil {
		return nil, err
	}
	mr.q.Index, mr.q.Line, mr.pending = 1, mr.lr.line, true
	return mr, nil
}

// String returns "counts" or "class indices".
func (i classLayout) String() string {
	switch i {
	case inputCounts:
		return "counts"
	case inputClasses:
		return "class indices"
	}
	return "the header's layout"
}

// Layout returns LayoutCounts for vote counts, LayoutVotes for class
// indices.
func (r *classReader) Layout() Layout {
	if r.opts.Input == inputCounts {
		return LayoutCounts
	}
	return LayoutVotes
}

// Input returns ManyClasses.
func (r *classReader) Input() Input { return ManyClasses }

// HasHeader reports whether the CSV file has a header row.
func (r *classReader) HasHeader() bool { return r.header }

// Meta returns the file's metadata header, or nil if it has none.
func (r *classReader) Meta() *Meta { return r.lr.meta }

// HeaderError returns err at the place of the file's metadata header
// (Reader.HeaderError).
func (r *classReader) HeaderError(err error) error { return r.lr.HeaderError(err) }

// K returns the number of teachers.
func (r *classReader) K() int { return r.k }

// Classes returns C.
func (r *classReader) Classes() int { return r.c }

// Format returns the file's format (CSV, JSONL or NPY).
func (r *classReader) Format() Format { return r.format }

// Abstained returns the votes not cast in the queries read so far: the
// class labels -1, and the teachers a row of counts falls short of a
// stated K by.
func (r *classReader) Abstained() int64 { return r.abstained }

// MayAbstain reports whether a row may lack votes: class labels (-1) or
// counts against a stated K.
func (r *classReader) MayAbstain() bool { return r.opts.Input == inputClasses || r.opts.K > 0 }

// HasID reports whether rows carry an id.
func (r *classReader) HasID() bool { return r.hasID }

// BytesRead returns the bytes consumed so far.
func (r *classReader) BytesRead() int64 { return r.lr.bytes }

// Err returns the error that stopped Next, or nil at the end of the file.
func (r *classReader) Err() error { return r.err }

// Query returns the current row.
func (r *classReader) Query() *Query { return &r.q }

// Next advances to the next query; false at the end or on an error.
func (r *classReader) Next() bool {
	var more bool
	if r.npy != nil {
		more = r.rows.next(r.npy, r.parseRow)
	} else {
		more = r.rows.next(r.lr, r.parseRow)
	}
	if !more && r.member != nil {
		r.member.Close()
		r.member = nil
	}
	return more
}

// parseRow reads a data line after the first into the next query.
func (r *classReader) parseRow(line []byte) error {
	if err := r.parse(line, false); err != nil {
		return err
	}
	r.q.Index++
	r.q.Line = r.lr.line
	return nil
}

// value parses a value of a text row: a count or class index, a whole
// number (wholeNumber), or for class indices -1, a teacher that did not
// vote.
func (r *classReader) value(b []byte) (int, bool) {
	if r.opts.Input == inputClasses && string(b) == "-1" {
		return -1, true
	}
	return wholeNumber(b)
}

// valueRule is the rule value keeps, for errors.
func (r *classReader) valueRule() string {
	if r.opts.Input == inputClasses {
		return "must be a class index, a non-negative integer of at most 9 digits, or -1 for a teacher that did not vote"
	}
	return "must be a non-negative integer of at most 9 digits (7 or 7.0)"
}

// labelsHint is what an error on counts that do not add up adds: the
// rows may be class labels, one per teacher.
func (r *classReader) labelsHint() advice {
	classes := Hint{optClasses, "C"}
	if r.lr.meta != nil {
		return advice{}
	}
	return advise("; if the %s holds class labels, one per teacher, give %v with its orientation, %v (the layout of PATE's published votes) or %v",
		map[bool]string{true: "array", false: "file"}[r.npy != nil], classes, teachersInRows, queriesInRows)
}

// abstainHint is what an error on a count of -1 adds when nothing stated
// that the values are counts but their reading: -1 is how class labels
// mark a teacher that did not vote, so the values are likely labels read
// without their classes.
func (r *classReader) abstainHint(value string) advice {
	h := r.labelsHint()
	if value != "-1" || r.opts.Input != inputCounts || h.text == "" {
		return advice{}
	}
	return advise("; -1 is no count: it is how class labels mark a teacher that did not vote%v (or in a sidecar's metadata header)", h)
}

// wholeNumber parses a count: a non-negative decimal integer of at most 9
// digits, which may be written as a float with a zero fraction (7.0, as
// pandas writes a float column).
func wholeNumber(b []byte) (int, bool) {
	if i := bytes.IndexByte(b, '.'); i > 0 && len(b) > i+1 && len(bytes.TrimRight(b[i+1:], "0")) == 0 {
		b = b[:i]
	}
	return number(b)
}

// number parses a non-negative decimal integer of at most 9 digits.
func number(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = 10*n + int(c-'0')
	}
	return n, true
}

// csvHeader settles the header and the id column from the first line and
// returns the first data line.
func (r *classReader) csvHeader(line []byte) ([]byte, error) {
	fs, err := r.lr.split(line)
	if err != nil {
		return nil, err
	}
	switch r.opts.Header {
	case present:
		r.header = true
	case absent:
	default:
		// A row of numbers (after an id that is no number) is data, however
		// malformed as counts, so that a typo on the first row is reported
		// as one, as the 0/1 reader does: a header has a field that is not
		// a number.
		r.header = !allNumbers(fs) && !(len(fs) >= 2 && r.opts.ID != absent && !allNumbers(fs[:1]) && allNumbers(fs[1:])) ||
			r.opts.ID != absent && csvIndexHeader(fs)
	}
	named := false
	if r.header {
		named = strings.EqualFold(string(fs[0].b), "id") || r.opts.ID != absent && csvIndexHeader(fs)
		if line, err = r.lr.nextNonBlank(); err == io.EOF {
			return nil, &formatError{File: r.lr.name, Line: r.lr.line, Msg: "no data rows after the header"}
		} else if err != nil {
			return nil, err
		}
		if fs, err = r.lr.split(line); err != nil {
			return nil, err
		}
	}
	switch r.opts.ID {
	case present:
		r.hasID = true
	case absent:
	default:
		// When C (counts) or K (class indices) is known, as from a
		// metadata header, a row has an id exactly when it has one more
		// field; otherwise a first field that is not a count is an id.
		width := r.opts.K
		if r.opts.Input == inputCounts {
			width = r.opts.Classes
		}
		if width > 0 {
			r.hasID = named || len(fs) == width+1
		} else {
			// A first field that is a number is a count, even a malformed
			// one (240.0, -3): only text is taken for an id.
			r.hasID = named || (len(fs) >= 2 && !allNumbers(fs[:1]) && allNumbers(fs[1:]))
		}
	}
	return line, nil
}

// parse reads one data row into r.q.Counts; first settles C and K.
func (r *classReader) parse(line []byte, first bool) error {
	var err error
	switch {
	case r.npy != nil:
		err = r.parseNPY(line)
	case r.format == FormatCSV:
		err = r.parseCSV(line)
	default:
		err = r.parseJSONL(line, first)
	}
	if err != nil {
		return err
	}
	if first {
		if err := r.settle(); err != nil {
			return err
		}
	} else if len(r.vals) != r.n {
		return r.lr.errorf(0, "%d %s, want %d%s", len(r.vals), r.what(), r.n, r.source())
	}
	return r.count()
}

func (r *classReader) what() string {
	if r.opts.Input == inputCounts {
		return "counts"
	}
	return "votes"
}

// stated says where a required C or K came from, for errors.
func (r *classReader) stated() string {
	switch {
	case r.lr.meta == nil:
		return ""
	case r.lr.metaFile == "" && r.lr.metaLine == 0: // a header given with the rows (ReadRows)
		return " (as the metadata header states)"
	}
	return fmt.Sprintf(" (as the metadata header, %s, states)", r.lr.headerAt())
}

// source says where the C and K every row must match came from: the
// metadata header or the first data row.
func (r *classReader) source() string {
	if s := r.stated(); s != "" {
		return s
	}
	return " (as in the first data row)"
}

func (r *classReader) settle() error {
	r.n = len(r.vals)
	if r.n == 0 {
		return r.lr.errorf(0, "no %s", r.what())
	}
	if r.opts.Input == inputCounts {
		if r.opts.Classes > 0 && r.n != r.opts.Classes {
			return r.lr.errorf(0, "%d counts, want C = %d%s", r.n, r.opts.Classes, r.stated())
		}
		if r.n < 2 {
			return r.lr.errorf(0, "1 count: a counts file needs C >= 2 classes")
		}
		r.c = r.n
		sum := 0
		for _, v := range r.vals {
			sum += v
		}
		r.k = sum
		if r.opts.K > 0 {
			r.k = r.opts.K
		} else if r.k < 1 {
			return r.lr.errorf(0, "counts sum to 0: no teacher voted (if teachers abstained, state K: %v, or the metadata header)", Hint{optK, ""})
		}
	} else {
		r.c = r.opts.Classes
		r.k = r.n
		if r.opts.K > 0 && r.n != r.opts.K {
			return r.lr.errorf(0, "%d votes, want K = %d%s", r.n, r.opts.K, r.stated())
		}
	}
	r.q.Counts = make([]int, r.c)
	return nil
}

// count turns r.vals into r.q.Counts, checking the row.
func (r *classReader) count() error {
	if r.opts.Input == inputCounts {
		sum := 0
		for _, v := range r.vals {
			sum += v
		}
		switch {
		case r.opts.K > 0 && sum > r.k:
			return r.lr.errorf(0, "counts sum to more than K = %d teachers%s (the sum is not quoted: a query's votes are private)", r.k, r.stated())
		case r.opts.K == 0 && sum != r.k:
			return r.lr.errorf(0, "counts do not sum to K = %d%s (not quoted: a query's votes are private; a row may sum to fewer, teachers abstaining, when K is stated: %v, or the metadata header)%s", r.k, r.source(), Hint{optK, ""}, r.labelsHint())
		}
		r.abstained += int64(r.k - sum)
		copy(r.q.Counts, r.vals)
		return nil
	}
	clear(r.q.Counts)
	off := 1
	if r.hasID {
		off = 2
	}
	for j, v := range r.vals {
		if v == -1 {
			r.abstained++
			continue
		}
		if v >= r.c {
			col := j + off
			if r.format == FormatJSONL {
				col = 0
			}
			return r.lr.errorf(col, "vote %d: class %s: must be a class index in [0, %d), or -1 for a teacher that did not vote", j+1, classShown(v, r.c), r.c)
		}
		r.q.Counts[v]++
	}
	return nil
}

func (r *classReader) parseCSV(line []byte) error {
	fs, err := r.lr.split(line)
	if err != nil {
		return err
	}
	off := 0
	r.q.ID, r.q.IDNumber = nil, false
	if r.hasID {
		if len(fs) < 2 {
			return r.lr.errorf(0, "%d columns: want an id and the %s", len(fs), r.what())
		}
		if !validID(fs[0].b) {
			return r.lr.errorf(1, "id is not valid UTF-8 text without NUL bytes")
		}
		r.q.ID = fs[0].b
		if r.q.ID == nil {
			r.q.ID = []byte{}
		}
		off = 1
	}
	r.vals = r.vals[:0]
	for j, f := range fs[off:] {
		v, ok := r.value(f.b)
		if !ok {
			msg := fmt.Sprintf("%s %s: %s", strings.TrimSuffix(r.what(), "s"), show(f.b), r.valueRule())
			if j == 0 && !r.hasID && r.opts.ID == autoDetect {
				msg += " (if column 1 is a query id, declare the id column)"
			}
			return r.lr.errorf(off+j+1, "%s%v", msg, r.abstainHint(string(f.b)))
		}
		r.vals = append(r.vals, v)
	}
	return nil
}

func (r *classReader) parseJSONL(line []byte, first bool) error {
	r.q.ID, r.q.IDNumber = nil, false
	t := bytes.TrimLeft(line, " \t")
	var raw []json.RawMessage
	id := false
	switch {
	case len(t) > 0 && t[0] == '[':
		if err := json.Unmarshal(line, &raw); err != nil {
			return r.lr.errorf(0, "invalid JSON array: %s", jsonMsg(err))
		}
	case len(t) > 0 && t[0] == '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil {
			return r.lr.errorf(0, "invalid JSON object: %s", jsonMsg(err))
		}
		for k := range obj {
			if k != "id" && k != "votes" && k != "counts" {
				return r.lr.errorf(0, "unknown key %s: want \"id\" and \"votes\" (or \"counts\")", param.Quote(k))
			}
		}
		v, ok := obj["votes"]
		if c, ok2 := obj["counts"]; ok2 {
			if ok {
				return r.lr.errorf(0, "both \"votes\" and \"counts\"")
			}
			v, ok = c, true
		}
		if !ok {
			return r.lr.errorf(0, "no \"votes\" array")
		}
		if err := json.Unmarshal(v, &raw); err != nil {
			return r.lr.errorf(0, "\"votes\" must be an array of integers")
		}
		if idv, ok := obj["id"]; ok {
			id = true
			if err := r.jsonID(idv); err != nil {
				return err
			}
		}
	default:
		return r.lr.errorf(1, "want a JSON array or an object {\"id\": ..., \"votes\": [...]} (not a CSV or JSON lines vote file?)")
	}
	if first {
		switch {
		case r.opts.ID == present && !id:
			return r.lr.errorf(0, "no \"id\": the id column was declared")
		case r.opts.ID == absent && id:
			return r.lr.errorf(0, "\"id\" given, but the id column was ruled out")
		}
		r.hasID = id
	} else if id != r.hasID {
		return r.lr.errorf(0, "\"id\" present in some rows and not in others")
	}
	r.vals = r.vals[:0]
	for j, x := range raw {
		v, ok := r.value(bytes.TrimSpace(x))
		if !ok {
			return r.lr.errorf(0, "%s %d, %s: %s%v", strings.TrimSuffix(r.what(), "s"), j+1, show(bytes.TrimSpace(x)), r.valueRule(), r.abstainHint(string(bytes.TrimSpace(x))))
		}
		r.vals = append(r.vals, v)
	}
	return nil
}

func (r *classReader) jsonID(v json.RawMessage) error {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil || !validID([]byte(s)) {
			return r.lr.errorf(0, "id must be text without NUL bytes or line breaks")
		}
		r.q.ID = []byte(s)
		return nil
	}
	if len(v) == 0 || !(v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
		return r.lr.errorf(0, "id must be a JSON string or number")
	}
	r.q.ID, r.q.IDNumber = v, true
	return nil
}

// jsonMsg keeps encoding/json's description of an error but drops any
// quoted input.
func jsonMsg(err error) string {
	var se *json.SyntaxError
	if e, ok := err.(*json.SyntaxError); ok {
		se = e
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	return "not of the expected shape"
}
