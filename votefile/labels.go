package votefile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"codeberg.org/sbinet/npyio/npy"
	"github.com/darrm/darrm/internal/param"
)

// labelBuffer is how many bytes of labels a LabelWriter collects before
// it writes them out.
const labelBuffer = 256 << 10

// LabelWriter writes the rows of a label file: "id,label" CSV with a
// header row, or JSON lines {"id": ..., "label": <class>}; with the
// answered column (multi-class votes), "id,label,answered" with an empty
// label for a query not answered, or {"id": ..., "label": <class> or null,
// "answered": true|false}; with the units column (Units), ",units" and
// "units": <n> after them. The id is the query's id column or, without
// one, its position in the vote file. Nothing else about a query is
// written. Rows are buffered; Written counts those that may have reached
// the underlying writer, i.e. have been released.
type LabelWriter struct {
	w        io.Writer
	format   Format
	answered bool
	buf      []byte
	head     int // bytes at the start of buf that are no label: comments, header row
	pending  int // labels in buf
	written  int // labels that may have reached w
	err      error
	// npy holds the labels of a NumPy label file, which is written
	// whole, at the one Flush: its header states the number of labels.
	npy []int64
	// Reserve, if set, is called before labels are handed to the
	// underlying writer with the number that will then have been written;
	// an error keeps them back (a privacy ledger records them first).
	Reserve func(labels int) error
	// Header, if set, is called once, after the first Reserve (if any)
	// and before the file's first bytes are handed to the underlying
	// writer, for its last comment line: the metadata header
	// (LabelMeta.HeaderLine), which can then state the ledger's line that
	// reserved the labels (LabelMeta.LedgerLines). A NumPy label file has
	// no comment lines.
	Header func() string
	// Units, if set before the first label is written, adds the units
	// column (LabelMeta.LedgerUnits): each row states what it returns
	// when the row is written, a whole number >= 0 that never decreases;
	// an error fails the write. A NumPy label file has no room for it.
	Units func() (int, error)
	// comments is the end of the comment lines in buf, until the first
	// flush: where Header's line goes.
	comments int
	// started is set once the CSV header row, whose columns Units
	// decides, is in buf; units once the rows have the units column, and
	// lastUnits is the last row's.
	started   bool
	units     bool
	lastUnits int
}

// NewLabelWriter returns a writer of labels in format (FormatCSV or
// FormatJSONL) on w, with the answered column or not, that writes the
// comment lines first (such as LabelMeta.HeaderLine).
//
// FormatNPY writes the labels alone, as a 1-D int64 NumPy array in
// the queries' order, -1 for a query not answered: a NumPy file has no
// room for the ids, the comment lines or the answered column. It holds
// the labels in memory (8 bytes a query) and writes them at Flush, which
// for it is the last call.
func NewLabelWriter(w io.Writer, format Format, answered bool, comments ...string) (*LabelWriter, error) {
	if format == FormatNPY {
		return &LabelWriter{w: w, format: format, npy: []int64{}}, nil
	}
	if format != FormatCSV && format != FormatJSONL {
		return nil, fmt.Errorf("label format %v: must be csv, jsonl or npy", format)
	}
	lw := &LabelWriter{w: w, format: format, answered: answered, buf: make([]byte, 0, labelBuffer+256)}
	for _, c := range comments {
		lw.buf = append(append(lw.buf, c...), '\n')
	}
	lw.comments, lw.head = len(lw.buf), len(lw.buf)
	return lw, nil
}

// start writes the CSV header row, once, before the first row or flush:
// the columns are known then (Units is set or not).
func (lw *LabelWriter) start() {
	if lw.started {
		return
	}
	lw.started, lw.units = true, lw.Units != nil
	if lw.format == FormatCSV {
		lw.buf = append(lw.buf, "id,label"...)
		if lw.answered {
			lw.buf = append(lw.buf, ",answered"...)
		}
		if lw.units {
			lw.buf = append(lw.buf, ",units"...)
		}
		lw.buf = append(lw.buf, '\n')
	}
	lw.head = len(lw.buf)
}

// WriteLabel writes the row of q: its label, or none when it was not
// answered.
func (lw *LabelWriter) WriteLabel(q *Query, label int, answered bool) error {
	if lw.err != nil {
		return lw.err
	}
	if lw.npy != nil {
		if !answered {
			label = -1
		}
		lw.npy = append(lw.npy, int64(label))
		lw.pending++
		return nil
	}
	lw.start()
	units := 0
	if lw.units {
		var err error
		if units, err = lw.Units(); err == nil && units < lw.lastUnits {
			err = fmt.Errorf("units %d after %d: the units column never decreases", units, lw.lastUnits)
		}
		if err != nil {
			return err
		}
		lw.lastUnits = units
	}
	b := lw.buf
	if lw.format == FormatJSONL {
		b = append(b, `{"id":`...)
	}
	b = appendID(b, q, lw.format)
	if lw.format == FormatCSV {
		b = append(b, ',')
		if answered {
			b = appendLabel(b, label)
		}
		if lw.answered {
			b = append(b, ",0"...)
			if answered {
				b[len(b)-1] = '1'
			}
		}
		if lw.units {
			b = strconv.AppendInt(append(b, ','), int64(units), 10)
		}
		b = append(b, '\n')
	} else {
		b = append(b, `,"label":`...)
		if answered {
			b = appendLabel(b, label)
		} else {
			b = append(b, "null"...)
		}
		if lw.answered {
			b = strconv.AppendBool(append(b, `,"answered":`...), answered)
		}
		if lw.units {
			b = strconv.AppendInt(append(b, `,"units":`...), int64(units), 10)
		}
		b = append(b, "}\n"...)
	}
	lw.buf = b
	lw.pending++
	if len(b) >= labelBuffer {
		return lw.Flush()
	}
	return nil
}

// appendLabel appends a class, in one byte for the classes below 10
// (every two-class label): the label writer's hot path.
func appendLabel(b []byte, label int) []byte {
	if label >= 0 && label < 10 {
		return append(b, byte('0'+label))
	}
	return strconv.AppendInt(b, int64(label), 10)
}

// Flush writes the buffered labels to the underlying writer. After a
// write that fails, or writes less than it was given, Written counts the
// labels it may have delivered, and every later write and flush fails.
func (lw *LabelWriter) Flush() error {
	if lw.err != nil {
		return lw.err
	}
	if lw.npy != nil {
		return lw.flushNPY()
	}
	lw.start()
	if len(lw.buf) == 0 && lw.Header == nil {
		return nil
	}
	if lw.Reserve != nil && lw.pending > 0 {
		if err := lw.Reserve(lw.written + lw.pending); err != nil {
			return err
		}
	}
	if lw.Header != nil {
		line := lw.Header() + "\n"
		lw.buf = append(lw.buf[:lw.comments], append([]byte(line), lw.buf[lw.comments:]...)...)
		lw.head += len(line)
		lw.Header = nil
	}
	n, err := lw.w.Write(lw.buf)
	if err == nil && n < len(lw.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		lw.written += lw.reached(n)
		lw.err = err
		return err
	}
	lw.written += lw.pending
	lw.pending, lw.head = 0, 0
	lw.buf = lw.buf[:0]
	return nil
}

// flushNPY writes the NumPy label file: every label, once.
func (lw *LabelWriter) flushNPY() error {
	if lw.Reserve != nil {
		if err := lw.Reserve(lw.pending); err != nil {
			return err
		}
	}
	cw := &countingWriter{w: lw.w}
	err := npy.Write(cw, lw.npy)
	if err != nil {
		if cw.n > 0 {
			// Which labels a reader of a cut NumPy file can recover is
			// not known here: every one is counted as left.
			lw.written = lw.pending
		}
		lw.err = err
		return err
	}
	lw.written, lw.pending = lw.pending, 0
	lw.err = fmt.Errorf("label writer: a NumPy label file is written once")
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Written returns the number of labels that may have reached the
// underlying writer: every label of a successful Flush, and after a failed
// one, every label of which a byte was written.
func (lw *LabelWriter) Written() int { return lw.written }

// reached returns how many of the buffered labels have a byte among the
// first n bytes of the buffer. Every label ends its line, and no id holds
// a line end (the vote reader allows none), so the labels wholly written
// are the line ends past the head; one more was cut part-way if the
// bytes stop inside a line. An id with a line end would only make the
// count larger: never fewer labels are counted than left.
func (lw *LabelWriter) reached(n int) int {
	n = min(max(n, 0), len(lw.buf))
	if n <= lw.head {
		return 0
	}
	k := bytes.Count(lw.buf[lw.head:n], []byte{'\n'})
	if lw.buf[n-1] != '\n' {
		k++
	}
	return min(k, lw.pending)
}

// labelRow is one row of a label file.
type labelRow struct {
	Index int // position among the rows, from 1
	Line  int // line of the file
	// ID names the query: its id, or its position from 1 (Query.Key).
	ID string
	// Label is the class released, -1 when the query was not answered.
	Label    int
	Answered bool
	// Units is the units column's (LabelMeta.LedgerUnits): the units of
	// the ledger's charge that the run's draws had taken when the row was
	// written; 0 in a file without it.
	Units int
}

// LabelReader streams a label file that ensemble.ReleaseTo wrote, in constant
// memory: its metadata header (Meta; older files have none), then its
// rows. Comment lines before the labels (the NOT FOR RELEASE mark) are
// skipped. Errors are format errors: file, line, column and rule.
type LabelReader struct {
	lr       *voteReader // line reading and CSV splitting
	meta     *LabelMeta
	metaLine int  // the header's line
	answered bool // the rows have the answered column
	units    bool // and the units column
	row      labelRow
	rows
	npy *npyArray // the labels of a NumPy label file
}

// NewLabelReader reads the start of a label file (its comment lines, its
// header and its first row). name is used in errors.
func NewLabelReader(r io.Reader, name string) (*LabelReader, error) {
	lr := &voteReader{name: name, br: bufio.NewReaderSize(r, readBuffer)}
	out := &LabelReader{lr: lr}
	if start, _ := lr.br.Peek(len(npyMagic)); isNPY(start) {
		return out.openNPY()
	}
	var line []byte
	for {
		l, err := lr.nextNonBlank()
		if err == io.EOF {
			return nil, &formatError{File: name, Line: lr.line, Msg: "no labels"}
		} else if err != nil {
			return nil, err
		}
		c := bytes.TrimLeft(l, " \t")
		if c[0] != '#' {
			line = l
			break
		}
		if obj := bytes.TrimLeft(c[1:], " \t"); len(obj) > 0 && obj[0] == '{' {
			if out.meta != nil {
				return nil, lr.errorf(0, "a second metadata header")
			}
			if out.meta, err = parseLabelMeta(obj); err != nil {
				return nil, lr.errorf(0, "%v", err)
			}
			out.metaLine = lr.line
		}
	}
	if c := bytes.TrimLeft(line, " \t"); c[0] == '{' {
		lr.format = FormatJSONL
		var keys map[string]json.RawMessage
		json.Unmarshal(line, &keys) // a line that is no object fails in parse
		_, out.answered = keys["answered"]
		_, out.units = keys["units"]
	} else {
		lr.format = FormatCSV
		fs, err := lr.split(line)
		if err != nil {
			return nil, err
		}
		names := make([]string, len(fs))
		for i, f := range fs {
			names[i] = string(f.b)
		}
		switch {
		case slices.Equal(names, []string{"id", "label"}):
		case slices.Equal(names, []string{"id", "label", "answered"}):
			out.answered = true
		case slices.Equal(names, []string{"id", "label", "units"}):
			out.units = true
		case slices.Equal(names, []string{"id", "label", "answered", "units"}):
			out.answered, out.units = true, true
		default:
			return nil, lr.errorf(0, "header row %s: want id,label or id,label,answered (and a units column last, for a release charged per draw to a ledger)", param.Quote(string(line)))
		}
		if line, err = lr.nextNonBlank(); err == io.EOF {
			return nil, lr.errorf(0, "no labels after the header row")
		} else if err != nil {
			return nil, err
		}
	}
	switch stated := out.meta != nil && out.meta.LedgerUnits; {
	case out.units && !stated:
		return nil, lr.errorf(0, "a units column, which goes with a metadata header that says the rows state units (ledger_units), and only with one")
	case stated && !out.units:
		return nil, lr.errorf(0, "no units column, which the metadata header says the rows have (ledger_units)")
	}
	if err := out.parse(line); err != nil {
		return nil, err
	}
	out.row.Index, out.pending = 1, true
	return out, nil
}

// Meta returns the file's metadata header, or nil if it has none.
func (r *LabelReader) Meta() *LabelMeta { return r.meta }

// Errorf returns a format error at the current row: for a caller that
// finds the row at fault, as one whose query is not the one it names.
func (r *LabelReader) Errorf(format string, args ...any) *formatError {
	return &formatError{File: r.lr.name, Line: r.row.Line, Msg: fmt.Sprintf(format, args...)}
}

// HeaderErrorf returns a format error at the line of the file's metadata
// header: what a caller finds wrong with it.
func (r *LabelReader) HeaderErrorf(format string, args ...any) *formatError {
	return &formatError{File: r.lr.name, Line: r.metaLine, Msg: "metadata header: " + fmt.Sprintf(format, args...)}
}

// Row returns the current row.
func (r *LabelReader) Row() *labelRow { return &r.row }

// Err returns the error that stopped Next, or nil at the end of the file.
func (r *LabelReader) Err() error { return r.err }

// Next advances to the next row; false at the end or on an error.
func (r *LabelReader) Next() bool {
	if r.npy != nil {
		return r.rows.next(r.npy, r.parseRow)
	}
	return r.rows.next(r.lr, r.parseRow)
}

// openNPY reads the start of a NumPy label file (LabelWriter's
// FormatNPY): a 1-D integer array, a query's class or -1 for a query not
// answered, in the queries' order; no header, no ids (a row's ID is its
// position from 1, as a vote file's without an id column).
func (r *LabelReader) openNPY() (*LabelReader, error) {
	a, err := openNPY(r.lr.br, r.lr.name, 1)
	if err != nil {
		return nil, err
	}
	r.lr.format, r.lr.array, a.vr = FormatNPY, true, r.lr
	if err := a.settle(false); err != nil {
		return nil, err
	}
	r.npy, r.answered = a, true
	line, err := a.nextNonBlank()
	if err != nil {
		return nil, err
	}
	if err := r.parse(line); err != nil {
		return nil, err
	}
	r.row.Index, r.pending = 1, true
	return r, nil
}

// parseNPY reads the label of the query a NumPy label file's line holds.
func (r *LabelReader) parseNPY(line []byte) error {
	a := r.npy
	n, whole, text := a.value(line, 0)
	if !whole || n < -1 || n > maxCount {
		if text == "" {
			text = strconv.FormatInt(n, 10)
		}
		return a.errorf("element %s = %s (query %d): a label must be a class, a whole number in [0, 999999999], or -1 for a query not answered", a.index(a.q-1, 0), text, a.q)
	}
	r.row = labelRow{Index: r.row.Index, Line: a.q, ID: strconv.Itoa(a.q), Label: int(n), Answered: n >= 0}
	return nil
}

// parseRow reads a row after the first.
func (r *LabelReader) parseRow(line []byte) error {
	if err := r.parse(line); err != nil {
		return err
	}
	r.row.Index++
	return nil
}

// parse reads one row into r.row.
func (r *LabelReader) parse(line []byte) error {
	if r.npy != nil {
		return r.parseNPY(line)
	}
	lr := r.lr
	row := labelRow{Index: r.row.Index, Line: lr.line, Label: -1, Answered: true}
	var label []byte
	labelled := true
	if lr.format == FormatJSONL {
		var j struct {
			ID       json.RawMessage `json:"id"`
			Label    json.RawMessage `json:"label"`
			Answered *bool           `json:"answered"`
			Units    json.RawMessage `json:"units"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil || j.ID == nil || j.Label == nil || (j.Answered != nil) != r.answered || (j.Units != nil) != r.units {
			want := `"id": ..., "label": ...`
			if r.answered {
				want += `, "answered": true|false`
			}
			if r.units {
				want += `, "units": <units>`
			}
			return lr.errorf(0, "want a JSON object {%s}, as in the first row", want)
		}
		if r.units {
			if err := row.setUnits(j.Units, r.row.Units); err != nil {
				return lr.errorf(0, "%v", err)
			}
		}
		if err := json.Unmarshal(j.ID, &row.ID); err != nil {
			row.ID = string(j.ID) // a number, as written
		}
		if r.answered {
			row.Answered = *j.Answered
		}
		label, labelled = j.Label, string(j.Label) != "null"
	} else {
		fs, err := lr.split(line)
		if err != nil {
			return err
		}
		want := 2
		if r.answered {
			want++
		}
		if r.units {
			want++
		}
		if len(fs) != want {
			return lr.errorf(0, "%d columns, want %d (as the header row)", len(fs), want)
		}
		if !validID(fs[0].b) {
			return lr.errorf(1, "id is not valid UTF-8 text without NUL bytes")
		}
		row.ID, label, labelled = string(fs[0].b), fs[1].b, len(fs[1].b) > 0
		if r.answered {
			a := string(fs[2].b)
			if a != "0" && a != "1" {
				return lr.errorf(3, "answered %s: must be 0 or 1", show(fs[2].b))
			}
			row.Answered = a == "1"
		}
		if r.units {
			if err := row.setUnits(fs[want-1].b, r.row.Units); err != nil {
				return lr.errorf(want, "%v", err)
			}
		}
	}
	if labelled != row.Answered {
		return lr.errorf(0, "a label must be given exactly when the query was answered")
	}
	if labelled {
		classes := 2
		if r.meta != nil {
			classes = r.meta.Classes
		} else if r.answered {
			classes = maxCount + 1
		}
		n, ok := number(bytes.TrimSpace(label))
		if !ok || n >= classes {
			return lr.errorf(2, "label %s: must be a class in [0, %d)", show(label), classes)
		}
		row.Label = n
	}
	r.row = row
	return nil
}

// setUnits reads a row's units, which follow the last row's, last: a
// whole number >= 0, written plainly (digits, no sign, no leading zero),
// at most the accountant's count limit (2^53), and at least last.
func (row *labelRow) setUnits(b []byte, last int) error {
	n, err := strconv.ParseInt(string(b), 10, 64)
	switch {
	case err != nil || n < 0 || n > maxUnits || strconv.FormatInt(n, 10) != string(b):
		return fmt.Errorf("units %s: must be a whole number in [0, %d], written plainly", show(b), maxUnits)
	case int(n) < last:
		return fmt.Errorf("units %d after %d: the units a run's draws had taken never decrease from one row to the next", n, last)
	}
	row.Units = int(n)
	return nil
}

// maxUnits bounds the units column: the largest count of steps the
// accountant counts (accountant.CountLimit).
const maxUnits = 1 << 53
