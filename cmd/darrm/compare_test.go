package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// TestCompare: gamma_opt's errors and each baseline's evaluation are those
// of gamma.Measure and gamma.Verify, in the baselines' order; a baseline
// that cannot be certified is named.
func TestCompare(t *testing.T) {
	ctx := context.Background()
	p := constraints.New(11, 3, 0.1, 1e-5)
	bases, err := problemBaselines(p, baselineOptions{RR: accountant.AutoRR, RRDeltaPrime: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	coeffs, _ := gamma.UniformPrior().Coefficients(p.K)
	var actuals []gamma.Actual
	for _, s := range []string{"0.5", "0.6"} {
		a, err := gamma.ParseActual(s)
		if err != nil {
			t.Fatal(err)
		}
		actuals = append(actuals, a)
	}
	opt := bases[0].Gamma
	for _, tc := range []struct {
		name  string
		bases []gamma.Baseline
		want  string // in the error
	}{
		{"the baselines", bases, ""},
		{"none", nil, ""},
		{"a baseline of another K", []gamma.Baseline{{Name: "odd", Gamma: gamma.Gamma{0, 1}}}, "certify odd"},
	} {
		errs, evs, err := compare(ctx, p, opt, tc.bases, coeffs, actuals, 1)
		if tc.want != "" {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
			}
			continue
		}
		want, _ := gamma.Measure(opt, coeffs, actuals)
		if err != nil || len(errs) != 2 || !slices.Equal(errs, want.Errors) || len(evs) != len(tc.bases) {
			t.Fatalf("%s: %v, %d evaluations (%v)", tc.name, errs, len(evs), err)
		}
		for i, b := range tc.bases {
			cert, _ := gamma.Verify(ctx, p, b.Gamma, gamma.VerifyOptions{Workers: 1})
			m, _ := gamma.Measure(b.Gamma, coeffs, actuals)
			if evs[i].Utility != m.Utility || evs[i].Certificate.Status != cert.Status || !slices.Equal(evs[i].Errors, m.Errors) {
				t.Errorf("%s: %s evaluated %+v, want %+v and %+v", tc.name, b.Name, evs[i], cert, m)
			}
		}
	}
}
