package ensemble

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/integrate/quad"
)

// This file scores a label of the noisy-max mechanisms on class counts,
// as a plan scores it on proxy votes (Planned.Expect): the probability
// that the argmax of the counts plus continuous noise of the mechanism's
// scale is a class.

// argmaxGaussian returns the probability that class j has the largest of the
// counts c plus independent N(0, σ²) noise: ∫ φ(z) Π_{i≠j}
// Φ((c_j - c_i)/σ + z) dz, by the trapezoid rule on [-9, 9] (beyond, the
// integrand is below 1e-18). Classes of equal counts share a factor, and
// a factor that is 1 to double precision over the whole range (Φ(x) for
// x > 8.3) is left out. The integrand is entire: the rule's error is
// about its Fourier transform at 2π/h, which for a product of φ and m
// factors Φ falls like e^(-ω²/(2(m+1))); a step h with (2π/h)² >=
// 72(m+1) puts it near e^-36 (TestArgmaxGaussian checks 1e-12 against a rule 16
// times finer, up to 1,000 classes).
func argmaxGaussian(c []int, j int, sigma float64) float64 {
	const lim = 9.0
	type factor struct {
		d     float64 // (c_j - c_i)/σ
		times int
	}
	var fs []factor
	m := 0
next:
	for i, n := range c {
		d := float64(c[j]-n) / sigma
		if i == j || d-lim > 8.3 {
			continue
		}
		m++
		for k := range fs {
			if fs[k].d == d {
				fs[k].times++
				continue next
			}
		}
		fs = append(fs, factor{d, 1})
	}
	h := 1 / max(4, math.Ceil(math.Sqrt(72*float64(m+1))/(2*math.Pi)))
	var sum float64
	for i := -int(lim / h); i <= int(lim/h); i++ {
		z := float64(i) * h
		v := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
		for _, f := range fs {
			if v == 0 {
				break
			}
			phi := 0.5 * math.Erfc(-(f.d+z)/math.Sqrt2)
			for range f.times {
				v *= phi
			}
		}
		sum += v
	}
	return sum * h
}

// legendre16 are the nodes and weights of 16-point Gauss-Legendre
// quadrature on [-1, 1].
var legendre16 = func() (g struct{ nodes, weights [16]float64 }) {
	quad.Legendre{}.FixedLocations(g.nodes[:], g.weights[:], -1, 1)
	return g
}()

// argmaxLaplace returns the probability that class j has the largest of
// the counts c plus independent Laplace noise of scale b (continuous, so
// that ties have probability 0): ∫ f(z) Π_{i≠j} F(c_j - c_i + z) dz, f
// and F the Laplace density and distribution function, over [-36b, 36b]
// (beyond, below e^-36/2). The integrand has kinks at z = 0 and
// z = c_i - c_j, and between them it is a sum of exponentials of rates up
// to (m + 1)/b, m the factors: 16-point Gauss-Legendre on pieces between
// kinks at most 10b/(m + 1) wide keeps the rule's error near
// 5.4^32/32! < 1e-12 of the piece's mass. TestArgmaxLaplace checks it
// against the closed form for two classes and a fine rule for more.
func argmaxLaplace(c []int, j int, b float64) float64 {
	const lim = 36.0 // in units of b
	cuts := []float64{-lim, 0, lim}
	var ds []float64 // (c_j - c_i)/b
	for i, n := range c {
		d := float64(c[j]-n) / b
		if i == j || d > 2*lim { // F(d + z) is 1 to double precision
			continue
		}
		ds = append(ds, d)
		if -d > -lim && -d < lim {
			cuts = append(cuts, -d)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	width := math.Min(1, 10/float64(len(ds)+1))
	g := legendre16
	var sum float64
	for k := 0; k+1 < len(cuts); k++ {
		lo, hi := cuts[k], cuts[k+1]
		n := math.Ceil((hi - lo) / width)
		w := (hi - lo) / n
		for p := 0.0; p < n; p++ {
			a := lo + p*w
			for q, x := range g.nodes {
				z := a + w*(x+1)/2
				v := math.Exp(-math.Abs(z)) / 2
				for _, d := range ds {
					if t := d + z; t < 0 {
						v *= math.Exp(t) / 2
					} else {
						v *= 1 - math.Exp(-t)/2
					}
				}
				sum += v * g.weights[q] * w / 2
			}
		}
	}
	return sum
}
