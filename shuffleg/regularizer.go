package shuffleg

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/param"
	"gonum.org/v1/gonum/floats"
)

// Regularizer is the convex regulariser ψ of the objective G = F + ψ
// (eq. 4.1). Algorithm 3 applies it once per epoch through its proximal
// operator (line 12); the three implementations are the ones of Section
// 4.7.1 and App. G of the DP-ShuffleG paper.
type Regularizer interface {
	// value returns ψ(x), +Inf when x is outside ψ's domain.
	value(x []float64) float64
	// prox overwrites x with argmin_z t·ψ(z) + ||z − x||²/2 for t >= 0.
	// Line 12 of Algorithm 3, argmin_z m·ψ(z) + ||z − y||²/(2η) after an
	// epoch of m steps, is prox(y, m·η).
	prox(x []float64, t float64)
	// String names the regulariser and its parameter, e.g. "l1(0.1)".
	String() string
}

// Ball is the indicator of the Euclidean ball of radius C at the origin,
// ψ(x) = I{||x|| <= C} (mean estimation, Section 4.7.1; App. G.2). Its
// proximal operator is the projection onto the ball for every t.
type Ball struct{ Radius float64 }

// ballSlack is the relative tolerance of Ball.Value: a projected point can
// have a norm that exceeds the radius by a few rounding errors.
const ballSlack = 1e-12

// Value returns 0 inside the ball and +Inf outside.
func (b Ball) value(x []float64) float64 {
	if floats.Norm(x, 2) <= b.Radius*(1+ballSlack) {
		return 0
	}
	return math.Inf(1)
}

// Prox projects x onto the ball: x·min(1, C/||x||).
func (b Ball) prox(x []float64, _ float64) {
	if norm := floats.Norm(x, 2); norm > b.Radius {
		floats.Scale(b.Radius/norm, x)
	}
}

// String returns the ball as "ball(C=radius)".
func (b Ball) String() string { return fmt.Sprintf("ball(C=%g)", b.Radius) }

// Ridge is the ℓ2 regulariser ψ(x) = (λ/2)·||x||² (ridge regression,
// Section 4.7.1). Its proximal operator shrinks x by 1/(1 + tλ).
type Ridge struct{ Lambda float64 }

// Value returns (λ/2)·||x||².
func (r Ridge) value(x []float64) float64 {
	n := floats.Norm(x, 2)
	return r.Lambda / 2 * n * n
}

// Prox overwrites x with x/(1 + tλ).
func (r Ridge) prox(x []float64, t float64) { floats.Scale(1/(1+t*r.Lambda), x) }

// String returns the regulariser as "l2(lambda)".
func (r Ridge) String() string { return fmt.Sprintf("l2(%g)", r.Lambda) }

// L1 is the lasso regulariser ψ(x) = λ·||x||₁ (lasso logistic regression,
// Section 4.7.1; App. G.1). Its proximal operator is soft-thresholding at tλ.
type L1 struct{ Lambda float64 }

// Value returns λ·||x||₁.
func (l L1) value(x []float64) float64 { return l.Lambda * floats.Norm(x, 1) }

// Prox soft-thresholds every coordinate of x at tλ (App. G.1, the
// closed form after eq. 74).
func (l L1) prox(x []float64, t float64) {
	th := t * l.Lambda
	for i, v := range x {
		switch {
		case v > th:
			x[i] = v - th
		case v < -th:
			x[i] = v + th
		default:
			x[i] = 0
		}
	}
}

// String returns the regulariser as "l1(lambda)".
func (l L1) String() string { return fmt.Sprintf("l1(%g)", l.Lambda) }

// checkRegularizer validates the parameter of one of the package's
// regularisers: a parameter error names the ball's radius C or the
// weight lambda.
func checkRegularizer(r Regularizer) error {
	switch r := r.(type) {
	case Ball:
		if !(r.Radius > 0) || math.IsInf(r.Radius, 0) {
			return fmt.Errorf("ball: %w", &param.Error{Name: "C", Value: r.Radius, Rule: "must be a finite number > 0"})
		}
	case Ridge:
		if !(r.Lambda >= 0) || math.IsInf(r.Lambda, 0) {
			return fmt.Errorf("ridge: %w", &param.Error{Name: "lambda", Value: r.Lambda, Rule: "must be a finite number >= 0"})
		}
	case L1:
		if !(r.Lambda >= 0) || math.IsInf(r.Lambda, 0) {
			return fmt.Errorf("l1: %w", &param.Error{Name: "lambda", Value: r.Lambda, Rule: "must be a finite number >= 0"})
		}
	case nil:
		return fmt.Errorf("regularizer: must not be nil")
	}
	return nil
}
