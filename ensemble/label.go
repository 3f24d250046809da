package ensemble

import (
	"context"
	"errors"
	"fmt"

	"github.com/darrm/darrm/internal/ctxio"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/votefile"
)

// progressEvery is how many queries pass between calls of the progress
// function; checkEvery between checks of the context: an exact draw of
// noise at the largest scale takes tens of microseconds, so 2^16 queries
// could take seconds.
const (
	progressEvery = 1 << 16
	checkEvery    = 1 << 10
)

// queryReader is what the label loop reads its queries from: a
// votefile.Reader (a release), queries held in memory (Label) or drawn
// (Simulate).
type queryReader interface {
	Next() bool
	Query() *votefile.Query
	Err() error
}

// Label answers queries held in memory, in order, with answer (a
// Labeler's Answer), drawing from src, and hands each query, its label
// and whether it was answered to each, which may stop the loop (stop
// true) or end it with an error. An error of answer ends it as "query i:
// ..." for the query's Index. It checks ctx every 1,024 queries and at
// the end. It is the loop of every labelling: a release's (ReleaseTo),
// Simulate's, PATE's experiment's (pate.Label) and the transfer
// experiment's.
func Label(ctx context.Context, queries []votefile.Query, answer func(q *votefile.Query, src *noise.Source) (label int, answered bool, err error), src *noise.Source, each func(q *votefile.Query, label int, answered bool) (stop bool, err error)) error {
	// Refused as ReleaseTo refuses them: each was a nil dereference at the
	// first query.
	switch {
	case answer == nil:
		return errors.New("Label: answer is nil: the labels of the queries (a Labeler's Answer)")
	case src == nil:
		return errors.New("Label: src is nil: the randomness of the labels (noise.NewSource)")
	case each == nil:
		return errors.New("Label: each is nil: what takes each query's label")
	}
	_, err := labelLoop(ctx, &heldQueries{qs: queries}, answer, src, -1, each, nil)
	return err
}

// labelLoop is the label loop (Label): it asks answer for the labels of
// the queries of in, up to limit of them (no limit when limit < 0), and
// returns how many queries it read after the limit: read, and so checked,
// but not asked (a release's StoppedByBudget). A labeler charged per draw
// whose filter has no room for the next query (errFilterFull) sets the
// limit there.
// progress, if set, hears every progressEvery queries how many were read.
// A cancellation of ctx during the last reads (e.g. while waiting on a
// pipe) is an error too, so that a release stops before its last labels
// are written.
func labelLoop(ctx context.Context, in queryReader, answer func(*votefile.Query, *noise.Source) (int, bool, error), src *noise.Source, limit int,
	each func(*votefile.Query, int, bool) (bool, error), progress func(read int)) (notAsked int, err error) {
	asked := 0
	// A query of C classes draws C noises: a third of a second at 500,000
	// classes, where checkEvery queries took minutes that a signal waited
	// for; so also once 2^16 class counts were read since the last check.
	check := ctxio.Every{Ctx: ctx, Items: checkEvery, Units: 1 << 16}
	for n := 1; in.Next(); n++ {
		q := in.Query()
		if limit < 0 || asked < limit {
			l, answered, err := answer(q, src)
			switch {
			case errors.Is(err, errFilterFull):
				// A labeler charged per draw has no room for this query:
				// nothing was drawn for it, and the run ends here.
				limit = asked
				notAsked++
			case err != nil:
				return notAsked, fmt.Errorf("query %d: %w", q.Index, err)
			default:
				asked++
				if stop, err := each(q, l, answered); stop || err != nil {
					return notAsked, err
				}
			}
		} else {
			notAsked++
		}
		if err := check.Step(len(q.Counts)); err != nil {
			return notAsked, err
		}
		if n%progressEvery == 0 && progress != nil {
			progress(n)
		}
	}
	if err := in.Err(); err != nil {
		return notAsked, err
	}
	return notAsked, ctx.Err()
}

// heldQueries reads queries held in memory.
type heldQueries struct {
	qs []votefile.Query
	n  int // the queries read
}

func (h *heldQueries) Next() bool {
	if h.n == len(h.qs) {
		return false
	}
	h.n++
	return true
}

func (h *heldQueries) Query() *votefile.Query { return &h.qs[h.n-1] }
func (h *heldQueries) Err() error             { return nil }
