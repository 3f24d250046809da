package ensemble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/darrm/darrm/noise"
)

// ReleaseResult counts the queries of a release.
type ReleaseResult struct {
	// Answered is the number of rows written to the label file (after an
	// error, the error says how many of them were released); each is
	// charged, whether or not it holds a label.
	Answered int
	// Withheld counts the rows among them without a label: a threshold
	// step (Confident-GNMax) did not answer them.
	Withheld int
	// Unanswered is the number of queries after the limit, which were read
	// and checked but not answered.
	Unanswered int
}

// progressEvery is how many queries pass between calls of the progress
// function and checks of the context.
const progressEvery = 1 << 16

// NotForRelease is the comment line a release drawn from a seeded Source
// writes first into its labels: CSV and JSON-lines readers that skip '#'
// comments (e.g. pandas' comment="#") skip it, and strict readers refuse
// the file, which is the point.
const NotForRelease = "# NOT FOR RELEASE: drawn from a seeded generator; anyone who knows the seed can remove the noise"

// ErrSeededRelease is returned by ReleaseTo when src is seeded and the
// caller has not declared the run an experiment.
var ErrSeededRelease = errors.New("release: a seeded Source makes the noise reproducible: set ReleaseOptions.Experiment to use one, and do not publish the labels")

// ReleaseOptions tune a release.
type ReleaseOptions struct {
	// Progress, if set, is called now and then with the number of queries
	// read and of bytes consumed.
	Progress func(queries int, bytes int64)
	// Experiment allows a seeded Source. Its labels are reproducible by
	// anyone who knows the seed, so they are not private: the release
	// marks them with the NotForRelease line.
	Experiment bool
}

// release answers the queries of in with agg, drawing from src, and
// writes their rows to out, which it flushes: the loop of every release
// (ReleaseTo).
func release(ctx context.Context, in Reader, agg Labeler, src *noise.Source, out *labelWriter, limit int, opts ReleaseOptions) (ReleaseResult, error) {
	var res ReleaseResult
	for n := 1; in.Next(); n++ {
		q := in.Query()
		if limit < 0 || res.Answered < limit {
			label, answered, err := agg.Answer(q, src)
			if err != nil {
				return res, fmt.Errorf("query %d: %w", q.Index, err)
			}
			if err := out.write(q, label, answered); err != nil {
				return res, fmt.Errorf("write label %d: %w", q.Index, err)
			}
			res.Answered++
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
	// A cancellation during the last reads (e.g. while waiting on a pipe)
	// still stops the release before its last labels are written.
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := out.flush(); err != nil {
		return res, fmt.Errorf("write labels: %w", err)
	}
	if opts.Progress != nil {
		opts.Progress(res.Answered+res.Unanswered, in.BytesRead())
	}
	return res, nil
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
	err := writeRows(w, b, ids, len(votes), func(b []byte, q int) ([]byte, error) {
		if _, err := votesFor(k, votes[q]); err != nil {
			return b, err
		}
		for i, x := range votes[q] {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '0'+x)
		}
		return b, nil
	})
	if err != nil {
		return fmt.Errorf("write votes: %w", err)
	}
	return nil
}
