package ensemble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

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
	// Path is the label file. It is written atomically: its labels leave
	// together when it is renamed into place, and none leave if the
	// release fails. "" or "-" means Stdout, where labels leave as they
	// are written.
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
// (it is removed), and with those that reached the stream when a release
// to it fails, whose error then says how many left and what they cost.
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
	if !sink.ToStdout() {
		err := atomicfile.Write(sink.Path, 0o644, func(f *os.File) error { return release(f) })
		if err != nil && sink.Ledger != nil {
			err = errors.Join(err, sink.Ledger.Settle(0)) // the file was removed: nothing left
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
		err = fmt.Errorf("%w (%s already written to standard output: their privacy cost is that of %s at %v)", err,
			plural.Of(left, "label was", "labels were"), plural.Of(left, "query", "queries"), agg.Privacy().Guarantee)
	}
	if sink.Ledger != nil {
		err = errors.Join(err, sink.Ledger.Settle(left))
	}
	return res, err
}
