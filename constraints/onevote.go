package constraints

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"sort"

	"github.com/darrm/darrm/accountant"
)

// NewOneVote returns the problem of releasing the majority of k teachers'
// votes (eps, delta)-DP in the one-vote relation. The teachers have no
// guarantee of their own: the problem's M is 1, its Eps the release's eps
// and its Delta 0, so that M·Eps and TargetDelta are the release's
// guarantee in either relation. The problem is not validated here.
func NewOneVote(k int, eps, delta float64) Problem {
	return Problem{K: k, M: 1, Eps: eps, TargetDelta: delta, Relation: accountant.OneVote}
}

// oneVoteConfig returns the pair of neighbouring vote vectors with n11
// teachers voting 1 on both and one teacher voting 1 on D only (up) or on
// D' only, and the vote counts a on D and b on D'.
func (p Problem) oneVoteConfig(n11 int, up bool) (c Config, a, b int) {
	if up {
		return Config{p.K - 1 - n11, n11, 1, 0}, n11 + 1, n11
	}
	return Config{p.K - 1 - n11, n11, 0, 1}, n11, n11 + 1
}

// oneVoteRow is Row in the one-vote relation, where alpha and alpha' are
// point masses at the vote counts a = n11 + n10 and b = n11 + n01: the row
// has at most two nonzero coefficients, written without the pmfs, with the
// same arithmetic as Row's.
func (p Problem) oneVoteRow(c Config) ([]float64, error) {
	if err := p.check(c); err != nil {
		return nil, err
	}
	h := p.H()
	row := make([]float64, p.K-h+1)
	add := func(l int, v float64) {
		if l >= h {
			row[l-h] += v
		} else {
			row[p.K-l-h] -= v
		}
	}
	add(c[1]+c[2], 1)
	add(c[1]+c[3], -p.E())
	return row, nil
}

// separateOneVote is Separate in the one-vote relation. With w(l) =
// -gamma(l) for l < H and gamma(l) for l >= H, Pr[output 1 | L = l] =
// (1 + w(l))/2, so for vote counts a on D and b on D' the inequality of
// output 1, Pr[1 | a] <= e^eps·Pr[1 | b] + delta, reads
//
//	w(a) - e^eps·w(b) <= e^eps - 1 + 2·delta = Budget(),
//
// and that of output 0 reads e^eps·w(b) - w(a) <= Budget(). Each of the 2K
// pairs (a, b), |a - b| = 1, is a corner multiset (oneVoteCorners) whose
// cost is the larger of two inequalities: its output-1 inequality, and the
// output-0 inequality of its mirror image (K - a, K - b), which is the
// same for a symmetric gamma (relabelling the votes, as in Lemma 3.4.4).
// As the pairs run over all 2K, so do their mirror images: all 4K
// inequalities are evaluated. The cost is what Problem.Cost computes for
// the multiset, and Problem.Row gives its row.
func (p Problem) separateOneVote(ctx context.Context, gamma []float64, opts SeparateOptions) (Separation, error) {
	if err := p.Validate(); err != nil {
		return Separation{}, err
	}
	w, err := p.weights(gamma)
	if err != nil {
		return Separation{}, err
	}
	shards := max(opts.Shards, 1)
	if opts.Shard < 0 || opts.Shard >= shards {
		return Separation{}, fmt.Errorf("shard %d of %d: must be in [0, %d)", opts.Shard, shards, shards)
	}
	if err := ctx.Err(); err != nil {
		return Separation{}, err
	}
	e, k := p.E(), p.K
	sep := Separation{MaxF: math.Inf(-1), ErrBound: p.ErrBound(), Configs: new(big.Int), Shard: opts.Shard, Shards: shards}
	var top []Scored
	configs := 0
	for n11 := 0; n11 < k; n11++ {
		for i, up := range [2]bool{true, false} {
			if (2*n11+i)%shards != opts.Shard {
				continue
			}
			c, a, b := p.oneVoteConfig(n11, up)
			configs++
			// float64() keeps each product rounded on its own (no fused
			// multiply-add), as ErrBound assumes; a fused one would only
			// be more accurate.
			out1 := w[a] - float64(e*w[b])
			out0 := float64(e*w[k-b]) - w[k-a]
			s := Scored{Config: c, F: math.Max(out1, out0)}
			if sep.Worst == nil || better(s, Scored{sep.Worst, sep.MaxF}) {
				sep.MaxF, sep.Worst = s.F, c
			}
			if opts.Top > 0 && s.F > opts.Floor {
				top = append(top, s)
			}
		}
	}
	sort.Slice(top, func(i, j int) bool { return better(top[i], top[j]) })
	sep.Top = top[:min(len(top), opts.Top)]
	sep.Configs.SetInt64(int64(configs))
	if opts.Progress != nil {
		opts.Progress(1)
	}
	return sep, nil
}

// errBoundOneVote is ErrBound in the one-vote relation: a bound on
// |computed - exact| of every inequality as separateOneVote computes it,
// plus that of Budget(). With u = 2^-53, E = e^eps and B the budget, and
// math.Exp and math.Expm1 taken within 2 ulps (4u relative):
//
//   - w(a) and w(b) are ±gamma, exact and at most 1 in magnitude;
//   - Ê = exp(eps) (M = 1, so fl(M·eps) = eps) is within 4uE, which
//     moves Ê·w(b) by at most 4uE; the product rounds by at most uE and the
//     difference by at most u(1 + E): 6uE + u in all;
//   - Budget() = expm1(eps) + 2·delta: expm1 within 4u(E - 1), 2·delta
//     exact, the sum rounded by uB.
//
// The sum, u·(10E - 3 + B), is raised by 2^-20 relative for the
// second-order terms (products of two errors).
func (p Problem) errBoundOneVote() float64 {
	e := p.E()
	return (10*e - 3 + p.Budget()) * unitRoundoff * (1 + 0x1p-20)
}
