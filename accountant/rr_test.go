package accountant

import (
	"math"
	"testing"
)

// pconstLemma is Lemma B.1.1's bound as printed, unsimplified.
func pconstLemma(eps, m, delta, tau, lambda float64) float64 {
	em, et := math.Exp(m*eps), math.Exp(tau*eps)
	return (em - 1 + 2*delta) / (2*(et-em+(1+em)*lambda)/(et+1) + em - 1)
}

func TestPConst(t *testing.T) {
	for _, eps := range []float64{0.01, 0.1, 1} {
		for _, m := range []float64{1, 3, 5.5} {
			for _, tau := range []float64{6, 14.0328, 35} {
				for _, d := range [][2]float64{{0, 0}, {3e-5, 0.1003}, {1e-3, 1e-4}} {
					got, err := PConst(eps, m, d[0], tau, d[1])
					if err != nil {
						t.Fatal(err)
					}
					want := math.Min(1, pconstLemma(eps, m, d[0], tau, d[1]))
					if relErr(got, want) > 1e-12 {
						t.Errorf("PConst(%v, %v, %v, %v, %v) = %v, Lemma B.1.1 %v", eps, m, d[0], tau, d[1], got, want)
					}
				}
			}
		}
	}
	// Pure DP, simple composition: p_const = tanh(mε/2)/tanh(Kε/2) ≈ m/K.
	got, _ := PConst(0.01, 3, 0, 11, 0)
	if want := math.Tanh(0.015) / math.Tanh(0.055); relErr(got, want) > 1e-14 {
		t.Errorf("pure DP p_const = %v, want %v", got, want)
	}
	// m >= τ and δ >= λ: always answer.
	if got, _ := PConst(0.1, 5, 0.01, 5, 0); got != 1 {
		t.Errorf("p_const = %v, want 1", got)
	}
	// No overflow for large τε.
	if got, err := PConst(1, 3, 0, 2000, 0); err != nil || !(got > 0 && got < 1) {
		t.Errorf("p_const for tau*eps = 2000: %v, %v", got, err)
	}
}

func TestRRParamsSimple(t *testing.T) {
	tau, lambda, err := RRParams(Guarantee{0.1, 1e-5}, 11, Simple, 0)
	if err != nil {
		t.Fatal(err)
	}
	if relErr(tau, 11) > 1e-15 || relErr(lambda, 11e-5) > 1e-14 {
		t.Errorf("simple: tau %v lambda %v, want 11, 1.1e-4", tau, lambda)
	}
}
