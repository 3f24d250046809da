package shuffleg

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
)

// Task is an objective of Section 4.7.1: a per-sample loss f and a
// regulariser ψ, so that G(x; D) = (1/n)·Σ f(x; d_i) + ψ(x) (eq. 4.1).
type Task struct {
	Loss Loss
	Reg  Regularizer
}

// String returns the task as "loss + regulariser", its two parts'
// String.
func (t Task) String() string { return fmt.Sprintf("%v + %v", t.Loss, t.Reg) }

// Validate reports a loss that is none of the package's, or a
// regulariser of the package's with its parameter out of its domain: an
// parameter error names the ball's radius C or the weight lambda.
func (t Task) Validate() error {
	switch t.Loss {
	case SquaredDistance, SquaredError, Logistic:
	default:
		return fmt.Errorf("loss %v: must be one of squared-distance, squared-error, logistic", t.Loss)
	}
	return checkRegularizer(t.Reg)
}

// Problem is one ERM instance of Section 4.3: the target objective G(x; D)
// on the private samples D, the public samples P that the public-data
// algorithms may use (nil when there are none), and the non-private optimum
// x* = argmin G(x; D) against which excess risk (eq. 4.2) is measured.
// A Problem is immutable and safe for concurrent use.
type Problem struct {
	Task    Task
	Private *Dataset
	Public  *Dataset

	privSq, pubSq []float64 // squared feature norms per sample
	lStar         float64   // max smoothness over D (L*, Section 4.4.1)
	mean          []float64 // SquaredDistance: mean of the private samples
	spread        float64   // SquaredDistance: ½·(1/n)·Σ||q − mean||²
	opt           Optimum
}

// Optimum is the non-private minimiser x* of G(x; D).
type Optimum struct {
	X        []float64
	Value    float64 // G(x*; D)
	Method   string  // how x* was computed
	Residual float64 // norm of the proximal-gradient mapping at x* (0 for closed forms)
}

// NewProblem validates the datasets against the task and computes the
// non-private optimum, whose iterative solve stops when ctx is done.
// Public may be nil; otherwise it must have the same dimension and the
// same kind of responses as private.
func NewProblem(ctx context.Context, task Task, private, public *Dataset) (*Problem, error) {
	if err := task.Validate(); err != nil {
		return nil, fmt.Errorf("task: %w", err)
	}
	p := &Problem{Task: task, Private: private, Public: public}
	if err := p.checkData("private", private); err != nil {
		return nil, err
	}
	p.privSq, p.lStar = p.smoothness(private)
	if public != nil {
		if err := p.checkData("public", public); err != nil {
			return nil, err
		}
		if public.D != private.D {
			return nil, fmt.Errorf("public dataset dimension d = %d, private d = %d: must be equal", public.D, private.D)
		}
		p.pubSq, _ = p.smoothness(public)
	}
	if task.Loss == SquaredDistance {
		p.mean, p.spread = meanAndSpread(private)
	}
	opt, err := p.solve(ctx)
	if err != nil {
		return nil, fmt.Errorf("non-private optimum: %w", err)
	}
	p.opt = opt
	return p, nil
}

func (p *Problem) checkData(name string, s *Dataset) error {
	if err := s.Validate(name); err != nil {
		return err
	}
	if p.Task.Loss.needsResponses() && s.Y == nil {
		return fmt.Errorf("%s dataset: task %v needs a response per sample, found none", name, p.Task.Loss)
	}
	if p.Task.Loss == Logistic {
		for i, y := range s.Y {
			if y != 0 && y != 1 {
				return fmt.Errorf("%s dataset: label %d = %v: must be 0 or 1 for the logistic loss", name, i, y)
			}
		}
	}
	return nil
}

func (p *Problem) smoothness(s *Dataset) (sq []float64, lStar float64) {
	n := s.Len()
	sq = make([]float64, n)
	for i := range n {
		r := s.Row(i)
		sq[i] = floats.Dot(r, r)
		lStar = math.Max(lStar, p.Task.Loss.smoothness(sq[i]))
	}
	return sq, lStar
}

// meanAndSpread returns the mean of the samples and ½·(1/n)·Σ||q − mean||²,
// by two passes so that the spread does not cancel.
func meanAndSpread(s *Dataset) ([]float64, float64) {
	n := s.Len()
	mean := make([]float64, s.D)
	for i := range n {
		floats.Add(mean, s.Row(i))
	}
	floats.Scale(1/float64(n), mean)
	var acc neumaier
	for i := range n {
		acc.add(floats.Distance(s.Row(i), mean, 2) * floats.Distance(s.Row(i), mean, 2))
	}
	return mean, acc.sum() / (2 * float64(n))
}

// N returns the number of private samples n.
func (p *Problem) N() int { return p.Private.Len() }

// Dim returns the model dimension d.
func (p *Problem) Dim() int { return p.Private.D }

// Optimum returns the non-private optimum x* of G(x; D). Its X must not be
// modified.
func (p *Problem) Optimum() Optimum { return p.opt }

// Objective returns G(x; D), the target objective on the private data.
func (p *Problem) objective(x []float64) float64 {
	reg := p.Task.Reg.value(x)
	if p.Task.Loss == SquaredDistance {
		dist := floats.Distance(x, p.mean, 2)
		return dist*dist/2 + p.spread + reg
	}
	s := p.Private
	n := s.Len()
	var acc neumaier
	for i := range n {
		acc.add(p.Task.Loss.glmValue(floats.Dot(x, s.Row(i)), s.Y[i]))
	}
	return acc.sum()/float64(n) + reg
}

// excess returns G(x; D) − G(x*; D), the empirical excess risk of x
// (eq. 4.2), computed from per-sample differences so that it does not
// cancel when x is close to x*.
func (p *Problem) excess(x []float64) float64 {
	xs := p.opt.X
	reg := regDiff(p.Task.Reg, x, xs)
	if math.IsInf(reg, 0) || math.IsNaN(reg) {
		return reg
	}
	var acc neumaier
	if p.Task.Loss == SquaredDistance {
		// ½||x − m||² − ½||x* − m||² = ½·Σ (x_j − x*_j)(x_j + x*_j − 2m_j).
		for j, v := range x {
			acc.add((v - xs[j]) * (v + xs[j] - 2*p.mean[j]) / 2)
		}
		return acc.sum() + reg
	}
	s := p.Private
	n := s.Len()
	for i := range n {
		a := s.Row(i)
		var z1, z2, d float64
		for j, aj := range a {
			z1 += x[j] * aj
			z2 += xs[j] * aj
			d += (x[j] - xs[j]) * aj
		}
		acc.add(p.Task.Loss.glmValueDiff(z1, z2, d, s.Y[i]))
	}
	return acc.sum()/float64(n) + reg
}

// neumaier is a compensated (Kahan-Babuška-Neumaier) summation.
type neumaier struct{ s, c float64 }

func (a *neumaier) add(v float64) {
	t := a.s + v
	if math.Abs(a.s) >= math.Abs(v) {
		a.c += (a.s - t) + v
	} else {
		a.c += (v - t) + a.s
	}
	a.s = t
}

func (a *neumaier) sum() float64 { return a.s + a.c }

// regDiff returns ψ(x) − ψ(y), term by term for the package's regularisers
// so that it does not cancel when x is close to y.
func regDiff(r Regularizer, x, y []float64) float64 {
	var acc neumaier
	switch r := r.(type) {
	case Ridge:
		for j := range x {
			acc.add((x[j] - y[j]) * (x[j] + y[j]))
		}
		return r.Lambda / 2 * acc.sum()
	case L1:
		for j := range x {
			acc.add(math.Abs(x[j]) - math.Abs(y[j]))
		}
		return r.Lambda * acc.sum()
	}
	return r.value(x) - r.value(y)
}
