package ensemble

import (
	"math"
	"slices"
	"testing"
)

// TestArgmaxGaussian: argmaxGaussian's trapezoid rule agrees with one in steps of 1/64
// over [-12, 12] to 1e-12, for counts close and far apart, ties and
// abstentions, small and large noise, and up to 1,000 classes.
func TestArgmaxGaussian(t *testing.T) {
	fine := func(c []int, j int, sigma float64) float64 {
		const h = 1.0 / 64
		var sum float64
		for z := -12.0; z <= 12; z += h {
			v := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
			for i, n := range c {
				if i != j {
					v *= 0.5 * math.Erfc(-(float64(c[j]-n)/sigma+z)/math.Sqrt2)
				}
			}
			sum += v
		}
		return sum * h
	}
	// many returns c counts of 10 to 14, the first 13.
	many := func(c int) []int {
		out := make([]int, c)
		for i := range out {
			out[i] = 10 + (i*7)%5
		}
		out[0] = 13
		return out
	}
	for _, tc := range []struct {
		c     []int
		sigma float64
	}{
		{[]int{240, 5, 5, 0, 0, 0, 0, 0, 0, 0}, 40},
		{[]int{240, 5, 5, 0, 0, 0, 0, 0, 0, 0}, 2},
		{[]int{60, 40, 30, 30, 20, 20, 20, 10, 10, 10}, 40},
		{[]int{60, 59, 30, 30, 20, 20, 20, 10, 1, 0}, 0.5},
		{[]int{100, 100, 30}, 10},
		{[]int{3, 2}, 150},
		{[]int{25, 25, 25, 25, 25, 25, 25, 25, 25, 12}, 5},
		{many(30), 1},
		{many(1000), 0.3},
	} {
		for j := range min(len(tc.c), 2) {
			got, want := argmaxGaussian(tc.c, j, tc.sigma), fine(tc.c, j, tc.sigma)
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("counts %v, class %d, sigma %g: %v, want %v", tc.c, j, tc.sigma, got, want)
			}
		}
	}
}

// TestArgmaxLaplace: argmaxLaplace against the closed form for two
// classes, where the difference of two Laplace variables of scale b has
// Pr[D < d] = 1 - e^(-d/b)(1 + d/(2b))/2 for d >= 0, and against a
// Simpson's rule between the integrand's kinks over [-40b, 40b] for more
// classes; the
// probabilities of a query's classes sum to 1.
func TestArgmaxLaplace(t *testing.T) {
	for _, tc := range []struct {
		c []int
		b float64
	}{
		{[]int{3, 2}, 1}, {[]int{130, 120}, 20}, {[]int{0, 250}, 0.5}, {[]int{7, 7}, 3},
		{[]int{240, 5, 5, 0, 0, 0, 0, 0, 0, 0}, 40},
		{[]int{60, 40, 30, 30, 20, 20, 20, 10, 10, 10}, 5},
		{[]int{60, 59, 30, 30, 20, 20, 20, 10, 1, 0}, 0.7},
		{[]int{25, 25, 25, 25, 25, 25, 25, 25, 25, 12}, 100},
	} {
		var total float64
		for j := range tc.c {
			got := argmaxLaplace(tc.c, j, tc.b)
			total += got
			var want float64
			if j >= 2 {
				continue // the sum checks the others
			}
			if len(tc.c) == 2 {
				d := float64(tc.c[j] - tc.c[1-j])
				want = 1 - math.Exp(-math.Abs(d)/tc.b)*(1+math.Abs(d)/(2*tc.b))/2
				if d < 0 {
					want = 1 - want
				}
			} else {
				f := func(z float64) float64 {
					v := math.Exp(-math.Abs(z)/tc.b) / (2 * tc.b)
					for i, n := range tc.c {
						if x := float64(tc.c[j]-n) + z; i != j && x < 0 {
							v *= math.Exp(x/tc.b) / 2
						} else if i != j {
							v *= 1 - math.Exp(-x/tc.b)/2
						}
					}
					return v
				}
				cuts := []float64{-40 * tc.b, 0, 40 * tc.b}
				for _, n := range tc.c {
					cuts = append(cuts, float64(n-tc.c[j]))
				}
				slices.Sort(cuts)
				for k := 0; k+1 < len(cuts); k++ {
					const steps = 4096
					lo, h := cuts[k], (cuts[k+1]-cuts[k])/steps
					for i := 0; i < steps; i += 2 {
						x := lo + float64(i)*h
						want += h / 3 * (f(x) + 4*f(x+h) + f(x+2*h))
					}
				}
			}
			if tol := 1e-9; math.Abs(got-want) > tol {
				t.Errorf("counts %v, class %d, b %g: %v, want %v", tc.c, j, tc.b, got, want)
			}
		}
		if math.Abs(total-1) > 1e-9 {
			t.Errorf("counts %v, b %g: the classes' probabilities sum to %v", tc.c, tc.b, total)
		}
	}
}
