package constraints

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// probOne is Pr[output 1 | L = l] of DaRRM_gamma (Algorithm 1), written
// from the mechanism, not from the weights separateOneVote uses.
func probOne(g []float64, l int) float64 {
	k := len(g) - 1
	if 2*l > k {
		return (1 + g[l]) / 2
	}
	return (1 - g[l]) / 2
}

// randomSymmetric returns a symmetric gamma for k teachers.
func randomSymmetric(r *rand.Rand, k int) []float64 {
	g := make([]float64, k+1)
	for l := range (k + 1) / 2 {
		g[l] = r.Float64()
		g[k-l] = g[l]
	}
	return g
}

// TestOneVoteSeparateAgainstDefinition checks the one-vote separation
// against the definition of (eps, delta)-DP for a binary output, written
// out for every pair of neighbouring counts l, l+1, both directions and
// both outputs (4K inequalities): the largest violation max over them of
// 2·(Pr[o | a] - e^eps·Pr[o | b] - delta) plus the budget is the maximum
// cost, and Cost of each multiset and Row·gamma agree with the costs.
func TestOneVoteSeparateAgainstDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	ctx := context.Background()
	for _, k := range []int{1, 3, 5, 11, 25, 51} {
		for _, delta := range []float64{0, 1e-5, 0.2} {
			p := NewOneVote(k, 0.05+2*r.Float64(), delta)
			for trial := range 4 {
				g := randomSymmetric(r, k)
				if trial == 0 {
					for l := range g {
						g[l] = 1
					}
				}
				e := p.E()
				want := math.Inf(-1)
				count := 0
				for l := 0; l < k; l++ {
					for _, ab := range [2][2]int{{l, l + 1}, {l + 1, l}} {
						a, b := ab[0], ab[1]
						one := probOne(g, a) - e*probOne(g, b) - delta
						zero := (1 - probOne(g, a)) - e*(1-probOne(g, b)) - delta
						want = math.Max(want, 2*math.Max(one, zero)+p.Budget())
						count += 2
					}
				}
				if count != 4*k {
					t.Fatalf("K=%d: %d inequalities, want 4K", k, count)
				}
				sep, err := p.Separate(ctx, g, SeparateOptions{Top: 4 * k, Floor: math.Inf(-1)})
				if err != nil {
					t.Fatal(err)
				}
				if d := math.Abs(sep.MaxF - want); d > 4*p.ErrBound() {
					t.Errorf("K=%d delta=%g: max f %v, by the definition %v", k, delta, sep.MaxF, want)
				}
				if sep.Configs.Cmp(big.NewInt(int64(2*k))) != 0 || p.NumConfigs().Int64() != int64(2*k) || len(sep.Top) != 2*k {
					t.Errorf("K=%d: %v configurations, %d in the top list; want 2K", k, sep.Configs, len(sep.Top))
				}
				n := 0
				p.AllConfigs(func(c Config) bool {
					n++
					cost, err := p.Cost(c, g)
					if err != nil {
						t.Fatal(err)
					}
					row, err := p.Row(c)
					if err != nil {
						t.Fatal(err)
					}
					var dot float64
					for i, v := range row {
						dot += v * g[p.H()+i]
					}
					var got float64 = math.NaN()
					for _, s := range sep.Top {
						if slices.Equal(s.Config, c) {
							got = s.F
						}
					}
					if math.Abs(cost-got) > 2*p.ErrBound() || math.Abs(dot-got) > 1e-12 {
						t.Errorf("K=%d %v: Separate %v, Cost %v, Row·gamma %v", k, c, got, cost, dot)
					}
					return true
				})
				if n != 2*k {
					t.Errorf("K=%d: AllConfigs gave %d, want 2K", k, n)
				}
			}
		}
	}
}

// TestOneVoteErrBoundAgainstBig compares every inequality and the budget,
// as computed, with their exact values at the float64 inputs.
func TestOneVoteErrBoundAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 19))
	used := 0.0
	for range 60 {
		k := 2*r.IntN(20) + 1
		delta := 0.0
		if r.IntN(3) > 0 {
			delta = math.Exp(-1 - 15*r.Float64())
		}
		p := NewOneVote(k, math.Exp(-6+8*r.Float64()), delta)
		g := randomSymmetric(r, k)
		corners := [][2]*big.Float{{bfl(0), bfl(0)}, {bfl(1), bfl(1)}, {bfl(1), bfl(0)}, {bfl(0), bfl(1)}}
		sep, err := p.Separate(context.Background(), g, SeparateOptions{Top: 2 * k, Floor: math.Inf(-1)})
		if err != nil {
			t.Fatal(err)
		}
		dB, _ := new(big.Float).Sub(bfl(p.Budget()), exactBudget(p)).Float64()
		for _, s := range sep.Top {
			d, _ := new(big.Float).Sub(bfl(s.F), exactF(p, s.Config, g, corners)).Float64()
			e := math.Abs(d) + math.Abs(dB)
			if e > p.ErrBound() {
				t.Errorf("%+v %v: error %g + budget error %g above the bound %g", p, s.Config, d, dB, p.ErrBound())
			}
			used = math.Max(used, e/p.ErrBound())
		}
	}
	t.Logf("the largest error observed used %.3g of the one-vote ErrBound", used)
}

// TestOneVoteRefusesAboveBudget: a gamma at the budget passes, and the
// same gamma with one value raised by 1e-9 exceeds the budget by more than
// the rounding bound.
func TestOneVoteRefusesAboveBudget(t *testing.T) {
	p := NewOneVote(11, 0.3, 1e-5)
	e := p.E()
	b := p.Budget()
	// The largest ramp (1 + e)·g(H) <= B, g(l+1) = min(1, e·g(l) + B,
	// (g(l) + B)/e), scaled a hair below the budget.
	g := make([]float64, p.K+1)
	h := p.H()
	up := math.Min(1, b/(1+e))
	for l := h; l <= p.K; l++ {
		if l > h {
			up = math.Min(1, math.Min(e*up+b, (up+b)/e))
		}
		g[l], g[p.K-l] = up*(1-1e-13), up*(1-1e-13)
	}
	sep, err := p.Separate(context.Background(), g, SeparateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !(sep.MaxF+sep.ErrBound <= b) {
		t.Fatalf("the ramp below the budget: max f %v + %v > budget %v", sep.MaxF, sep.ErrBound, b)
	}
	for l := h; l < p.K; l++ {
		bad := append([]float64(nil), g...)
		bad[l] += 1e-9
		bad[p.K-l] = bad[l]
		sep, err := p.Separate(context.Background(), bad, SeparateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !(sep.MaxF-sep.ErrBound > b) {
			t.Errorf("gamma(%d) raised by 1e-9: max f %v is not above the budget %v", l, sep.MaxF, b)
		}
	}
}

func TestOneVoteValidate(t *testing.T) {
	if err := NewOneVote(1001, 0.05, 1e-5).Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{K: 11, M: 2, Eps: 0.3, Relation: accountant.OneVote}, "m = 2: must be 1 in the one-vote relation"},
		{Problem{K: 11, M: 1, Eps: 0.3, Delta: 1e-5, TargetDelta: 1e-5, Relation: accountant.OneVote}, "Delta = 1e-05: must be 0 in the one-vote relation"},
		{NewOneVote(10, 0.3, 0), "K = 10"},
		{NewOneVote(11, 0, 0), "eps = 0"},
		{NewOneVote(11, 0.3, -1e-9), "delta"},
		{NewOneVote(maxKPure+2, 0.3, 0), "K = "},
		{Problem{K: 11, M: 1, Eps: 0.3, Relation: 7}, "relation = Relation(7)"},
	} {
		err := tc.p.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want it to say %q", tc.p, err, tc.want)
		}
	}
}

// TestOneVoteShards: the shards of a one-vote separation merge into the
// whole.
func TestOneVoteShards(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	p := NewOneVote(21, 0.4, 1e-6)
	g := randomSymmetric(r, p.K)
	ctx := context.Background()
	whole, err := p.Separate(ctx, g, SeparateOptions{Top: 9, Floor: math.Inf(-1)})
	if err != nil {
		t.Fatal(err)
	}
	var parts []Separation
	for i := range 4 {
		s, err := p.Separate(ctx, g, SeparateOptions{Top: 9, Floor: math.Inf(-1), Shard: i, Shards: 4})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, s)
	}
	got, err := p.MergeSeparations(parts, 9)
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxF != whole.MaxF || fmtCfg(got.Worst) != fmtCfg(whole.Worst) || got.Configs.Cmp(whole.Configs) != 0 {
		t.Errorf("merged %v %v %v, whole %v %v %v", got.MaxF, got.Worst, got.Configs, whole.MaxF, whole.Worst, whole.Configs)
	}
	for i := range got.Top {
		if got.Top[i].F != whole.Top[i].F || fmtCfg(got.Top[i].Config) != fmtCfg(whole.Top[i].Config) {
			t.Errorf("top %d differs", i)
		}
	}
}
