package pate

import (
	"math"
	"testing"
)

func TestGNSSAgainstFormula(t *testing.T) {
	for _, c := range []struct{ beta, sigma, order float64 }{{0.01, 5, 20}, {0.0329, 6.23, 14}, {0.001, 100, 3}} {
		got, err := gnssRDP(c.beta, c.sigma, c.order)
		if err != nil {
			t.Fatal(err)
		}
		lb := c.order * c.beta
		want := c.order*math.Exp(2*c.beta)/(c.sigma*c.sigma) + (lb-0.5*math.Log(1-2*lb))/(c.order-1)
		if got < want || got > want*(1+1e-14) {
			t.Errorf("%+v: %v, want %v", c, got, want)
		}
	}
	if _, err := gnssRDP(0.1, 1, 5); err == nil {
		t.Error("order 5 >= 1/(2 beta) accepted")
	}
}

// The lattice release costs gnssRDP at β + 2^-51 plus one ulp, and its
// noise is never below 2^10 lattice steps per √λ.
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
		if !(lat > plain) || lat > plain*(1+1e-13) {
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
