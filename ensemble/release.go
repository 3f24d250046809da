package ensemble

import (
	"context"
	"errors"
	"fmt"

	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// ReleaseResult counts the queries of a release.
type ReleaseResult struct {
	// Released is the number of queries released: the rows written to
	// the label file (after an error, the error says how many of them
	// left), each charged, whether it holds a label or is withheld.
	Released int
	// Withheld counts the rows among them without a label: a threshold
	// step (Confident-GNMax) did not answer them. Released - Withheld
	// rows hold a label: they are answered.
	Withheld int
	// StoppedByBudget is the number of queries after the limit, which
	// were read and checked but not released: an outcome, not an error
	// (Release, ReleaseTo).
	StoppedByBudget int
	// NotRequested is the number of queries after the first
	// ReleaseSpec.MaxQueries (or an accounted release's proposal), read
	// and checked but not released, as the caller asked: not a stop.
	NotRequested int
}

// seededLabels says what labels drawn from a seeded Source are, wherever
// they are described: in their file (notForRelease) and in the error of a
// release that failed after some of them left.
const seededLabels = "NOT FOR RELEASE: drawn from a seeded generator; anyone who knows the seed can remove the noise"

// notForRelease is the comment line a release drawn from a seeded Source
// writes first into its labels: CSV and JSON-lines readers that skip '#'
// comments (e.g. pandas' comment="#") skip it, and strict readers refuse
// the file, which is the point.
const notForRelease = "# " + seededLabels

// errSeededRelease is returned by ReleaseTo when src is seeded and the
// caller has not declared the run an experiment.
var errSeededRelease = errors.New("release: a seeded Source makes the noise reproducible: set ReleaseOptions.Experiment to use one, and do not publish the labels")

// ReleaseOptions tune a release.
type ReleaseOptions struct {
	// Progress, if set, is called now and then with the number of queries
	// read and of bytes consumed.
	Progress func(queries int, bytes int64)
	// Partition is how the teachers' training data were split, as the
	// caller asserts it (PartitionUnstated: not asserted): it must be the
	// header's, and votes without a header need it for a release in the
	// one-vote relation (provenance.Check). The label file's header states it.
	Partition provenance.Partition
	// Experiment allows a seeded Source. Its labels are reproducible by
	// anyone who knows the seed, so they are not private: the release
	// marks them with the notForRelease line.
	Experiment bool
}

// release answers the queries of in with agg, drawing from src, and
// writes their rows to out, which it flushes: the label loop (labelLoop) of
// every release (ReleaseTo).
func release(ctx context.Context, in votefile.Reader, agg Labeler, src *noise.Source, out *votefile.LabelWriter, limit int, opts ReleaseOptions) (ReleaseResult, error) {
	var res ReleaseResult
	var progress func(int)
	if opts.Progress != nil {
		progress = func(read int) { opts.Progress(read, in.BytesRead()) }
	}
	var err error
	res.StoppedByBudget, err = labelLoop(ctx, in, agg.Answer, src, limit, func(q *votefile.Query, label int, answered bool) (bool, error) {
		if err := out.WriteLabel(q, label, answered); err != nil {
			return false, fmt.Errorf("write label %d: %w", q.Index, err)
		}
		res.Released++
		if !answered {
			res.Withheld++
		}
		return false, nil
	}, progress)
	if err != nil {
		return res, err
	}
	if err := out.Flush(); err != nil {
		return res, fmt.Errorf("write labels: %w", err)
	}
	if progress != nil {
		progress(res.Released + res.StoppedByBudget)
	}
	return res, nil
}
