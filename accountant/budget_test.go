package accountant

import (
	"errors"
	"math"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

// TestBudgetValidate: a budget names its first bad value, with the rule
// it breaks; a composition's slack is checked after it (MaxSteps), and
// simple composition refuses a slack outside (0, 1) too.
func TestBudgetValidate(t *testing.T) {
	ok := Composition{Method: General, DeltaPrime: 1e-5}
	// The rules of Budget.Validate, the one check of a budget: an ε as
	// every step's, a δ as every total's (param.GuaranteeDelta).
	positive, deltaRule := "must be a finite number > 0", param.GuaranteeDelta("", 1).(*param.Error).Rule
	for _, tc := range []struct {
		name string
		b    Budget
		c    Composition
		want string // the parameter named, "" for none
		rule string
	}{
		{"general", Budget{Guarantee{1, 1e-5}}, ok, "", ""},
		{"pure budget, simple", Budget{Guarantee{1, 0}}, Composition{Simple, 1e-5}, "", ""},
		{"eps 0", Budget{Guarantee{0, 1e-5}}, ok, "budget eps", positive},
		{"eps Inf", Budget{Guarantee{math.Inf(1), 1e-5}}, ok, "budget eps", positive},
		{"eps NaN", Budget{Guarantee{math.NaN(), 1e-5}}, ok, "budget eps", positive},
		{"delta 0.5", Budget{Guarantee{1, 0.5}}, ok, "", ""},
		{"delta 0.9 (issue 55)", Budget{Guarantee{1, 0.9}}, ok, "budget delta", deltaRule},
		{"delta 1", Budget{Guarantee{1, 1}}, ok, "budget delta", deltaRule},
		{"delta negative", Budget{Guarantee{1, -1e-9}}, ok, "budget delta", deltaRule},
		{"delta' 0", Budget{Guarantee{1, 1e-5}}, Composition{General, 0}, "delta'", "must be in (0, 1)"},
		{"delta' 0, simple", Budget{Guarantee{1, 1e-5}}, Composition{Simple, 0}, "delta'", "must be in (0, 1)"},
		{"delta' 1", Budget{Guarantee{1, 1e-5}}, Composition{Optimal, 1}, "delta'", "must be in (0, 1)"},
		{"eps before delta'", Budget{Guarantee{-1, 1e-5}}, Composition{Optimal, 1}, "budget eps", positive},
	} {
		err := tc.b.Validate()
		if err == nil {
			err = tc.c.Validate()
		}
		if _, merr := tc.c.MaxSteps(Guarantee{Eps: 0.1}, tc.b); tc.c.Method != Simple && (merr == nil) != (err == nil) {
			t.Errorf("%s: MaxSteps: %v, the budget and the composition: %v", tc.name, merr, err)
		}
		var pe *param.Error
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && !errors.As(err, &pe):
			t.Errorf("%s: err %v, want a *param.Error", tc.name, err)
		case tc.want != "" && (pe.Name != tc.want || pe.Rule != tc.rule):
			t.Errorf("%s: %s: %s, want %s: %s", tc.name, pe.Name, pe.Rule, tc.want, tc.rule)
		}
		if tc.want == "delta'" && tc.b.Validate() != nil {
			t.Errorf("%s: the budget alone fails", tc.name)
		}
	}
}
