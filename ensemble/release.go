package ensemble

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// labelBuffer is how many bytes of labels LabelWriter collects before it
// writes them out.
const labelBuffer = 256 << 10

// LabelWriter writes released labels: "id,label" CSV with a header row,
// or JSON lines {"id": ..., "label": 0|1}. The id is the query's id column
// or, without one, its position in the vote file. Nothing else about a
// query is written. Labels are buffered; Written counts those that may
// have reached the underlying writer, i.e. have been released.
type LabelWriter struct {
	w       io.Writer
	format  Format
	buf     []byte
	head    int // bytes at the start of buf that are no label: header row, comment
	pending int // labels in buf
	written int // labels that may have reached w
	err     error
	// reserve, if set, is called before labels are handed to w with the
	// number that will then have been written; an error keeps them back.
	reserve func(labels int) error
}

// NewLabelWriter returns a writer of labels in format (FormatCSV or
// FormatJSONL) on w. Call Flush at the end.
func NewLabelWriter(w io.Writer, format Format) (*LabelWriter, error) {
	if format != FormatCSV && format != FormatJSONL {
		return nil, fmt.Errorf("label format %v: must be csv or jsonl", format)
	}
	lw := &LabelWriter{w: w, format: format, buf: make([]byte, 0, labelBuffer+256)}
	if format == FormatCSV {
		lw.buf = append(lw.buf, "id,label\n"...)
		lw.head = len(lw.buf)
	}
	return lw, nil
}

// Write writes the label of q.
func (lw *LabelWriter) Write(q *Query, label byte) error {
	if lw.err != nil {
		return lw.err
	}
	b := lw.buf
	if lw.format == FormatCSV {
		switch {
		case q.ID == nil:
			b = strconv.AppendInt(b, int64(q.Index), 10)
		case csvNeedsQuotes(q.ID):
			b = append(b, '"')
			b = append(b, bytes.ReplaceAll(q.ID, []byte{'"'}, []byte{'"', '"'})...)
			b = append(b, '"')
		default:
			b = append(b, q.ID...)
		}
		b = append(b, ',', '0'+label, '\n')
	} else {
		b = append(b, `{"id":`...)
		switch {
		case q.ID == nil:
			b = strconv.AppendInt(b, int64(q.Index), 10)
		case q.IDNumber:
			b = append(b, q.ID...)
		default:
			s, err := json.Marshal(string(q.ID))
			if err != nil {
				return err
			}
			b = append(b, s...)
		}
		b = append(b, `,"label":`...)
		b = append(b, '0'+label, '}', '\n')
	}
	lw.buf = b
	lw.pending++
	if len(b) >= labelBuffer {
		return lw.Flush()
	}
	return nil
}

// comment puts a comment line before the labels still buffered.
func (lw *LabelWriter) comment(line string) {
	lw.buf = append([]byte(line+"\n"), lw.buf...)
	lw.head += len(line) + 1
}

// Written returns the number of labels that may have reached the
// underlying writer: after a write that failed part-way, every label of
// which a byte was written counts (a label cut part-way may still be read).
// Labels still buffered when a run fails are never written.
func (lw *LabelWriter) Written() int { return lw.written }

// Flush writes the buffered labels to the underlying writer. After a
// write that fails, or writes less than it was given, Written counts the
// labels it may have delivered, and every later Write and Flush fails.
func (lw *LabelWriter) Flush() error {
	if lw.err != nil {
		return lw.err
	}
	if len(lw.buf) == 0 {
		return nil
	}
	if lw.reserve != nil && lw.pending > 0 {
		if err := lw.reserve(lw.written + lw.pending); err != nil {
			return err
		}
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

// reached returns how many of the buffered labels have a byte among the
// first n bytes of the buffer. Every label ends its line, and no id holds
// a line end (the vote reader allows none), so the labels wholly written
// are the line ends past the header; one more was cut part-way if the
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

// csvNeedsQuotes reports whether an id must be quoted in CSV output.
func csvNeedsQuotes(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if b[0] == ' ' || b[0] == '\t' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t' {
		return true
	}
	return bytes.ContainsAny(b, "\",\r\n")
}

// ReleaseResult counts the queries of a Release.
type ReleaseResult struct {
	// Answered is the number of labels passed to the LabelWriter (after an
	// error, its Written says how many of them were released).
	Answered int
	// Unanswered is the number of queries after the limit, which were read
	// and checked but not answered.
	Unanswered int
}

// progressEvery is how many queries pass between calls of the progress
// function and checks of the context.
const progressEvery = 1 << 16

// NotForRelease is the comment line Release writes first into the labels
// of a release drawn from a seeded Source: CSV and JSON-lines readers that
// skip '#' comments (e.g. pandas' comment="#") skip it, and strict readers
// refuse the file, which is the point.
const NotForRelease = "# NOT FOR RELEASE: drawn from a seeded generator; anyone who knows the seed can remove the noise"

// ErrSeededRelease is returned by Release when src is seeded and the
// caller has not declared the run an experiment.
var ErrSeededRelease = errors.New("release: a seeded Source makes the noise reproducible: set ReleaseOptions.Experiment to use one, and do not publish the labels")

// ReleaseOptions tune a Release.
type ReleaseOptions struct {
	// Progress, if set, is called now and then with the number of queries
	// read and of bytes consumed.
	Progress func(queries int, bytes int64)
	// Experiment allows a seeded Source. Its labels are reproducible by
	// anyone who knows the seed, so they are not private: Release marks
	// them with the NotForRelease line.
	Experiment bool
	// Reserve, if set, is called before any labels leave for out's writer,
	// with the number that will then have been written in all: the place
	// to record their privacy cost first (write-ahead, e.g. a ledger). An
	// error stops the release before those labels are written.
	Reserve func(labels int) error
}

// Release answers the queries of in with agg, drawing from src, and writes
// the labels to out, which it flushes. It answers at most limit queries
// (no limit when limit < 0), e.g. the number a privacy budget allows
// (accountant.MaxSteps); later queries are read and checked, so that a
// malformed file is rejected as a whole, and counted as unanswered.
// A seeded src needs opts.Experiment (else ErrSeededRelease, before any
// label is drawn). When in has a metadata header, agg's guarantee must be
// in the header's relation and assume its teachers' (ε, Δ) (see
// ReleaseTeachers), else a *TeachersError before any label. On cancellation of ctx it stops within 65,536 queries;
// labels still buffered in out are then never written, and out.Written
// counts those that were.
func Release(ctx context.Context, in *VoteReader, agg Aggregator, src *Source, out *LabelWriter, limit int, opts ReleaseOptions) (ReleaseResult, error) {
	var res ReleaseResult
	if in.K() != agg.K() {
		return res, fmt.Errorf("release: the vote file has K = %d votes per row, the %s aggregator K = %d", in.K(), agg.Name(), agg.K())
	}
	if err := checkHeader(in.Meta(), agg); err != nil {
		return res, fmt.Errorf("release: %w", err)
	}
	if _, seeded := src.Seeded(); seeded {
		if !opts.Experiment {
			return res, ErrSeededRelease
		}
		out.comment(NotForRelease)
	}
	out.reserve = opts.Reserve
	for n := 1; in.Next(); n++ {
		q := in.Query()
		if limit < 0 || res.Answered < limit {
			label, err := agg.Aggregate(q.Votes, src)
			if err != nil {
				return res, fmt.Errorf("query %d: %w", q.Index, err)
			}
			if err := out.Write(q, label); err != nil {
				return res, fmt.Errorf("write label %d: %w", q.Index, err)
			}
			res.Answered++
		} else {
			res.Unanswered++
		}
		if n%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			if opts.Progress != nil {
				opts.Progress(n, in.BytesRead())
			}
		}
	}
	if err := in.Err(); err != nil {
		return res, err
	}
	// A cancellation during the last reads (e.g. while waiting on a pipe)
	// still stops the release before its last labels are written.
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := out.Flush(); err != nil {
		return res, fmt.Errorf("write labels: %w", err)
	}
	if opts.Progress != nil {
		opts.Progress(res.Answered+res.Unanswered, in.BytesRead())
	}
	return res, nil
}

// appendID appends query q's id to a CSV row: ids[q], or q+1 when ids is
// nil. An id that would need quoting is refused, since the readers take
// the first field as it stands.
func appendID(b []byte, ids []string, q int) ([]byte, error) {
	if ids == nil {
		return strconv.AppendInt(b, int64(q+1), 10), nil
	}
	if csvNeedsQuotes([]byte(ids[q])) {
		return b, fmt.Errorf("id %q needs quoting", ids[q])
	}
	return append(b, ids[q]...), nil
}

// WriteVotes writes a CSV vote file that NewVoteReader reads: the
// metadata header meta (none when meta is nil: such a file needs the
// teachers' guarantee stated at every release), a header row
// "id,t1,...,tK", then per query its id (its index from 1 when ids is nil)
// and its K votes, each 0 or 1.
func WriteVotes(w io.Writer, meta *VoteMeta, ids []string, votes [][]byte) error {
	if len(votes) == 0 {
		return fmt.Errorf("write votes: no queries")
	}
	k := len(votes[0])
	if ids != nil && len(ids) != len(votes) {
		return fmt.Errorf("write votes: %d ids for %d queries", len(ids), len(votes))
	}
	var b []byte
	if meta != nil {
		if meta.K != k || meta.Classes != 2 || meta.Layout != LayoutVotes {
			return fmt.Errorf("write votes: the header states K = %d, %d classes, layout %v; the votes are of K = %d teachers, 0 or 1", meta.K, meta.Classes, meta.Layout, k)
		}
		var err error
		if b, err = meta.AppendHeader(b, FormatCSV); err != nil {
			return fmt.Errorf("write votes: %w", err)
		}
	}
	b = append(b, "id"...)
	for t := 1; t <= k; t++ {
		b = append(b, ",t"...)
		b = strconv.AppendInt(b, int64(t), 10)
	}
	b = append(b, '\n')
	for q, v := range votes {
		if _, err := votesFor(k, v); err != nil {
			return fmt.Errorf("write votes, query %d: %w", q+1, err)
		}
		var err error
		if b, err = appendID(b, ids, q); err != nil {
			return fmt.Errorf("write votes: %w", err)
		}
		for _, x := range v {
			b = append(b, ',', '0'+x)
		}
		b = append(b, '\n')
		if len(b) >= labelBuffer {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	_, err := w.Write(b)
	return err
}
