package votefile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/plural"
)

// maxLineBytes bounds the length of one line of a vote file, which keeps
// the reader's memory constant.
const maxLineBytes = 1 << 20

// readBuffer is the size of the read buffer; longer lines are assembled
// in a separate buffer.
const readBuffer = 64 << 10

// voteReader streams the queries of a vote file: an optional metadata
// header (Meta), then one row per query, an optional id column, then K
// votes of 0 or 1. Memory does not depend on the number of rows.
//
// The metadata header is the first non-blank line: in CSV the comment line
// "# " followed by its JSON object, in JSON lines the object itself, which
// has the key headerKey (parseMeta; docs/aggregate.md). Its K must be
// the data's; it is checked strictly, and Meta returns it.
//
// CSV: an optional header row, then rows of [id,]v_1,...,v_K. JSON lines:
// per line either [v_1, ..., v_K] or {"id": <string or number>, "votes":
// [v_1, ..., v_K]}. Blank lines are skipped; a UTF-8 byte-order mark and
// CRLF line ends are accepted.
//
// Detection (each can be forced in readOptions): in CSV the first
// non-blank line is data if all its fields are 0/1, or if all but the
// first are (then the first is an id); otherwise it is a header. The first
// column is an id if the header names it "id" or if in the first data row
// it is the only field that is not 0/1. In JSON lines the first row has an
// id or not. K is the number of votes of the first data row; every later
// row must match it and the id layout.
type voteReader struct {
	name    string
	br      *bufio.Reader
	format  Format
	header  bool
	hasID   bool
	forceID Presence
	k       int
	line    int
	bytes   int64
	q       Query
	rows
	fields   []csvField
	scratch  []byte // unescaped CSV fields and JSON keys
	idBuf    []byte // an unescaped JSON id
	long     []byte // a line longer than the read buffer
	meta     *Meta
	metaLine int
	// metaFile is the sidecar the header was read from (Options.Meta),
	// "" for a header in the file.
	metaFile string
	// array is true when the rows handed out are an array's queries (a
	// NumPy file, or a CSV matrix read whole), line their count.
	array bool
	// npy is a NumPy array of 0/1 votes, whose header states them, and
	// member an .npz archive's array, closed at the end of its rows.
	npy    *npyArray
	member io.Closer
}

// voteFile is the start of a vote file, read up to its metadata header:
// what a caller needs to choose a reader for it. Votes reads it as 0/1
// votes (a voteReader), Multi as counts or class indices (a
// classReader); use one of them, once.
type voteFile struct {
	vr    *voteReader
	first []byte    // the first line after the header
	npy   *npyArray // a NumPy array's header, for a NumPy file
	// member is an .npz archive's array, which the classReader closes at
	// its end.
	member io.Closer
}

// open reads the first line of a vote file and, if it is one, its
// metadata header (parseMeta; a broken rule is a format error with its
// line). format is FormatAuto (JSON lines if the first line starts with [
// or {, a NumPy array by its magic string), FormatCSV, FormatJSONL or
// FormatNPY. name is used in errors.
func open(r io.Reader, name string, format Format) (*voteFile, error) {
	vr := &voteReader{name: name, br: bufio.NewReaderSize(r, readBuffer), format: format}
	if start, _ := vr.br.Peek(len(npyMagic)); isNPY(start) {
		return openNPYFile(vr)
	} else if format == FormatNPY {
		return nil, &formatError{File: name, Msg: "not a NumPy file: it does not start with NumPy's magic string \\x93NUMPY"}
	} else if bytes.HasPrefix(start, zipMagic) {
		return nil, adviceError(name, advise("a zip archive, as NumPy's .npz is: name the array to read in it (%v)", Hint{optArray, "NAME"}))
	}
	line, err := vr.nextNonBlank()
	if err == io.EOF {
		return nil, &formatError{File: name, Msg: "empty file: no votes"}
	}
	if err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(line, 0); i >= 0 || !utf8.Valid(line) {
		return nil, &formatError{File: name, Line: vr.line, Msg: "not a CSV or JSON lines vote file: binary data (nor a NumPy .npy file, which starts with \\x93NUMPY, or a .npz archive)"}
	}
	if vr.format == FormatAuto {
		vr.format = FormatCSV
		if c := bytes.TrimLeft(line, " \t"); c[0] == '[' || c[0] == '{' {
			vr.format = FormatJSONL
		}
	}
	if vr.format != FormatCSV && vr.format != FormatJSONL {
		return nil, &formatError{File: name, Msg: fmt.Sprintf("format %v: must be csv or jsonl", vr.format)}
	}
	if line, err = vr.readMeta(line); err != nil {
		return nil, err
	}
	if c := bytes.TrimLeft(line, " \t"); vr.format == FormatCSV && c[0] == '#' {
		return nil, &formatError{File: name, Line: vr.line, Msg: commentRule}
	}
	return &voteFile{vr: vr, first: append([]byte(nil), line...)}, nil
}

// Meta returns the file's metadata header, or nil if it has none.
func (f *voteFile) Meta() *Meta { return f.vr.meta }

// manyClasses reports whether the file's header says it holds counts or
// votes among more than two classes (Meta.Input), or, without a header,
// whether it is a NumPy array (counts, or class labels of C classes).
func (f *voteFile) manyClasses() bool {
	if m := f.vr.meta; m != nil {
		return m.Input() == ManyClasses
	}
	return f.npy != nil
}

// Votes reads the file as 0/1 votes, a step of Open; a header must state
// two classes in layout votes, and a NumPy array needs one that does
// (without, it holds counts or class labels). opts.Format is not used.
func (f *voteFile) Votes(opts readOptions) (*voteReader, error) {
	vr := f.vr
	if m := vr.meta; m != nil && m.Input() == ManyClasses {
		return nil, vr.headerErrorf("header: %d classes in layout %v: the 0/1 reader takes two-class votes, one column per teacher; read multi-class votes as counts or class indices", m.Classes, m.Layout)
	}
	if f.npy != nil {
		if vr.meta == nil {
			return nil, &formatError{File: vr.name, Msg: "a NumPy array without a metadata header holds vote counts or class labels, not 0/1 votes: read it as counts or class labels, or state two-class votes in its header"}
		}
		return f.npyVotes(opts)
	}
	vr.forceID = opts.ID
	var err error
	if vr.format == FormatJSONL {
		err = vr.firstJSONL(f.first, opts)
	} else {
		err = vr.firstCSV(f.first, opts)
	}
	if err != nil {
		return nil, err
	}
	if err := vr.checkMeta(); err != nil {
		return nil, err
	}
	vr.q.Index, vr.q.Line, vr.pending = 1, vr.line, true
	vr.count()
	return vr, nil
}

// npyVotes reads a NumPy array of 0/1 votes, a row per query (queries x
// K), as its metadata header (a sidecar) states, a step of Votes.
func (f *voteFile) npyVotes(opts readOptions) (*voteReader, error) {
	vr, a := f.vr, f.npy
	if err := a.settle(false); err != nil {
		return nil, err
	}
	if a.width != vr.meta.K {
		return nil, a.errorf("shape %s: %d votes a query (a row per query: two-class 0/1 votes), but the metadata header (%s) states K = %d teachers",
			shapeText(a.shape[:]), a.width, vr.headerAt(), vr.meta.K)
	}
	if err := vr.settle(a.width, opts); err != nil {
		return nil, err
	}
	vr.npy, vr.member = a, f.member
	line, err := a.nextNonBlank()
	if err == nil {
		err = vr.parseNPY(line)
	}
	if err != nil {
		return nil, err
	}
	vr.q.Index, vr.q.Line, vr.pending = 1, vr.line, true
	vr.count()
	return vr, nil
}

// parseNPY reads the values of a NumPy array's query into its votes,
// each 0 or 1.
func (r *voteReader) parseNPY(b []byte) error {
	a := r.npy
	q := a.q - 1
	for j := range a.width {
		n, whole, text := a.value(b, j)
		if !whole || n < 0 || n > 1 {
			if text == "" {
				text = strconv.FormatInt(n, 10)
			}
			return a.errorf("element %s = %s (query %d, vote of teacher %d): a vote must be 0 or 1", a.index(q, j), text, q+1, j+1)
		}
		r.q.Votes[j] = byte(n)
	}
	return nil
}

// readMeta reads the metadata header if line, the first line of the file,
// is one: in CSV a comment line "# {...}", in JSON lines an object with the
// key headerKey. It returns the first line after the header, or line
// itself when it is not one.
func (r *voteReader) readMeta(line []byte) ([]byte, error) {
	c := bytes.TrimLeft(line, " \t")
	var obj []byte
	switch {
	case r.format == FormatCSV && c[0] == '#':
		obj = bytes.TrimLeft(c[1:], " \t")
	case r.format == FormatJSONL && c[0] == '{' && isHeaderObject(c):
		obj = c
	default:
		return line, nil
	}
	meta, err := parseMeta(obj)
	if err != nil {
		msg := err.Error()
		if r.format == FormatCSV && (len(obj) == 0 || obj[0] != '{') {
			msg = "a line starting with # must be the metadata header, # {\"" + headerKey + "\": 1, ...}; " + msg
		}
		return nil, &formatError{File: r.name, Line: r.line, Msg: msg}
	}
	r.meta, r.metaLine = meta, r.line
	next, err := r.nextNonBlank()
	if err == io.EOF {
		return nil, &formatError{File: r.name, Line: r.line, Msg: "no votes after the metadata header"}
	}
	return next, err
}

// checkMeta checks the header against the first data row.
func (r *voteReader) checkMeta() error {
	if r.meta != nil && r.meta.K != r.k {
		return r.errorf(0, "%d votes, but the metadata header (%s) states K = %d teachers", r.k, r.headerAt(), r.meta.K)
	}
	return nil
}

// Meta returns the file's metadata header, or nil if it has none.
func (r *voteReader) Meta() *Meta { return r.meta }

// HeaderError returns err, a rule of the file's metadata header that the
// caller found broken, as a format error at the header's line; any other
// error as it is.
func (r *voteReader) HeaderError(err error) error {
	var he *HeaderError
	if r.meta == nil || !errors.As(err, &he) {
		return err
	}
	return r.headerErrorf("%s", he.Error())
}

// headerErrorf returns a format error at the place of the file's
// metadata header: its line, or the sidecar it was read from.
func (r *voteReader) headerErrorf(format string, args ...any) *formatError {
	if r.metaFile != "" {
		return &formatError{File: r.metaFile, Msg: fmt.Sprintf(format, args...)}
	}
	return &formatError{File: r.name, Line: r.metaLine, Msg: fmt.Sprintf(format, args...)}
}

// headerAt says where the file's metadata header is, for errors: "line
// N", or the sidecar it was read from.
func (r *voteReader) headerAt() string {
	if r.metaFile != "" {
		return r.metaFile
	}
	return fmt.Sprintf("line %d", r.metaLine)
}

// K returns the number of votes per row.
func (r *voteReader) K() int { return r.k }

// Classes returns 2: a vote is 0 or 1.
func (r *voteReader) Classes() int { return 2 }

// Input returns TwoClass: the file holds 0/1 votes.
func (r *voteReader) Input() Input { return TwoClass }

// Layout returns LayoutVotes.
func (r *voteReader) Layout() Layout { return LayoutVotes }

// Format returns the format of the file (CSV or JSONL).
func (r *voteReader) Format() Format { return r.format }

// HasHeader reports whether the CSV file has a header row.
func (r *voteReader) HasHeader() bool { return r.header }

// HasID reports whether the rows carry an id.
func (r *voteReader) HasID() bool { return r.hasID }

// BytesRead returns the number of bytes consumed so far.
func (r *voteReader) BytesRead() int64 { return r.bytes }

// MayAbstain reports false: every teacher casts a 0/1 vote.
func (r *voteReader) MayAbstain() bool { return false }

// Abstained returns 0: every teacher casts a 0/1 vote.
func (r *voteReader) Abstained() int64 { return 0 }

// Err returns the error that stopped Next, or nil at the end of the file.
func (r *voteReader) Err() error { return r.err }

// Query returns the current row.
func (r *voteReader) Query() *Query { return &r.q }

// Next advances to the next query; it returns false at the end of the file
// or on an error (see Err).
func (r *voteReader) Next() bool {
	if r.npy == nil {
		return r.rows.next(r, r.parseRow)
	}
	more := r.rows.next(r.npy, r.parseRow)
	if !more && r.member != nil {
		r.member.Close()
		r.member = nil
	}
	return more
}

// parseRow reads a data line after the first into the next query.
func (r *voteReader) parseRow(line []byte) error {
	var err error
	switch {
	case r.npy != nil:
		if err = r.parseNPY(line); err == nil {
			r.count()
		}
	case r.format == FormatJSONL:
		err = r.parseJSONL(line)
	default:
		err = r.parseCSV(line)
	}
	if err != nil {
		return err
	}
	r.q.Index++
	r.q.Line = r.line
	return nil
}

// count sets the current query's counts from its votes.
func (r *voteReader) count() {
	ones := 0
	for _, v := range r.q.Votes {
		ones += int(v)
	}
	r.q.Counts[0], r.q.Counts[1] = r.k-ones, ones
}

// nextNonBlank returns the next line that holds more than blanks, without
// its line end; io.EOF at the end of the input.
func (r *voteReader) nextNonBlank() ([]byte, error) {
	for {
		line, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			var fe *formatError
			if line, err = r.longLine(line); errors.As(err, &fe) {
				return nil, err
			}
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("read %s: %w", r.name, err)
		}
		if len(line) == 0 {
			return nil, io.EOF
		}
		r.line++
		r.bytes += int64(len(line))
		if r.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a UTF-8 byte-order mark
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if !blank(line) {
			return line, nil
		}
	}
}

// longLine completes a line longer than the read buffer, up to
// maxLineBytes, in r.long.
func (r *voteReader) longLine(part []byte) ([]byte, error) {
	r.long = append(r.long[:0], part...)
	for {
		part, err := r.br.ReadSlice('\n')
		r.long = append(r.long, part...)
		if len(r.long) > maxLineBytes {
			return nil, &formatError{File: r.name, Line: r.line + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxLineBytes)}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return r.long, err
		}
	}
}

// numeric reports whether b is written like a number: digits, signs, a
// decimal point or an exponent, and at least one digit.
func numeric(b []byte) bool {
	digit := false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E':
		default:
			return false
		}
	}
	return digit
}

func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

func (r *voteReader) errorf(col int, format string, args ...any) *formatError {
	a := advise(format, args...)
	if r.array {
		// An array's queries are no lines of the file.
		a.text = fmt.Sprintf("query %d: ", r.line) + a.text
		return adviceError(r.name, a)
	}
	e := adviceError(r.name, a)
	e.Line, e.Column = r.line, col
	return e
}

// settle fixes K from the first data row, which has n votes.
func (r *voteReader) settle(n int, opts readOptions) error {
	switch {
	case n < 1:
		return r.errorf(0, "no votes")
	case opts.K > 0 && n != opts.K:
		return r.errorf(0, "%s, want K = %d", plural.Of(n, "vote", "votes"), opts.K)
	case n%2 == 0:
		return r.errorf(0, "%s: the number of teachers K must be odd (the majority of an even number of votes can tie)", plural.Of(n, "vote", "votes"))
	}
	r.k = n
	r.q.Votes = make([]byte, n)
	r.q.Counts = make([]int, 2)
	return nil
}

// show quotes a field for an error message, cut (param.Quote).
func show(b []byte) string { return param.Quote(string(b)) }

// validID checks an id: valid UTF-8 without NUL or line breaks.
func validID(b []byte) bool {
	return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 && bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') < 0
}
