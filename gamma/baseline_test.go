package gamma

import (
	"errors"
	"math"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
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
	var pe *accountant.ParamError
	if _, err := NewRRConst(constraints.New(11, 3, 0.1, 1e-5), accountant.General, 0); !errors.As(err, &pe) || pe.Name != "delta'" {
		t.Errorf("slack 0: %v", err)
	}
}
