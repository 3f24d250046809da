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
	// rows hold a label.
	Withheld int
	// Unanswered is the number of queries after the limit, which were read
	// and checked but not answered.
	Unanswered int
}

// progressEvery is how many queries pass between calls of the progress
// function; checkEvery between checks of the context: an exact draw of
// noise at the largest scale takes tens of microseconds, so 2^16 queries
// could take seconds.
const (
	progressEvery = 1 << 16
	checkEvery    = 1 << 10
)

// notForRelease is the comment line a release drawn from a seeded Source
// writes first into its labels: CSV and JSON-lines readers that skip '#'
// comments (e.g. pandas' comment="#") skip it, and strict readers refuse
// the file, which is the point.
const notForRelease = "# NOT FOR RELEASE: drawn from a seeded generator; anyone who knows the seed can remove the noise"

// ErrSeededRelease is returned by ReleaseTo when src is seeded and the
// caller has not declared the run an experiment.
var ErrSeededRelease = errors.New("release: a seeded Source makes the noise reproducible: set ReleaseOptions.Experiment to use one, and do not publish the labels")

// ReleaseOptions tune a release.
type ReleaseOptions struct {
	// Progress, if set, is called now and then with the number of queries
	// read and of bytes consumed.
	Progress func(queries int, bytes int64)
	// Partition is how the teachers' training data were split, as the
	// caller asserts it (PartitionUnstated: not asserted): it must be the
	// header's, and votes without a header need it for a release in the
	// one-vote relation (ReleaseBinding). The label file's header states it.
	Partition provenance.Partition
	// Experiment allows a seeded Source. Its labels are reproducible by
	// anyone who knows the seed, so they are not private: the release
	// marks them with the notForRelease line.
	Experiment bool
}

// release answers the queries of in with agg, drawing from src, and
// writes their rows to out, which it flushes: the loop of every release
// (ReleaseTo).
func release(ctx context.Context, in votefile.Reader, agg Labeler, src *noise.Source, out *votefile.LabelWriter, limit int, opts ReleaseOptions) (ReleaseResult, error) {
	var res ReleaseResult
	for n := 1; in.Next(); n++ {
		q := in.Query()
		if limit < 0 || res.Released < limit {
			label, answered, err := agg.Answer(q, src)
			if err != nil {
				return res, fmt.Errorf("query %d: %w", q.Index, err)
			}
			if err := out.WriteLabel(q, label, answered); err != nil {
				return res, fmt.Errorf("write label %d: %w", q.Index, err)
			}
			res.Released++
			if !answered {
				res.Withheld++
			}
		} else {
			res.Unanswered++
		}
		if n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		if n%progressEvery == 0 && opts.Progress != nil {
			opts.Progress(n, in.BytesRead())
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
		opts.Progress(res.Released+res.Unanswered, in.BytesRead())
	}
	return res, nil
}
