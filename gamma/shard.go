package gamma

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/constraints"
)

// Shard is part Index of Count of the exhaustive separation behind a
// certificate (constraints.SeparateOptions.Shard and Shards): the parts
// are independent, so a large K can be certified by separate jobs, whose
// separations MergeShards combines.
type Shard struct {
	Index, Count int
}

// ParseShard reads a shard written as "i/n", with 0 <= i < n and no
// leading zeros or signs.
func ParseShard(s string) (Shard, error) {
	var sh Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.Index, &sh.Count); err != nil || sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count || sh.String() != s {
		return Shard{}, fmt.Errorf("must be i/n with 0 <= i < n")
	}
	return sh, nil
}

// String writes the shard as "i/n".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// shardTop is how many of the costliest corner multisets above the budget
// a shard keeps and a merge reports, as evidence beside the worst one.
const shardTop = 16

// VerifyShard runs shard s of the exhaustive separation that Verify runs
// for g and p: the maximum of the privacy cost over that shard's corner
// multisets, one that attains it, and the costliest ones above the budget.
// opts.Progress receives the fraction of the shard done.
func VerifyShard(ctx context.Context, p constraints.Params, g Gamma, s Shard, opts VerifyOptions) (constraints.Separation, error) {
	if err := checkFor(p, g); err != nil {
		return constraints.Separation{}, err
	}
	return p.Separate(ctx, g, constraints.SeparateOptions{Top: shardTop, Floor: p.Budget(), Workers: opts.Workers, Progress: opts.Progress, Shard: s.Index, Shards: s.Count})
}

// MergeShards returns the certificate of a gamma for p from the
// separations of every one of its shards (VerifyShard): the certificate
// Verify gives. The parts are combined exactly (constraints.
// MergeSeparations), which refuses a missing, repeated or foreign shard;
// the rounding bound is computed from p, never taken from the parts.
func MergeShards(p constraints.Params, parts []constraints.Separation) (Certificate, error) {
	if err := p.Validate(); err != nil {
		return Certificate{}, err
	}
	sep, err := constraints.MergeSeparations(p, parts, shardTop)
	if err != nil {
		return Certificate{}, err
	}
	sep.ErrBound = p.ErrBound()
	return NewCertificate(p, sep), nil
}
