package main

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// TestProblemBaselines: which baselines a problem gets, and how the options pick
// them: gamma_DSub only for pure DP, gamma_Sub of floor(m) teachers unless
// told, RR's composition auto or given; gamma_Sub has a proof where
// composition fits the target, gamma_DSub and RR always, and no baseline
// with a proof has a certificate that says it is over the budget.
func TestProblemBaselines(t *testing.T) {
	pure := constraints.Problem{K: 11, M: 2.5, Eps: 0.1}
	pureTeachers := constraints.Problem{K: 11, M: 3, Eps: 0.1, TargetDelta: 1e-6}
	for _, tc := range []struct {
		name   string
		p      constraints.Problem
		o      baselineOptions
		names  []string
		sub    int    // teachers gamma_Sub subsamples
		rrComp string // the composition RR's label names
		// subProof says that composition proves gamma_Sub private:
		// s <= m and 1-(1-Delta)^s <= delta.
		subProof bool
	}{
		{"approximate DP", constraints.New(11, 3, 0.1, 1e-5), baselineOptions{RR: autoRR, RRDeltaPrime: 1e-5}, []string{"sub", "rr"}, 3, "general", true},
		{"pure DP", pure, baselineOptions{RR: autoRR, RRDeltaPrime: 1e-5}, []string{"sub", "dsub", "rr"}, 2, "simple", true},
		{"pure teachers, delta > 0", pureTeachers, baselineOptions{RR: autoRR, RRDeltaPrime: 1e-5}, []string{"sub", "rr"}, 3, "simple", true},
		{"sub size given", constraints.New(11, 3, 0.1, 1e-5), baselineOptions{SubSize: 5, RR: autoRR, RRDeltaPrime: 1e-5}, []string{"sub", "rr"}, 5, "general", false},
		{"RR composition given", constraints.New(11, 3, 0.1, 1e-5), baselineOptions{RR: rrMethod{Method: accountant.Optimal}, RRDeltaPrime: 1e-6}, []string{"sub", "rr"}, 3, "optimal", true},
		{"delta below the teachers' composed Delta", constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: 2e-5}, baselineOptions{RR: autoRR, RRDeltaPrime: 1e-5}, []string{"sub", "rr"}, 3, "general", false},
	} {
		bases, err := problemBaselines(tc.p, tc.o)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var names []string
		for _, b := range bases {
			names = append(names, b.Name)
		}
		if !slices.Equal(names, tc.names) {
			t.Errorf("%s: baselines %v, want %v", tc.name, names, tc.names)
			continue
		}
		want, _ := subBaseline(tc.p, tc.sub)
		if !slices.Equal(bases[0].Gamma, want.Gamma) || bases[0].Label != want.Label {
			t.Errorf("%s: gamma_Sub is %q, want %q", tc.name, bases[0].Label, want.Label)
		}
		if proved := bases[0].Proof != ""; proved != tc.subProof {
			t.Errorf("%s: gamma_Sub's proof %q, want one: %v", tc.name, bases[0].Proof, tc.subProof)
		}
		if rr := bases[len(bases)-1]; !strings.Contains(rr.Label, "by "+tc.rrComp+" composition") {
			t.Errorf("%s: RR is %q, want %s composition", tc.name, rr.Label, tc.rrComp)
		}
		for _, b := range bases {
			cert, err := gamma.Verify(context.Background(), tc.p, b.Gamma, gamma.VerifyOptions{Workers: 1})
			if err != nil || cert.Status == gamma.Violated {
				t.Errorf("%s: %s is not private: %v %v", tc.name, b.Name, cert.Status, err)
			}
			if b.Name != "sub" && b.Proof == "" {
				t.Errorf("%s: %s has no proof", tc.name, b.Name)
			}
		}
	}
}

// TestProblemBaselinesErrors: a baseline that cannot be built is named, with the
// error of its constructor.
func TestProblemBaselinesErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		o     baselineOptions
		which string
		param bool // the error is an accountant.ParamError
	}{
		{"sub size above K", baselineOptions{SubSize: 12, RR: autoRR, RRDeltaPrime: 1e-5}, "sub", false},
		{"RR slack out of range", baselineOptions{RR: rrMethod{Method: accountant.General}, RRDeltaPrime: 0}, "rr", true},
	} {
		_, err := problemBaselines(constraints.New(11, 3, 0.1, 1e-5), tc.o)
		var be *baselineError
		var pe *accountant.ParamError
		if !errors.As(err, &be) || be.Name != tc.which || be.Error() != be.Err.Error() || errors.As(err, &pe) != tc.param {
			t.Errorf("%s: %v, want an error of %s", tc.name, err, tc.which)
		}
	}
}

// TestOneVoteBaselines: GNMax and RR are certified at their budgets, RR's
// constant sits a rounding bound below the middle pair's limit, and the
// private-teachers baselines are left out with a reason.
func TestOneVoteBaselines(t *testing.T) {
	ctx := context.Background()
	for _, p := range []constraints.Problem{constraints.NewOneVote(11, 0.3, 1e-5), constraints.NewOneVote(101, 0.1, 0), constraints.NewOneVote(51, 1, 1e-3)} {
		bases, err := problemBaselines(p, baselineOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, b := range bases {
			names = append(names, b.Name)
			cert, err := gamma.Verify(ctx, p, b.Gamma, gamma.VerifyOptions{})
			if err != nil || cert.Status != gamma.Certified {
				t.Errorf("%+v: %s is %v (%v), max f / budget %.17g", p, b.Name, cert.Status, err, cert.Ratio)
			}
			if !slices.Equal(b.Gamma, gamma.Realised(b.Gamma)) {
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
