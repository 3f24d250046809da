// Package labelloop is the loop of every labelling of votes: it asks a
// mechanism for the label of each query in turn, drawing from one source,
// up to a limit, and checks the context as it goes. Package ensemble's
// release and simulation, PATE's experiment (pate.Label) and the transfer
// experiment label through it.
package labelloop

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/votefile"
)

// ProgressEvery is how many queries pass between calls of the progress
// function; CheckEvery between checks of the context: an exact draw of
// noise at the largest scale takes tens of microseconds, so 2^16 queries
// could take seconds.
const (
	ProgressEvery = 1 << 16
	CheckEvery    = 1 << 10
)

// Queries is what the label loop reads its queries from: a
// votefile.Reader (a release), or queries held in memory (Held: drawn by
// a simulation, or given by an experiment).
type Queries interface {
	Next() bool
	Query() *votefile.Query
	Err() error
}

// Run is the label loop: it asks answer (a Labeler's Answer) for the
// labels of the queries of in, in order, up to limit of them (no limit
// when limit < 0), drawing from src, and hands each query, its label and
// whether it was answered to each, which may stop the loop (stop true) or
// end it with an error. An error of answer ends it as "query i: ..." for
// the query's Index. It returns how many queries it read after the limit:
// read, and so checked, but not asked (a release's StoppedByBudget).
// It checks ctx every CheckEvery queries and at the end.
// progress, if set, hears every ProgressEvery queries how many were read.
// A cancellation of ctx during the last reads (e.g. while waiting on a
// pipe) is an error too, so that a release stops before its last labels
// are written.
func Run(ctx context.Context, in Queries, answer func(*votefile.Query, *noise.Source) (int, bool, error), src *noise.Source, limit int,
	each func(*votefile.Query, int, bool) (bool, error), progress func(read int)) (notAsked int, err error) {
	asked := 0
	for n := 1; in.Next(); n++ {
		q := in.Query()
		if limit < 0 || asked < limit {
			l, answered, err := answer(q, src)
			if err != nil {
				return notAsked, fmt.Errorf("query %d: %w", q.Index, err)
			}
			asked++
			if stop, err := each(q, l, answered); stop || err != nil {
				return notAsked, err
			}
		} else {
			notAsked++
		}
		if n%CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return notAsked, err
			}
		}
		if n%ProgressEvery == 0 && progress != nil {
			progress(n)
		}
	}
	if err := in.Err(); err != nil {
		return notAsked, err
	}
	return notAsked, ctx.Err()
}

// Held returns the reader of queries held in memory, in order.
func Held(queries []votefile.Query) Queries { return &heldQueries{qs: queries} }

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
