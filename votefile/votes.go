package votefile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/darrm/darrm/internal/plural"
)

// Format is the format of a vote or label file.
type Format int

const (
	// FormatAuto detects the format from the first non-blank line: JSON
	// lines if it starts with '[' or '{', CSV otherwise.
	FormatAuto Format = iota
	// FormatCSV is comma-separated values (RFC 4180, no line breaks inside
	// quoted fields).
	FormatCSV
	// FormatJSONL is JSON lines: one JSON value per line.
	FormatJSONL
	// FormatCounts is a file of vote counts, one row of C counts per
	// query, in CSV or JSON lines: read by NewMultiReader, not
	// NewVoteReader.
	FormatCounts
)

func (f Format) String() string {
	switch f {
	case FormatCSV:
		return "csv"
	case FormatJSONL:
		return "jsonl"
	case FormatCounts:
		return "counts"
	}
	return "auto"
}

// ParseFormat parses "auto", "csv", "jsonl" (also "ndjson") or "counts".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "auto":
		return FormatAuto, nil
	case "csv":
		return FormatCSV, nil
	case "jsonl", "ndjson":
		return FormatJSONL, nil
	case "counts":
		return FormatCounts, nil
	}
	return 0, fmt.Errorf("format %q: must be auto, csv, jsonl or counts", s)
}

// MarshalText returns the name of f, so that a Format reads and prints as
// text (a flag, a JSON or config value).
func (f Format) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText sets f from its name (ParseFormat).
func (f *Format) UnmarshalText(b []byte) error {
	x, err := ParseFormat(string(b))
	if err == nil {
		*f = x
	}
	return err
}

// Presence says whether a vote file has a header row or an id column.
type Presence int

const (
	// Detect decides from the file (see NewVoteReader).
	Detect Presence = iota
	// Present forces the header or id column.
	Present
	// Absent rules it out.
	Absent
)

// ParsePresence parses "auto", "yes" or "no".
func ParsePresence(s string) (Presence, error) {
	switch strings.ToLower(s) {
	case "auto":
		return Detect, nil
	case "yes", "true":
		return Present, nil
	case "no", "false":
		return Absent, nil
	}
	return 0, fmt.Errorf("%q: must be auto, yes or no", s)
}

// String returns "auto", "yes" or "no", as ParsePresence reads it.
func (p Presence) String() string {
	switch p {
	case Present:
		return "yes"
	case Absent:
		return "no"
	}
	return "auto"
}

// MarshalText returns the name of p, so that a Presence reads and prints as
// text (a flag, a JSON or config value).
func (p Presence) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText sets p from its name (ParsePresence).
func (p *Presence) UnmarshalText(b []byte) error {
	x, err := ParsePresence(string(b))
	if err == nil {
		*p = x
	}
	return err
}

// ReadOptions describe a vote file; the zero value detects everything.
type ReadOptions struct {
	Format Format
	Header Presence // CSV only
	ID     Presence
	// K is the number of votes per row; 0 takes it from the first data row.
	K int
}

// MaxLineBytes bounds the length of one line of a vote file, which keeps
// the reader's memory constant.
const MaxLineBytes = 1 << 20

// readBuffer is the size of the read buffer; longer lines are assembled
// in a separate buffer.
const readBuffer = 64 << 10

// FormatError describes malformed input: the file, the line (1-based), the
// column (1-based; for CSV the field, for JSON lines the byte; 0 when the
// whole line is at fault) and what is wrong. It never quotes a row, only
// the offending field, so that no error reveals a query's votes.
type FormatError struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (e *FormatError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("%s, line %d, column %d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s, line %d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// VoteReader streams the queries of a vote file: an optional metadata
// header (Meta), then one row per query, an optional id column, then K
// votes of 0 or 1. Memory does not depend on the number of rows.
//
// The metadata header is the first non-blank line: in CSV the comment line
// "# " followed by its JSON object, in JSON lines the object itself, which
// has the key HeaderKey (ParseMeta; docs/aggregate.md). Its K must be
// the data's; it is checked strictly, and Meta returns it.
//
// CSV: an optional header row, then rows of [id,]v_1,...,v_K. JSON lines:
// per line either [v_1, ..., v_K] or {"id": <string or number>, "votes":
// [v_1, ..., v_K]}. Blank lines are skipped; a UTF-8 byte-order mark and
// CRLF line ends are accepted.
//
// Detection (each can be forced in ReadOptions): in CSV the first
// non-blank line is data if all its fields are 0/1, or if all but the
// first are (then the first is an id); otherwise it is a header. The first
// column is an id if the header names it "id" or if in the first data row
// it is the only field that is not 0/1. In JSON lines the first row has an
// id or not. K is the number of votes of the first data row; every later
// row must match it and the id layout.
type VoteReader struct {
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
}

// File is the start of a vote file, read up to its metadata header:
// what a caller needs to choose a reader for it. Votes reads it as 0/1
// votes (a VoteReader), Multi as counts or class indices (a
// MultiReader); use one of them, once.
type File struct {
	vr    *VoteReader
	first []byte // the first line after the header
}

// Open reads the first line of a vote file and, if it is one, its
// metadata header (ParseMeta; a broken rule is a *FormatError with its
// line). format is FormatAuto (JSON lines if the first line starts with [
// or {), FormatCSV, FormatJSONL or FormatCounts (a counts file in either,
// detected). name is used in errors.
func Open(r io.Reader, name string, format Format) (*File, error) {
	if format == FormatCounts {
		format = FormatAuto
	}
	vr := &VoteReader{name: name, br: bufio.NewReaderSize(r, readBuffer), format: format}
	line, err := vr.nextNonBlank()
	if err == io.EOF {
		return nil, &FormatError{File: name, Msg: "empty file: no votes"}
	}
	if err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(line, 0); i >= 0 || !utf8.Valid(line) {
		return nil, &FormatError{File: name, Line: vr.line, Msg: "not a CSV or JSON lines vote file: binary data"}
	}
	if vr.format == FormatAuto {
		vr.format = FormatCSV
		if c := bytes.TrimLeft(line, " \t"); c[0] == '[' || c[0] == '{' {
			vr.format = FormatJSONL
		}
	}
	if vr.format != FormatCSV && vr.format != FormatJSONL {
		return nil, &FormatError{File: name, Msg: fmt.Sprintf("format %v: must be csv or jsonl", vr.format)}
	}
	if line, err = vr.readMeta(line); err != nil {
		return nil, err
	}
	if c := bytes.TrimLeft(line, " \t"); vr.format == FormatCSV && c[0] == '#' {
		return nil, &FormatError{File: name, Line: vr.line, Msg: commentRule}
	}
	return &File{vr: vr, first: append([]byte(nil), line...)}, nil
}

// Meta returns the file's metadata header, or nil if it has none.
func (f *File) Meta() *Meta { return f.vr.meta }

// Format returns the file's format, CSV or JSONL.
func (f *File) Format() Format { return f.vr.format }

// MultiClass reports whether the header says the file holds counts or
// votes among more than two classes (Meta.MultiClass); false without
// a header.
func (f *File) MultiClass() bool { return f.vr.meta != nil && f.vr.meta.MultiClass() }

// NewVoteReader reads the start of a vote file (the header and the first
// data row) to settle its layout and K. name is used in errors.
func NewVoteReader(r io.Reader, name string, opts ReadOptions) (*VoteReader, error) {
	if opts.Format == FormatCounts {
		return nil, &FormatError{File: name, Msg: "a counts file holds vote counts, not 0/1 votes: read it with NewMultiReader"}
	}
	f, err := Open(r, name, opts.Format)
	if err != nil {
		return nil, err
	}
	return f.Votes(opts)
}

// Votes reads the file as 0/1 votes (NewVoteReader); a header must state
// two classes in layout votes. opts.Format is not used.
func (f *File) Votes(opts ReadOptions) (*VoteReader, error) {
	vr := f.vr
	if m := vr.meta; m != nil && m.MultiClass() {
		return nil, &FormatError{File: vr.name, Line: vr.metaLine, Msg: fmt.Sprintf("header: %d classes in layout %v: the 0/1 reader takes two-class votes, one column per teacher; read multi-class votes with NewMultiReader", m.Classes, m.Layout)}
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

// readMeta reads the metadata header if line, the first line of the file,
// is one: in CSV a comment line "# {...}", in JSON lines an object with the
// key HeaderKey. It returns the first line after the header, or line
// itself when it is not one.
func (r *VoteReader) readMeta(line []byte) ([]byte, error) {
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
	meta, err := ParseMeta(obj)
	if err != nil {
		msg := err.Error()
		if r.format == FormatCSV && (len(obj) == 0 || obj[0] != '{') {
			msg = "a line starting with # must be the metadata header, # {\"" + HeaderKey + "\": 1, ...}; " + msg
		}
		return nil, &FormatError{File: r.name, Line: r.line, Msg: msg}
	}
	r.meta, r.metaLine = meta, r.line
	next, err := r.nextNonBlank()
	if err == io.EOF {
		return nil, &FormatError{File: r.name, Line: r.line, Msg: "no votes after the metadata header"}
	}
	return next, err
}

// checkMeta checks the header against the first data row.
func (r *VoteReader) checkMeta() error {
	if r.meta != nil && r.meta.K != r.k {
		return r.errorf(0, "%d votes, but the metadata header (line %d) states K = %d teachers", r.k, r.metaLine, r.meta.K)
	}
	return nil
}

// Meta returns the file's metadata header, or nil if it has none.
func (r *VoteReader) Meta() *Meta { return r.meta }

// K returns the number of votes per row.
func (r *VoteReader) K() int { return r.k }

// Classes returns 2: a vote is 0 or 1.
func (r *VoteReader) Classes() int { return 2 }

// MultiClass returns false: the file holds 0/1 votes.
func (r *VoteReader) MultiClass() bool { return false }

// Layout returns LayoutVotes.
func (r *VoteReader) Layout() Layout { return LayoutVotes }

// Format returns the format of the file (CSV or JSONL).
func (r *VoteReader) Format() Format { return r.format }

// HasHeader reports whether the CSV file has a header row.
func (r *VoteReader) HasHeader() bool { return r.header }

// HasID reports whether the rows carry an id.
func (r *VoteReader) HasID() bool { return r.hasID }

// BytesRead returns the number of bytes consumed so far.
func (r *VoteReader) BytesRead() int64 { return r.bytes }

// Err returns the error that stopped Next, or nil at the end of the file.
func (r *VoteReader) Err() error { return r.err }

// Query returns the current row.
func (r *VoteReader) Query() *Query { return &r.q }

// Next advances to the next query; it returns false at the end of the file
// or on an error (see Err).
func (r *VoteReader) Next() bool { return r.rows.next(r, r.parseRow) }

// parseRow reads a data line after the first into the next query.
func (r *VoteReader) parseRow(line []byte) error {
	var err error
	if r.format == FormatJSONL {
		err = r.parseJSONL(line)
	} else {
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
func (r *VoteReader) count() {
	ones := 0
	for _, v := range r.q.Votes {
		ones += int(v)
	}
	r.q.Counts[0], r.q.Counts[1] = r.k-ones, ones
}

// nextNonBlank returns the next line that holds more than blanks, without
// its line end; io.EOF at the end of the input.
func (r *VoteReader) nextNonBlank() ([]byte, error) {
	for {
		line, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			var fe *FormatError
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
// MaxLineBytes, in r.long.
func (r *VoteReader) longLine(part []byte) ([]byte, error) {
	r.long = append(r.long[:0], part...)
	for {
		part, err := r.br.ReadSlice('\n')
		r.long = append(r.long, part...)
		if len(r.long) > MaxLineBytes {
			return nil, &FormatError{File: r.name, Line: r.line + 1, Msg: fmt.Sprintf("line longer than %d bytes", MaxLineBytes)}
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

func (r *VoteReader) errorf(col int, format string, args ...any) *FormatError {
	return &FormatError{File: r.name, Line: r.line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// settle fixes K from the first data row, which has n votes.
func (r *VoteReader) settle(n int, opts ReadOptions) error {
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

// show quotes a field for an error message, cut to 32 bytes.
func show(b []byte) string {
	if len(b) > 32 {
		return fmt.Sprintf("%q...", b[:32])
	}
	return fmt.Sprintf("%q", b)
}

// validID checks an id: valid UTF-8 without NUL or line breaks.
func validID(b []byte) bool {
	return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 && bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') < 0
}

// ---- CSV ----

type csvField struct {
	b      []byte
	quoted bool
}

// vote returns the value of a CSV vote field.
func (f csvField) vote() (byte, bool) {
	if len(f.b) == 1 && (f.b[0] == '0' || f.b[0] == '1') {
		return f.b[0] - '0', true
	}
	return 0, false
}

func allVotes(fs []csvField) bool {
	for _, f := range fs {
		if _, ok := f.vote(); !ok {
			return false
		}
	}
	return true
}

// allNumbers reports whether every field is a number: a row of them is
// data, however bad its votes, never a header.
func allNumbers(fs []csvField) bool {
	for _, f := range fs {
		if _, err := strconv.ParseFloat(string(f.b), 64); err != nil {
			return false
		}
	}
	return true
}

func anyVote(fs []csvField) bool {
	for _, f := range fs {
		if _, ok := f.vote(); ok {
			return true
		}
	}
	return false
}

// commentRule is the error of a CSV line after the first that starts with
// #: vote files have no comment lines but their metadata header, so that
// a row is never skipped, by darrm or by a reader that skips comments.
const commentRule = "a line starting with # is a comment line, and the only one a vote file may have is its metadata header, which must be the first line of the file, once, before the data (so no row's id may start with #)"

// split cuts a CSV line into fields (RFC 4180; blanks around a field are
// dropped; "" inside quotes is a quote). Quoted fields that need
// unescaping are copied into r.scratch, so fields are valid until the next
// call. A line that starts with # is refused (commentRule).
func (r *VoteReader) split(line []byte) ([]csvField, error) {
	if c := bytes.TrimLeft(line, " \t"); len(c) > 0 && c[0] == '#' {
		return nil, r.errorf(1, "%s", commentRule)
	}
	fs := r.fields[:0]
	r.scratch = r.scratch[:0]
	i := 0
	for col := 1; ; col++ {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		var f csvField
		if i < len(line) && line[i] == '"' {
			f.quoted = true
			start := len(r.scratch)
			i++
			for {
				j := bytes.IndexByte(line[i:], '"')
				if j < 0 {
					return nil, r.errorf(col, "quoted field is not closed on this line (fields may not span lines)")
				}
				r.scratch = append(r.scratch, line[i:i+j]...)
				i += j + 1
				if i < len(line) && line[i] == '"' {
					r.scratch = append(r.scratch, '"')
					i++
					continue
				}
				break
			}
			f.b = r.scratch[start:]
			for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
				i++
			}
			if i < len(line) && line[i] != ',' {
				return nil, r.errorf(col, "unexpected %q after a quoted field", line[i])
			}
		} else {
			j := bytes.IndexByte(line[i:], ',')
			if j < 0 {
				j = len(line) - i
			}
			f.b = bytes.TrimRight(line[i:i+j], " \t")
			if bytes.IndexByte(f.b, '"') >= 0 {
				return nil, r.errorf(col, "quote inside an unquoted field")
			}
			i += j
		}
		fs = append(fs, f)
		if i >= len(line) {
			break
		}
		i++ // the comma
	}
	r.fields = fs
	return fs, nil
}

func (r *VoteReader) firstCSV(line []byte, opts ReadOptions) error {
	fs, err := r.split(line)
	if err != nil {
		return err
	}
	switch opts.Header {
	case Present:
		r.header = true
	case Absent:
	default:
		// A row of numbers (after an id) is data, so that a bad vote on
		// the first line is reported as one.
		idRow := len(fs) >= 2 && opts.ID != Absent && allNumbers(fs[1:])
		r.header = !allNumbers(fs) && !idRow
	}
	namedID := false
	var headerCols int
	if r.header {
		headerCols = len(fs)
		headerLine := r.line
		namedID = strings.EqualFold(string(fs[0].b), "id")
		if line, err = r.nextNonBlank(); err == io.EOF {
			return &FormatError{File: r.name, Line: r.line, Msg: fmt.Sprintf("no data rows after the header on line %d (a first row that is not all numbers is a header)", headerLine)}
		} else if err != nil {
			return err
		}
		if fs, err = r.split(line); err != nil {
			return err
		}
		if !anyVote(fs) {
			return r.errorf(0, "not a CSV or JSON lines vote file: the first data row has no 0/1 votes%s", rowHint(fs))
		}
		if len(fs) != headerCols {
			return r.errorf(0, "%s, but the header has %d", plural.Of(len(fs), "column", "columns"), headerCols)
		}
	}
	switch opts.ID {
	case Present:
		r.hasID = true
	case Absent:
	default:
		r.hasID = namedID || (len(fs) >= 2 && !allVotes(fs[:1]) && allNumbers(fs[1:]))
	}
	off := 0
	if r.hasID {
		off = 1
	}
	if !anyVote(fs[off:]) {
		return r.errorf(0, "not a CSV or JSON lines vote file: the first data row has no 0/1 votes%s", rowHint(fs[off:]))
	}
	if r.hasID && !namedID && opts.ID != Present && (len(fs)-off)%2 == 0 && opts.K == 0 && numeric(fs[0].b) {
		// The first field was taken for an id because it is no vote; with
		// it the row would have an odd number of votes, and it is a number,
		// so it is more likely a mistyped vote (01, 1.0) than an id.
		return r.errorf(1, "%q is not a vote (votes are 0 or 1); read as an id, it would leave %d votes, but K must be odd", fs[0].b, len(fs)-off)
	}
	if err := r.settle(len(fs)-off, opts); err != nil {
		return err
	}
	return r.fill(fs)
}

// parseCSV reads one data row: a byte-level fast path for the plain form
// ([id,]0,1,...,1 without quotes or blanks), the general splitter
// otherwise, which also produces the precise error.
func (r *VoteReader) parseCSV(line []byte) error {
	p := line
	if r.hasID {
		i := bytes.IndexByte(p, ',')
		if i < 0 || bytes.IndexByte(p[:i], '"') >= 0 || !validID(p[:i]) || (i > 0 && (p[0] == ' ' || p[0] == '\t' || p[0] == '#' || p[i-1] == ' ' || p[i-1] == '\t')) {
			return r.parseCSVSlow(line)
		}
		r.q.ID = p[:i]
		p = p[i+1:]
	}
	k := r.k
	if len(p) != 2*k-1 {
		return r.parseCSVSlow(line)
	}
	votes, ones := r.q.Votes, 0
	for i := 0; i < k; i++ {
		c := p[2*i] - '0'
		if c > 1 || (i+1 < k && p[2*i+1] != ',') {
			return r.parseCSVSlow(line)
		}
		votes[i] = c
		ones += int(c)
	}
	r.q.Counts[0], r.q.Counts[1] = k-ones, ones
	return nil
}

func (r *VoteReader) parseCSVSlow(line []byte) error {
	fs, err := r.split(line)
	if err != nil {
		return err
	}
	return r.fill(fs)
}

// fill checks a split row against the layout and stores it in r.q.
func (r *VoteReader) fill(fs []csvField) error {
	off := 0
	if r.hasID {
		off = 1
	}
	if want := r.k + off; len(fs) != want {
		what := fmt.Sprintf("K = %d %s", r.k, plural.Word(r.k, "vote", "votes"))
		if r.hasID {
			what = "an id and " + what
		}
		return r.errorf(0, "%s, want %d (%s, as in the first data row)", plural.Of(len(fs), "column", "columns"), want, what)
	}
	if r.hasID {
		if !validID(fs[0].b) {
			return r.errorf(1, "id is not valid UTF-8 text without NUL bytes")
		}
		r.q.ID = fs[0].b
		if r.q.ID == nil {
			r.q.ID = []byte{} // an empty id is still an id
		}
	}
	for j, f := range fs[off:] {
		v, ok := f.vote()
		if !ok {
			msg := fmt.Sprintf("vote %s: must be 0 or 1", show(f.b))
			if j == 0 && !r.hasID && r.forceID == Detect {
				msg += " (if column 1 is a query id, declare the id column)"
			}
			return r.errorf(off+j+1, "%s%s", msg, countsHint(f.b))
		}
		r.q.Votes[j] = v
	}
	r.count()
	return nil
}

// ---- JSON lines ----

func (r *VoteReader) firstJSONL(line []byte, opts ReadOptions) error {
	id, n, err := r.scanJSONL(line, nil)
	if err != nil {
		return err
	}
	switch {
	case opts.ID == Present && !id:
		return r.errorf(0, "no \"id\": the id column was declared")
	case opts.ID == Absent && id:
		return r.errorf(0, "\"id\" given, but the id column was ruled out")
	}
	r.hasID = id
	if err := r.settle(n, opts); err != nil {
		return err
	}
	_, _, err = r.scanJSONL(line, r.q.Votes)
	return err
}

func (r *VoteReader) parseJSONL(line []byte) error {
	id, n, err := r.scanJSONL(line, r.q.Votes)
	if err != nil {
		return err
	}
	switch {
	case id && !r.hasID:
		return r.errorf(0, "\"id\" given, but the first row has none")
	case !id && r.hasID:
		return r.errorf(0, "no \"id\", but the first row has one")
	case n != r.k:
		return r.errorf(0, "%s, want K = %d (as in the first data row)", plural.Of(n, "vote", "votes"), r.k)
	}
	r.count()
	return nil
}

// jsonScan walks one JSON line.
type jsonScan struct {
	r    *VoteReader
	line []byte
	i    int
}

func (s *jsonScan) ws() {
	for s.i < len(s.line) {
		switch s.line[s.i] {
		case ' ', '\t', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScan) errorf(format string, args ...any) *FormatError {
	return s.r.errorf(s.i+1, format, args...)
}

// token returns the bytes of a scalar token at s.i (up to a delimiter).
func (s *jsonScan) token() []byte {
	j := s.i
	for j < len(s.line) && !delimiter(s.line[j]) {
		j++
	}
	return s.line[s.i:j]
}

func delimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\r', ',', ']', '}', ':':
		return true
	}
	return false
}

// str scans a JSON string at s.i and returns its raw bytes (with quotes).
func (s *jsonScan) str() ([]byte, error) {
	start := s.i
	for j := s.i + 1; j < len(s.line); j++ {
		switch c := s.line[j]; {
		case c == '\\':
			j++
		case c == '"':
			s.i = j + 1
			return s.line[start:s.i], nil
		case c < 0x20:
			return nil, s.r.errorf(j+1, "control character in a JSON string")
		}
	}
	return nil, s.errorf("JSON string is not closed on this line")
}

// decodeStr returns the text of a raw JSON string, decoding it into *buf
// only when it has escapes.
func (s *jsonScan) decodeStr(raw []byte, col int, buf *[]byte) ([]byte, error) {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		if !utf8.Valid(inner) {
			return nil, s.r.errorf(col, "JSON string is not valid UTF-8")
		}
		return inner, nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, s.r.errorf(col, "invalid JSON string: %v", err)
	}
	*buf = append((*buf)[:0], v...)
	return *buf, nil
}

// scanJSONL parses one line: it returns whether it has an id and how many
// votes it holds, storing up to len(votes) of them.
func (r *VoteReader) scanJSONL(line []byte, votes []byte) (hasID bool, n int, err error) {
	s := &jsonScan{r: r, line: line}
	s.ws()
	switch {
	case s.i < len(line) && line[s.i] == '[':
		if n, err = s.votes(votes); err != nil {
			return false, 0, err
		}
	case s.i < len(line) && line[s.i] == '{':
		if hasID, n, err = s.object(votes); err != nil {
			return false, 0, err
		}
	default:
		return false, 0, s.errorf("want a JSON array of votes or an object {\"id\": ..., \"votes\": [...]} (not a CSV or JSON lines vote file?)")
	}
	s.ws()
	if s.i < len(line) {
		return false, 0, s.errorf("unexpected data after the JSON value")
	}
	return hasID, n, nil
}

func (s *jsonScan) object(votes []byte) (hasID bool, n int, err error) {
	s.i++ // {
	seenVotes := false
	r := s.r
	r.q.ID, r.q.IDNumber = nil, false
	for {
		s.ws()
		if s.i < len(s.line) && s.line[s.i] == '}' && !hasID && !seenVotes {
			return false, 0, s.errorf("empty object: want {\"id\": ..., \"votes\": [...]}")
		}
		if s.i >= len(s.line) || s.line[s.i] != '"' {
			return false, 0, s.errorf("want a key in quotes")
		}
		col := s.i + 1
		raw, err := s.str()
		if err != nil {
			return false, 0, err
		}
		key, err := s.decodeStr(raw, col, &r.scratch)
		if err != nil {
			return false, 0, err
		}
		s.ws()
		if s.i >= len(s.line) || s.line[s.i] != ':' {
			return false, 0, s.errorf("want ':' after the key")
		}
		s.i++
		s.ws()
		switch string(key) {
		case "id":
			if hasID {
				return false, 0, r.errorf(col, "duplicate key \"id\"")
			}
			hasID = true
			if err := s.id(); err != nil {
				return false, 0, err
			}
		case "votes":
			if seenVotes {
				return false, 0, r.errorf(col, "duplicate key \"votes\"")
			}
			seenVotes = true
			if s.i >= len(s.line) || s.line[s.i] != '[' {
				return false, 0, s.errorf("\"votes\" must be an array of 0/1")
			}
			if n, err = s.votes(votes); err != nil {
				return false, 0, err
			}
		default:
			return false, 0, r.errorf(col, "unknown key %s: want \"id\" and \"votes\"", show(key))
		}
		s.ws()
		if s.i < len(s.line) && s.line[s.i] == ',' {
			s.i++
			continue
		}
		if s.i < len(s.line) && s.line[s.i] == '}' {
			s.i++
			break
		}
		return false, 0, s.errorf("want ',' or '}'")
	}
	if !seenVotes {
		return false, 0, r.errorf(0, "no \"votes\" array")
	}
	return hasID, n, nil
}

// id scans the value of "id": a string or a number.
func (s *jsonScan) id() error {
	col := s.i + 1
	r := s.r
	if s.i < len(s.line) && s.line[s.i] == '"' {
		raw, err := s.str()
		if err != nil {
			return err
		}
		text, err := s.decodeStr(raw, col, &r.idBuf)
		if err != nil {
			return err
		}
		if !validID(text) {
			return r.errorf(col, "id must be text without NUL bytes or line breaks")
		}
		r.q.ID = text
		return nil
	}
	tok := s.token()
	if len(tok) == 0 || !(tok[0] == '-' || (tok[0] >= '0' && tok[0] <= '9')) || !json.Valid(tok) {
		return r.errorf(col, "id %s: must be a JSON string or number", show(tok))
	}
	s.i += len(tok)
	r.q.ID, r.q.IDNumber = tok, true
	return nil
}

// votes scans an array of 0/1 at s.i, storing up to len(dst) of them.
func (s *jsonScan) votes(dst []byte) (int, error) {
	s.i++ // [
	s.ws()
	if s.i < len(s.line) && s.line[s.i] == ']' {
		s.i++
		return 0, nil
	}
	n := 0
	for {
		s.ws()
		tok := s.token()
		if len(tok) != 1 || (tok[0] != '0' && tok[0] != '1') {
			if len(tok) == 0 && s.i < len(s.line) {
				tok = s.line[s.i : s.i+1]
			}
			return 0, s.errorf("vote %d: %s: must be 0 or 1%s", n+1, show(tok), countsHint(tok))
		}
		if n < len(dst) {
			dst[n] = tok[0] - '0'
		}
		n++
		s.i++
		s.ws()
		if s.i >= len(s.line) {
			return 0, s.errorf("array of votes is not closed on this line")
		}
		switch s.line[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return n, nil
		default:
			return 0, s.errorf("want ',' or ']' after vote %d", n)
		}
	}
}
