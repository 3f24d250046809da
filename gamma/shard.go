package gamma

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/internal/plural"
)

// Shard is part Index of Count of the exhaustive separation behind a
// certificate (constraints.SeparateOptions.Shard and Shards): the parts
// are independent, so a large K can be certified by separate jobs, whose
// separations MergeShards combines.
type Shard struct {
	Index, Count int
}

// Path is the file of shard s that template names: its {i} and {n}
// become the shard's index and count, so that one name serves every job of
// an array.
func (s Shard) Path(template string) string {
	return strings.NewReplacer("{i}", strconv.Itoa(s.Index), "{n}", strconv.Itoa(s.Count)).Replace(template)
}

// String writes the shard as "i/n".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// shardTop is how many of the costliest corner multisets above the budget
// a shard keeps and a merge reports, as evidence beside the worst one.
const shardTop = 16

// Verify runs shard s of the exhaustive separation that Verify runs for g
// and p: the maximum of the privacy cost over that shard's corner
// multisets, one that attains it, and the costliest ones above the budget.
// opts.Progress receives the fraction of the shard done.
func (s Shard) Verify(ctx context.Context, p constraints.Problem, g Gamma, opts VerifyOptions) (constraints.Separation, error) {
	if err := checkFor(p, g); err != nil {
		return constraints.Separation{}, err
	}
	return p.Separate(ctx, g, constraints.SeparateOptions{Top: shardTop, Floor: p.Budget(), Workers: opts.Workers, Progress: opts.Progress, Shard: s.Index, Shards: s.Count})
}

// MergeShards returns the certificate of g for p from the separations of
// every one of its shards (Shard.Verify): the certificate Verify gives. The
// parts are combined exactly (constraints.Problem.MergeSeparations), which refuses
// a missing, repeated or foreign shard; an error for missing shards names
// them, and a part without its count of multisets, with the count of
// another part, or without a worst multiset of those it covers is refused. The
// rounding bound is computed from p, never taken from the parts, and the
// cost each part states at its worst multiset and at the costliest ones it
// keeps is evaluated again (constraints.Problem.Cost, a few evaluations
// against the whole separation's millions): a part whose stated maximum
// was edited, or that is of another gamma, is refused, and each of those
// multisets counts at the larger of its stated and its evaluated cost, so
// that max f may exceed Verify's by rounding, never fall below it. A part edited
// consistently (its worst multiset replaced by a cheaper one with its
// cost) is not found without the separation itself.
func MergeShards(p constraints.Problem, g Gamma, parts []constraints.Separation) (Certificate, error) {
	if err := checkFor(p, g); err != nil {
		return Certificate{}, err
	}
	tol := 2 * p.ErrBound()
	parts = slices.Clone(parts)
	for j, s := range parts {
		if s.Configs == nil {
			return Certificate{}, fmt.Errorf("merge: shard %d of %d states no count of the multisets it covered", s.Shard, s.Shards)
		}
		stated := append([]constraints.Scored{{Config: s.Worst, F: s.MaxF}}, s.Top...)
		costs := make([]float64, len(stated))
		for i, sc := range stated {
			costs[i] = sc.F
			if sc.Config == nil {
				continue
			}
			f, err := p.Cost(sc.Config, g)
			if err != nil {
				return Certificate{}, fmt.Errorf("merge: shard %d of %d: multiset %v: %w", s.Shard, s.Shards, sc.Config, err)
			}
			if !(math.Abs(f-sc.F) <= tol) || (i > 0 && sc.F > s.MaxF) {
				return Certificate{}, fmt.Errorf("merge: shard %d of %d states the privacy cost %v at multiset %v (its maximum %v), but the cost there is %v (to within %.3g): the shard was edited or is of another gamma",
					s.Shard, s.Shards, sc.F, sc.Config, s.MaxF, f, tol)
			}
			// The tolerance lets a stated cost lie up to 2·ErrBound below
			// the true one, which a certificate of the stated cost would
			// not cover: the merge holds each multiset to the larger of
			// the two, each within ErrBound of the exact cost.
			costs[i] = max(sc.F, f)
		}
		parts[j].MaxF = costs[0]
		parts[j].Top = slices.Clone(s.Top)
		for i := range parts[j].Top {
			parts[j].Top[i].F = costs[i+1]
		}
	}
	if missing := missingShards(parts); missing != "" {
		return Certificate{}, fmt.Errorf("merge: %s: every shard is needed for a certificate", missing)
	}
	sep, err := p.MergeSeparations(parts, shardTop)
	if err != nil {
		return Certificate{}, err
	}
	sep.ErrBound = p.ErrBound()
	return newCertificate(p, sep), nil
}

// maxMissingRuns is how many runs of missing shards missingShards names.
const maxMissingRuns = 8

// missingShards says which of the shards 0..n-1 of parts' split are not
// among them ("shards 1, 4-6 of 8 are missing"), and "" when none is or
// when parts are not each shard of one split at most once, which
// MergeSeparations refuses in its own words.
func missingShards(parts []constraints.Separation) string {
	if len(parts) == 0 {
		return ""
	}
	n := parts[0].Shards
	have := make([]int, len(parts))
	for i, s := range parts {
		if s.Shards != n || s.Shard < 0 || s.Shard >= n {
			return ""
		}
		have[i] = s.Shard
	}
	slices.Sort(have)
	var runs []string
	missing := 0
	prev := -1
	for _, i := range append(have, n) {
		if i == prev {
			return "" // a repeated shard
		}
		if lo, hi := prev+1, i-1; lo < hi {
			runs, missing = append(runs, fmt.Sprintf("%d-%d", lo, hi)), missing+hi-lo+1
		} else if lo == hi {
			runs, missing = append(runs, strconv.Itoa(lo)), missing+1
		}
		prev = i
	}
	if missing == 0 {
		return ""
	}
	if len(runs) > maxMissingRuns {
		runs = append(runs[:maxMissingRuns], "...")
	}
	return fmt.Sprintf("%s %s of %d %s missing", plural.Word(missing, "shard", "shards"), strings.Join(runs, ", "), n, plural.Word(missing, "is", "are"))
}
