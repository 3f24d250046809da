package constraints

import (
	"fmt"
	"math"
	"math/big"
	"sort"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
)

// A separation in shards: each shard scores the reduced pairs (n6, n7)
// of its residue, counts the multisets they cover, and Problem.MergeSeparations
// joins the shards into the whole.

// mine reports whether the reduced pair (n6, n7) belongs to this worker's
// shard.
func (sw *sepWorker) mine(n6, n7 int) bool {
	return sw.shards <= 1 || reducedIndex(sw.p.K, n6, n7)%sw.shards == sw.shard
}

// reducedIndex numbers the reduced pairs, those with n6 = 0 or n7 = 0:
// (0, n7) is n7, (n6, 0) for n6 > 0 is k + n6.
func reducedIndex(k, n6, n7 int) int {
	if n6 == 0 {
		return n7
	}
	return k + n6
}

// parts returns the number of work items Separate deals to the parts of
// a sharded separation: the 2K+1 reduced pairs, or in the one-vote
// relation the 2K pairs of vote vectors.
func (p Problem) parts() int {
	if p.Relation == accountant.OneVote {
		return 2 * p.K
	}
	return numReducedPairs(p.K)
}

// partsOf says what the work items of parts are.
func (p Problem) partsOf() string {
	if p.Relation == accountant.OneVote {
		return "the 2K pairs of vote vectors that differ in one vote"
	}
	return "the 2K+1 reduced pairs of counts at the two e^eps corners"
}

// numReducedPairs is the number of reduced pairs, 2k + 1.
func numReducedPairs(k int) int { return 2*k + 1 }

// forReducedPairs calls fn with every reduced pair, in the order of
// reducedIndex.
func forReducedPairs(k int, fn func(n6, n7 int)) {
	for n7 := 0; n7 <= k; n7++ {
		fn(0, n7)
	}
	for n6 := 1; n6 <= k; n6++ {
		fn(n6, 0)
	}
}

// shardConfigs counts the multisets shard of shards covers: for each
// reduced pair (n6, n7) in it, the multisets of the pairs (n6 + j, n7 + j)
// it dominates (see Separate), each with the multisets of its other
// K - n6 - n7 - 2j teachers over the remaining corners.
func (p Problem) shardConfigs(shard, shards int) *big.Int {
	others := int64(len(p.Corners()) - 2)
	total, c := new(big.Int), new(big.Int)
	forReducedPairs(p.K, func(n6, n7 int) {
		if reducedIndex(p.K, n6, n7)%shards != shard {
			return
		}
		for r := p.K - n6 - n7; r >= 0; r -= 2 {
			total.Add(total, c.Binomial(int64(r)+others-1, others-1))
		}
	})
	return total
}

// partConfigs counts the multisets that part shard of shards of a
// separation covers (Separate): all of them when shards <= 1.
func (p Problem) partConfigs(shard, shards int) *big.Int {
	switch {
	case shards <= 1:
		return p.NumConfigs()
	case p.Relation == accountant.OneVote:
		// separateOneVote deals its 2K pairs (parts) round-robin: items
		// shard, shard+shards, ... below 2K.
		return big.NewInt(int64((p.parts() - shard + shards - 1) / shards))
	}
	return p.shardConfigs(shard, shards)
}

// MergeSeparations combines the shards 0, ..., n-1 of one separation (same
// problem p and gamma, each from Separate with Shards = n) into the whole:
// the maximum and its multiset, the top costliest multisets, and the count
// of multisets covered, which must be all of them: each part must state
// the count of its own part, and a worst multiset when it covers any. The
// result equals what one call of Separate over all the work returns.
func (p Problem) MergeSeparations(parts []Separation, top int) (Separation, error) {
	if len(parts) == 0 {
		return Separation{}, fmt.Errorf("merge: no shards")
	}
	n := parts[0].Shards
	// n is the parts' own word, up to MaxInt: seen grows with the parts,
	// never with n.
	seen := make(map[int]bool, len(parts))
	out := Separation{MaxF: math.Inf(-1), ErrBound: p.ErrBound(), Configs: new(big.Int), Shards: 1}
	var all []Scored
	for _, s := range parts {
		if s.Shards != n || s.Shard < 0 || s.Shard >= n || seen[s.Shard] {
			return Separation{}, fmt.Errorf("merge: shard %d of %d: want each of the shards 0..%d of %d exactly once", s.Shard, s.Shards, n-1, n)
		}
		if s.Configs == nil {
			return Separation{}, fmt.Errorf("merge: shard %d of %d has no count of multisets: it is not a shard of Separate", s.Shard, n)
		}
		seen[s.Shard] = true
		if s.Worst != nil && (out.Worst == nil || better(Scored{s.Worst, s.MaxF}, Scored{out.Worst, out.MaxF})) {
			out.MaxF, out.Worst = s.MaxF, s.Worst
		}
		all = append(all, s.Top...)
		out.Configs.Add(out.Configs, s.Configs)
	}
	if len(parts) != n {
		return Separation{}, fmt.Errorf("merge: %d shards of %d: every shard is needed for a certificate", len(parts), n)
	}
	for _, s := range parts {
		// Each part covers the multisets of its residue, no more and no
		// fewer, and one that covers any states the costliest of them: a
		// part whose worst multiset was dropped, or whose count was moved
		// to another part, would otherwise leave its maximum out of the
		// merge.
		want := p.partConfigs(s.Shard, n)
		switch {
		case s.Configs.Cmp(want) != 0:
			// A count read from a file may have a megabyte of digits.
			stated, cut := param.Cut(s.Configs.String())
			if cut {
				stated += "..."
			}
			return Separation{}, fmt.Errorf("merge: shard %d of %d states %s multisets covered, but its part of the problem has %v", s.Shard, n, stated, want)
		case want.Sign() > 0 && (s.Worst == nil || math.IsInf(s.MaxF, 0) || math.IsNaN(s.MaxF)):
			return Separation{}, fmt.Errorf("merge: shard %d of %d states no worst multiset (max f %v) of the %v it covers", s.Shard, n, s.MaxF, want)
		}
	}
	if want := p.NumConfigs(); out.Configs.Cmp(want) != 0 {
		return Separation{}, fmt.Errorf("merge: the shards cover %v multisets, the problem has %v: they are not the shards of this problem", out.Configs, want)
	}
	sort.Slice(all, func(i, j int) bool { return better(all[i], all[j]) })
	if len(all) > top {
		all = all[:top]
	}
	out.Top = all
	return out, nil
}
