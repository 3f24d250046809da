package ensemble

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/darrm/darrm/internal/atomicfile"
)

// NewClassWriter returns a writer of multi-class labels in format
// (FormatCSV or FormatJSONL) on w: "id,label,answered" CSV with a header
// row, the label empty and answered 0 for a query the threshold step did
// not answer; or JSON lines {"id": ..., "label": <class> or null,
// "answered": true|false}. Nothing else about a query is written.
func NewClassWriter(w io.Writer, format Format) (*LabelWriter, error) {
	lw, err := NewLabelWriter(w, format)
	if err != nil {
		return nil, err
	}
	lw.buf = lw.buf[:0]
	if format == FormatCSV {
		lw.buf = append(lw.buf, "id,label,answered\n"...)
	}
	return lw, nil
}

// WriteClass writes the label of q (label < 0 with answered false when
// the query was not answered).
func (lw *LabelWriter) WriteClass(q *MultiQuery, label int, answered bool) error {
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
		b = append(b, ',')
		if answered {
			b = strconv.AppendInt(b, int64(label), 10)
			b = append(b, ",1\n"...)
		} else {
			b = append(b, ",0\n"...)
		}
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
		if answered {
			b = append(b, `,"label":`...)
			b = strconv.AppendInt(b, int64(label), 10)
			b = append(b, `,"answered":true}`+"\n"...)
		} else {
			b = append(b, `,"label":null,"answered":false}`+"\n"...)
		}
	}
	lw.buf = b
	lw.pending++
	if len(b) >= labelBuffer {
		return lw.Flush()
	}
	return nil
}

// MultiResult counts the queries of a multi-class release.
type MultiResult struct {
	ReleaseResult
	// Withheld counts the queries answered by a row of the output without
	// a label: the threshold step did not answer them. They are included
	// in Answered (their privacy cost is charged).
	Withheld int
	// Answers holds, per query released, whether it got a label: public
	// output, which PATE's realised accounting needs.
	Answers []bool
}

// ReleaseMulti answers the queries of in with agg, drawing from src, and
// writes a row per query to out (a NewClassWriter), which it flushes:
// the same contract as Release (query limit, seeded sources only for
// experiments, cancellation, the metadata header checked first: see
// MultiBinding), for multi-class votes.
func ReleaseMulti(ctx context.Context, in *MultiReader, agg MultiAggregator, src *Source, out *LabelWriter, limit int, opts ReleaseOptions) (MultiResult, error) {
	var res MultiResult
	if _, err := MultiBinding(in, agg); err != nil {
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
			label, answered, err := agg.Label(q.Counts, src)
			if err != nil {
				return res, fmt.Errorf("query %d: %w", q.Index, err)
			}
			if err := out.WriteClass(q, label, answered); err != nil {
				return res, fmt.Errorf("write label %d: %w", q.Index, err)
			}
			res.Answered++
			res.Answers = append(res.Answers, answered)
			if !answered {
				res.Withheld++
			}
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

// ReleaseMultiTo is ReleaseMulti into the label file or stream of sink,
// with its ledger charged before rows leave and settled after, as
// ReleaseTo does.
func ReleaseMultiTo(ctx context.Context, in *MultiReader, agg MultiAggregator, src *Source, sink LabelSink, limit int, opts ReleaseOptions) (MultiResult, error) {
	if sink.Ledger != nil {
		opts.Reserve = sink.Ledger.Reserve
	}
	var res MultiResult
	var lw *LabelWriter
	release := func(w io.Writer) error {
		var err error
		if lw, err = NewClassWriter(w, sink.Format); err != nil {
			return err
		}
		res, err = ReleaseMulti(ctx, in, agg, src, lw, limit, opts)
		if err == nil && sink.Ledger != nil {
			err = sink.Ledger.Settle(res.Answered)
		}
		return err
	}
	if !sink.ToStdout() {
		err := atomicfile.Write(sink.Path, 0o644, func(f *os.File) error { return release(f) })
		if err != nil && sink.Ledger != nil {
			err = errors.Join(err, sink.Ledger.Settle(0))
		}
		return res, err
	}
	err := release(sink.Stdout)
	if err == nil {
		return res, nil
	}
	left := 0
	if lw != nil {
		left = lw.Written()
	}
	if left > 0 {
		err = fmt.Errorf("%w (%d rows were already written to standard output: their privacy cost is that of %d queries at %v)", err, left, left, agg.Privacy().Guarantee)
	}
	if sink.Ledger != nil {
		err = errors.Join(err, sink.Ledger.Settle(left))
	}
	return res, err
}

// MultiBinding checks a multi-class aggregator against the votes it is to
// release from and returns what the release states of their ensemble: K
// and C must be the file's, and a metadata header must state the one-vote
// relation, the only one the multi-class mechanisms are private in (one
// record changes at most one teacher's vote): a header in the
// private-teachers relation, whose teachers may share data, is refused
// with a *TeachersError. The teachers' (ε, Δ) play no part in the
// guarantee; the binding carries the header's common bound when the
// teachers are private, and none otherwise (a ledger then compares none).
// Kind, partition and id are the header's, unstated without one. The
// one-vote relation has no teacher-level cap (Binding.Cap).
func MultiBinding(in *MultiReader, agg MultiAggregator) (Binding, error) {
	if in.K() != agg.K() || in.Classes() != agg.Classes() {
		return Binding{}, fmt.Errorf("the vote file has K = %d, C = %d, the %s aggregator K = %d, C = %d", in.K(), in.Classes(), agg.Name(), agg.K(), agg.Classes())
	}
	priv := agg.Privacy()
	b := Binding{K: agg.K(), Relation: priv.Relation}
	m := in.Meta()
	if m == nil {
		return b, nil
	}
	if m.Relation != priv.Relation {
		return Binding{}, &TeachersError{Field: "relation", Header: m.Relation.String(), Given: fmt.Sprintf("%v (the %s mechanism's)", priv.Relation, agg.Name()),
			Rule: "gnmax, confident-gnmax and lnmax are private only in the one-vote relation (one record changes at most one teacher's vote), which teachers that may share data do not meet; there is no multi-class mechanism for the private-teachers relation"}
	}
	if m.Private() {
		b.Teachers, _ = m.Common()
	}
	b.Ensemble, b.Kind, b.Partition = m.Ensemble, m.Kind, m.Partition
	return b, nil
}
