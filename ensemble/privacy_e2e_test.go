package ensemble

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// This file checks privacy end to end, without the corner reduction of
// Lemma 3.6.1 that the certificate rests on: teachers' output probabilities
// on neighbouring datasets are drawn from each teacher's whole feasible
// region, computed here from the definition of (ε, Δ)-DP, and both DP
// inequalities of the released label are evaluated with the Poisson
// binomial distribution of the votes.

// region returns the vertices, in order around it, of the set of (p, q) =
// (Pr[M(D) = 1], Pr[M(D') = 1]) allowed for an (eps, Delta)-DP teacher:
// p <= e^ε q + Δ, q <= e^ε p + Δ, 1-p <= e^ε(1-q) + Δ, 1-q <= e^ε(1-p) + Δ,
// inside [0, 1]². It intersects every pair of the eight boundary lines
// a·p + b·q = c and keeps the feasible points.
func region(eps, delta float64) [][2]float64 {
	e := math.Exp(eps)
	type line struct{ a, b, c float64 }
	lines := []line{
		{1, -e, delta}, {-e, 1, delta}, // p - e q <= Δ, q - e p <= Δ
		{-1, e, e - 1 + delta}, {e, -1, e - 1 + delta}, // e q - p <= e-1+Δ, e p - q <= e-1+Δ
		{1, 0, 0}, {1, 0, 1}, {0, 1, 0}, {0, 1, 1},
	}
	feasible := func(p, q float64) bool {
		const tol = 1e-12
		return p >= -tol && p <= 1+tol && q >= -tol && q <= 1+tol &&
			p <= e*q+delta+tol && q <= e*p+delta+tol && 1-p <= e*(1-q)+delta+tol && 1-q <= e*(1-p)+delta+tol
	}
	var vs [][2]float64
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			l, m := lines[i], lines[j]
			det := l.a*m.b - l.b*m.a
			if det == 0 {
				continue
			}
			p := (l.c*m.b - l.b*m.c) / det
			q := (l.a*m.c - l.c*m.a) / det
			if !feasible(p, q) {
				continue
			}
			p, q = math.Min(1, math.Max(0, p)), math.Min(1, math.Max(0, q))
			dup := false
			for _, v := range vs {
				dup = dup || math.Abs(v[0]-p)+math.Abs(v[1]-q) < 1e-12
			}
			if !dup {
				vs = append(vs, [2]float64{p, q})
			}
		}
	}
	// Order by angle around the centre (1/2, 1/2), which the region
	// contains, so that consecutive vertices span its boundary.
	ang := func(v [2]float64) float64 { return math.Atan2(v[1]-0.5, v[0]-0.5) }
	for i := 1; i < len(vs); i++ {
		for j := i; j > 0 && ang(vs[j]) < ang(vs[j-1]); j-- {
			vs[j], vs[j-1] = vs[j-1], vs[j]
		}
	}
	return vs
}

// violation returns the largest excess over δ of the two DP inequalities
// of DaRRM_g's label, Pr[o | D] <= e^{mε} Pr[o | D'] + δ for o = 1 and
// o = 0, when teacher i votes 1 with probability p[i] on D and q[i] on D'.
func violation(t *testing.T, g gamma.Gamma, p, q []float64, em, delta float64) float64 {
	one, err := g.LabelOne(p)
	if err != nil {
		t.Fatal(err)
	}
	oneN, err := g.LabelOne(q)
	if err != nil {
		t.Fatal(err)
	}
	return math.Max(one-em*oneN-delta, (1-one)-em*(1-oneN)-delta)
}

// worstViolation searches the teachers' regions for the largest violation:
// restarts from points drawn from the interior, the boundary and the
// vertices, then coordinate ascent, teacher by teacher, over the vertices
// (the violation is linear in one teacher's (p, q), so its maximum over the
// region is at a vertex).
func worstViolation(t *testing.T, g gamma.Gamma, prm constraints.Problem, restarts int, r *rand.Rand) float64 {
	vs := region(prm.Eps, prm.Delta)
	k := prm.K
	em := math.Exp(prm.M * prm.Eps)
	draw := func() [2]float64 {
		i := r.IntN(len(vs))
		switch r.IntN(3) {
		case 0: // a vertex
			return vs[i]
		case 1: // a boundary point
			j, s := (i+1)%len(vs), r.Float64()
			return [2]float64{vs[i][0] + s*(vs[j][0]-vs[i][0]), vs[i][1] + s*(vs[j][1]-vs[i][1])}
		}
		var pt [2]float64 // an interior point: a random convex combination
		var sum float64
		for _, v := range vs {
			w := r.ExpFloat64()
			pt[0] += w * v[0]
			pt[1] += w * v[1]
			sum += w
		}
		return [2]float64{pt[0] / sum, pt[1] / sum}
	}
	worst := math.Inf(-1)
	p, q := make([]float64, k), make([]float64, k)
	for range restarts {
		for i := range k {
			pt := draw()
			p[i], q[i] = pt[0], pt[1]
		}
		cur := violation(t, g, p, q, em, prm.TargetDelta)
		worst = math.Max(worst, cur)
		for sweep := 0; sweep < 10; sweep++ {
			improved := false
			for i := range k {
				for _, v := range vs {
					op, oq := p[i], q[i]
					p[i], q[i] = v[0], v[1]
					if x := violation(t, g, p, q, em, prm.TargetDelta); x > cur+1e-17 {
						cur, improved = x, true
					} else {
						p[i], q[i] = op, oq
					}
				}
			}
			if !improved {
				break
			}
		}
		worst = math.Max(worst, cur)
	}
	return worst
}

// TestPrivacyEndToEnd checks the certified aggregators of K = 11, m = 3
// against the definition, and shows the search catches a gamma whose
// privacy cost is 1e-6 (relative) above the budget.
func TestPrivacyEndToEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	prm := constraints.New(11, 3, 0.1, 1e-5)
	restarts := 60
	if testing.Short() {
		restarts = 15
	}
	if vs := region(prm.Eps, prm.Delta); len(vs) != 8 {
		t.Fatalf("the region of an (eps, Delta)-DP teacher with Delta > 0 has 8 vertices, got %v", vs)
	}
	for _, agg := range aggregators(t) {
		if agg.Name() == "gnmax" {
			continue // GNMax's guarantee is for another neighbouring relation
		}
		if v := worstViolation(t, agg.Gamma(), prm, restarts, r); v > 1e-12 {
			t.Errorf("%s: a configuration violates (m·eps, delta)-DP by %v", agg.Name(), v)
		} else {
			t.Logf("%s: largest excess over delta found %.3g (never above 0)", agg.Name(), v)
		}
	}
	// Pure DP: the regions have 4 vertices; gamma_DSub is certified there.
	pure := constraints.New(11, 3, 0.1, 0)
	if vs := region(pure.Eps, pure.Delta); len(vs) != 4 {
		t.Fatalf("the region of an eps-DP teacher has 4 vertices, got %v", vs)
	}
	for _, newSub := range []func(context.Context, constraints.Problem, Options) (*subsampleAggregator, error){newSubsample, newDoubleSubsample} {
		s, err := newSub(context.Background(), pure, Options{Memo: testMemo})
		if err != nil {
			t.Fatal(err)
		}
		if v := worstViolation(t, s.Gamma(), pure, restarts, r); v > 1e-12 {
			t.Errorf("%s, pure DP: a configuration violates (m·eps, 0)-DP by %v", s.Name(), v)
		}
	}
	// A constant gamma c: its privacy cost is c times the majority's (γ ≡ 1),
	// whose exact maximum the certificate gives; c puts it 1e-6 above the budget.
	ones := make(gamma.Gamma, prm.K+1)
	for l := range ones {
		ones[l] = 1
	}
	cert, err := gamma.Verify(context.Background(), prm, ones, gamma.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		scale float64
		bad   bool
	}{{1 + 1e-6, true}, {1 - 1e-6, false}} {
		g := make(gamma.Gamma, prm.K+1)
		for l := range g {
			g[l] = c.scale * prm.Budget() / cert.MaxF
		}
		v := worstViolation(t, g, prm, restarts, r)
		if (v > 0) != c.bad {
			t.Errorf("gamma at %v of the budget: largest excess over delta %v", c.scale, v)
		}
		t.Logf("gamma at %v of the budget: largest excess over delta %.3g", c.scale, v)
	}
}
