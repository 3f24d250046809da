package ensemble

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// SimResult is the outcome of one aggregator in Simulate.
type SimResult struct {
	Name    provenance.MechanismName
	Privacy Privacy
	Queries int
	// Agree counts the queries whose label equals the majority of the votes.
	Agree int
	// Rate is Agree/Queries; Lo and Hi bound its 95% Wilson score interval.
	Rate, Lo, Hi float64
	// Exact is the exact probability that the label equals the majority of
	// the votes (gamma.Gamma.Agreement of the aggregator's gamma at the
	// teachers' p).
	Exact float64
	// TVError is the exact error of Definition 3.3.4, |Pr[label = 1] -
	// Pr[majority = 1]| (gamma.Gamma.TVError).
	TVError float64
}

// z95 is the 97.5% quantile of the standard normal distribution.
const z95 = 1.959963984540054

// wilson returns the 95% Wilson score interval of a binomial proportion
// with x successes in n trials.
func wilson(x, n int) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	fn, fx, z2 := float64(n), float64(x), z95*z95
	center := (fx + z2/2) / (fn + z2)
	half := z95 / (fn + z2) * math.Sqrt(fx*(fn-fx)/fn+z2/4)
	return math.Max(0, center-half), math.Min(1, center+half)
}

// Simulate runs every aggregator on the same queries of synthetic teachers
// (teacher i votes 1 with probability p[i]) and measures how often each
// label equals the majority of the votes, beside the exact value. It is an
// experiment, not a release: the votes and every aggregator's noise come
// from seeded ChaCha8 streams derived from seed, so the run is
// reproducible.
func Simulate(ctx context.Context, aggs []Aggregator, p []float64, queries int, seed uint64) ([]SimResult, error) {
	k := len(p)
	if queries < 1 {
		return nil, fmt.Errorf("simulate: %d queries: must be >= 1", queries)
	}
	if k < 1 || k%2 == 0 {
		return nil, fmt.Errorf("simulate: K = %d teachers: must be odd", k)
	}
	res := make([]SimResult, len(aggs))
	srcs := make([]*noise.Source, len(aggs))
	for i, a := range aggs {
		if a == nil {
			// It was a nil dereference.
			return nil, fmt.Errorf("simulate: aggregator %d of %d is nil", i+1, len(aggs))
		}
		if a.K() != k {
			return nil, fmt.Errorf("simulate: %s has K = %d, the teachers K = %d", a.Name(), a.K(), k)
		}
		exact, err := a.Gamma().Agreement(p)
		if err != nil {
			return nil, err
		}
		tv, err := a.Gamma().TVError(p)
		if err != nil {
			return nil, err
		}
		res[i] = SimResult{Name: a.Name(), Privacy: a.Privacy(), Queries: queries, Exact: exact, TVError: tv}
		srcs[i] = noise.NewSeededStream(seed, uint64(i)+1)
	}
	votes := newSimulatedVotes(p, max(1, min(checkEvery, queries, simulateBytes/k)))
	teachers := noise.NewSeededStream(seed, 0)
	for drawn := 0; drawn < queries; {
		// The aggregators' loops check ctx too, but with none given
		// drawing the votes is all the work, up to MaxInt queries.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chunk := votes.draw(teachers, drawn, queries-drawn)
		drawn += len(chunk)
		for i, a := range aggs {
			_, err := labelLoop(ctx, &heldQueries{qs: chunk}, a.Answer, srcs[i], -1, func(q *votefile.Query, label int, _ bool) (bool, error) {
				if (label == 1) == (2*q.Counts[1] > k) {
					res[i].Agree++
				}
				return false, nil
			}, nil)
			if err != nil {
				if err != ctx.Err() {
					err = fmt.Errorf("simulate %s: %w", a.Name(), err)
				}
				return nil, err
			}
		}
	}
	for i := range res {
		r := &res[i]
		r.Rate = float64(r.Agree) / float64(queries)
		r.Lo, r.Hi = wilson(r.Agree, queries)
	}
	return res, nil
}

// simulateBytes bounds the votes Simulate holds at a time.
const simulateBytes = 1 << 20

// simulatedVotes holds the votes of a chunk of queries of synthetic
// teachers, which every aggregator labels in turn before the next chunk
// is drawn (Simulate): teacher i votes 1 when a 53-bit draw is below
// thresholds[i].
type simulatedVotes struct {
	thresholds []uint64
	queries    []votefile.Query
}

// newSimulatedVotes returns room for chunks of n queries of the teachers
// who vote 1 with the probabilities p.
func newSimulatedVotes(p []float64, n int) *simulatedVotes {
	k := len(p)
	s := &simulatedVotes{thresholds: make([]uint64, k), queries: make([]votefile.Query, n)}
	for i, v := range p {
		s.thresholds[i] = discrete.Threshold(v)
	}
	votes, counts := make([]byte, n*k), make([]int, 2*n)
	for j := range s.queries {
		s.queries[j] = votefile.Query{Votes: votes[j*k : (j+1)*k], Counts: counts[2*j : 2*j+2]}
	}
	return s
}

// draw draws from teachers the votes of the next chunk of at most left
// queries, the first of which is query drawn+1, and returns them.
func (s *simulatedVotes) draw(teachers *noise.Source, drawn, left int) []votefile.Query {
	chunk := s.queries[:min(left, len(s.queries))]
	for j := range chunk {
		q := &chunk[j]
		q.Index = drawn + j + 1
		ones := 0
		for i, t := range s.thresholds {
			q.Votes[i] = 0
			if discrete.Bernoulli(teachers, t) {
				q.Votes[i] = 1
				ones++
			}
		}
		q.Counts[0], q.Counts[1] = len(s.thresholds)-ones, ones
	}
	return chunk
}
