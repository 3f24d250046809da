package gamma

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/bigmath"
	"github.com/darrm/darrm/internal/param"
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
					got, err := pConst(eps, m, d[0], tau, d[1])
					if err != nil {
						t.Fatal(err)
					}
					want := math.Min(1, pconstLemma(eps, m, d[0], tau, d[1]))
					if rrRelErr(got, want) > 1e-12 {
						t.Errorf("pConst(%v, %v, %v, %v, %v) = %v, Lemma B.1.1 %v", eps, m, d[0], tau, d[1], got, want)
					}
				}
			}
		}
	}
	// Pure DP, simple composition: p_const = tanh(mε/2)/tanh(Kε/2) ≈ m/K.
	got, _ := pConst(0.01, 3, 0, 11, 0)
	if want := math.Tanh(0.015) / math.Tanh(0.055); rrRelErr(got, want) > 1e-14 {
		t.Errorf("pure DP p_const = %v, want %v", got, want)
	}
	// m >= τ and δ >= λ: always answer.
	if got, _ := pConst(0.1, 5, 0.01, 5, 0); got != 1 {
		t.Errorf("p_const = %v, want 1", got)
	}
	// No overflow for large τε.
	if got, err := pConst(1, 3, 0, 2000, 0); err != nil || !(got > 0 && got < 1) {
		t.Errorf("p_const for tau*eps = 2000: %v, %v", got, err)
	}
}

func TestRRParamsSimple(t *testing.T) {
	tau, lambda, err := rrParams(accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, 11, accountant.Simple, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rrRelErr(tau, 11) > 1e-15 || rrRelErr(lambda, 11e-5) > 1e-14 {
		t.Errorf("simple: tau %v lambda %v, want 11, 1.1e-4", tau, lambda)
	}
}

// TestRRParamsReference reproduces τ and λ of Table B.1 through rrParams.
func TestRRParamsReference(t *testing.T) {
	tau, lambda, err := rrParams(accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, 35, accountant.General, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%.4f", tau); got != "14.0328" {
		t.Errorf("tau = %v, Table B.1 prints 14.0328", tau)
	}
	if got := fmt.Sprintf("%.4f", lambda); got != "0.1003" {
		t.Errorf("lambda = %v, Table B.1 prints 0.1003", lambda)
	}
}

// TestRRErrors: a parameter out of its domain, or a derived one that
// floating point cannot hold (a τ that underflows, a λ rounded to 1), is
// refused as a parameter error naming the parameter the caller set.
func TestRRErrors(t *testing.T) {
	ok := accountant.Guarantee{Eps: 0.1, Delta: 1e-5}
	for _, tt := range []struct {
		name, param string
		call        func() error
	}{
		{"p_const m 0", "m", func() error { _, err := pConst(0.1, 0, 0, 3, 0); return err }},
		{"p_const tau Inf", "tau", func() error { _, err := pConst(0.1, 1, 0, math.Inf(1), 0); return err }},
		{"p_const lambda 1", "lambda", func() error { _, err := pConst(0.1, 1, 0, 3, 1); return err }},
		{"rr params K 0", "k", func() error { _, _, err := rrParams(ok, 0, accountant.General, 0.1); return err }},
		{"tau underflows", "eps", func() error {
			// Optimal composition: general's kε² no longer rounds to 0.
			_, _, err := rrParams(accountant.Guarantee{Eps: 1e-300, Delta: 1e-5}, 2001, accountant.Optimal, 1e-5)
			return err
		}},
		{"lambda reaches 1", "Delta", func() error {
			_, _, err := rrParams(accountant.Guarantee{Eps: 0.1, Delta: 0.999}, 2001, accountant.General, 1e-5)
			return err
		}},
	} {
		err := tt.call()
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != tt.param {
			t.Errorf("%s: %v, want a *ParamError naming %s", tt.name, err, tt.param)
			continue
		}
		if !strings.Contains(err.Error(), pe.Rule) {
			t.Errorf("%s: message %q does not state the rule", tt.name, err)
		}
	}
}

// rrRelErr is |got - want| / |want|.
func rrRelErr(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

func BenchmarkPConst(b *testing.B) {
	var sink float64
	for b.Loop() {
		sink, _ = pConst(0.1, 3, 3e-5, 14.0328, 0.1003)
	}
	_ = sink
}

// TestPConstVertices checks p_const against every vertex of the
// (τε, λ)-DP polygon of the majority, in exact arithmetic (math/big at
// 300 bits, e^x by bigmath): the release's hockey-stick divergence at mε
// is at most δ at each, which Lemma B.1.1's bound alone does not give
// where λ > δ (the vertex (λ, 0)) nor where both of its sides round to 1
// (mε above about 37).
func TestPConstVertices(t *testing.T) {
	const prec = 300
	bf := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	for _, c := range []struct{ eps, m, delta, tau, lambda float64 }{
		{20, 2, 0, 5, 0},                     // majority of 5 teachers each 20-DP, release held to 40-DP
		{1, 40, 0, 101, 0},                   // K = 101, ε = 1, m = 40: both sides round to 1
		{0.5, 21, 0.005, 20.5268, 0.0999216}, // K = 21, Δ = δ = 0.005, optimal: m > τ, λ > δ
		{0.2, 60, 0.002, 58.291, 0.0961217},  // K = 101, Δ = 0.001, general
		{0.1, 3, 3e-5, 14.0328, 0.1003},
		{0.01, 3, 0, 11, 0},
		{1, 3, 1e-3, 6, 1e-4},
	} {
		p, err := pConst(c.eps, c.m, c.delta, c.tau, c.lambda)
		if err != nil {
			t.Fatal(err)
		}
		x := bigmath.Exp(bf(c.m*c.eps), prec)
		et := bigmath.Exp(bf(c.tau*c.eps), prec)
		one, l := bf(1), bf(c.lambda)
		den := new(big.Float).SetPrec(prec).Add(et, one)
		vm := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).Add(et, l), den)
		vq := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).Sub(one, l), den)
		vertices := [][2]*big.Float{{l, bf(0)}, {one, new(big.Float).SetPrec(prec).Sub(one, l)}, {vm, vq}}
		// worst is the release's largest divergence at m·eps over the
		// vertices, both orders and both answers, at constant q.
		worst := func(q *big.Float) *big.Float {
			half := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).Sub(one, q), bf(2))
			release := func(m *big.Float) *big.Float {
				return new(big.Float).SetPrec(prec).Add(half, new(big.Float).SetPrec(prec).Mul(q, m))
			}
			w := bf(math.Inf(-1))
			for _, v := range vertices {
				for _, pair := range [][2]*big.Float{{v[0], v[1]}, {v[1], v[0]}} {
					P, Q := release(pair[0]), release(pair[1])
					for range 2 {
						if hs := new(big.Float).SetPrec(prec).Sub(P, new(big.Float).SetPrec(prec).Mul(x, Q)); hs.Cmp(w) > 0 {
							w = hs
						}
						P, Q = new(big.Float).SetPrec(prec).Sub(one, P), new(big.Float).SetPrec(prec).Sub(one, Q)
					}
				}
			}
			return w
		}
		if w := worst(bf(p)); w.Cmp(bf(c.delta)) > 0 {
			t.Errorf("pConst(%v, %v, %v, %v, %v) = %v: the release's divergence at m·eps reaches %.6g > delta %v at a vertex of the majority's region",
				c.eps, c.m, c.delta, c.tau, c.lambda, p, w, c.delta)
		}
		// And it is the largest: a p_const larger by a relative 1e-9 (or
		// 1, for one within 2^-52 of it) is not private.
		if p < 1 {
			if w := worst(bf(math.Min(1, math.Max(p*(1+1e-9), p+0x1p-52)))); w.Cmp(bf(c.delta)) <= 0 {
				t.Errorf("pConst(%v, %v, %v, %v, %v) = %v: a larger p_const is still (m·eps, delta)-DP (divergence %.6g)", c.eps, c.m, c.delta, c.tau, c.lambda, p, w)
			}
		}
	}
}
