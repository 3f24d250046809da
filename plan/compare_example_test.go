package plan_test

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/plan"
)

// accuracy returns the probability that a release with noise function g
// gives the true label, for K = len(g)-1 teachers each right with
// probability p independently: the majority is kept with probability
// (1+γ(l))/2 at l right votes (Lemma 3.4.3).
func accuracy(g gamma.Gamma, p float64) float64 {
	k := g.K()
	var acc float64
	for l := 0; l <= k; l++ {
		lg, _ := math.Lgamma(float64(k + 1))
		a, _ := math.Lgamma(float64(l + 1))
		b, _ := math.Lgamma(float64(k - l + 1))
		w := math.Exp(lg - a - b + float64(l)*math.Log(p) + float64(k-l)*math.Log1p(-p))
		if 2*l > k {
			acc += w * (1 + g[l]) / 2
		} else {
			acc += w * (1 - g[l]) / 2
		}
	}
	return acc
}

// Mechanisms compared at equal totals: for Q queries of 11 teachers in
// the one-vote relation and one total budget (4, 1e-5), each mechanism's
// per-query parameter planned for that total (OneVote, EqualTotals; to
// three digits: the search stops within 0.1% of the boundary), and the
// accuracy of its labels when each teacher is right with probability 0.75
// (the tightest composition that applies). darrm-one-vote and randomized
// response on the majority are pure ε-DP one-bit releases, each planned by
// its own exact composition: its pairs of output probabilities (for
// randomized response, optimal composition of its ε at the budget's δ);
// GNMax (--classes 2) adds discrete Gaussian noise to the two counts,
// whose label is scored as with continuous noise of the same σ. darrm
// solve --compare --budget-eps prints the same table.
func ExampleEqualTotals() {
	ctx := context.Background()
	budget := accountant.Guarantee{Eps: 4, Delta: 1e-5}
	// gamma_opt of the one-vote relation, for every prior, certified as
	// sampled (as optimal.Solve returns it).
	src := func(ctx context.Context, p constraints.Problem) (gamma.Gamma, error) {
		g, err := gamma.OneVoteOpt(p)
		if err != nil {
			return nil, err
		}
		g, _, err = gamma.Certify(ctx, p, g, gamma.VerifyOptions{})
		return g, err
	}
	base := plan.Request{Budget: budget, Method: accountant.Optimal, DeltaPrime: accountant.DefaultDeltaPrime, Gamma: src}
	fmt.Println("Q     eps/query  darrm-one-vote  rr     sigma2  gnmax")
	for _, q := range []int{10, 100, 1000} {
		eqs, err := plan.EqualTotals(ctx, plan.OneVote(base, 11, 1e-5), budget, q)
		if err != nil {
			fmt.Println(err)
			return
		}
		var acc [3]float64
		for i, e := range eqs {
			if e.NoFit != nil {
				fmt.Println(e.NoFit)
				return
			}
			var g gamma.Gamma
			if e.Plan.Parameter == "sigma2" {
				g, err = gamma.GNMax(11, e.Plan.Value)
			} else {
				var agg ensemble.Labeler
				agg, _, err = plan.Aggregator(ctx, e.Plan.Request)
				if err == nil {
					g = agg.(ensemble.Aggregator).Gamma()
				}
			}
			if err != nil {
				fmt.Println(err)
				return
			}
			acc[i] = accuracy(g, 0.75)
		}
		fmt.Printf("%-5d %-10.3g %-15.3f %-6.3f %-7.3g %.3f\n", q, eqs[0].Plan.Value, acc[0], acc[2], eqs[1].Plan.Value, acc[1])
	}
	// Output:
	// Q     eps/query  darrm-one-vote  rr     sigma2  gnmax
	// 10    0.4        0.807           0.592  4.84    0.771
	// 100   0.0938     0.611           0.522  15.3    0.600
	// 1000  0.0293     0.538           0.507  48.4    0.532
}
