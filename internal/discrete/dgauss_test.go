package discrete

import (
	"fmt"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/darrm/darrm/noise"
)

// The sampler's frequencies match N_Z(0, σ²): a chi-square test over the
// values within 4σ, pooled tails, at a threshold that a correct sampler
// exceeds with probability about 1e-6. Under -short, 20,000 draws of each
// σ rather than 100,000.
func TestDiscreteGaussianDistribution(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 20000
	}
	for _, sigma := range []float64{0.7, 2.5, 40} {
		g, err := NewGaussian(sigma)
		if err != nil {
			t.Fatal(err)
		}
		src := noise.NewSeededSource(7)
		w := int(4 * sigma)
		hist := map[int]int{}
		var sum, sq float64
		for range n {
			z := int(g.Sample(src))
			sum += float64(z)
			sq += float64(z * z)
			z = max(-w-1, min(w+1, z))
			hist[z]++
		}
		var norm float64
		pmf := func(z int) float64 { return math.Exp(-float64(z*z) / (2 * sigma * sigma)) }
		for z := -int(40 * sigma); z <= int(40*sigma); z++ {
			norm += pmf(z)
		}
		var chi float64
		for z := -w - 1; z <= w+1; z++ {
			p := pmf(z) / norm
			if z == -w-1 || z == w+1 {
				p = 0
				for y := w + 1; y <= int(40*sigma); y++ {
					p += pmf(y) / norm
				}
			}
			e := p * float64(n)
			d := float64(hist[z]) - e
			chi += d * d / e
		}
		df := float64(2*w + 2)
		if limit := df + 5*math.Sqrt(2*df) + 25; chi > limit {
			t.Errorf("sigma %v: chi-square %.1f over %v degrees of freedom (limit %.1f)", sigma, chi, df, limit)
		}
		if mean := sum / float64(n); math.Abs(mean) > 5*sigma/math.Sqrt(float64(n)) {
			t.Errorf("sigma %v: mean %v", sigma, mean)
		}
	}
}

// TestDiscreteGaussianLargeSigma: the sampler is exact and ends at every
// deviation it accepts. The acceptance exponent, whose |y|·t passes 2^63
// near σ = 3e9, equals an independent rational computation for draws far
// out in the tails; draws at σ up to MaxScale have the deviation σ
// (4,000 draws: 5% is over four standard errors) and take no longer than
// at small σ; and the acceptance probability that bounds the loop is above
// 0.28 on a grid of σ.
func TestDiscreteGaussianLargeSigma(t *testing.T) {
	for _, sigma := range []float64{3.5e9, 1e11, 1e12, 123456789012.5, MaxScale} {
		g, err := NewGaussian(sigma)
		if err != nil {
			t.Fatal(err)
		}
		s := new(big.Rat).SetFloat64(sigma)
		s2 := new(big.Rat).Mul(s, s)
		for _, y := range []int64{0, 1, int64(sigma), -int64(3 * sigma), int64(40 * sigma), math.MaxInt64 / 2} {
			// (|y| - σ²/t)²/(2σ²) from its definition.
			a := new(big.Rat).Sub(new(big.Rat).SetInt64(abs64(y)), new(big.Rat).Quo(s2, new(big.Rat).SetInt64(g.t)))
			a.Mul(a, a)
			a.Quo(a, new(big.Rat).Mul(big.NewRat(2, 1), s2))
			if got := g.acceptance(y); got.Cmp(a) != 0 {
				t.Errorf("sigma %v, y %d: exponent %v, want %v", sigma, y, got.FloatString(6), a.FloatString(6))
			}
		}
		done := make(chan float64, 1)
		go func() {
			src := noise.NewSeededSource(3)
			var sq float64
			const n = 4000
			for range n {
				z := float64(g.Sample(src))
				sq += z * z
			}
			done <- math.Sqrt(sq / n)
		}()
		select {
		case dev := <-done:
			if math.Abs(dev/sigma-1) > 0.05 {
				t.Errorf("sigma %v: 4000 draws of deviation %v", sigma, dev)
			}
		case <-time.After(time.Minute):
			t.Fatalf("sigma %v: 4000 draws took over a minute", sigma)
		}
	}
	for _, sigma := range []float64{0.01, 0.5, 0.99, 1, 1.5, 2.999, 10, 1e3, 1e6, 1e15} {
		t0 := math.Floor(sigma) + 1
		sum := sigma * math.Sqrt(2*math.Pi) // Poisson summation: exact to e^{-2π²σ²}
		if sigma <= 1e5 {
			// The sum term by term, where its 40σ terms are few.
			sum = 0
			for y := 0.0; y <= 40*sigma+1; y++ {
				w := math.Exp(-y * y / (2 * sigma * sigma))
				if y > 0 {
					w *= 2
				}
				sum += w
			}
		}
		if p := math.Tanh(1/(2*t0)) * math.Exp(-sigma*sigma/(2*t0*t0)) * sum; !(p > 0.28) {
			t.Errorf("sigma %v: acceptance probability %v", sigma, p)
		}
	}
}

// chiSquare tests draws against a probability mass function on the
// integers in [lo, hi], the tails pooled at lo-1 and hi+1 (mass is the
// exact pmf, summed over a range wide enough to hold all but a negligible
// part). It fails at a threshold that a correct sampler exceeds with
// probability about 1e-6.
func chiSquare(t *testing.T, name string, draws []int64, pmf func(int64) float64, lo, hi, far int64) {
	t.Helper()
	var norm float64
	for z := lo - far; z <= hi+far; z++ {
		norm += pmf(z)
	}
	hist := map[int64]int{}
	for _, z := range draws {
		hist[max(lo-1, min(hi+1, z))]++
	}
	var chi float64
	n := float64(len(draws))
	for z := lo - 1; z <= hi+1; z++ {
		var p float64
		switch {
		case z == lo-1:
			for y := lo - far; y < lo; y++ {
				p += pmf(y)
			}
		case z == hi+1:
			for y := hi + 1; y <= hi+far; y++ {
				p += pmf(y)
			}
		default:
			p = pmf(z)
		}
		e := p / norm * n
		d := float64(hist[z]) - e
		chi += d * d / e
	}
	df := float64(hi - lo + 2)
	if limit := df + 5*math.Sqrt(2*df) + 25; chi > limit {
		t.Errorf("%s: chi-square %.1f over %v degrees of freedom (limit %.1f)", name, chi, df, limit)
	}
}

func TestDiscreteLaplaceDistribution(t *testing.T) {
	for _, b := range []float64{0.3, 2.5, 20} {
		l, err := NewLaplace(b)
		if err != nil {
			t.Fatal(err)
		}
		src := noise.NewSeededSource(11)
		draws := make([]int64, 100000)
		for i := range draws {
			draws[i] = l.Sample(src)
		}
		w := int64(math.Ceil(4 * b))
		chiSquare(t, fmt.Sprintf("b = %v", b), draws, func(z int64) float64 { return math.Exp(-math.Abs(float64(z)) / b) }, -w, w, int64(60*b)+10)
	}
	// A scale below 2^-9 takes the big-integer path: Pr[Y != 0] < 2e-4343.
	tiny, _ := NewLaplace(1e-4)
	src := noise.NewSeededSource(1)
	for range 1000 {
		if y := tiny.Sample(src); y != 0 {
			t.Fatalf("scale 1e-4 drew %d", y)
		}
	}
	for _, b := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := NewLaplace(b); err == nil {
			t.Errorf("scale %v accepted", b)
		}
	}
}

// The lattice Gaussian's draws, in lattice steps, follow
// exp(-(k - μ)²/(2σ²)) for centres off the lattice; far finer lattices
// keep the mean and the deviation. Under -short, 20,000 draws of each
// centre rather than 60,000.
func TestLatticeGaussianDistribution(t *testing.T) {
	size := 60000
	if testing.Short() {
		size = 20000
	}
	for _, c := range []struct{ center, dev, h float64 }{{0.3, 2.5, 1}, {-7.75, 0.6, 0.5}, {1e3 + 0.1, 4, 0.25}} {
		src := noise.NewSeededSource(5)
		draws := make([]int64, size)
		for i := range draws {
			v, err := LatticeGaussian(src, c.center, c.dev, c.h)
			if err != nil {
				t.Fatal(err)
			}
			k := v / c.h
			if k != math.Trunc(k) {
				t.Fatalf("%v is not on the lattice %v·Z", v, c.h)
			}
			draws[i] = int64(k)
		}
		mu, sigma := c.center/c.h, c.dev/c.h
		pmf := func(k int64) float64 { d := float64(k) - mu; return math.Exp(-d * d / (2 * sigma * sigma)) }
		lo, hi := int64(math.Floor(mu-3*sigma)), int64(math.Ceil(mu+3*sigma))
		chiSquare(t, "lattice", draws, pmf, lo, hi, int64(40*sigma)+10)
	}
	src := noise.NewSeededSource(9)
	n := 20000
	if testing.Short() {
		// Under -short the same check at a smaller size: the mean's bound
		// is five standard errors of the n draws, and the deviation's 5%
		// still five of 5,000.
		n = 5000
	}
	var sum, sq float64
	for range n {
		v, err := LatticeGaussian(src, 3.25, 1e-3, 0x1p-40)
		if err != nil {
			t.Fatal(err)
		}
		sum += v - 3.25
		sq += (v - 3.25) * (v - 3.25)
	}
	if mean := sum / float64(n); math.Abs(mean) > 5e-3/math.Sqrt(float64(n)) {
		t.Errorf("mean off by %v", mean)
	}
	if sd := math.Sqrt(sq / float64(n)); math.Abs(sd/1e-3-1) > 0.05 {
		t.Errorf("deviation %v, want 1e-3", sd)
	}
	for _, bad := range [][3]float64{{0, 0, 1}, {0, 1, 0}, {math.NaN(), 1, 1}, {0, math.Inf(1), 1}, {0, 1, 0x1p-70}} {
		if _, err := LatticeGaussian(src, bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("center %v, deviation %v, spacing %v accepted", bad[0], bad[1], bad[2])
		}
	}
}

// BenchmarkLatticeGaussian draws GNSS-like noise (a fine lattice, as pate's
// smooth sensitivity release) and noise on the integers.
func BenchmarkLatticeGaussian(b *testing.B) {
	for _, c := range []struct {
		name           string
		center, dev, h float64
	}{{"fine", 3.25, 1.7, 0x1p-40}, {"integers", 0.3, 2.5, 1}} {
		b.Run(c.name, func(b *testing.B) {
			src := noise.NewSeededSource(1)
			for b.Loop() {
				if _, err := LatticeGaussian(src, c.center, c.dev, c.h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
