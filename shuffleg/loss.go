package shuffleg

import (
	"math"

	"github.com/darrm/darrm/internal/enum"
)

// Loss is the per-sample loss f(x; q) of one of the tasks of Section
// 4.7.1: SquaredDistance, SquaredError or Logistic (the zero value is none
// of them).
// The set is closed: the engine fuses each loss's gradient, clipping, noise
// and update into one pass over the coordinates.
type Loss int

// The losses of Section 4.7.1.
const (
	// SquaredDistance is f(x; q) = ½·||x − q||² (mean estimation). Every
	// sample is 1-smooth.
	SquaredDistance Loss = iota + 1
	// SquaredError is f(x; (a, y)) = (⟨x, a⟩ − y)² (ridge regression),
	// 2·||a||²-smooth.
	SquaredError
	// Logistic is the cross-entropy −y·log h − (1−y)·log(1−h), h =
	// 1/(1 + e^{−⟨x, a⟩}), with labels y in {0, 1} (lasso logistic
	// regression), ||a||²/4-smooth. The thesis writes y in {±1} beside this
	// {0, 1} form of the loss; labels are mapped to {0, 1} when loaded.
	Logistic
)

var lossNames = enum.Names[Loss]{What: "loss", List: []string{SquaredDistance: "squared-distance", SquaredError: "squared-error", Logistic: "logistic"}}

// String returns "squared-distance", "squared-error" or "logistic".
func (l Loss) String() string { return lossNames.String(l) }

// needsResponses reports whether samples carry a response y.
func (l Loss) needsResponses() bool { return l == SquaredError || l == Logistic }

// smoothness returns L_i, the smoothness constant of f(·; q) for a sample
// with squared feature norm sq (Assumption 4.4.2).
func (l Loss) smoothness(sq float64) float64 {
	switch l {
	case SquaredDistance:
		return 1
	case SquaredError:
		return 2 * sq
	case Logistic:
		return sq / 4
	}
	return math.NaN()
}

// softplus returns log(1 + e^t) without overflow or loss of precision.
func softplus(t float64) float64 {
	if t > 0 {
		return t + math.Log1p(math.Exp(-t))
	}
	return math.Log1p(math.Exp(t))
}

// sigmoid returns 1/(1 + e^{−t}) without overflow.
func sigmoid(t float64) float64 {
	if t >= 0 {
		return 1 / (1 + math.Exp(-t))
	}
	e := math.Exp(t)
	return e / (1 + e)
}

// glmValue returns the loss of a linear model with margin z = ⟨x, a⟩ and
// response y.
func (l Loss) glmValue(z, y float64) float64 {
	if l == SquaredError {
		r := z - y
		return r * r
	}
	// −y·log σ(z) − (1−y)·log(1−σ(z)) = softplus(z) − y·z.
	return softplus(z) - y*z
}

// glmSlope returns ∂f/∂z, so that ∇f(x) = glmSlope·a.
func (l Loss) glmSlope(z, y float64) float64 {
	if l == SquaredError {
		return 2 * (z - y)
	}
	return sigmoid(z) - y
}

// glmValueDiff returns f(z1) − f(z2) for one sample with margins z1, z2
// and d = z1 − z2 computed directly from the difference of the two models,
// without the cancellation of subtracting two nearly equal losses.
func (l Loss) glmValueDiff(z1, z2, d, y float64) float64 {
	if l == SquaredError {
		return d * (z1 + z2 - 2*y)
	}
	// With y = 1 the loss is softplus(−z): flip the margins so that the
	// difference is not the cancellation of two nearly equal terms.
	if y == 1 {
		z1, z2, d, y = -z1, -z2, -d, 0
	}
	// softplus(z1) − softplus(z2) = log1p(σ(z2)·(e^{z1−z2} − 1)): exact
	// for close margins, where the plain difference would cancel. Far
	// apart margins do not cancel (and e^{z1−z2} could overflow).
	if math.Abs(d) > 1 {
		return softplus(z1) - softplus(z2) - y*d
	}
	var sp float64
	if d >= 0 {
		sp = math.Log1p(sigmoid(z2) * math.Expm1(d))
	} else {
		sp = -math.Log1p(sigmoid(z1) * math.Expm1(-d))
	}
	return sp - y*d
}
