package shuffleg

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Accuracy of the iterative solver of the non-private optimum: it stops
// when the proximal-gradient mapping at x has norm at most optTol, and
// fails when it cannot get below optFail.
const (
	optTol     = 1e-11
	optFail    = 1e-7
	optMaxIter = 200000
)

// solve computes x* = argmin G(x; D): in closed form for mean estimation
// (x* = prox_ψ(mean), as G = ½||x − mean||² + ψ + const), by a Cholesky
// solve of the normal equations for ridge regression, and otherwise by
// accelerated proximal gradient (FISTA with backtracking and adaptive
// restart) to a proximal-gradient residual of optTol.
func (p *Problem) solve(ctx context.Context) (Optimum, error) {
	if p.Task.Loss == SquaredDistance {
		x := slices.Clone(p.mean)
		p.Task.Reg.prox(x, 1)
		return Optimum{X: x, Value: p.objective(x), Method: "closed form: prox of the private mean"}, nil
	}
	if r, ok := p.Task.Reg.(Ridge); ok && p.Task.Loss == SquaredError && r.Lambda > 0 {
		x, err := p.solveRidge(r.Lambda)
		if err == nil {
			g := make([]float64, len(x))
			p.gradF(x, g)
			floats.AddScaled(g, r.Lambda, x)
			return Optimum{X: x, Value: p.objective(x), Method: "Cholesky solve of the normal equations, one refinement step", Residual: floats.Norm(g, 2)}, nil
		}
	}
	return p.solveFISTA(ctx)
}

// gradF writes ∇F(x) = (1/n)·Σ ∇f(x; d_i) into g for a GLM loss.
func (p *Problem) gradF(x, g []float64) {
	s := p.Private
	n := s.Len()
	clear(g)
	for i := range n {
		a := s.Row(i)
		floats.AddScaled(g, p.Task.Loss.glmSlope(floats.Dot(x, a), s.Y[i]), a)
	}
	floats.Scale(1/float64(n), g)
}

// valueF returns F(x) = (1/n)·Σ f(x; d_i) for a GLM loss.
func (p *Problem) valueF(x []float64) float64 {
	return p.objective(x) - p.Task.Reg.value(x)
}

// solveRidge solves the ridge normal equations ((2/n)AᵀA + λI)x = (2/n)Aᵀy
// by Cholesky, in the dual form (AAᵀ + (nλ/2)I)β = y, x = Aᵀβ, when n < d,
// and refines the solution once.
func (p *Problem) solveRidge(lambda float64) ([]float64, error) {
	s := p.Private
	n, d := s.Len(), s.D
	A := mat.NewDense(n, d, s.X)
	y := mat.NewVecDense(n, slices.Clone(s.Y))
	var m *mat.SymDense
	var rhs *mat.VecDense
	if d <= n {
		m = mat.NewSymDense(d, nil)
		m.SymRankK(m, 2/float64(n), A.T())
		for j := range d {
			m.SetSym(j, j, m.At(j, j)+lambda)
		}
		rhs = mat.NewVecDense(d, nil)
		rhs.MulVec(A.T(), y)
		rhs.ScaleVec(2/float64(n), rhs)
	} else {
		m = mat.NewSymDense(n, nil)
		m.SymRankK(m, 1, A)
		for i := range n {
			m.SetSym(i, i, m.At(i, i)+float64(n)*lambda/2)
		}
		rhs = y
	}
	var ch mat.Cholesky
	if !ch.Factorize(m) {
		return nil, fmt.Errorf("ridge normal equations are not positive definite")
	}
	var sol, res, corr mat.VecDense
	if err := ch.SolveVecTo(&sol, rhs); err != nil {
		return nil, err
	}
	res.MulVec(m, &sol)
	res.SubVec(rhs, &res)
	if err := ch.SolveVecTo(&corr, &res); err != nil {
		return nil, err
	}
	sol.AddVec(&sol, &corr)
	if d <= n {
		return slices.Clone(sol.RawVector().Data), nil
	}
	var x mat.VecDense
	x.MulVec(A.T(), &sol)
	return slices.Clone(x.RawVector().Data), nil
}

// solveFISTA minimises G by FISTA (Beck and Teboulle 2009) with
// backtracking and gradient-based adaptive restart (O'Donoghue and Candès
// 2015), starting from a power-iteration estimate of F's smoothness.
func (p *Problem) solveFISTA(ctx context.Context) (Optimum, error) {
	d := p.Dim()
	reg := p.Task.Reg
	L := p.smoothnessEstimate()
	x := make([]float64, d)
	reg.prox(x, 0)
	y := slices.Clone(x)
	z := make([]float64, d)
	g := make([]float64, d)
	diff := make([]float64, d)
	t := 1.0
	var residual float64
	iter := 0
	for ; iter < optMaxIter; iter++ {
		// Each iteration passes over the data a few times: at n·d = 6·10^7
		// a tenth of a second or more.
		if err := ctx.Err(); err != nil {
			return Optimum{}, err
		}
		fy := p.valueF(y)
		p.gradF(y, g)
		for {
			copy(z, y)
			floats.AddScaled(z, -1/L, g)
			reg.prox(z, 1/L)
			floats.SubTo(diff, z, y)
			bound := fy + floats.Dot(g, diff) + L/2*floats.Dot(diff, diff)
			if p.valueF(z) <= bound+1e-13*(1+math.Abs(fy)) {
				break
			}
			L *= 2
		}
		tNext := (1 + math.Sqrt(1+4*t*t)) / 2
		// Restart when the step opposes the momentum direction.
		floats.SubTo(diff, y, z)
		restart := 0.0
		for j := range d {
			restart += diff[j] * (z[j] - x[j])
		}
		if restart > 0 {
			t, tNext = 1, 1
			copy(y, z)
		} else {
			for j := range d {
				y[j] = z[j] + (t-1)/tNext*(z[j]-x[j])
			}
		}
		copy(x, z)
		t = tNext
		if iter%10 == 9 {
			residual = p.proxGradResidual(x, L, g, z)
			if residual <= optTol {
				break
			}
		}
	}
	residual = p.proxGradResidual(x, L, g, z)
	if !(residual <= optFail) {
		return Optimum{}, fmt.Errorf("FISTA stopped after %d iterations at proximal-gradient residual %.3g > %g", iter, residual, optFail)
	}
	return Optimum{X: x, Value: p.objective(x), Method: fmt.Sprintf("FISTA with adaptive restart, %d iterations", iter+1), Residual: residual}, nil
}

// proxGradResidual returns L·||x − prox_{ψ/L}(x − ∇F(x)/L)||, which is zero
// exactly at the minimiser; g and z are scratch.
func (p *Problem) proxGradResidual(x []float64, L float64, g, z []float64) float64 {
	p.gradF(x, g)
	copy(z, x)
	floats.AddScaled(z, -1/L, g)
	p.Task.Reg.prox(z, 1/L)
	return L * floats.Distance(x, z, 2)
}

// smoothnessEstimate returns c·λ_max(AᵀA)/n by power iteration, with c the
// loss's curvature bound (2 for the squared error, 1/4 for the logistic
// loss); backtracking corrects an underestimate.
func (p *Problem) smoothnessEstimate() float64 {
	s := p.Private
	n, d := s.Len(), s.D
	v := make([]float64, d)
	for j := range v {
		v[j] = 1 + float64(j%7)/7
	}
	av := make([]float64, n)
	w := make([]float64, d)
	lam := 0.0
	for range 50 {
		nv := floats.Norm(v, 2)
		if nv == 0 {
			break
		}
		floats.Scale(1/nv, v)
		for i := range n {
			av[i] = floats.Dot(s.Row(i), v)
		}
		clear(w)
		for i := range n {
			floats.AddScaled(w, av[i], s.Row(i))
		}
		lam = floats.Norm(w, 2)
		v, w = w, v
	}
	c := 2.0
	if p.Task.Loss == Logistic {
		c = 0.25
	}
	L := c * lam / float64(n)
	if !(L > 0) {
		L = 1
	}
	return L
}
