package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// TestCompare: gamma_opt's errors and each baseline's evaluation are those
// of gamma.Gamma.Measure and gamma.Verify, in the baselines' order; a baseline
// that cannot be certified is named.
func TestCompare(t *testing.T) {
	ctx := context.Background()
	p := constraints.New(11, 3, 0.1, 1e-5)
	bases, err := gamma.Baselines(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := gamma.RRBaseline(p, setup.AutoRR.For(p.Delta), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	bases = append(bases, rr)
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
		want, _ := opt.Measure(context.Background(), testMemo, coeffs, actuals)
		if err != nil || len(errs) != 2 || !slices.Equal(errs, want.Errors) || len(evs) != len(tc.bases) {
			t.Fatalf("%s: %v, %d evaluations (%v)", tc.name, errs, len(evs), err)
		}
		for i, b := range tc.bases {
			cert, _ := gamma.Verify(ctx, p, b.Gamma, gamma.VerifyOptions{Workers: 1})
			m, _ := b.Gamma.Measure(context.Background(), testMemo, coeffs, actuals)
			if evs[i].Utility != m.Utility || evs[i].Certificate.Status != cert.Status || !slices.Equal(evs[i].Errors, m.Errors) {
				t.Errorf("%s: %s evaluated %+v, want %+v and %+v", tc.name, b.Name, evs[i], cert, m)
			}
		}
	}
}

// TestCompareAtBudget: at Delta = delta = 0, gamma_Sub and gamma_DSub are
// exactly at the budget, which the certificate finds tight; the table
// shows them at the budget by the result that proves it, not as "not
// certified", and the JSON keeps the certificate's status beside the
// proof. Every column of the table is explained under it, and the zeros of
// "E err 0.5" are said to be right.
func TestCompareAtBudget(t *testing.T) {
	dir := t.TempDir()
	args := []string{"solve", "--K", "11", "--m", "3", "--Delta", "0", "--delta", "0", "--compare", "--cache-dir", dir}
	out, stderr, code := darrm(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"AT BUDGET: Lemma 3.4.1 and composition", "AT BUDGET: Theorem 3.5.1",
		"  utility: ", "surrogate err: ", "  E err A: ", "  E err 0.5: 0 for every gamma, rightly", "  max f / budget: ",
		"  CERTIFIED: ", "  AT BUDGET: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not certified") || strings.Contains(out, "E err U(0,1): 0 for every") {
		t.Errorf("the table says a proved baseline is not certified, or a drawn error is 0 for all:\n%s", out)
	}
	js, _, _ := darrm(t, "", append(args, "--format", "json")...)
	var doc report.Solve
	decode(t, js, &doc)
	for _, m := range doc.Compare {
		if (m.Name == "sub" || m.Name == "dsub") && (m.Certificate.Status != gamma.Tight || m.Proof == "") {
			t.Errorf("%s: status %v, proof %q; want tight with a proof", m.Name, m.Certificate.Status, m.Proof)
		}
	}
	// gamma_Sub of 5 teachers at m = 3 is gamma_DSub; of 7, over the
	// budget, with no proof.
	for size, want := range map[string]string{"5": "│ gamma_sub  │ 1                 │ AT BUDGET: Theorem 3.5.1", "7": "VIOLATED"} {
		out, _, _ = darrm(t, "", append(args, "--sub-size", size)...)
		if row := strings.Index(out, "│ gamma_sub  │ "); row < 0 || !strings.Contains(out, want) || strings.Contains(out[row:], "AT BUDGET: Lemma") {
			t.Errorf("--sub-size %s: want %q:\n%s", size, want, out)
		}
	}
}

// TestCompareActualOnePerFlag: each --actual is one distribution, its
// value never split at commas, which U(a,b) and a list of the K teachers'
// probabilities both hold: split, "0.9,0.1,0.5" was three distributions
// of one probability each, and "U(0,1)" two pieces refused.
func TestCompareActualOnePerFlag(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := darrm(t, "", "solve", "--K", "3", "--m", "1", "--compare", "--actual", "0.9,0.1,0.5", "--actual", "U(0,1)", "--format", "json", "--cache-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Errors []struct {
			Actual string `json:"actual"`
			Exact  bool   `json:"exact"`
		} `json:"expected_errors"`
	}
	decode(t, out, &doc)
	if len(doc.Errors) != 2 || doc.Errors[0].Actual != "0.9,0.1,0.5" || !doc.Errors[0].Exact || doc.Errors[1].Actual != "U(0,1)" || doc.Errors[1].Exact {
		t.Errorf("expected errors %+v, want the fixed 0.9,0.1,0.5 and the drawn U(0,1)", doc.Errors)
	}
	// A list of distributions in one value is refused, naming the flag.
	if _, stderr, code := darrm(t, "", "solve", "--K", "3", "--m", "1", "--compare", "--actual", "U(0,1),0.5", "--cache-dir", dir); code != 2 || !strings.Contains(stderr, `--actual: actual distribution "U(0,1),0.5"`) {
		t.Errorf("--actual U(0,1),0.5: exit %d, %s; want 2 naming the value", code, stderr)
	}
}
