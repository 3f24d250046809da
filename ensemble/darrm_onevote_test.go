package ensemble

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/fixtures"
	"github.com/darrm/darrm/provenance"
)

// TestOneVoteDaRRM: DaRRM with the one-vote gamma_opt is certified in the
// one-vote relation, states that relation, no teacher guarantee and the
// per-query target, and releases Algorithm 1's distribution.
func TestOneVoteDaRRM(t *testing.T) {
	ctx := context.Background()
	p := constraints.NewOneVote(11, 0.3, 1e-5)
	opt, err := gamma.OneVoteOpt(p)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := gamma.Certify(ctx, p, opt, gamma.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := newOneVoteDaRRM(ctx, p, g, Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	priv := d.Privacy()
	if c := priv.Certificate; c == nil || c.Status != gamma.Certified || c.Relation != accountant.OneVote {
		t.Fatalf("certificate %+v", c)
	}
	if priv.Relation != accountant.OneVote || priv.Teachers != (accountant.Guarantee{}) || priv.Guarantee != (accountant.Guarantee{Eps: 0.3, Delta: 1e-5}) {
		t.Errorf("privacy %+v: want (0.3, 1e-5) in the one-vote relation, no teacher guarantee", priv)
	}
	for l, v := range d.Gamma() {
		if v != g[l] {
			t.Errorf("sampled gamma(%d) = %v, certified %v: gamma_opt is on the sampling grid", l, v, g[l])
		}
	}
	checkDistribution(t, d, 1, func(l int) float64 { return probOne(g, l) })
}

// TestOneVoteDaRRMRejects: a gamma private as given but not as sampled, a
// gamma above the budget, and problems of the wrong relation are refused.
func TestOneVoteDaRRMRejects(t *testing.T) {
	ctx := context.Background()
	p, trap, err := fixtures.OneVoteRoundingTrap()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newOneVoteDaRRM(ctx, p, trap, Options{Memo: testMemo}); !errors.Is(err, gamma.ErrNotCertified) {
		t.Errorf("a gamma certified only before rounding: %v, want ErrNotCertified", err)
	}
	one, _ := gamma.Const(3, 1)
	if _, err := newOneVoteDaRRM(ctx, p, one, Options{Memo: testMemo}); !errors.Is(err, gamma.ErrNotCertified) || !strings.Contains(err.Error(), "violated") {
		t.Errorf("the plain majority: %v", err)
	}
	if _, err := newOneVoteDaRRM(ctx, constraints.New(11, 3, 0.1, 1e-5), optGamma(t, constraints.New(11, 3, 0.1, 1e-5)), Options{Memo: testMemo}); err == nil {
		t.Error("NewOneVoteDaRRM accepted a private-teachers problem")
	}
	if _, err := newPrivateDaRRM(ctx, p, gamma.Gamma{0, 0, 0, 0}, Options{Memo: testMemo}); err == nil || !strings.Contains(err.Error(), "one-vote") {
		t.Errorf("NewDaRRM with a one-vote problem: %v", err)
	}
}

// oneVoteGamma returns the certified gamma_opt of the one-vote problem of
// p's per-query target (m·eps, delta).
func oneVoteGamma(t testing.TB, p constraints.Problem) gamma.Gamma {
	t.Helper()
	q := oneVoteProblem(p)
	opt, err := gamma.OneVoteOpt(q)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := gamma.Certify(context.Background(), q, opt, gamma.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestOneVoteAccounting: the totals of DaRRM's labels in the one-vote
// relation add the exact composition of its pairs (at the budget's
// delta) and the profile's, below optimal composition's at the same
// delta, and a budget under optimal composition allows at least the
// queries the guarantee alone allows.
func TestOneVoteAccounting(t *testing.T) {
	p := constraints.NewOneVote(11, 0.2654, 3e-4)
	d, err := newOneVoteDaRRM(context.Background(), p, oneVoteGamma(t, p), Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	priv := d.Privacy()
	if len(priv.Profile) == 0 {
		t.Fatal("no profile")
	}
	budget := accountant.Guarantee{Eps: 5, Delta: 0.01}
	a, err := newAccounting(context.Background(), priv, provenance.Binding{Teachers: provenance.Teachers{K: 11, Relation: accountant.OneVote}}, accountant.Composition{Method: accountant.Optimal, DeltaPrime: 1e-4}, &budget)
	if err != nil {
		t.Fatal(err)
	}
	// The totals of as many labels as the budget allows: the count's
	// search has composed that many steps already.
	n := a.Limit()
	totals := a.Totals(n)
	opt, exact, last := totals[len(totals)-3], totals[len(totals)-2], totals[len(totals)-1]
	if len(totals) != 5 || last.Name() != "profile" || opt.Name() != "optimal" || exact.Method != accountant.Exact ||
		last.Guarantee.Delta != opt.Guarantee.Delta || !(last.Guarantee.Eps < opt.Guarantee.Eps) || exact.Guarantee.Delta != budget.Delta {
		t.Errorf("totals %+v", totals)
	}
	plain, _ := (accountant.Composition{Method: accountant.Optimal, DeltaPrime: 1e-4}).MaxSteps(priv.Guarantee, accountant.Budget{Guarantee: budget})
	if a.Limit() <= plain {
		t.Errorf("budget %v: %d queries, the guarantee alone allows %d", budget, a.Limit(), plain)
	}
	t.Logf("budget %v: %d queries (the guarantee's optimal composition: %d); their totals: %v by the profile, %v by optimal composition, %v by the exact composition of the label's pairs", budget, n, plain, last.Guarantee, opt.Guarantee, exact.Guarantee)
}

// oneVoteProblem returns the one-vote problem of the per-query target
// (m·eps, delta) of p.
func oneVoteProblem(p constraints.Problem) constraints.Problem {
	return constraints.NewOneVote(p.K, p.MEps(), p.TargetDelta)
}
