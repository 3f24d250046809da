package ensemble

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// A Ledger keeps the privacy that releases spend: a *ledger.Ledger, which
// the caller opens for a run (ledger.Open) and closes after it, after
// Prepare has built the aggregator, so that no lock is held while a gamma
// is solved (Prepared.Label). The release takes it as this interface, so
// that it links no store.
type Ledger interface {
	// Begin begins the run of a release of labels that step describes,
	// by mechanism, from the ensemble that b states, and returns how many
	// labels the ledger allows it: at most limit when limit >= 0,
	// accountant.Unlimited when nothing bounds them and limit < 0.
	Begin(ctx context.Context, mechanism provenance.MechanismName, b provenance.Binding, step accountant.Spend, limit int) (int, error)
	// Reserve records, before they leave, that labels will then have been
	// released by this run in all; an error keeps them back.
	Reserve(ctx context.Context, labels int) error
	// Settle records how many labels this run released in all, once it
	// has ended.
	Settle(ctx context.Context, labels int) error
	// Publish is the total to publish of every release charged to the
	// ledger, this run's included (accountant.Account.Publish).
	Publish() (accountant.Total, error)
	// ID is the ledger's identity, which the label file's header states
	// (votefile.LabelMeta.Ledger). Lines, Size and Head say where the
	// ledger is: its number of lines, their bytes and the hash of the
	// last, which the header states once the first labels are reserved
	// (a witness of the ledger: votefile.LabelMeta.LedgerLines).
	ID() string
	Lines() int
	Size() int64
	Head() string
}

// LabelSink is where ReleaseTo's labels go, and what keeps their cost.
type LabelSink struct {
	// Path is the label file. A file is written atomically: its labels
	// leave together when it is renamed into place, and none leave if the
	// release fails, where its temporary file has no name until then; a
	// named one counts as a stream. A symbolic link is followed to the
	// file it names. A device or a FIFO is written through: labels leave
	// as they are written, as on Stdout. "" or "-" means Stdout.
	Path string
	// Stdout receives the labels when Path is "" or "-": standard output,
	// or any writer.
	Stdout io.Writer
	// Format is FormatCSV, FormatJSONL or FormatNPY (the labels alone,
	// without the header: votefile.NewLabelWriter); FormatAuto, the zero
	// value, is the one votefile.LabelFormat chooses for Path and the
	// votes' format (CSV for votes held in memory).
	Format votefile.Format
	// Ledger, if set, records the labels' privacy cost before they leave
	// and settles the count once they have: a run begun (Ledger.Begin),
	// which Release begins.
	Ledger Ledger
}

// settle settles labels on the sink's ledger, if any, joining its error
// to err.
func (s LabelSink) settle(ctx context.Context, err error, labels int) error {
	if s.Ledger != nil {
		err = errors.Join(err, s.Ledger.Settle(ctx, labels))
	}
	return err
}

// check refuses a sink with nowhere to write to.
func (s LabelSink) check() error {
	if s.ToStdout() && s.Stdout == nil {
		return errors.New("LabelSink.Stdout is not set: labels without a Path go to Stdout, a writer")
	}
	return nil
}

// ToStdout reports whether the labels go to Stdout rather than to a file.
func (s LabelSink) ToStdout() bool { return s.Path == "" || s.Path == "-" }

// ReleaseTo answers the queries of in with agg, drawing from src, and
// writes a row per query to the label file or stream of sink: the last
// step of Release, for every mechanism and every number of classes, and
// the call for an aggregator built by hand.
//
// Before anything is drawn or written it checks agg against the votes
// (K, the classes, the relation and the teachers' (ε, Δ) of the metadata
// header, by provenance.Check, else a *provenance.TeachersError) and
// refuses a seeded src unless opts.Experiment. The label file starts
// with its metadata header (votefile.LabelMeta), after the notForRelease line of a
// seeded release; then "id,label" rows for two-class votes, or
// "id,label,answered" for multi-class votes (docs/aggregate.md).
//
// It releases at most limit queries (no limit when limit < 0), e.g. the
// number a privacy budget allows (accountant.Account.Allowed); later
// queries are read and checked, so that a malformed file is rejected as a whole, and
// counted as stopped by the budget (ReleaseResult.StoppedByBudget). On
// cancellation of ctx it stops within 1,024 queries.
//
// The sink's ledger, if any, is charged before labels leave and settled
// after: with the labels released on success, with none when a release is
// refused or a file is not written (it is removed) and no other process
// can have read its temporary file (atomicfile.Output.Private: it had no
// name), and with those that may have reached the stream (or the device or
// FIFO written through, or a named temporary file) when a release to it
// fails, whose error then says how many that is and what they cost. A
// write that stops part-way counts every label of which a byte was
// written. A nil in, agg or src is refused, as the ledger's run is settled
// with no labels.
func ReleaseTo(ctx context.Context, in votefile.Reader, agg Labeler, src *noise.Source, sink LabelSink, limit int, opts ReleaseOptions) (ReleaseResult, error) {
	switch {
	case in == nil:
		return ReleaseResult{}, sink.settle(ctx, errors.New("ReleaseTo: in is nil: the votes to label (votefile.Open, votefile.ReadRows)"), 0)
	case agg == nil:
		return ReleaseResult{}, sink.settle(ctx, errors.New("ReleaseTo: agg is nil: the aggregator that labels them (New)"), 0)
	case src == nil:
		return ReleaseResult{}, sink.settle(ctx, errors.New("ReleaseTo: src is nil: the randomness of the labels (noise.NewSource)"), 0)
	}
	b, err := releaseBinding(in, agg, opts.Partition, nil)
	if err != nil {
		return ReleaseResult{}, sink.settle(ctx, fmt.Errorf("release: %w", err), 0)
	}
	return releaseTo(ctx, in, agg, b, src, sink, limit, opts, nil)
}

// releaseTo is ReleaseTo for the binding b of agg to the votes of in
// (releaseBinding), of a release accounted as a whole by whole, if not nil,
// whose header says so: generalized PTR's (Accounted), or the Gaussian-DP
// filter's of a release charged per draw (filterAccount).
func releaseTo(ctx context.Context, in votefile.Reader, agg Labeler, b provenance.Binding, src *noise.Source, sink LabelSink, limit int, opts ReleaseOptions, whole *Accounted) (ReleaseResult, error) {
	var res ReleaseResult
	if err := sink.check(); err != nil {
		return res, sink.settle(ctx, err, 0)
	}
	if sink.Format == votefile.FormatAuto {
		sink.Format = votefile.LabelFormat(sink.Path, in.Format())
	}
	settle := func(err error, labels int) error { return sink.settle(ctx, err, labels) }
	var comments []string
	_, seeded := src.Seeded()
	if seeded {
		if !opts.Experiment {
			return res, settle(errSeededRelease, 0)
		}
		comments = append(comments, notForRelease)
	}
	priv := agg.Privacy()
	meta := votefile.LabelMeta{Mechanism: agg.Name().String(), K: agg.K(), Classes: agg.Classes(), Relation: priv.Relation.String(),
		Eps: priv.Guarantee.Eps, Delta: priv.Guarantee.Delta, Ensemble: b.Ensemble, Abstain: in.MayAbstain(), ForRelease: len(comments) == 0}
	if sink.Ledger != nil {
		meta.Ledger = sink.Ledger.ID()
		// A run charged per draw is counted in units of its draws' charge:
		// each row states those taken when it was written.
		_, meta.LedgerUnits = sink.Ledger.(drawsLedger)
	}
	if err := labelSettings(agg.Mechanism(), &meta); err != nil {
		return res, settle(err, 0)
	}
	if whole != nil {
		meta.Accounting = whole.Accounting
		meta.Total = &votefile.LabelTotal{Eps: whole.Total.Guarantee.Eps, Delta: whole.Total.Guarantee.Delta, Argument: whole.Total.Name(),
			BudgetEps: whole.Budget.Eps, BudgetDelta: whole.Budget.Delta}
		if whole.failed {
			meta.Total.FallbackOf = whole.Queries
		}
	}
	if b.Partition != provenance.PartitionUnstated {
		meta.Partition = b.Partition.String()
	}
	if b.Each != (accountant.Guarantee{}) {
		meta.Teachers = &votefile.LabelTeachers{Eps: b.Each.Eps, Delta: b.Each.Delta}
	}
	var lw *votefile.LabelWriter
	run := func(w io.Writer) error {
		var err error
		if lw, err = votefile.NewLabelWriter(w, sink.Format, !twoClass(agg), comments...); err != nil {
			return err
		}
		// The header goes out with the first labels, after their
		// reservation, whose line it states.
		lw.Header = func() string {
			if sink.Ledger != nil {
				meta.LedgerLines, meta.LedgerSize, meta.LedgerHead = sink.Ledger.Lines(), sink.Ledger.Size(), sink.Ledger.Head()
			}
			return meta.HeaderLine()
		}
		if sink.Ledger != nil {
			lw.Reserve = func(labels int) error { return sink.Ledger.Reserve(ctx, labels) }
		}
		if d, ok := sink.Ledger.(drawsLedger); ok {
			lw.Units = d.units
		}
		res, err = release(ctx, in, agg, src, lw, limit, opts)
		if err == nil && sink.Ledger != nil {
			// Into a file, the labels leave when it is renamed, after this.
			err = sink.Ledger.Settle(ctx, res.Released)
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
			if err = run(out); err != nil {
				out.Abort()
			} else {
				err = out.Commit()
			}
			switch {
			case err == nil:
			case out.Private():
				err = settle(err, 0) // the file was removed unread: nothing left
			default:
				// A temporary file with a name may have been read by any
				// process of the user while it was written.
				err = streamFailed(err, lw, priv, whole, seeded, "the temporary file of "+sink.Path, settle)
			}
			return res, err
		}
		defer out.Abort()
		w, name = out, sink.Path
		if err = run(w); err == nil {
			return res, out.Commit()
		}
		return res, streamFailed(err, lw, priv, whole, seeded, name, settle)
	}
	if err := run(w); err != nil {
		return res, streamFailed(err, lw, priv, whole, seeded, name, settle)
	}
	return res, nil
}

// streamFailed completes the error of a release into a stream (standard
// output, a device, a FIFO) that failed: the labels that may have left
// are counted in it and settled. Their cost is that of as many queries
// at the per-query guarantee, or, for a release accounted as a whole
// (whole: generalized PTR's, or the Gaussian-DP filter's of a release
// charged per draw, whose per-query guarantee assumes every draw taken),
// within that release's total. Labels from a seeded source are said to be
// not for release, as their file says: their cost is that of the
// mechanism with secret noise, which they do not have.
func streamFailed(err error, lw *votefile.LabelWriter, priv Privacy, whole *Accounted, seeded bool, name string, settle func(error, int) error) error {
	left := 0
	if lw != nil {
		left = lw.Written()
	}
	if left > 0 {
		cost := fmt.Sprintf("that of %s at %v", plural.Of(left, "query", "queries"), priv.Guarantee)
		if whole != nil {
			cost = fmt.Sprintf("within the release's total, %v by the %s", whole.Total.Guarantee, whole.Total.Name())
		}
		if seeded {
			cost += "; " + seededLabels
		}
		err = &spentError{Labels: left, Err: fmt.Errorf("%w (%s may have reached %s, counting any label cut part-way: their privacy cost is %s)", err,
			plural.Of(left, "label", "labels"), name, cost)}
	}
	return settle(err, left)
}

// spentError is the error of a release into a stream that failed after
// Labels labels may have left: whatever the cause (a malformed row of
// the votes, a reader gone), they are released and their privacy spent,
// so it is not an error of the input alone that changed nothing.
type spentError struct {
	Labels int
	Err    error
}

func (e *spentError) Error() string { return e.Err.Error() }
func (e *spentError) Unwrap() error { return e.Err }

// LabelsSpent returns the labels that may have left.
func (e *spentError) LabelsSpent() int { return e.Labels }
