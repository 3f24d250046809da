package gamma

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
)

// TestBaselines: which baselines a problem gets, and how the options pick
// them: gamma_DSub only for pure DP, gamma_Sub of floor(m) teachers unless
// told, RR's composition auto or given.
func TestBaselines(t *testing.T) {
	pure := constraints.Problem{K: 11, M: 2.5, Eps: 0.1}
	pureTeachers := constraints.Problem{K: 11, M: 3, Eps: 0.1, TargetDelta: 1e-6}
	for _, tc := range []struct {
		name   string
		p      constraints.Problem
		o      BaselineOptions
		names  []string
		sub    int    // teachers gamma_Sub subsamples
		rrComp string // the composition RR's label names
	}{
		{"approximate DP", constraints.New(11, 3, 0.1, 1e-5), BaselineOptions{RR: accountant.AutoRR, RRDeltaPrime: 1e-5}, []string{"sub", "rr"}, 3, "general"},
		{"pure DP", pure, BaselineOptions{RR: accountant.AutoRR, RRDeltaPrime: 1e-5}, []string{"sub", "dsub", "rr"}, 2, "simple"},
		{"pure teachers, delta > 0", pureTeachers, BaselineOptions{RR: accountant.AutoRR, RRDeltaPrime: 1e-5}, []string{"sub", "rr"}, 3, "simple"},
		{"sub size given", constraints.New(11, 3, 0.1, 1e-5), BaselineOptions{SubSize: 5, RR: accountant.AutoRR, RRDeltaPrime: 1e-5}, []string{"sub", "rr"}, 5, "general"},
		{"RR composition given", constraints.New(11, 3, 0.1, 1e-5), BaselineOptions{RR: accountant.RRMethod{Method: accountant.Optimal}, RRDeltaPrime: 1e-6}, []string{"sub", "rr"}, 3, "optimal"},
	} {
		bases, err := Baselines(tc.p, tc.o)
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
		want, _ := subBaseline(tc.p.K, tc.sub)
		if !slices.Equal(bases[0].Gamma, want.Gamma) || bases[0].Label != want.Label {
			t.Errorf("%s: gamma_Sub is %q, want %q", tc.name, bases[0].Label, want.Label)
		}
		if rr := bases[len(bases)-1]; !strings.Contains(rr.Label, "by "+tc.rrComp+" composition") {
			t.Errorf("%s: RR is %q, want %s composition", tc.name, rr.Label, tc.rrComp)
		}
		for _, b := range bases {
			cert, err := Verify(context.Background(), tc.p, b.Gamma, VerifyOptions{Workers: 1})
			if err != nil || cert.Status == Violated {
				t.Errorf("%s: %s is not private: %v %v", tc.name, b.Name, cert.Status, err)
			}
		}
	}
}

// TestBaselinesErrors: a baseline that cannot be built is named, with the
// error of its constructor.
func TestBaselinesErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		o     BaselineOptions
		which string
		param bool // the error is an accountant.ParamError
	}{
		{"sub size above K", BaselineOptions{SubSize: 12, RR: accountant.AutoRR, RRDeltaPrime: 1e-5}, "sub", false},
		{"RR slack out of range", BaselineOptions{RR: accountant.RRMethod{Method: accountant.General}, RRDeltaPrime: 0}, "rr", true},
	} {
		_, err := Baselines(constraints.New(11, 3, 0.1, 1e-5), tc.o)
		var be *BaselineError
		var pe *accountant.ParamError
		if !errors.As(err, &be) || be.Name != tc.which || be.Error() != be.Err.Error() || errors.As(err, &pe) != tc.param {
			t.Errorf("%s: %v, want an error of %s", tc.name, err, tc.which)
		}
	}
}

// TestRRConst: p_const comes from the accountant's (tau, lambda) and
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
		tau, lambda, _ := accountant.RRParams(accountant.Guarantee{Eps: tc.p.Eps, Delta: tc.p.Delta}, tc.p.K, tc.comp, 1e-5)
		pc, _ := accountant.PConst(tc.p.Eps, tc.p.M, tc.p.TargetDelta, tau, lambda)
		if rr.Tau != tau || rr.Lambda != lambda || rr.PConst > pc || pc-rr.PConst >= 0x1p-53 || rr.PConst*(1<<53) != math.Floor(rr.PConst*(1<<53)) {
			t.Errorf("%+v by %v: %+v; accountant: tau %v, lambda %v, p_const %v", tc.p, tc.comp, rr, tau, lambda, pc)
		}
		b, _ := RRBaseline(tc.p, tc.comp, 1e-5)
		if b.Gamma[0] != rr.PConst || b.Gamma[tc.p.K] != rr.PConst {
			t.Errorf("%+v by %v: RR's gamma is %v, p_const %v", tc.p, tc.comp, b.Gamma[0], rr.PConst)
		}
	}
	var pe *accountant.ParamError
	if _, err := NewRRConst(constraints.New(11, 3, 0.1, 1e-5), accountant.General, 0); !errors.As(err, &pe) || pe.Name != "delta'" {
		t.Errorf("slack 0: %v", err)
	}
}
