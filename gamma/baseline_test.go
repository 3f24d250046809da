package gamma

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/internal/param"
)

// TestRRConst: p_const comes from Lemma B.1.1's (tau, lambda) and
// p_const, rounded down to a multiple of 2^-53, and is RR's gamma.
func TestRRConst(t *testing.T) {
	for _, tc := range []struct {
		p    constraints.Problem
		comp accountant.Method
	}{
		{constraints.New(11, 3, 0.1, 1e-5), accountant.General},
		{constraints.New(11, 3, 0.1, 1e-5), accountant.Optimal},
		{constraints.Problem{K: 11, M: 2, Eps: 0.1}, accountant.Simple},
		{constraints.New(101, 10, 0.1, 1e-5), accountant.General},
	} {
		rr, err := NewRRConst(tc.p, tc.comp, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		tau, lambda, _ := rrParams(accountant.Guarantee{Eps: tc.p.Eps, Delta: tc.p.Delta}, tc.p.K, tc.comp, 1e-5)
		pc, _ := pConst(tc.p.Eps, tc.p.M, tc.p.TargetDelta, tau, lambda)
		if rr.Tau != tau || rr.Lambda != lambda || rr.PConst > pc || pc-rr.PConst >= 0x1p-53 || rr.PConst*(1<<53) != math.Floor(rr.PConst*(1<<53)) {
			t.Errorf("%+v by %v: %+v; accountant: tau %v, lambda %v, p_const %v", tc.p, tc.comp, rr, tau, lambda, pc)
		}
		b, _ := RRBaseline(tc.p, tc.comp, 1e-5)
		if b.Gamma[0] != rr.PConst || b.Gamma[tc.p.K] != rr.PConst {
			t.Errorf("%+v by %v: RR's gamma is %v, p_const %v", tc.p, tc.comp, b.Gamma[0], rr.PConst)
		}
	}
	var pe *param.Error
	if _, err := NewRRConst(constraints.New(11, 3, 0.1, 1e-5), accountant.General, 0); !errors.As(err, &pe) || pe.Name != "delta'" {
		t.Errorf("slack 0: %v", err)
	}
}

// TestBaselines: which baselines a problem gets: gamma_DSub only for pure
// DP, gamma_Sub of floor(m) teachers unless told, GNMax alone in the
// one-vote relation; gamma_Sub has a proof where composition fits the
// target, gamma_DSub always, and no baseline is over the budget (GNMax is
// certified).
func TestBaselines(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       constraints.Problem
		subSize int
		names   []string
		sub     int // teachers gamma_Sub subsamples
		// subProof says that composition proves gamma_Sub private:
		// s <= m and 1-(1-Delta)^s <= delta.
		subProof bool
	}{
		{"approximate DP", constraints.New(11, 3, 0.1, 1e-5), 0, []string{"sub"}, 3, true},
		{"pure DP", constraints.Problem{K: 11, M: 2.5, Eps: 0.1}, 0, []string{"sub", "dsub"}, 2, true},
		{"pure teachers, delta > 0", constraints.Problem{K: 11, M: 3, Eps: 0.1, TargetDelta: 1e-6}, 0, []string{"sub"}, 3, true},
		{"sub size given", constraints.New(11, 3, 0.1, 1e-5), 5, []string{"sub"}, 5, false},
		{"delta below the teachers' composed Delta", constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: 2e-5}, 0, []string{"sub"}, 3, false},
		{"one-vote", constraints.NewOneVote(11, 0.3, 1e-5), 0, []string{"gnmax"}, 0, false},
		{"one-vote, pure", constraints.NewOneVote(101, 0.1, 0), 0, []string{"gnmax"}, 0, false},
	} {
		bases, err := Baselines(tc.p, tc.subSize)
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
		if tc.sub > 0 {
			want, _ := Sub(tc.p.K, tc.sub)
			if !slices.Equal(bases[0].Gamma, want) || !strings.Contains(bases[0].Label, fmt.Sprintf("majority of %d of the %d teachers", tc.sub, tc.p.K)) {
				t.Errorf("%s: gamma_Sub is %q, want that of %d teachers", tc.name, bases[0].Label, tc.sub)
			}
			if proved := bases[0].Proof != ""; proved != tc.subProof {
				t.Errorf("%s: gamma_Sub's proof %q, want one: %v", tc.name, bases[0].Proof, tc.subProof)
			}
		}
		for _, b := range bases {
			cert, err := Verify(context.Background(), tc.p, b.Gamma, VerifyOptions{Workers: 1})
			if err != nil || cert.Status == Violated || (b.Name == "gnmax" && cert.Status != Certified) {
				t.Errorf("%s: %s is not private: %v %v", tc.name, b.Name, cert.Status, err)
			}
			if b.Name == "dsub" && b.Proof == "" {
				t.Errorf("%s: %s has no proof", tc.name, b.Name)
			}
		}
	}
	if _, err := Baselines(constraints.New(11, 3, 0.1, 1e-5), 12); err == nil || !strings.Contains(err.Error(), "gamma_Sub: subsample size 12") {
		t.Errorf("a subsample above K: %v", err)
	}
}

// TestBaselinesValidate: Baselines refuses a problem Validate refuses,
// naming the parameter, as RRBaseline does: it returned gamma_Sub with
// "Lemma 3.4.1 and composition" for its proof at eps NaN or +Inf, at
// delta NaN and in an unknown relation.
func TestBaselinesValidate(t *testing.T) {
	for _, tc := range []struct {
		name, param string
		p           constraints.Problem
	}{
		{"eps NaN", "eps", constraints.Problem{K: 3, M: 1, Eps: math.NaN()}},
		{"eps +Inf", "eps", constraints.Problem{K: 3, M: 1, Eps: math.Inf(1)}},
		{"delta NaN", "delta", constraints.Problem{K: 3, M: 1, Eps: 1, TargetDelta: math.NaN()}},
		{"m above K", "m", constraints.Problem{K: 3, M: 5, Eps: 1}},
		{"relation", "relation", constraints.Problem{K: 3, M: 1, Eps: 1, Relation: 99}},
	} {
		bases, err := Baselines(tc.p, 0)
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != tc.param {
			t.Errorf("%s: %v, %v; want an error naming %s", tc.name, bases, err, tc.param)
		}
	}
}
