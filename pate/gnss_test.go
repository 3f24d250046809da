package pate

import (
	"math"
	"testing"
)

// TestGNSSWorstPair: gnssRDP bounds the Rényi divergence of the two
// outputs of GNSS at every pair of neighbours a β-smooth SS_β allows: with
// SS_β(x) = 1, SS_β(x') = e^r (|r| <= β) and |f(x) - f(x')| = min(1, e^r),
// N(0, σ²) against N(min(1, e^r), σ²e^{2r}), whose divergence is
// λd²/(2s_λ²) - log(s_λ²/(s^{2(1-λ)}s'^{2λ}))/(2(λ-1)), s_λ² = λs'² + (1-λ)s²
// (Gil, Alajaji and Linder 2013), taken on 4,001 values of r. The PATE
// paper's Theorem 23 (λe^{2β}/σ² + (βλ - log(1 - 2λβ)/2)/(λ - 1)) is below
// it in the first two rows (0.268 against 0.456 at λ = 20, β = 0.4/λ);
// want is the largest divergence, computed apart with mpmath (50 digits),
// at r = -β.
func TestGNSSWorstPair(t *testing.T) {
	for _, c := range []struct{ beta, sigma, order, want float64 }{
		{0.02, 10.0964, 20, 0.45608498757048094}, // darrm's data-free rule at λ = 20 (β = 0.4/λ)
		{0.0329, 6.23, 14, 1.60705584091641},     // λβ = 0.46, in the PATE authors' grid 0.30/λ..0.49/λ
		{0.01, 5, 20, 0.6519094757726047},        // λβ = 0.2
		{0.001, 100, 3, 0.00015361305201996454},  // the paper's bound is far above here
		{1e-4, 100, 1000, 0.062497510053068674},
	} {
		got, err := gnssRDP(c.beta, c.sigma, c.order)
		if err != nil {
			t.Fatal(err)
		}
		l := c.order
		worst := 0.0
		for k := -2000; k <= 2000; k++ {
			r := c.beta * float64(k) / 2000
			s, s2 := c.sigma, c.sigma*math.Exp(r)
			d := math.Min(1, math.Exp(r))
			sl := l*s2*s2 + (1-l)*s*s
			div := l*d*d/(2*sl) - math.Log(sl/(math.Pow(s, 2*(1-l))*math.Pow(s2, 2*l)))/(2*(l-1))
			worst = math.Max(worst, div)
		}
		if got < worst*(1-1e-12) || got < c.want {
			t.Errorf("%+v: %v, below the divergence %v of a pair of neighbours (want %v)", c, got, worst, c.want)
		}
		if got > c.want*(1+1e-9) {
			t.Errorf("%+v: %v, above the largest divergence %v", c, got, c.want)
		}
	}
	if _, err := gnssRDP(0.1, 1, 5); err == nil {
		t.Error("order 5 >= 1/(2 beta) accepted")
	}
}

// The lattice release costs gnssRDP at β + 2^-51 plus one ulp (within
// 1e-11 of it: the bound's slope in β reaches 2λ²/(2σ²v²) near 1/(2λ)), and
// its noise is never below 2^10 lattice steps per √λ.
func TestGNSSLatticeCost(t *testing.T) {
	for _, c := range []struct{ beta, sigma, order float64 }{{0.005, 40, 50}, {0.3, 2, 1.5}, {1e-4, 100, 1000}} {
		plain, err := gnssRDP(c.beta, c.sigma, c.order)
		if err != nil {
			t.Fatal(err)
		}
		lat, err := gnssLatticeRDP(c.beta, c.sigma, c.order)
		if err != nil {
			t.Fatal(err)
		}
		if !(lat > plain) || lat > plain*(1+1e-11) {
			t.Errorf("%+v: lattice cost %v against %v", c, lat, plain)
		}
		dev, _ := gnssDeviation(0, c.sigma, c.order)
		if min := gnssMinSteps * gnssLattice * math.Sqrt(c.order); dev != min {
			t.Errorf("deviation at SS = 0: %v, want the floor %v", dev, min)
		}
		if dev, _ := gnssDeviation(0.01, c.sigma, c.order); dev < 0.01*c.sigma {
			t.Errorf("deviation %v below SS·sigma", dev)
		}
	}
	if _, err := gnssLatticeRDP(0.01, 10, 60); err == nil {
		t.Error("order above 1/(2 beta) accepted")
	}
	if _, err := gnssDeviation(-1, 1, 2); err == nil {
		t.Error("negative smooth sensitivity accepted")
	}
}
