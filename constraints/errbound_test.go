package constraints

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/darrm/darrm/internal/bigmath"
)

const prec = 200

func bfl(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }

func bexp(x *big.Float) *big.Float { return bigmath.Exp(x, prec) }

// exactCorners are the corners of Lemma 3.6.1 in exact arithmetic at the
// float64 eps and Delta.
func exactCorners(p Problem) [][2]*big.Float {
	ei := bexp(bfl(-p.Eps))
	d := bfl(p.Delta)
	den := new(big.Float).SetPrec(prec).Add(bfl(1), ei)
	hi := new(big.Float).SetPrec(prec).Mul(d, ei)
	hi.Add(hi, bfl(1)).Quo(hi, den)
	lo := new(big.Float).SetPrec(prec).Sub(bfl(1), d)
	lo.Mul(lo, ei).Quo(lo, den)
	one := bfl(1)
	oneMinusD := new(big.Float).SetPrec(prec).Sub(one, d)
	if p.Delta == 0 {
		return [][2]*big.Float{{bfl(0), bfl(0)}, {one, one}, {hi, lo}, {lo, hi}}
	}
	return [][2]*big.Float{{bfl(0), bfl(0)}, {one, one}, {bfl(0), d}, {d, bfl(0)}, {oneMinusD, one}, {one, oneMinusD}, {hi, lo}, {lo, hi}}
}

// exactF is the privacy cost f of configuration c in exact arithmetic.
func exactF(p Problem, c Config, gamma []float64, corners [][2]*big.Float) *big.Float {
	pmf := func(side int) []*big.Float {
		ps := make([]*big.Float, len(c))
		for j := range c {
			ps[j] = corners[j][side]
		}
		return bigmath.PoissonBinomial(ps, c, prec)
	}
	alpha, alphaP := pmf(0), pmf(1)
	e := bexp(bfl(p.MEps()))
	f := bfl(0)
	for l := 0; l <= p.K; l++ {
		d := new(big.Float).SetPrec(prec).Mul(e, alphaP[l])
		d.Sub(alpha[l], d).Mul(d, bfl(gamma[l]))
		if l < p.H() {
			f.Sub(f, d)
		} else {
			f.Add(f, d)
		}
	}
	return f
}

func exactBudget(p Problem) *big.Float {
	e := bexp(bfl(p.MEps()))
	e.Sub(e, bfl(1))
	return e.Add(e, new(big.Float).SetPrec(prec).Mul(bfl(2), bfl(p.TargetDelta)))
}

// TestErrBoundAgainstBig compares, on random small problems, Separate's
// maximum and Cost's f of every multiset with the exact values, and the
// budget with the exact budget: the observed errors stay within ErrBound.
// It prints the largest fraction of the bound used.
func TestErrBoundAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	n := 40
	if testing.Short() {
		n = 8
	}
	used := 0.0
	for range n {
		k := 2*r.IntN(4) + 1
		delta := 0.0
		if r.IntN(3) > 0 {
			delta = math.Exp(-3 - 10*r.Float64())
		}
		m := 1 + float64(k-1)*r.Float64()
		p := Problem{K: k, M: m, Eps: math.Exp(-4 + 5*r.Float64()), Delta: delta}
		p.TargetDelta = DefaultTargetDelta(delta, m)
		g := make([]float64, k+1)
		for l := range (k + 1) / 2 {
			g[l] = r.Float64()
			g[k-l] = g[l]
		}
		corners := exactCorners(p)
		exactMax := new(big.Float).SetPrec(prec).SetInf(true)
		bound := p.ErrBound()
		var worst float64
		p.AllConfigs(func(c Config) bool {
			ex := exactF(p, c, g, corners)
			if ex.Cmp(exactMax) > 0 {
				exactMax = ex
			}
			got, err := p.Cost(c, g)
			if err != nil {
				t.Fatal(err)
			}
			d, _ := new(big.Float).Sub(bfl(got), ex).Float64()
			worst = math.Max(worst, math.Abs(d))
			return true
		})
		sep, err := p.Separate(context.Background(), g, SeparateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dMax, _ := new(big.Float).Sub(bfl(sep.MaxF), exactMax).Float64()
		dB, _ := new(big.Float).Sub(bfl(p.Budget()), exactBudget(p)).Float64()
		if e := math.Abs(dMax) + math.Abs(dB); e > bound || worst > bound {
			t.Errorf("%+v: |MaxF error| + |budget error| = %g, Cost error %g, bound %g", p, e, worst, bound)
		}
		used = math.Max(used, (math.Abs(dMax)+math.Abs(dB))/bound)
		used = math.Max(used, worst/bound)
	}
	t.Logf("%d random problems: the largest error observed used %.3g of ErrBound (margin %.3g)", n, used, 1-used)
}

// TestSeparatePreconditions: gamma outside [0, 1] or not symmetric is
// refused, since ErrBound and the corner reduction assume both.
func TestSeparatePreconditions(t *testing.T) {
	p := Problem{K: 3, M: 1, Eps: 0.1, Delta: 0, TargetDelta: 0}
	for _, g := range [][]float64{{1.5, 0, 0, 1.5}, {-0.1, 0, 0, -0.1}, {1, 0.5, 0.4, 1}, {1, 0, 0}, {math.NaN(), 0, 0, 1}} {
		if _, err := p.Separate(context.Background(), g, SeparateOptions{}); err == nil {
			t.Errorf("gamma %v accepted", g)
		}
	}
}

// TestShardsMerge splits separations into shards and checks that the
// merged result is exactly the whole one: maximum, worst multiset, top list
// and count.
func TestShardsMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, p := range []Problem{
		{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: DefaultTargetDelta(1e-5, 3)},
		{K: 21, M: 2, Eps: 0.2, Delta: 0, TargetDelta: 0},
	} {
		g := make([]float64, p.K+1)
		for l := range (p.K + 1) / 2 {
			g[l] = r.Float64()
			g[p.K-l] = g[l]
		}
		ctx := context.Background()
		whole, err := p.Separate(ctx, g, SeparateOptions{Top: 7, Floor: math.Inf(-1)})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{2, 3, 7} {
			var parts []Separation
			for i := range n {
				s, err := p.Separate(ctx, g, SeparateOptions{Top: 7, Floor: math.Inf(-1), Shard: i, Shards: n, Workers: 1 + i%2})
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, s)
			}
			got, err := p.MergeSeparations(parts, 7)
			if err != nil {
				t.Fatal(err)
			}
			if got.MaxF != whole.MaxF || fmtCfg(got.Worst) != fmtCfg(whole.Worst) || got.Configs.Cmp(whole.Configs) != 0 || len(got.Top) != len(whole.Top) {
				t.Fatalf("K=%d, %d shards: merged %v %v %v, whole %v %v %v", p.K, n, got.MaxF, got.Worst, got.Configs, whole.MaxF, whole.Worst, whole.Configs)
			}
			for i := range got.Top {
				if got.Top[i].F != whole.Top[i].F || fmtCfg(got.Top[i].Config) != fmtCfg(whole.Top[i].Config) {
					t.Errorf("K=%d, %d shards: top %d differs", p.K, n, i)
				}
			}
			if _, err := p.MergeSeparations(parts[1:], 7); err == nil {
				t.Errorf("K=%d: a missing shard was merged", p.K)
			}
			if _, err := p.MergeSeparations(append(parts, parts[0]), 7); err == nil {
				t.Errorf("K=%d: a repeated shard was merged", p.K)
			}
		}
	}
}

func fmtCfg(c Config) string { return fmt.Sprint([]int(c)) }

// TestShardsAtMostWorkItems: a separation splits into at most as many
// parts as it has work items (2K+1 reduced pairs, 2K pairs of vote vectors
// in the one-vote relation), each of which then covers some multisets and
// states a finite maximum; a larger split is refused naming Shards, where
// its extra parts had a maximum of -Inf that no part file could hold.
func TestShardsAtMostWorkItems(t *testing.T) {
	ctx := context.Background()
	g := []float64{1, 0.6, 0.3, 0.3, 0.6, 1}
	for _, tc := range []struct {
		name  string
		p     Problem
		items int
	}{
		{"Delta > 0", New(5, 2, 0.1, 1e-5), 11},
		{"Delta = 0", New(5, 2, 0.1, 0), 11},
		{"one-vote", NewOneVote(5, 1, 0), 10},
	} {
		for i := range tc.items {
			s, err := tc.p.Separate(ctx, g, SeparateOptions{Shard: i, Shards: tc.items})
			if err != nil {
				t.Fatalf("%s: part %d of %d: %v", tc.name, i, tc.items, err)
			}
			if s.Worst == nil || math.IsInf(s.MaxF, 0) || s.Configs.Sign() <= 0 {
				t.Errorf("%s: part %d of %d: max f %v at %v over %v multisets", tc.name, i, tc.items, s.MaxF, s.Worst, s.Configs)
			}
		}
		_, err := tc.p.Separate(ctx, g, SeparateOptions{Shard: tc.items, Shards: tc.items + 1})
		var pe interface{ Param() (string, any, string) }
		if !errors.As(err, &pe) {
			t.Errorf("%s: %d parts: %v, want a parameter error", tc.name, tc.items+1, err)
			continue
		}
		if name, v, _ := pe.Param(); name != "Shards" || v != tc.items+1 {
			t.Errorf("%s: %d parts: error names %s = %v", tc.name, tc.items+1, name, v)
		}
	}
}
