package shuffleg

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/darrm/darrm/datasets"
)

// synthetic returns a private and a public dataset for loss l: n and m
// samples of dimension d, the public ones drawn from a shifted
// distribution.
func synthetic(t testing.TB, l Loss, n, m, d int, seed uint64) (*datasets.Dataset, *datasets.Dataset) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	w := make([]float64, d)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	gen := func(count int, shift float64) *datasets.Dataset {
		s := &datasets.Dataset{D: d, X: make([]float64, count*d)}
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
	p, err := NewProblem(task, priv, pub)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func closeTo(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func testStream(a, b byte) *Stream { return newStream([32]byte{a, b}) }
