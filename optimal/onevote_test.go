package optimal

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// denseOneVote solves the one-vote LP written from the definition alone,
// with gonum's simplex method: one variable for each of the K+1 values of
// gamma, not assumed symmetric; Pr[1 | l] = (1 + s_l·gamma(l))/2 with s_l = +1
// above K/2 and -1 below; for every l < K, both directions (l, l+1) and
// (l+1, l) and both outputs, Pr[o | a] <= e^eps·Pr[o | b] + delta; and the
// utility averaged over the two labels, sum_l (b_l - b_{K-l})·(2·Pr[1 | l] -
// 1)/2, with b the Binomial(K, mu) pmf of gonum's distuv. Its optimum
// equals the optimum over symmetric gammas: the relation and this utility
// are unchanged by relabelling the votes, so a gamma and its mirror image
// average to a symmetric gamma as good.
func denseOneVote(t *testing.T, k int, eps, delta, mu float64) float64 {
	t.Helper()
	e := math.Exp(eps)
	h := (k + 1) / 2
	sign := func(l int) float64 {
		if l >= h {
			return 1
		}
		return -1
	}
	// Rows: 4K privacy inequalities and K+1 upper bounds, each with its
	// own slack column.
	rows := 4*k + k + 1
	cols := k + 1 + rows
	a := mat.NewDense(rows, cols, nil)
	b := make([]float64, rows)
	r := 0
	add := func(coef map[int]float64, rhs float64) {
		for j, v := range coef {
			a.Set(r, j, a.At(r, j)+v)
		}
		a.Set(r, k+1+r, 1)
		b[r] = rhs
		r++
	}
	for l := 0; l < k; l++ {
		for _, ab := range [2][2]int{{l, l + 1}, {l + 1, l}} {
			x, y := ab[0], ab[1]
			// Pr[1|x] - e·Pr[1|y] <= delta, times 2, constants moved right.
			add(map[int]float64{x: sign(x), y: -e * sign(y)}, 2*delta+e-1)
			// Pr[0|x] - e·Pr[0|y] <= delta.
			add(map[int]float64{x: -sign(x), y: e * sign(y)}, 2*delta+e-1)
		}
	}
	for l := 0; l <= k; l++ {
		add(map[int]float64{l: 1}, 1)
	}
	bin := distuv.Binomial{N: float64(k), P: mu}
	c := make([]float64, cols)
	for l := 0; l <= k; l++ {
		c[l] = -(bin.Prob(float64(l)) - bin.Prob(float64(k-l))) * sign(l) / 2
	}
	basic := make([]int, rows)
	for i := range basic {
		basic[i] = k + 1 + i
	}
	opt, _, err := lp.Simplex(c, a, b, 1e-12, basic)
	if err != nil {
		t.Fatalf("dense LP K=%d eps=%g delta=%g: %v", k, eps, delta, err)
	}
	return -opt
}

// TestOneVoteMatchesDenseLP: for every odd K <= 51, at a pure-DP and an
// approximate-DP budget (taken in turn from five), Solve's utility and
// bound bracket the optimum of the independent dense LP; at K = 25 and 51
// under the prior T_P too. (gonum's simplex refactors its basis at every
// step: K = 51 takes half a second, the whole sweep some 16 s; -short
// stops at K = 25.)
func TestOneVoteMatchesDenseLP(t *testing.T) {
	maxK, stride := 51, 2
	if testing.Short() {
		// Under -short the same check at a smaller size: K up to 25 in
		// steps of 4, each budget and both priors still met.
		maxK, stride = 25, 4
	}
	pure := [][2]float64{{0.1, 0}, {1, 0}}
	approx := [][2]float64{{0.3, 1e-5}, {0.05, 0.01}, {2, 1e-3}}
	type prior struct {
		name string
		mu   float64
	}
	uniform, tp := prior{"uniform", 0.75}, prior{"tp", 0.85}
	for i, k := 0, 1; k <= maxK; i, k = i+1, k+stride {
		priors := []prior{uniform}
		if k == 25 || k == 51 {
			priors = append(priors, tp)
		}
		for _, bd := range [][2]float64{pure[i%len(pure)], approx[i%len(approx)]} {
			for _, pr := range priors {
				var prior gamma.Prior
				if err := prior.UnmarshalText([]byte(pr.name)); err != nil {
					t.Fatal(err)
				}
				p := constraints.NewOneVote(k, bd[0], bd[1])
				r := mustOpt(t, p, prior)
				want := denseOneVote(t, k, bd[0], bd[1], pr.mu)
				tol := 1e-9 * math.Max(1, math.Abs(want))
				if r.Utility > want+tol || r.UpperBound < want-tol || want-r.Utility > 1e-9 {
					t.Errorf("K=%d eps=%g delta=%g prior %s: utility %.15g, bound %.15g; dense LP %.15g", k, bd[0], bd[1], pr.name, r.Utility, r.UpperBound, want)
				}
			}
		}
	}
}

// TestOneVoteCanonicalIsTheProjection: the greatest private gamma that
// Solve returns is what the general path (cutting planes and the
// canonical tie-break by projection, which any utility would take)
// computes.
func TestOneVoteCanonicalIsTheProjection(t *testing.T) {
	for _, tc := range []struct {
		k          int
		eps, delta float64
	}{{11, 0.3, 1e-5}, {25, 0.3, 0}, {51, 0.1, 1e-3}, {101, 0.1, 0}, {201, 0.05, 1e-5}} {
		p := constraints.NewOneVote(tc.k, tc.eps, tc.delta)
		coeffs, err := gamma.UniformPrior().Coefficients(p.K)
		if err != nil {
			t.Fatal(err)
		}
		fast := mustOpt(t, p, gamma.UniformPrior())
		general, err := solveLP(context.Background(), p, coeffs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !general.TieBroken || general.Certificate.Status != gamma.Certified {
			t.Fatalf("%+v: the general path: tie-break %v, %v", p, general.TieBreakError, general.Certificate.Status)
		}
		var diff float64
		for l := range fast.Gamma {
			diff = math.Max(diff, math.Abs(fast.Gamma[l]-general.Gamma[l]))
		}
		if diff > 1e-7 {
			t.Errorf("%+v: the greatest gamma and the projection differ by %g", p, diff)
		}
	}
}

// TestOneVoteShape: gamma_opt is symmetric, ramps up from K/2 with
// (1 + e^eps)·gamma(H) at the budget, equals the truncated geometric
// mechanism's ramp under pure DP (1 - gamma falls by e^-eps a step), and
// grows with eps and with delta, value by value. Under -short K = 1001,
// whose fifteen solves take most of the time, is left to the full run.
func TestOneVoteShape(t *testing.T) {
	ks := []int{11, 101, 1001}
	if testing.Short() {
		ks = ks[:2]
	}
	for _, k := range ks {
		var prev gamma.Gamma
		for _, eps := range []float64{0.01, 0.05, 0.3, 1, 3} {
			for _, delta := range []float64{0, 1e-6, 1e-3} {
				p := constraints.NewOneVote(k, eps, delta)
				r := mustOpt(t, p, gamma.UniformPrior())
				g, h := r.Gamma, p.H()
				name := fmt.Sprintf("K=%d eps=%g delta=%g", k, eps, delta)
				for l := range g {
					if g[l] != g[k-l] {
						t.Fatalf("%s: not symmetric at %d", name, l)
					}
				}
				if got := (1 + p.E()) * g[h] / p.Budget(); math.Abs(got-1) > 1e-12 && g[h] < 1 {
					t.Errorf("%s: (1+e)·gamma(H)/budget = %.15g, want 1", name, got)
				}
				for l := h + 1; l <= k; l++ {
					if g[l] < g[l-1] {
						t.Errorf("%s: gamma(%d) = %v < gamma(%d) = %v", name, l, g[l], l-1, g[l-1])
					}
					if delta == 0 {
						want := 1 - (1-g[h])*math.Exp(-eps*float64(l-h))
						if math.Abs(g[l]-want) > 1e-9 {
							t.Errorf("%s: gamma(%d) = %.12g, geometric ramp %.12g", name, l, g[l], want)
						}
					}
				}
				if prev != nil && delta > 0 {
					for l := range g {
						if g[l] < prev[l]-1e-12 {
							t.Errorf("%s: gamma(%d) fell from %v as delta grew", name, l, prev[l])
						}
					}
				}
				prev = g
			}
			prev = nil
		}
	}
	for _, delta := range []float64{0, 1e-5} {
		var prev gamma.Gamma
		for _, eps := range []float64{0.01, 0.05, 0.3, 1, 3} {
			r := mustOpt(t, constraints.NewOneVote(101, eps, delta), gamma.UniformPrior())
			for l := range r.Gamma {
				if prev != nil && r.Gamma[l] < prev[l]-1e-12 {
					t.Errorf("delta=%g: gamma(%d) fell as eps grew to %g", delta, l, eps)
				}
			}
			prev = r.Gamma
		}
	}
}

// TestOneVoteAgainstGNMax reproduces the comparison of the LP's optimum
// with GNMax calibrated on its released bit (tight search), at the same
// per-query guarantee and the uniform prior.
func TestOneVoteAgainstGNMax(t *testing.T) {
	for _, tc := range []struct {
		k          int
		eps, delta float64
		opt, gnmax float64 // as measured, 4 digits
	}{
		{k: 11, eps: 0.3, delta: 1e-5, opt: 0.5243, gnmax: 0.3998},
		{k: 25, eps: 0.3, delta: 1e-5, opt: 0.8111, gnmax: 0.6039},
		{k: 101, eps: 0.1, delta: 0, opt: 0.9120, gnmax: 0.6942},
	} {
		p := constraints.NewOneVote(tc.k, tc.eps, tc.delta)
		r := mustOpt(t, p, gamma.UniformPrior())
		bs, err := gamma.Baselines(p, 0)
		if err != nil || len(bs) != 1 {
			t.Fatalf("K=%d: one-vote baselines %v, %v", tc.k, bs, err)
		}
		gn := bs[0]
		cert, err := gamma.Verify(context.Background(), p, gn.Gamma, gamma.VerifyOptions{})
		if err != nil || cert.Status != gamma.Certified {
			t.Fatalf("K=%d: GNMax %v, %v", tc.k, cert.Status, err)
		}
		coeffs, _ := gamma.UniformPrior().Coefficients(tc.k)
		u := utilityOf(t, gn.Gamma, coeffs)
		if math.Abs(r.Utility-tc.opt) > 5e-5 || math.Abs(u-tc.gnmax) > 5e-5 {
			t.Errorf("K=%d eps=%g delta=%g: LP %.5f, GNMax %.5f; measured %.4f and %.4f", tc.k, tc.eps, tc.delta, r.Utility, u, tc.opt, tc.gnmax)
		}
	}
}
