package votefile

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/darrm/darrm/internal/plural"
)

// The CSV layout of a vote file: fields, the first row (a header row or
// data, with an id column or without) and the rows of votes.

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

// indexHeader reports whether a first row of n fields, field(i) the
// i-th, is the header row of a table with an unnamed index column, as
// pandas' DataFrame.to_csv writes it: an empty first field, then the
// columns' names, which are not all numbers or are pandas' default
// names 0, 1, 2, ... (so that a data row with an empty id, ",1,0,1", is
// none). Its rows then start with the index: an id column.
func indexHeader(n int, field func(int) []byte) bool {
	if n < 2 || len(field(0)) != 0 {
		return false
	}
	named, numbered := false, true
	for i := 1; i < n; i++ {
		f := field(i)
		if len(f) == 0 {
			return false
		}
		if _, err := strconv.ParseFloat(string(f), 64); err != nil {
			named = true
		}
		numbered = numbered && string(f) == strconv.Itoa(i-1)
	}
	return named || numbered && n > 2
}

// csvIndexHeader is indexHeader of split fields.
func csvIndexHeader(fs []csvField) bool {
	return indexHeader(len(fs), func(i int) []byte { return fs[i].b })
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
func (r *voteReader) split(line []byte) ([]csvField, error) {
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

func (r *voteReader) firstCSV(line []byte, opts readOptions) error {
	fs, err := r.split(line)
	if err != nil {
		return err
	}
	switch opts.Header {
	case present:
		r.header = true
	case absent:
	default:
		// A row of numbers (after an id) is data, so that a bad vote on
		// the first line is reported as one.
		idRow := len(fs) >= 2 && opts.ID != absent && allNumbers(fs[1:])
		r.header = !allNumbers(fs) && !idRow || opts.ID != absent && csvIndexHeader(fs)
	}
	namedID := false
	var headerCols int
	if r.header {
		headerCols = len(fs)
		headerLine := r.line
		namedID = strings.EqualFold(string(fs[0].b), "id") || opts.ID != absent && csvIndexHeader(fs)
		if line, err = r.nextNonBlank(); err == io.EOF {
			return &formatError{File: r.name, Line: r.line, Msg: fmt.Sprintf("no data rows after the header on line %d (a first row that is not all numbers is a header)", headerLine)}
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
	case present:
		r.hasID = true
	case absent:
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
	if r.hasID && !namedID && opts.ID != present && (len(fs)-off)%2 == 0 && opts.K == 0 && numeric(fs[0].b) {
		// The first field was taken for an id because it is no vote; with
		// it the row would have an odd number of votes, and it is a number,
		// so it is more likely a mistyped vote (01, 1.0) than an id.
		return r.errorf(1, "%s is not a vote (votes are 0 or 1); read as an id, it would leave %d votes, but K must be odd", show(fs[0].b), len(fs)-off)
	}
	if err := r.settle(len(fs)-off, opts); err != nil {
		return err
	}
	return r.fill(fs)
}

// parseCSV reads one data row: a byte-level fast path for the plain form
// ([id,]0,1,...,1 without quotes or blanks), the general splitter
// otherwise, which also produces the precise error.
func (r *voteReader) parseCSV(line []byte) error {
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

func (r *voteReader) parseCSVSlow(line []byte) error {
	fs, err := r.split(line)
	if err != nil {
		return err
	}
	return r.fill(fs)
}

// fill checks a split row against the layout and stores it in r.q.
func (r *voteReader) fill(fs []csvField) error {
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
			msg := fmt.Sprintf("vote %s: must be 0 or 1", voteShown(f.b))
			if j == 0 && !r.hasID && r.forceID == autoDetect {
				msg += " (if column 1 is a query id, declare the id column)"
			}
			return r.errorf(off+j+1, "%s%s", msg, countsHint(f.b))
		}
		r.q.Votes[j] = v
	}
	r.count()
	return nil
}
