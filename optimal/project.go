package optimal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
)

// halfspace is the constraint a·x >= b with |a| = 1. A normal with few
// nonzero entries (a bound on one coordinate, a row of the one-vote LP) is
// kept sparse, as its entries val at the indices idx (a is nil): the
// projector's cost is dominated by products of the normals with its
// vectors.
type halfspace struct {
	a   []float64
	idx []int
	val []float64
	b   float64
}

func (h *halfspace) dot(v []float64) float64 {
	if h.a == nil {
		var s float64
		for j, i := range h.idx {
			s += h.val[j] * v[i]
		}
		return s
	}
	return floats.Dot(h.a, v)
}

// slack is how far x is inside h (negative when h is violated).
func (h *halfspace) slack(x []float64) float64 { return h.dot(x) - h.b }

// projector computes the Euclidean projection of a point onto the
// polyhedron of its halfspaces, the strictly convex quadratic program
//
//	minimise |x - target|²/2  subject to  a_j·x >= b_j for every j,
//
// by the dual active-set method of Goldfarb and Idnani ("A numerically
// stable dual method for solving strictly convex quadratic programs",
// Mathematical Programming 27, 1983). The method starts at the target,
// the unconstrained minimum, and adds a violated constraint at a time,
// keeping the point the projection onto the constraints taken so far
// (dual feasible) and dropping those whose multiplier would turn negative.
// It needs no feasible starting point and no list of the constraints in
// advance: halfspaces can be added between calls to solve, which continues
// from where it stopped. That is what a cutting-plane loop needs, where the
// exact separation finds the next violated rows.
//
// With the Hessian the identity, the method keeps the QR factorisation
// N = Q·R of the active normals, updated by Givens rotations as they come
// and go (O(n²) per change).
type projector struct {
	n        int
	x        []float64
	cons     []halfspace
	isActive []bool
	active   []int     // indices into cons
	u        []float64 // multipliers of active, >= 0
	q        [][]float64
	r        [][]float64 // r[j] is column j of R; rows 0..j are used
	// Scratch space of enter.
	d, z, rr []float64
}

// Limits of the projector: a violation of at most violTol (the normals
// have unit length, so it is a distance) counts as satisfied, and a normal
// whose component orthogonal to the active normals has squared length at
// most depTol counts as dependent on them.
const (
	violTol = 1e-12
	depTol  = 1e-24
)

// errInfeasible is returned when the halfspaces have no common point.
var errInfeasible = errors.New("projection: the constraints have no common point")

func newProjector(target []float64) *projector {
	n := len(target)
	pr := &projector{n: n, x: append([]float64(nil), target...), d: make([]float64, n), z: make([]float64, n), rr: make([]float64, n)}
	pr.q = make([][]float64, n)
	pr.r = make([][]float64, n)
	for j := range pr.q {
		pr.q[j] = make([]float64, n)
		pr.q[j][j] = 1
		pr.r[j] = make([]float64, n)
	}
	return pr
}

// add adds the constraint a·x >= b; a is scaled to unit length. A zero a
// is dropped when b <= 0 (always satisfied) and refused otherwise.
func (pr *projector) add(a []float64, b float64) error {
	norm := floats.Norm(a, 2)
	if norm == 0 {
		if b > 0 {
			return errInfeasible
		}
		return nil
	}
	h := halfspace{b: b / norm}
	var nnz int
	for _, v := range a {
		if v != 0 {
			nnz++
		}
	}
	if nnz > len(a)/sparseFraction {
		h.a = scale(a, 1/norm)
	} else {
		for i, v := range a {
			if v != 0 {
				h.idx, h.val = append(h.idx, i), append(h.val, v/norm)
			}
		}
	}
	pr.cons = append(pr.cons, h)
	pr.isActive = append(pr.isActive, false)
	return nil
}

// sparseFraction: a normal with at most 1/sparseFraction of its entries
// nonzero is kept sparse.
const sparseFraction = 8

// addBound adds sign·x[i] >= b, sign = ±1.
func (pr *projector) addBound(i int, sign, b float64) {
	pr.cons = append(pr.cons, halfspace{idx: []int{i}, val: []float64{sign}, b: b})
	pr.isActive = append(pr.isActive, false)
}

// solve moves x to the projection of the target onto every halfspace
// added. Each round scans the halfspaces once and takes the violated ones,
// most violated first, each if it is still violated when its turn comes:
// any violated constraint may enter (Goldfarb and Idnani take the most
// violated), and a scan costs as much as many steps.
func (pr *projector) solve(ctx context.Context) error {
	type violation struct {
		j int
		s float64
	}
	steps, maxSteps := 0, 100*pr.n+10*len(pr.cons)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var viol []violation
		for j := range pr.cons {
			if !pr.isActive[j] {
				if s := pr.cons[j].slack(pr.x); s < -violTol {
					viol = append(viol, violation{j, s})
				}
			}
		}
		if len(viol) == 0 {
			return nil
		}
		slices.SortFunc(viol, func(a, b violation) int { return cmp.Compare(a.s, b.s) })
		for _, v := range viol {
			if pr.isActive[v.j] || pr.cons[v.j].slack(pr.x) >= -violTol {
				continue
			}
			// A round may take hundreds of steps (K = 1001, m = 2: 1,756
			// in 27 rounds, up to 87 ms a round on the loaded machine).
			if err := ctx.Err(); err != nil {
				return err
			}
			if steps++; steps > maxSteps {
				return fmt.Errorf("projection: no convergence after %d steps", maxSteps)
			}
			if err := pr.enter(v.j); err != nil {
				return err
			}
		}
	}
}

// enter makes the violated constraint p active (Goldfarb and Idnani's
// step 2), dropping the active constraints that block it.
func (pr *projector) enter(p int) error {
	h := &pr.cons[p]
	var up float64 // multiplier of p
	for {
		q := len(pr.active)
		// d = Qᵀa: its first q entries give the multipliers' change
		// r = R⁻¹d₁, the others the primal direction z = Q₂d₂, which
		// moves x along a without leaving the active constraints.
		d := pr.d
		for k := range d {
			d[k] = h.dot(pr.q[k])
		}
		r := pr.rr[:q]
		for i := q - 1; i >= 0; i-- {
			s := d[i]
			for j := i + 1; j < q; j++ {
				s -= pr.r[j][i] * r[j]
			}
			r[i] = s / pr.r[i][i]
		}
		var zz float64
		for k := q; k < pr.n; k++ {
			zz += d[k] * d[k]
		}
		// The longest step the multipliers allow (t1, dropping active
		// constraint k) and the one that satisfies p (t2).
		t1, k := math.Inf(1), -1
		for j, rj := range r {
			if rj > 0 {
				if t := pr.u[j] / rj; t < t1 {
					t1, k = t, j
				}
			}
		}
		t2 := math.Inf(1)
		if zz > depTol {
			t2 = -h.slack(pr.x) / zz
		}
		switch {
		case math.IsInf(t1, 1) && math.IsInf(t2, 1):
			return errInfeasible
		case math.IsInf(t2, 1):
			// a depends on the active normals: only the multipliers move.
			for j := range r {
				pr.u[j] -= t1 * r[j]
			}
			up += t1
			pr.drop(k)
			continue
		}
		t := math.Min(t1, t2)
		z := pr.z
		for i := range z {
			z[i] = 0
		}
		for k := q; k < pr.n; k++ {
			floats.AddScaled(z, d[k], pr.q[k])
		}
		floats.AddScaled(pr.x, t, z)
		for j := range r {
			pr.u[j] -= t * r[j]
		}
		up += t
		if t2 <= t1 {
			pr.push(p, up)
			return nil
		}
		pr.drop(k)
	}
}

// push appends constraint p, with multiplier up, to the active set; pr.d
// holds Qᵀa_p.
func (pr *projector) push(p int, up float64) {
	q := len(pr.active)
	d := pr.d
	// Rotate d's entries below q into d[q], and Q's columns with them.
	for k := pr.n - 1; k > q; k-- {
		if d[k] == 0 {
			continue
		}
		c, s, h := givens(d[k-1], d[k])
		d[k-1], d[k] = h, 0
		rotate(pr.q[k-1], pr.q[k], c, s)
	}
	copy(pr.r[q][:q+1], d[:q+1])
	pr.active = append(pr.active, p)
	pr.u = append(pr.u, up)
	pr.isActive[p] = true
}

// drop removes active constraint k and restores R to triangular form.
func (pr *projector) drop(k int) {
	q := len(pr.active)
	pr.isActive[pr.active[k]] = false
	col := pr.r[k]
	copy(pr.r[k:q-1], pr.r[k+1:q])
	pr.r[q-1] = col
	pr.active = append(pr.active[:k], pr.active[k+1:]...)
	pr.u = append(pr.u[:k], pr.u[k+1:]...)
	q--
	// Columns k..q-1 now reach one row below the diagonal: rotate rows
	// j, j+1 of R (and columns j, j+1 of Q) to clear it.
	for j := k; j < q; j++ {
		c, s, h := givens(pr.r[j][j], pr.r[j][j+1])
		pr.r[j][j], pr.r[j][j+1] = h, 0
		for l := j + 1; l < q; l++ {
			a, b := pr.r[l][j], pr.r[l][j+1]
			pr.r[l][j], pr.r[l][j+1] = c*a+s*b, -s*a+c*b
		}
		rotate(pr.q[j], pr.q[j+1], c, s)
	}
}

// givens returns the rotation (c, s) with c·a + s·b = h and -s·a + c·b = 0.
func givens(a, b float64) (c, s, h float64) {
	h = math.Hypot(a, b)
	if h == 0 {
		return 1, 0, 0
	}
	return a / h, b / h, h
}

// rotate replaces the columns u, v by c·u + s·v and -s·u + c·v.
func rotate(u, v []float64, c, s float64) {
	for i, a := range u {
		b := v[i]
		u[i], v[i] = c*a+s*b, -s*a+c*b
	}
}
