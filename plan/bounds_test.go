package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/votefile"
)

// TestParametersExtremes: a plan for absurd numbers of queries or
// budgets answers, or refuses naming what the caller set (the queries or
// the budget), never a parameter the search chose (a sigma2 below the
// samplers' least, a Laplace scale above their largest, an eps too
// small to certify), and never a count or size beyond the accountant's.
func TestParametersExtremes(t *testing.T) {
	ctx := context.Background()
	mechs := map[string]Request{
		"lnmax":          request(ensemble.LNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: 250}, 10, 2, 1e-5),
		"gnmax":          request(ensemble.GNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: 250, TargetDelta: 1e-5}, 10, 2, 1e-5),
		"darrm-one-vote": request(ensemble.OneVoteDaRRM{}.Name(), votefile.TwoClass, constraints.NewOneVote(11, 1, 0), 2, 2, 1e-5),
	}
	for name, r := range mechs {
		for _, c := range []struct {
			eps, delta float64
			queries    int
		}{{500, 1e-5, 1}, {2, 1e-5, 1e15}, {2, 0, 1e15}, {1e-12, 1e-5, 1}, {2, 1e-5, accountant.CountLimit + 1}, {2, 1e-5, 0}} {
			r.Budget.Eps, r.Budget.Delta = c.eps, c.delta
			pl, err := parameters(ctx, r, c.queries)
			what := fmt.Sprintf("%s, %d queries in (%g, %g)", name, c.queries, c.eps, c.delta)
			if err == nil {
				if pl.Count.Run < c.queries || !pl.Count.Total.Guarantee.Within(r.Budget.Guarantee) {
					t.Errorf("%s: %s = %v releases %d with total %v", what, pl.Parameter, pl.Value, pl.Count.Run, pl.Count.Total.Guarantee)
				}
				continue
			}
			var pe interface{ Param() (string, any, string) }
			if !errors.As(err, &pe) {
				t.Errorf("%s: %v, want a parameter error", what, err)
				continue
			}
			if p, _, _ := pe.Param(); p != "queries" && p != "budget-eps" && p != "budget eps" && p != "budget-delta" {
				t.Errorf("%s: %v names %q, a parameter the caller did not set", what, err, p)
			}
		}
	}
}

// TestQueriesBeyondCount: a budget within which more queries fit than
// the accountant counts allows accountant.CountLimit of them, by a total
// within it, as a release under it does (issue 55: plan refused a budget
// that aggregate and a ledger take).
func TestQueriesBeyondCount(t *testing.T) {
	r := request(ensemble.OneVoteDaRRM{}.Name(), votefile.TwoClass, constraints.NewOneVote(11, 1e-6, 0), 2, 1e10, 0.4)
	c, err := count(context.Background(), r)
	if err != nil || c.Run != accountant.CountLimit || !c.Total.Guarantee.Within(r.Budget.Guarantee) {
		t.Errorf("budget (1e10, 0.4) at per-query eps 1e-6: %d queries by %v, %v; want %d within the budget", c.Run, c.Total.Guarantee, err, accountant.CountLimit)
	}
}

// TestDiscreteTail: beyond its table the tail of the discrete Gaussian is
// the continuous one's from t - 1/2, which agrees with the table where
// both apply, and it allocates nothing at the samplers' largest scale.
func TestDiscreteTail(t *testing.T) {
	sigma := maxTailPoints / 40.0 * 0.99
	table := discreteTail(sigma)
	for _, x := range []int{-100000, -5000, 0, 1, 5000, 60000} {
		cont := 0.5 * math.Erfc((float64(x)-0.5)/(sigma*math.Sqrt2))
		if got := table(x); math.Abs(got-cont) > 1e-9*cont {
			t.Errorf("sigma %g, t = %d: table %.12g, continuous %.12g", sigma, x, got, cont)
		}
	}
	if got := discreteTail(1e15)(250); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("sigma 1e15: P(Z >= 250) = %v, want 1/2", got)
	}
}
