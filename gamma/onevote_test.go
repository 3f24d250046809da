package gamma

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
)

// TestOneVotePerturbedFails: the greatest private gamma, certified, fails
// the certificate when any value below 1 is raised by 1e-9 (with its
// mirror image), and Certify brings it back.
func TestOneVotePerturbedFails(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		k          int
		eps, delta float64
	}{{11, 0.3, 1e-5}, {101, 0.1, 0}, {1001, 0.05, 1e-5}, {25, 2, 0.1}} {
		p := constraints.NewOneVote(tc.k, tc.eps, tc.delta)
		opt, err := OneVoteOpt(p)
		if err != nil {
			t.Fatal(err)
		}
		g, cert, err := Certify(ctx, p, opt, VerifyOptions{})
		if err != nil || cert.Status != Certified {
			t.Fatalf("%+v: %v %v", p, cert.Status, err)
		}
		if !slices.Equal(g, g.Realised()) {
			t.Errorf("%+v: the certified gamma is not on the sampling grid", p)
		}
		raised := 0
		for l := p.H(); l <= p.K; l++ {
			if g[l] > 1-1e-9 {
				continue
			}
			bad := slices.Clone(g)
			bad[l] += 1e-9
			bad[p.K-l] = bad[l]
			c, err := Verify(ctx, p, bad, VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != Violated {
				t.Errorf("%+v: gamma(%d) raised by 1e-9 is %v, max f / budget %.17g", p, l, c.Status, c.Ratio)
			}
			raised++
		}
		if raised == 0 {
			t.Errorf("%+v: no value below 1 to raise", p)
		}
	}
}

// TestOneVoteBaselineErrors: the one-vote baselines refuse a
// private-teachers problem.
func TestOneVoteBaselineErrors(t *testing.T) {
	if _, err := gnmaxBaseline(constraints.New(11, 3, 0.1, 1e-5)); err == nil {
		t.Error("gnmaxBaseline accepted a private-teachers problem")
	}
	if _, err := OneVoteOpt(constraints.New(11, 3, 0.1, 1e-5)); err == nil {
		t.Error("OneVoteOpt accepted a private-teachers problem")
	}
}

// TestOneVoteStated: a solve output's relation is read back with its
// parameters.
func TestOneVoteStated(t *testing.T) {
	tab, err := ReadTable(strings.NewReader(`{"K": 3, "m": 1, "eps": 0.3, "Delta": 0, "delta": 1e-5, "relation": "one-vote", "gamma": [0.2, 0.1, 0.1, 0.2]}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Relation == nil || *tab.Relation != accountant.OneVote {
		t.Fatalf("relation %v, want one-vote", tab.Relation)
	}
	if tab.M == nil || *tab.M != 1 || tab.Eps == nil || *tab.Eps != 0.3 || tab.TargetDelta == nil || *tab.TargetDelta != 1e-5 {
		t.Errorf("stated %+v", tab)
	}
	if _, err := ReadTable(strings.NewReader(`{"relation": "two-votes", "gamma": [0.5, 0.5]}`), 0); err == nil || !strings.Contains(err.Error(), "two-votes") {
		t.Errorf("a bad relation: %v", err)
	}
}
