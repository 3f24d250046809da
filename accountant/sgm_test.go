package accountant

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

// TestSGMRDPReference checks the sampled Gaussian RDP against the values
// in the test suite of Google's dp_accounting (rdp_privacy_accountant_test,
// test_compute_rdp_poisson_sampled_gaussian: q = 0.01, σ = 2.5, 50 steps;
// the integer orders), to their relative tolerance 1e-4.
func TestSGMRDPReference(t *testing.T) {
	for _, c := range []struct {
		alpha int
		want  float64
	}{{5, 2.18075656e-03}, {50, 2.38460375e-02}, {100, 1.67416308e02}} {
		r, err := sgmRDP(0.01, 2.5, c.alpha)
		if err != nil {
			t.Fatal(err)
		}
		if got := 50 * r; math.Abs(got-c.want) > 1e-4*c.want {
			t.Errorf("alpha %d: 50 steps give RDP %v, dp_accounting %v", c.alpha, got, c.want)
		}
	}
	// q = 1 is the Gaussian mechanism, α/(2σ²).
	if r, _ := sgmRDP(1, 3, 7); r < 7.0/18 || r-7.0/18 > 1e-13 {
		t.Errorf("q = 1: %v, want 7/18", r)
	}
}

// TestSGMRDPIntegration compares A_α with the integral that defines it,
// E_{z~N(0,σ²)}[((1-q) + q·e^{(2z-1)/(2σ²)})^α] (Mironov, Talwar and
// Zhang 2019), by Simpson's rule in math/big, for a few (q, σ, α).
func TestSGMRDPIntegration(t *testing.T) {
	for _, c := range []struct {
		q, sigma float64
		alpha    int
	}{{0.01, 2.5, 5}, {0.1, 1, 8}, {0.006, 12, 60}, {0.5, 4, 20}} {
		if testing.Short() && c.alpha > 10 {
			continue // the integral's cost grows with alpha: small orders only in the everyday run
		}
		r, err := sgmRDP(c.q, c.sigma, c.alpha)
		if err != nil {
			t.Fatal(err)
		}
		a := integrateA(c.q, c.sigma, c.alpha)
		lf, _ := bigLog(a).Float64()
		want := lf / float64(c.alpha-1)
		if r < want || r-want > 1e-8*want+1e-15 {
			t.Errorf("q=%v sigma=%v alpha=%d: %v, integral gives %v", c.q, c.sigma, c.alpha, r, want)
		}
	}
}

// integrateA integrates over z in [-lo, hi] = mean ± 40σ around both
// Gaussians with composite Simpson's rule on 4,000 intervals.
func integrateA(q, sigma float64, alpha int) *big.Float {
	const n = 4000
	lo, hi := -40*sigma, 1+40*sigma
	h := (hi - lo) / n
	sum := bf(0)
	twoS2 := bf(2 * sigma * sigma)
	norm := bf(1 / (sigma * math.Sqrt(2*math.Pi)))
	for i := 0; i <= n; i++ {
		z := lo + float64(i)*h
		e := new(big.Float).SetPrec(refPrec).Quo(bf(2*z-1), twoS2)
		ratio := new(big.Float).SetPrec(refPrec).Mul(bf(q), bigExp(e))
		ratio.Add(ratio, bf(1-q))
		p := bf(1)
		for range alpha {
			p.Mul(p, ratio)
		}
		dens := new(big.Float).SetPrec(refPrec).Quo(bf(-z*z), twoS2)
		p.Mul(p, bigExp(dens))
		p.Mul(p, norm)
		w := 2.0
		switch {
		case i == 0 || i == n:
			w = 1
		case i%2 == 1:
			w = 4
		}
		sum.Add(sum, p.Mul(p, bf(w*h/3)))
	}
	return sum
}

// TestGaussian checks the composed Gaussian mechanism against the closed
// forms: ρ = k/(2σ²), and at a given order the paper's conversion
// ρα + log(1/δ)/(α-1).
func TestGaussian(t *testing.T) {
	g := Gaussian{Sensitivity: 2, Sigma: 5, Steps: 100}
	rho, err := g.Rho()
	if err != nil || math.Abs(rho-2) > 1e-15 {
		t.Fatalf("rho %v (%v), want 100/(2·25) = 2", rho, err)
	}
	eps, alpha, err := g.Eps(1e-5, 3, PaperConversion)
	if want := 6 + math.Log(1e5)/2; err != nil || alpha != 3 || math.Abs(eps-want) > 1e-12*want || eps < want {
		t.Errorf("at alpha 3: eps %v (%v), want %v rounded up", eps, err, want)
	}
	opt, optAlpha, err := g.Eps(1e-5, 0, PaperConversion)
	wantEps, wantAlpha, _ := PaperConversion.RhoToDP(rho, 1e-5)
	if err != nil || opt != wantEps || optAlpha != wantAlpha || opt > eps {
		t.Errorf("optimal order: eps %v at %v (%v), want %v at %v", opt, optAlpha, err, wantEps, wantAlpha)
	}
	for _, bad := range []Gaussian{{1, 5, 0}, {0, 5, 1}, {1, -1, 1}} {
		if _, _, err := bad.Eps(1e-5, 0, PaperConversion); !errors.As(err, new(*param.Error)) {
			t.Errorf("%+v: %v, want a param.Error", bad, err)
		}
	}
}
