package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestCompareMinPrecision: a least precision outside [0, 1) is refused,
// naming it, as a Confident-GNMax plan refuses it: Compare took NaN or 1
// for none best and a negative one for any.
func TestCompareMinPrecision(t *testing.T) {
	proxy := Proxy{K: 11, Classes: 3, Counts: [][]int{{8, 2, 1}, {1, 9, 1}, {5, 4, 2}}}
	for _, prec := range []float64{math.NaN(), 1, -1, 2} {
		r := Request{K: 11, Classes: 3, Queries: 5, Proxy: &proxy, MinPrecision: prec}
		r.Budget = &accountant.Budget{Guarantee: accountant.Guarantee{Eps: 4, Delta: 1e-5}}
		c, err := Compare(context.Background(), r, []ensemble.Mechanism{ensemble.LNMax{}})
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != "min-precision" {
			t.Errorf("min-precision %v: best %d, %v; want an error naming min-precision", prec, c.Best, err)
		}
	}
}

// TestCompare: Compare plans every mechanism that fits the proxy votes
// for the same budget and queries, in its target: each plan fits the
// queries there, scores at most as many correct labels as it answers and
// at most as many as the queries, and Best is the one with the most;
// darrm-one-vote joins on two classes of K odd teachers who all vote, and
// is left out, said why, when some abstain, as progressive GNMax is on
// ten classes (planned on its own); with a least precision, the
// best is the one with the most correct labels among those that reach it
// (here Confident-GNMax, GNMax falling short), and a Confident-GNMax
// that cannot reach it says why.
func TestCompare(t *testing.T) {
	ctx := context.Background()
	ten := pateVotes(120, 250, 10, 0.05, 4)
	two := pateVotes(120, 11, 2, 0, 5)
	twoAbstain := pateVotes(120, 11, 2, 0.1, 6)
	for _, tc := range []struct {
		name    string
		proxy   Proxy
		eps     float64
		delta   float64
		queries int
		target  Target
		prec    float64 // the least precision
		want    []provenance.MechanismName
		left    string
	}{
		{"ten classes", ten, 8, 1e-6, 300, ForRun, 0, []provenance.MechanismName{ensemble.GNMax{}.Name(), ensemble.ConfidentGNMax{}.Name(), ensemble.LNMax{}.Name()}, "progressive-gnmax: planned on its own (plan --mechanism progressive-gnmax --votes)"},
		{"ten classes, a least precision", ten, 2, 1e-5, 300, ForRun, 0.95, []provenance.MechanismName{ensemble.GNMax{}.Name(), ensemble.ConfidentGNMax{}.Name(), ensemble.LNMax{}.Name()}, "progressive-gnmax: planned on its own (plan --mechanism progressive-gnmax --votes)"},
		// Under -short the ledger's plan is for 100 queries: its count
		// search is the costliest of the ten-class cases.
		{"ten classes, a ledger", ten, 2, 1e-5, shortOr(100, 200), ForLedger, 0, []provenance.MechanismName{ensemble.GNMax{}.Name(), ensemble.ConfidentGNMax{}.Name(), ensemble.LNMax{}.Name()}, "progressive-gnmax: planned on its own (plan --mechanism progressive-gnmax --votes)"},
		// Under -short both two-class cases plan 10 queries in (4, 1e-5)
		// by optimal composition, TestEqualTotals' budget and
		// ExampleCompareAtTotals' at 10 queries: GNMax's plan on two
		// classes, 17 exact compositions by an FFT of 2^19 points, is
		// then made once, here, and the accountant answers the second
		// case, TestEqualTotals and the example from what it keeps of the
		// pairs used last (this file runs after bounds_test.go, whose
		// searches use more sets of pairs than it keeps).
		{"two classes", two, shortOr(4.0, 2), 1e-5, shortOr(10, 20), ForRun, 0, []provenance.MechanismName{ensemble.GNMax{}.Name(), ensemble.ConfidentGNMax{}.Name(), ensemble.LNMax{}.Name(), ensemble.OneVoteDaRRM{}.Name()}, ""},
		{"two classes, abstentions", twoAbstain, 4, 1e-5, shortOr(10, 100), ForRun, 0, []provenance.MechanismName{ensemble.GNMax{}.Name(), ensemble.ConfidentGNMax{}.Name(), ensemble.LNMax{}.Name()}, "darrm-one-vote: it needs every teacher's vote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := request(ensemble.GNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: tc.proxy.K, TargetDelta: tc.delta}, tc.proxy.Classes, tc.eps, tc.delta)
			base.For, base.Queries, base.Proxy = tc.target, tc.queries, &tc.proxy
			base.MinPrecision, base.ratios = tc.prec, []float64{1.5, 4}
			c, err := Compare(ctx, base, compared(tc.proxy.K, tc.delta))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Plans) != len(tc.want) {
				t.Fatalf("%d plans, want %v", len(c.Plans), tc.want)
			}
			best := -1
			for i, s := range c.Plans {
				if s.Mechanism != tc.want[i] {
					t.Fatalf("plan %d: %s, want %s", i, s.Mechanism, tc.want[i])
				}
				if s.NoFit != nil {
					if tc.prec == 0 || !errors.As(s.NoFit, new(*precisionError)) {
						t.Errorf("%s: %v", s.Mechanism, s.NoFit)
					}
					continue
				}
				u, q := s.Plan.Utility, float64(tc.queries)
				if s.Plan.Count.of(tc.target) < tc.queries || !(u.Correct > 0 && u.Correct <= u.Answered*(1+1e-12) && u.Answered <= q*(1+1e-12)) {
					t.Errorf("%s: %d queries fit (%v), %v correct of %v answered: want >= %d, 0 < correct <= answered <= queries", s.Mechanism, s.Plan.Count.of(tc.target), tc.target, u.Correct, u.Answered, tc.queries)
				}
				if u.Correct >= tc.prec*u.Answered && (best < 0 || u.Correct > c.Plans[best].Plan.Utility.Correct) {
					best = i
				}
			}
			if c.Best != best || tc.prec > 0 && best < 0 {
				t.Errorf("best %d, want %d", c.Best, best)
			}
			if got := strings.Join(c.Left, "; "); !strings.Contains(got, tc.left) || (tc.left == "") != (got == "") {
				t.Errorf("left out: %q, want %q", got, tc.left)
			}
		})
	}
}

// compared returns darrm's mechanisms as a comparison takes them: on
// counts at the per-query delta, with the noise releases draw, and
// darrm-one-vote's gamma_opt solved without a cache.
func compared(k int, delta float64) []ensemble.Mechanism {
	var ms []ensemble.Mechanism
	for _, m := range ensemble.Mechanisms() {
		switch m := m.(type) {
		case ensemble.GNMax:
			m.Delta, m.Noise = delta, noisymax.DiscreteNoise
			ms = append(ms, m)
		case ensemble.ConfidentGNMax:
			m.Delta, m.Noise = delta, noisymax.DiscreteNoise
			ms = append(ms, m)
		case ensemble.OneVoteDaRRM:
			m.Eps, m.Gamma = 1, optimal.Source{Name: "gamma_opt"}
			ms = append(ms, m)
		default:
			ms = append(ms, m)
		}
	}
	return ms
}

// TestInParallelErrors: the errors of the calls are said once each, and
// an interruption alone: a plan of Confident-GNMax interrupted printed
// "context canceled" once for every sigma1/sigma2 ratio.
func TestInParallelErrors(t *testing.T) {
	bad := errors.New("--sigma2 = 0.1: must be in [0.5, 1e+15]")
	for _, tc := range []struct {
		name string
		errs []error
		want string
	}{
		{"none", []error{nil, nil}, ""},
		{"interrupted", []error{context.Canceled, nil, context.Canceled, context.Canceled}, "context canceled"},
		{"interrupted, wrapped", []error{nil, fmt.Errorf("budget: max run steps: %w", context.Canceled), context.Canceled}, "budget: max run steps: context canceled"},
		{"the same error", []error{bad, bad, nil, bad}, bad.Error()},
		{"two errors", []error{bad, errors.New("other"), bad}, bad.Error() + "\nother"},
	} {
		err := inParallel(len(tc.errs), func(i int) error { return tc.errs[i] })
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
