package ensemble

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/plural"
)

// A Ledger keeps the privacy that releases spend; ledger.Ledger is one.
type Ledger interface {
	// Reserve records, before they leave, that labels will then have been
	// released by this run in all; an error keeps them back.
	Reserve(labels int) error
	// Settle records how many labels this run released in all, once it
	// has ended.
	Settle(labels int) error
}

// LabelSink is where ReleaseTo's labels go, and what keeps their cost.
type LabelSink struct {
	// Path is the label file. A file is written atomically: its labels
	// leave together when it is renamed into place, and none leave if the
	// release fails. A symbolic link is followed to the file it names. A
	// device or a FIFO is written through: labels leave as they are
	// written, as on Stdout. "" or "-" means Stdout.
	Path   string
	Stdout io.Writer
	// Format is FormatCSV or FormatJSONL.
	Format Format
	// Ledger, if set, records the labels' privacy cost before they leave
	// (ReleaseOptions.Reserve) and settles the count once they have.
	Ledger Ledger
}

// ToStdout reports whether the labels go to Stdout rather than to a file.
func (s LabelSink) ToStdout() bool { return s.Path == "" || s.Path == "-" }

// ReleaseTo is Release into the label file or stream of sink, whose
// ledger, if any, is charged before labels leave and settled after: with
// the labels answered on success, with none when a file is not written
// (it is removed), and with those that may have reached the stream (or
// the device or FIFO written through) when a release to it fails, whose
// error then says how many that is and what they cost. A write that
// stops part-way counts every label of which a byte was written.
func ReleaseTo(ctx context.Context, in *VoteReader, agg Aggregator, src *Source, sink LabelSink, limit int, opts ReleaseOptions) (ReleaseResult, error) {
	if sink.Ledger != nil {
		opts.Reserve = sink.Ledger.Reserve
	}
	var res ReleaseResult
	var lw *LabelWriter
	release := func(w io.Writer) error {
		var err error
		if lw, err = NewLabelWriter(w, sink.Format); err != nil {
			return err
		}
		res, err = Release(ctx, in, agg, src, lw, limit, opts)
		if err == nil && sink.Ledger != nil {
			// Into a file, the labels leave when it is renamed, after this.
			err = sink.Ledger.Settle(res.Answered)
		}
		return err
	}
	settle := func(err error, labels int) error {
		if sink.Ledger != nil {
			err = errors.Join(err, sink.Ledger.Settle(labels))
		}
		return err
	}
	w, name := sink.Stdout, "standard output"
	if !sink.ToStdout() {
		out, err := atomicfile.Create(ctx, sink.Path, 0o644)
		if err != nil {
			return res, settle(err, 0)
		}
		if out.Atomic() {
			if err = release(out); err != nil {
				out.Abort()
			} else {
				err = out.Commit()
			}
			if err != nil {
				err = settle(err, 0) // the file was removed: nothing left
			}
			return res, err
		}
		defer out.Abort()
		w, name = out, sink.Path
		err = release(w)
		if err == nil {
			return res, out.Commit()
		}
		return res, streamFailed(err, lw, agg, name, settle)
	}
	err := release(w)
	if err == nil {
		return res, nil
	}
	return res, streamFailed(err, lw, agg, name, settle)
}

// streamFailed completes the error of a release into a stream (standard
// output, a device, a FIFO) that failed: the labels that may have left
// are counted in it and settled.
func streamFailed(err error, lw *LabelWriter, agg Aggregator, name string, settle func(error, int) error) error {
	left := 0
	if lw != nil {
		left = lw.Written()
	}
	if left > 0 {
		err = fmt.Errorf("%w (%s may have reached %s, counting any label cut part-way: their privacy cost is that of %s at %v)", err,
			plural.Of(left, "label", "labels"), name, plural.Of(left, "query", "queries"), agg.Privacy().Guarantee)
	}
	return settle(err, left)
}
