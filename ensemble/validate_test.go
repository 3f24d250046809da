package ensemble

import (
	"context"
	"errors"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/internal/tally"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
)

// aggregators returns one aggregator of each kind for K = 11, m = 3.
func aggregators(t testing.TB) []Aggregator {
	t.Helper()
	ctx := context.Background()
	p := constraints.New(11, 3, 0.1, 1e-5)
	d, err := newPrivateDaRRM(ctx, p, optGamma(t, p), Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSubsample(ctx, p, Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRR(ctx, p, accountant.General, accountant.DefaultDeltaPrime, Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	g, err := newGNMax(p, noisymax.GNMaxGrid)
	if err != nil {
		t.Fatal(err)
	}
	return []Aggregator{d, s, r, g}
}

// TestAggregateRejectsBadVotes gives every aggregator votes of the wrong
// length and votes that are not 0 or 1 (among them the characters '0' and
// '1'): each must be a *VoteError naming the problem, never a label or a
// panic.
func TestAggregateRejectsBadVotes(t *testing.T) {
	good := arrange(11, 7, 0)
	chars := make([]byte, 11)
	for i, v := range good {
		chars[i] = '0' + v
	}
	two := append([]byte(nil), good...)
	two[4] = 2
	for _, agg := range aggregators(t) {
		for _, c := range []struct {
			name  string
			votes []byte
			index int
		}{
			{"none", nil, -1},
			{"3 of 11", good[:3], -1},
			{"12 of 11", append(append([]byte(nil), good...), 1), -1},
			{"a vote of 2", two, 4},
			{"characters '0'/'1'", chars, 0},
		} {
			label, err := agg.Aggregate(c.votes, noise.NewSeededSource(1))
			var ve *tally.VoteError
			if !errors.As(err, &ve) || ve.Index != c.index || ve.K != 11 {
				t.Errorf("%s, %s: label %d, err %v; want a VoteError at index %d", agg.Name(), c.name, label, err, c.index)
			}
		}
		if _, err := agg.Aggregate(good, noise.NewSeededSource(1)); err != nil {
			t.Errorf("%s: valid votes: %v", agg.Name(), err)
		}
	}
}

// FuzzAggregate feeds arbitrary bytes to every aggregator: it returns a
// label (0 or 1) exactly when the input is K votes of 0 or 1, and an error
// otherwise, without panicking.
func FuzzAggregate(f *testing.F) {
	for _, seed := range [][]byte{arrange(11, 7, 0), []byte("10110111011"), {}, {1, 0, 2}} {
		f.Add(seed, uint64(1))
	}
	aggs := aggregators(f)
	f.Fuzz(func(t *testing.T, votes []byte, seed uint64) {
		valid := len(votes) == 11
		for _, v := range votes {
			valid = valid && v <= 1
		}
		for _, agg := range aggs {
			label, err := agg.Aggregate(votes, noise.NewSeededSource(seed))
			if valid != (err == nil) || label > 1 || (err != nil && label != 0) {
				t.Fatalf("%s(%v): label %d, err %v", agg.Name(), votes, label, err)
			}
		}
	})
}

// TestRelations checks that GNMax's guarantee is marked with PATE's
// one-vote relation and every other aggregator's with DaRRM's, so that
// totals and budgets can keep them apart.
func TestRelations(t *testing.T) {
	for _, agg := range aggregators(t) {
		want := accountant.PrivateTeachers
		if agg.Name() == "gnmax" {
			want = accountant.OneVote
		}
		if got := agg.Privacy().Relation; got != want {
			t.Errorf("%s: relation %v, want %v", agg.Name(), got, want)
		}
	}
}
