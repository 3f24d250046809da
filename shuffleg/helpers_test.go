package shuffleg

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// synthetic returns a private and a public dataset for loss l: n and m
// samples of dimension d, the public ones drawn from a shifted
// distribution.
func synthetic(t testing.TB, l Loss, n, m, d int, seed uint64) (*Dataset, *Dataset) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	w := make([]float64, d)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	gen := func(count int, shift float64) *Dataset {
		s := &Dataset{D: d, X: make([]float64, count*d)}
		if l != SquaredDistance {
			s.Y = make([]float64, count)
		}
		for i := range count {
			row := s.X[i*d : (i+1)*d]
			var z float64
			for j := range row {
				row[j] = rng.NormFloat64()/math.Sqrt(float64(d)) + shift
				z += row[j] * (w[j] + shift)
			}
			switch l {
			case SquaredError:
				s.Y[i] = z + 0.1*rng.NormFloat64()
			case Logistic:
				if rng.Float64() < sigmoid(2*z) {
					s.Y[i] = 1
				}
			}
		}
		return s
	}
	return gen(n, 0), gen(m, 0.3)
}

func newTestProblem(t testing.TB, task Task, n, m, d int, seed uint64) *Problem {
	t.Helper()
	priv, pub := synthetic(t, task.Loss, n, m, d, seed)
	p, err := NewProblem(context.Background(), task, priv, pub)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func closeTo(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func testStream(a, b byte) *stream { return newStream([32]byte{a, b}) }

// withKey returns cfg with the key {a, b}, that of testStream(a, b).
func withKey(cfg Config, a, b byte) Config {
	cfg.Key = &[32]byte{a, b}
	return cfg
}

// meanEstimation is f(x; q) = ½·||x − q||² with ψ the indicator of the ball
// of radius C (Section 4.7.1, task 1; the thesis uses C = 10).
func meanEstimation(radius float64) Task {
	return Task{Loss: SquaredDistance, Reg: Ball{Radius: radius}}
}

// ridgeRegression is f(x; (a, y)) = (⟨x, a⟩ − y)² with ψ = (λ/2)·||x||²
// (Section 4.7.1, task 2; λ_r = 0.1 in the thesis).
func ridgeRegression(lambda float64) Task {
	return Task{Loss: SquaredError, Reg: Ridge{Lambda: lambda}}
}

// lassoLogistic is the logistic loss with ψ = λ·||x||₁ (Section 4.7.1,
// task 3; λ_l = 0.1 in the thesis).
func lassoLogistic(lambda float64) Task { return Task{Loss: Logistic, Reg: L1{Lambda: lambda}} }

// allAlgorithms returns the five algorithms in the thesis' order.
func allAlgorithms() []Algorithm {
	return []Algorithm{DPShuffleG, PrivPub, PubPriv, Interleaved, PublicOnly}
}
