package votefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/darrm/darrm/internal/peek"
)

// detectRows bounds the data rows detectLayout looks at.
const detectRows = 16

// detectLayout returns how the file's rows hold the teachers' answers
// when the caller was not told: the metadata header's layout, if the file
// has one; else LayoutCounts if its first data rows are evidently vote
// counts, and LayoutVotes otherwise (0/1 votes, which the vote reader
// reads and checks). opts.Header and opts.ID are the file's header row
// and id column as declared (auto: as the readers detect them), opts.K
// the number of teachers if known (0: not). It looks at the first data
// row, and only when that row is not 0/1 votes at the next ones, up to
// detectRows, waiting for them.
//
// The rows are counts when the first data row, after its id, is not
// 0/1 votes (of K votes, for a K known), and every row looked at, two at
// least, holds the same number C >= 2 of non-negative integers with the
// same sum (for a K known, sums in [1, K]: abstaining teachers), C counts
// summing to K, and none of them is all 0s and 1s. One row is no evidence
// (its sum is equal to itself), and a row of 0/1 votes after one that is
// not says the first has a typo: read as votes, the vote reader names the
// value. JSON lines rows that say
// "counts" are counts. A first row of 0s and 1s (K of them, for a K
// known) is read as votes, however its values sum: a counts file whose
// first row is all 0 and 1 must say what it is (a metadata header, the
// caller's flag, or a K that tells). When
// the rows read both ways, a number (2 or more) followed by 0/1 votes
// in every row and rows of equal sums, the file is ambiguous: a
// format error says so, and the caller must say which (an id column, or
// counts), rather than have darrm guess. docs/aggregate.md, "Vote counts
// without a flag", states the rule.
func (f *voteFile) detectLayout(opts readOptions) (Layout, error) {
	if m := f.vr.meta; m != nil {
		return m.Layout, nil
	}
	d := detector{name: f.vr.name, opts: opts, sp: &voteReader{name: f.vr.name}}
	first := f.first
	if f.vr.format == FormatJSONL {
		return d.jsonl(f, first)
	}
	return d.csv(f, first)
}

// detector holds what detectLayout has learnt of a file.
type detector struct {
	name string
	opts readOptions
	sp   *voteReader // a CSV splitter
}

// csv decides for a CSV file whose first line is first.
func (d *detector) csv(f *voteFile, first []byte) (Layout, error) {
	fs, err := d.fields(first)
	if err != nil {
		return LayoutVotes, nil // the reader reports it
	}
	skip := 0 // lines of the file after first that are not data rows
	namedID := false
	if d.header(fs) {
		namedID = len(fs) > 0 && bytes.EqualFold(fs[0], []byte("id")) || d.opts.ID != absent && d.indexHeader(fs)
		lines := peek.Lines(f.vr.br, 1)
		if len(lines) == 0 {
			return LayoutVotes, nil
		}
		if fs, err = d.fields(lines[0]); err != nil {
			return LayoutVotes, nil
		}
		skip = 1
	}
	id := d.opts.ID
	if namedID {
		id = present
	}
	// The id readings the first row allows: a field that is no number is
	// an id; a number may be one, unless the id column was ruled out.
	withID := id == present || id == autoDetect && len(fs) >= 2 && !isCount(fs[0])
	withoutID := id == absent || id == autoDetect && isCount(fs[0])
	if withoutID && d.votes(fs) || withID && d.votes(fs[1:]) {
		return LayoutVotes, nil
	}
	rows := [][][]byte{fs}
	lines := peek.Lines(f.vr.br, skip+detectRows)
	for _, line := range lines[min(skip, len(lines)):] {
		if line[0] == '#' {
			break
		}
		fs, err := d.fields(line)
		if err != nil {
			break
		}
		rows = append(rows, fs)
	}
	off := 0
	if withID {
		off = 1
	}
	counts := d.counts(rows, off)
	// The id and 0/1 votes reading of a number followed by 0/1 votes.
	idVotes := id == autoDetect && withoutID && len(rows[0])%2 == 0 && allRows(rows, func(fs [][]byte) bool {
		return len(fs) == len(rows[0]) && d.votes(fs[1:])
	})
	switch {
	case counts && idVotes:
		return LayoutVotes, adviceError(d.name, advise("its first rows read both as an id followed by 0/1 votes and as vote counts (one column per class, every row with the same total): say which, by declaring the id column (%v) for votes, or the layout (%v) for counts", Hint{optID, "yes"}, Hint{optLayout, "counts"}))
	case counts && d.evident(rows, off):
		return LayoutCounts, nil
	}
	return LayoutVotes, nil
}

// jsonl decides for a JSON lines file whose first line is first.
func (d *detector) jsonl(f *voteFile, first []byte) (Layout, error) {
	vals, said, ok := jsonRow(first)
	switch {
	case !ok:
		return LayoutVotes, nil // the reader reports it
	case said:
		return LayoutCounts, nil
	case d.votes(vals):
		return LayoutVotes, nil
	}
	rows := [][][]byte{vals}
	for _, line := range peek.Lines(f.vr.br, detectRows) {
		vals, said, ok := jsonRow(line)
		if !ok || said {
			break
		}
		rows = append(rows, vals)
	}
	if d.counts(rows, 0) && d.evident(rows, 0) {
		return LayoutCounts, nil
	}
	return LayoutVotes, nil
}

// evident reports whether rows of counts' shape (detector.counts) are
// evidence of counts rather than of 0/1 votes with a typo: two rows at
// least, none of them 0/1 votes after its off id columns.
func (d *detector) evident(rows [][][]byte, off int) bool {
	return len(rows) >= 2 && !slices.ContainsFunc(rows, func(fs [][]byte) bool { return d.votes(fs[off:]) })
}

// header reports whether the first line, of fields fs, is a CSV header
// row, as the readers decide: unless declared, one that is not all
// numbers, after an id, or pandas' header of a table with an index
// (indexHeader).
func (d *detector) header(fs [][]byte) bool {
	switch d.opts.Header {
	case present:
		return true
	case absent:
		return false
	}
	idRow := len(fs) >= 2 && d.opts.ID != absent && allOf(fs[1:], isNumber)
	return !allOf(fs, isNumber) && !idRow || d.opts.ID != absent && d.indexHeader(fs)
}

// indexHeader is indexHeader of a row's fields.
func (d *detector) indexHeader(fs [][]byte) bool {
	return indexHeader(len(fs), func(i int) []byte { return fs[i] })
}

// votes reports whether fs are 0/1 votes, as many as K when K is known.
func (d *detector) votes(fs [][]byte) bool {
	return len(fs) > 0 && (d.opts.K == 0 || len(fs) == d.opts.K) && allOf(fs, func(b []byte) bool {
		return len(b) == 1 && (b[0] == '0' || b[0] == '1')
	})
}

// counts reports whether every row, after off id columns, holds the same
// number C >= 2 of counts with the same sum >= 1 (when K is known, sums
// in [1, K]: the teachers that abstained are missing).
func (d *detector) counts(rows [][][]byte, off int) bool {
	width, sum := len(rows[0]), -1
	return width-off >= 2 && allRows(rows, func(fs [][]byte) bool {
		if len(fs) != width || !allOf(fs[off:], isCount) {
			return false
		}
		s := 0
		for _, b := range fs[off:] {
			n, _ := wholeNumber(b)
			s += n
		}
		if d.opts.K > 0 {
			// A K known lets a row fall short of it: teachers abstaining.
			return s >= 1 && s <= d.opts.K
		}
		if sum < 0 {
			sum = s
		}
		return s == sum && s >= 1
	})
}

// fields splits a CSV line into its fields' text.
func (d *detector) fields(line []byte) ([][]byte, error) {
	fs, err := d.sp.split(line)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(fs))
	for i, f := range fs {
		out[i] = append([]byte(nil), f.b...)
	}
	return out, nil
}

// jsonRow reads a JSON lines row: its values as text, whether its object
// says "counts", and whether it is a row at all.
func jsonRow(line []byte) (vals [][]byte, counts, ok bool) {
	var raw []json.RawMessage
	if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '{' {
		var obj map[string]json.RawMessage
		if json.Unmarshal(t, &obj) != nil {
			return nil, false, false
		}
		v, isVotes := obj["votes"]
		_, isCounts := obj["counts"]
		if isCounts && !isVotes {
			return nil, true, true
		}
		line = v
	}
	if json.Unmarshal(line, &raw) != nil {
		return nil, false, false
	}
	for _, r := range raw {
		vals = append(vals, bytes.TrimSpace(r))
	}
	return vals, false, true
}

func isCount(b []byte) bool {
	_, ok := wholeNumber(b)
	return ok
}

// isNumber reports whether b is a number, as the vote reader's header
// detection takes one (allNumbers).
func isNumber(b []byte) bool {
	_, err := strconv.ParseFloat(string(b), 64)
	return err == nil
}

// countsHint is what an error on a value b that is no vote adds when b is
// a whole number above 1: the file may hold counts, or class indices; or
// when b is -1, how class indices mark a teacher that did not vote.
func countsHint(b []byte) advice {
	if string(b) == "-1" {
		return advise(" (-1 is how class labels mark a teacher that did not vote: if the rows hold class labels, give %v)", Hint{optClasses, "C"})
	}
	if n, ok := number(b); !ok || n < 2 {
		return advice{}
	}
	return advise(" (if the rows are vote counts, one column per class, read the file as counts: %v; class indices of more classes: %v)", Hint{optLayout, "counts"}, Hint{optClasses, "C"})
}

// voteShown is how an error says a 0/1 vote b that is neither: quoted,
// unless it is a number above 1 (classShown).
func voteShown(b []byte) string {
	if n, ok := number(b); ok && n >= 2 {
		return classShown(n, 2)
	}
	return show(b)
}

// classShown is how an error says a whole number n of at most 9 digits
// where a class below classes must be: not quoted when it is at or above
// classes, since it is then a count of a file of vote counts read as 0/1
// votes (classes = 2), or a teacher's vote under a number of classes
// mis-stated, whose value (with its place) would say how a private
// query's teachers voted.
func classShown(n, classes int) string {
	switch {
	case n < classes || n > maxCount:
		return strconv.Itoa(n)
	case classes == 2:
		return "above 1 (not quoted: a vote file's counts are private)"
	}
	return fmt.Sprintf("%d or above (not quoted: a teacher's vote is private)", classes)
}

// rowHint is countsHint for a row of fields: the hint of its first value
// above 1.
func rowHint(fs []csvField) advice {
	for _, f := range fs {
		if h := countsHint(f.b); h.text != "" {
			return h
		}
	}
	return advice{}
}

func allOf(fs [][]byte, ok func([]byte) bool) bool {
	for _, f := range fs {
		if !ok(f) {
			return false
		}
	}
	return true
}

func allRows(rows [][][]byte, ok func([][]byte) bool) bool {
	for _, r := range rows {
		if !ok(r) {
			return false
		}
	}
	return true
}
