package gamma

import (
	"context"
	"math"
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
		if !slices.Equal(g, Realised(g)) {
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

// TestOneVoteBaselines: GNMax and RR are certified at their budgets, RR's
// constant sits a rounding bound below the middle pair's limit, and the
// private-teachers baselines are left out with a reason.
func TestOneVoteBaselines(t *testing.T) {
	ctx := context.Background()
	for _, p := range []constraints.Problem{constraints.NewOneVote(11, 0.3, 1e-5), constraints.NewOneVote(101, 0.1, 0), constraints.NewOneVote(51, 1, 1e-3)} {
		bases, err := Baselines(p, BaselineOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, b := range bases {
			names = append(names, b.Name)
			cert, err := Verify(ctx, p, b.Gamma, VerifyOptions{})
			if err != nil || cert.Status != Certified {
				t.Errorf("%+v: %s is %v (%v), max f / budget %.17g", p, b.Name, cert.Status, err, cert.Ratio)
			}
			if !slices.Equal(b.Gamma, Realised(b.Gamma)) {
				t.Errorf("%+v: %s is not on the sampling grid", p, b.Name)
			}
		}
		if !slices.Equal(names, []string{"gnmax", "rr"}) {
			t.Errorf("baselines %v, want gnmax and rr", names)
		}
		if rr := bases[1].Gamma[0]; math.Abs(rr*(1+p.E())/p.Budget()-1) > 1e-13 {
			t.Errorf("%+v: RR's constant %v is not at the limit B/(1+e)", p, rr)
		}
		var omitted []string
		for _, o := range OmittedBaselines(p) {
			omitted = append(omitted, o.Name)
			if o.Reason == "" {
				t.Errorf("%s omitted without a reason", o.Name)
			}
		}
		if !slices.Equal(omitted, []string{"sub", "dsub"}) {
			t.Errorf("omitted %v, want sub and dsub", omitted)
		}
	}
	if _, err := GNMaxBaseline(constraints.New(11, 3, 0.1, 1e-5)); err == nil {
		t.Error("GNMaxBaseline accepted a private-teachers problem")
	}
	if _, err := OneVoteOpt(constraints.New(11, 3, 0.1, 1e-5)); err == nil {
		t.Error("OneVoteOpt accepted a private-teachers problem")
	}
}

// TestOneVoteStated: a solve output's relation is read back with its
// parameters.
func TestOneVoteStated(t *testing.T) {
	tab, err := ReadTable(strings.NewReader(`{"K": 3, "m": 1, "eps": 0.3, "Delta": 0, "delta": 1e-5, "relation": "one-vote", "gamma": [0.2, 0.1, 0.1, 0.2]}`))
	if err != nil {
		t.Fatal(err)
	}
	if tab.Relation == nil || *tab.Relation != accountant.OneVote {
		t.Fatalf("relation %v, want one-vote", tab.Relation)
	}
	if tab.M == nil || *tab.M != 1 || tab.Eps == nil || *tab.Eps != 0.3 || tab.TargetDelta == nil || *tab.TargetDelta != 1e-5 {
		t.Errorf("stated %+v", tab.Stated)
	}
	if _, err := ReadTable(strings.NewReader(`{"relation": "two-votes", "gamma": [0.5, 0.5]}`)); err == nil || !strings.Contains(err.Error(), "two-votes") {
		t.Errorf("a bad relation: %v", err)
	}
}
