package pate

import (
	"math"
	"testing"

	"github.com/darrm/darrm/noisymax"
)

// Reference values of the PATE authors' published tests
// (research/pate_2018/smooth_sensitivity_test.py in tensorflow/privacy),
// for continuous noise.

func closeTo(got, want, rtol, atol float64) bool {
	return math.Abs(got-want) <= atol+rtol*math.Abs(want)
}

func TestPATEReferenceGNMaxLocalSensitivity(t *testing.T) {
	cases := []struct {
		counts   []int
		teachers int
		sigma    float64
		order    float64
		want     []float64
	}{
		{[]int{10, 0, 0}, 10, 0.5, 1.5, append([]float64{3.13503646e-17, 1.60178280e-08, 5.90681786e-03}, rep(5.99981308, 7)...)},
		{[]int{1000, 500, 300, 200, 0}, 2000, 250, 10, append(append(rep(0, 298), 2.77693450548e-7, 2.10853979548e-6), rep(2.73113623988e-6, 1700)...)},
	}
	for _, c := range cases {
		g := newGNMaxLS(testMemo, c.sigma, c.order, len(c.counts), noisymax.ContinuousNoise)
		got := g.distances(c.counts, neighbours{teachers: c.teachers})
		for d, w := range c.want {
			if !closeTo(got[d], w, 1e-6, 1e-14) {
				t.Errorf("counts %v: A(%d) = %.12g, want %.12g", c.counts, d, got[d], w)
			}
		}
	}
}

func rep(x float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = x
	}
	return out
}

// The published threshold test takes, at each distance d, the larger local
// sensitivity at the largest counts v - d and v + d (without the pigeonhole
// floor); d runs to max(v, K-v) - 1.
func TestPATEReferenceThresholdLocalSensitivity(t *testing.T) {
	cases := []struct {
		t    float64
		want []float64
	}{
		{16, append(rep(0, 3), 1.48454129e-04, 1.47826870e-02, 3.94153241e-02, 6.45775697e-02,
			9.01543247e-02, 1.16054002e-01, 1.42180452e-01, 1.42180452e-01,
			1.48454129e-04, 1.47826870e-02, 3.94153241e-02, 6.45775697e-02,
			9.01543266e-02, 1.16054000e-01, 1.42180452e-01, 1.68302106e-01,
			1.93127860e-01)},
		{2, []float64{1.60212079e-01, 2.07021132e-01, 2.07021132e-01, 1.93127860e-01,
			1.68302106e-01, 1.42180452e-01, 1.16054002e-01, 9.01543247e-02,
			6.45775697e-02, 3.94153241e-02, 1.47826870e-02, 1.48454129e-04}},
		{50, []float64{1.35750725752e-19, 1.88990500499e-17, 2.05403154065e-15,
			1.74298153642e-13, 1.15489723995e-11, 5.97584949325e-10,
			2.41486826748e-08, 7.62150641922e-07, 1.87846248741e-05,
			0.000360973025976, 0.000360973025976, 2.76377015215e-50,
			1.00904975276e-53, 2.87254164748e-57, 6.37583360761e-61,
			1.10331620211e-64, 1.48844393335e-68, 1.56535552444e-72,
			1.28328011060e-76, 8.20047697109e-81}},
	}
	const teachers, top = 30, 20
	for _, c := range cases {
		m := noisymax.Steps{Threshold: c.t, Sigma1: 2, Sigma2: 1, Noise: noisymax.ContinuousNoise}
		logq, _ := thresholdTable(m.Threshold, m.Sigma1, m.Noise, neighbours{teachers: teachers}, 3, OneSided)
		th := newThresholdLS(testMemo, m.Sigma1, 10, logq, 0)
		for d, w := range c.want {
			got := 0.0
			for _, v := range []int{top - d, top + d} {
				if v >= 0 && v <= teachers {
					got = math.Max(got, th.at(v))
				}
			}
			if !closeTo(got, w, 1e-6, 1e-14) {
				t.Errorf("T = %v: LS at distance %d = %.12g, want %.12g", c.t, d, got, w)
			}
		}
	}
}

func TestPATEReferenceConditions(t *testing.T) {
	for _, c := range []struct {
		sigma  float64
		c5, c6 bool
	}{{20, true, false}, {30, true, true}} {
		c5, c6 := smoothConditions(testMemo, c.sigma, 10, 25, noisymax.ContinuousNoise)
		if c5 != c.c5 || c6 != c.c6 {
			t.Errorf("sigma %v: C5, C6 = %v, %v, want %v, %v", c.sigma, c5, c6, c.c5, c.c6)
		}
	}
}
