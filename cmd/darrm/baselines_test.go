package main

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/param"
)

// TestRRBaseline: randomized response's composition is --rr-composition's,
// auto or given, and its baseline has a proof and is within the budget;
// a slack out of range is the accountant's parameter error.
func TestRRBaseline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      constraints.Problem
		rr     setup.RRMethod
		dp     float64
		rrComp string // the composition RR's label names
	}{
		{"approximate DP", constraints.New(11, 3, 0.1, 1e-5), setup.AutoRR, 1e-5, "general"},
		{"pure DP", constraints.Problem{K: 11, M: 2.5, Eps: 0.1}, setup.AutoRR, 1e-5, "simple"},
		{"pure teachers, delta > 0", constraints.Problem{K: 11, M: 3, Eps: 0.1, TargetDelta: 1e-6}, setup.AutoRR, 1e-5, "simple"},
		{"RR composition given", constraints.New(11, 3, 0.1, 1e-5), setup.RRMethod{Method: accountant.Optimal}, 1e-6, "optimal"},
	} {
		rr, err := gamma.RRBaseline(tc.p, tc.rr.For(tc.p.Delta), tc.dp)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if rr.Name != "rr" || rr.Proof == "" || !strings.Contains(rr.Label, "by "+tc.rrComp+" composition") {
			t.Errorf("%s: RR is %s %q (proof %q), want %s composition", tc.name, rr.Name, rr.Label, rr.Proof, tc.rrComp)
		}
		cert, err := gamma.Verify(context.Background(), tc.p, rr.Gamma, gamma.VerifyOptions{Workers: 1})
		if err != nil || cert.Status == gamma.Violated {
			t.Errorf("%s: RR is not private: %v %v", tc.name, cert.Status, err)
		}
	}
	_, err := gamma.RRBaseline(constraints.New(11, 3, 0.1, 1e-5), accountant.General, 0)
	if pe := (*param.Error)(nil); !errors.As(err, &pe) {
		t.Errorf("RR slack out of range: %v, want a parameter error", err)
	}
}

// TestOneVoteBaselines: RR is certified at its budget, its constant sits
// a rounding bound below the middle pair's limit, and the private-teachers
// baselines are left out with a reason.
func TestOneVoteBaselines(t *testing.T) {
	ctx := context.Background()
	for _, p := range []constraints.Problem{constraints.NewOneVote(11, 0.3, 1e-5), constraints.NewOneVote(101, 0.1, 0), constraints.NewOneVote(51, 1, 1e-3)} {
		b, err := gamma.RRBaseline(p, accountant.General, 0)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := gamma.Verify(ctx, p, b.Gamma, gamma.VerifyOptions{})
		if err != nil || cert.Status != gamma.Certified {
			t.Errorf("%+v: %s is %v (%v), max f / budget %.17g", p, b.Name, cert.Status, err, cert.Ratio)
		}
		if !slices.Equal(b.Gamma, b.Gamma.Realised()) {
			t.Errorf("%+v: %s is not on the sampling grid", p, b.Name)
		}
		if rr := b.Gamma[0]; b.Name != "rr" || math.Abs(rr*(1+p.E())/p.Budget()-1) > 1e-13 {
			t.Errorf("%+v: RR's constant %v is not at the limit B/(1+e)", p, rr)
		}
		var omitted []string
		for _, o := range omittedBaselines(p) {
			omitted = append(omitted, o.Name)
			if o.Reason == "" {
				t.Errorf("%s omitted without a reason", o.Name)
			}
		}
		if !slices.Equal(omitted, []string{"sub", "dsub"}) {
			t.Errorf("omitted %v, want sub and dsub", omitted)
		}
	}
}
