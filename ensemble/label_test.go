package ensemble

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/internal/tally"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/votefile"
)

// heldVotes returns n queries of k 0/1 votes, query i (from 1) with i mod
// (k+1) ones.
func heldVotes(n, k int) []votefile.Query {
	qs := make([]votefile.Query, n)
	for i := range qs {
		v := make([]byte, k)
		ones := (i + 1) % (k + 1)
		for j := range ones {
			v[j] = 1
		}
		qs[i] = votefile.Query{Index: i + 1, Votes: v, Counts: []int{k - ones, ones}}
	}
	return qs
}

// TestLabel: the loop answers the queries in order from one source, as
// a hand-written loop over Answer does; it stops where each says, ends
// with the error of each or of answer (naming the query), and checks the
// context every checkEvery queries.
func TestLabel(t *testing.T) {
	g, err := newGNMax(constraints.New(5, 1, 0.1, 1e-5), noisymax.GNMaxGrid)
	if err != nil {
		t.Fatal(err)
	}
	queries := heldVotes(10, 5)
	want := make([]int, len(queries))
	ref := noise.NewSeededSource(3)
	for i := range queries {
		if want[i], _, err = g.Answer(&queries[i], ref); err != nil {
			t.Fatal(err)
		}
	}
	bad := slices.Clone(queries)
	bad[3].Votes = []byte{1, 1, 2, 0, 0}
	errEach := errors.New("each failed")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		queries []votefile.Query
		stopAt  int   // each stops the loop at this query (0: never)
		failAt  int   // each fails at this query (0: never)
		labels  int   // the queries each hears of
		err     error // nil, errEach, context.Canceled, or any *VoteError
	}{
		{"all", context.Background(), queries, 0, 0, 10, nil},
		{"stop", context.Background(), queries, 4, 0, 4, nil},
		{"each fails", context.Background(), queries, 0, 6, 6, errEach},
		{"bad votes", context.Background(), bad, 0, 0, 3, &tally.VoteError{}},
		{"canceled", canceled, queries, 0, 0, 10, context.Canceled},
		{"canceled, long", canceled, heldVotes(checkEvery+5, 5), 0, 0, checkEvery, context.Canceled},
	} {
		var got []int
		src := noise.NewSeededSource(3)
		err := Label(tc.ctx, tc.queries, g.Answer, src, func(q *votefile.Query, label int, answered bool) (bool, error) {
			if q.Index != len(got)+1 || !answered {
				t.Errorf("%s: query %d (answered %v) after %d", tc.name, q.Index, answered, len(got))
			}
			got = append(got, label)
			if q.Index == tc.failAt {
				return false, errEach
			}
			return q.Index == tc.stopAt, nil
		})
		var ve *tally.VoteError
		switch {
		case tc.err == nil && err != nil,
			tc.err == errEach && !errors.Is(err, errEach),
			tc.err == context.Canceled && !errors.Is(err, context.Canceled),
			errors.As(tc.err, &ve) && (!errors.As(err, &ve) || !strings.HasPrefix(err.Error(), "query 4: ")):
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.err)
		}
		if len(got) != tc.labels || len(tc.queries) == len(queries) && !slices.Equal(got, want[:len(got)]) {
			t.Errorf("%s: labels %v, want the first %d of %v", tc.name, got, tc.labels, want)
		}
	}
}

// TestLabelLimit: past the limit the loop reads the queries without
// drawing, counts them, and reports progress every progressEvery queries.
func TestLabelLimit(t *testing.T) {
	d := zeroDaRRM(t, 1)
	qs := heldVotes(progressEvery+3, 1)
	src, ref := noise.NewSeededSource(5), noise.NewSeededSource(5)
	asked := 0
	var progress []int
	notAsked, err := labelLoop(context.Background(), &heldQueries{qs: qs}, d.Answer, src, 2, func(q *votefile.Query, l int, _ bool) (bool, error) {
		if want, _, _ := d.Answer(q, ref); l != want {
			t.Errorf("query %d: label %d, want %d", q.Index, l, want)
		}
		asked++
		return false, nil
	}, func(read int) { progress = append(progress, read) })
	if err != nil || asked != 2 || notAsked != len(qs)-2 || !slices.Equal(progress, []int{progressEvery}) {
		t.Errorf("asked %d, not asked %d, progress %v, err %v: want 2, %d, [%d], nil", asked, notAsked, progress, err, len(qs)-2, progressEvery)
	}
	if src.Uint64() != ref.Uint64() {
		t.Error("the queries past the limit drew from the source")
	}
}

// TestLabelCancelledManyClasses: the loop stops at a done context after a
// query of many classes, each of whose labels draws a noise per class (a
// third of a second at 500,000), not after checkEvery of them.
func TestLabelCancelledManyClasses(t *testing.T) {
	qs := make([]votefile.Query, 8)
	for i := range qs {
		qs[i] = votefile.Query{Index: i + 1, Counts: make([]int, 1<<16)}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	asked := 0
	answer := func(*votefile.Query, *noise.Source) (int, bool, error) { asked++; return 0, true, nil }
	each := func(*votefile.Query, int, bool) (bool, error) { return false, nil }
	if _, err := labelLoop(ctx, &heldQueries{qs: qs}, answer, noise.NewSeededSource(1), -1, each, nil); !errors.Is(err, context.Canceled) || asked != 1 {
		t.Errorf("a cancelled loop: %v after %d of %d queries of 2^16 classes; want context.Canceled after the first", err, asked, len(qs))
	}
}

// TestLabelNilArguments: a nil answer, source or each is refused with an
// error naming it, as ReleaseTo refuses a nil aggregator or source, where
// each was a nil dereference at the first query.
func TestLabelNilArguments(t *testing.T) {
	g, err := newGNMax(constraints.New(5, 1, 0.1, 1e-5), noisymax.GNMaxGrid)
	if err != nil {
		t.Fatal(err)
	}
	each := func(*votefile.Query, int, bool) (bool, error) { return false, nil }
	for _, tc := range []struct {
		name   string
		answer func(*votefile.Query, *noise.Source) (int, bool, error)
		src    *noise.Source
		each   func(*votefile.Query, int, bool) (bool, error)
	}{
		{"answer", nil, noise.NewSeededSource(1), each},
		{"src", g.Answer, nil, each},
		{"each", g.Answer, noise.NewSeededSource(1), nil},
	} {
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return Label(context.Background(), heldVotes(3, 5), tc.answer, tc.src, tc.each)
		}()
		if err == nil || !strings.Contains(err.Error(), tc.name+" is nil") {
			t.Errorf("nil %s: %v, want an error naming it", tc.name, err)
		}
	}
}
