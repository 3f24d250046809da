package accountant

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

// scanMin returns the minimum over a fine log grid of α of the conversion
// of the curve ρα: a brute-force check of RhoToDP's exact minimisation.
// Under -short the grid is ten times coarser; the exact minimum is below
// every point of either.
func scanMin(rho, delta float64, c Conversion) float64 {
	step := 1e-4
	if testing.Short() {
		step = 1e-3
	}
	best := math.Inf(1)
	for lt := -12.0; lt <= 12; lt += step {
		eps, err := c.ConvertRDP(rho*(1+math.Exp(lt)), 1+math.Exp(lt), delta)
		if err == nil && eps < best {
			best = eps
		}
	}
	return best
}

// TestRhoToDP checks the exact minimisation over α against a fine scan, the
// paper conversion's closed form against ConvertRDP at the returned α, and
// that the improved conversion is below the paper's for the same curve.
func TestRhoToDP(t *testing.T) {
	for _, rho := range []float64{1e-6, 1e-3, 0.01, 0.2, 1, 5} {
		for _, delta := range []float64{1e-12, 1e-6, 1e-3, 0.1} {
			paper, pa, err := PaperConversion.RhoToDP(rho, delta)
			if err != nil {
				t.Fatal(err)
			}
			improved, ia, err := ImprovedConversion.RhoToDP(rho, delta)
			if err != nil {
				t.Fatal(err)
			}
			if !(improved < paper) {
				t.Errorf("rho=%v delta=%v: improved %v not below paper %v", rho, delta, improved, paper)
			}
			for _, c := range []struct {
				conv  Conversion
				eps   float64
				alpha float64
			}{{PaperConversion, paper, pa}, {ImprovedConversion, improved, ia}} {
				at, err := c.conv.ConvertRDP(rho*c.alpha, c.alpha, delta)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(at-c.eps) > 1e-12*math.Max(1, c.eps) {
					t.Errorf("rho=%v delta=%v %v: RhoToDP %v != ConvertRDP at alpha %v = %v", rho, delta, c.conv, c.eps, c.alpha, at)
				}
				if scan := scanMin(rho, delta, c.conv); c.eps > scan+1e-12*math.Max(1, scan) {
					t.Errorf("rho=%v delta=%v %v: RhoToDP %v above the scanned minimum %v", rho, delta, c.conv, c.eps, scan)
				}
			}
		}
	}
}

// TestRhoToDPTiny: a slope so small that the paper's optimal order
// overflows float64 (a pure step of ε = 1e-300, issue 55) converts to a
// finite ε >= 0, never NaN: the paper's closed form ρ + 2·sqrt(ρL), and
// the improved conversion's 0 (ρ < δ², so α = 1/δ already gives ε < 0),
// which a spend of ε = 1e-300 gets too, its slope rounded up to the least
// positive float64 rather than down to 0.
func TestRhoToDPTiny(t *testing.T) {
	rho1e300, _ := Spend{Kind: PureSpend, Guarantee: Guarantee{Eps: 1e-300}}.rho()
	if rho1e300 != math.SmallestNonzeroFloat64 {
		t.Errorf("the slope of a pure 1e-300 step is %v, want the least positive float64", rho1e300)
	}
	for _, rho := range []float64{math.SmallestNonzeroFloat64, 1e-310, 1e-300, 1e-200} {
		for _, delta := range []float64{1e-12, 1e-5} {
			paper, _, err := PaperConversion.RhoToDP(rho, delta)
			want := rho + 2*math.Sqrt(rho)*math.Sqrt(-math.Log(delta))
			if err != nil || !(paper >= want) || paper > want*(1+1e-14) {
				t.Errorf("rho %v, delta %v: paper %v, %v; want %v", rho, delta, paper, err, want)
			}
			improved, _, err := ImprovedConversion.RhoToDP(rho, delta)
			if err != nil || improved != 0 {
				t.Errorf("rho %v, delta %v: improved %v, %v; want 0", rho, delta, improved, err)
			}
		}
	}
}

// TestRhoForDP checks that rhoForDP inverts RhoToDP: the returned slope meets
// the target, and a slope larger by 1e-9 does not.
func TestRhoForDP(t *testing.T) {
	for _, eps := range []float64{0.01, 0.2676, 1, 5, 10, 50} {
		for _, delta := range []float64{1e-12, 1e-6, 3e-4, 0.1} {
			for _, c := range []Conversion{PaperConversion, ImprovedConversion} {
				rho, alpha, err := rhoForDP(Guarantee{eps, delta}, c)
				if err != nil {
					t.Fatal(err)
				}
				got, _, err := c.RhoToDP(rho, delta)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(got-eps) > 1e-11*eps {
					t.Errorf("eps=%v delta=%v %v: RhoToDP(rhoForDP) = %v", eps, delta, c, got)
				}
				at, _ := c.ConvertRDP(rho*alpha, alpha, delta)
				if math.Abs(at-eps) > 1e-11*eps {
					t.Errorf("eps=%v delta=%v %v: conversion at the returned alpha %v = %v", eps, delta, c, alpha, at)
				}
				if more, _, _ := c.RhoToDP(rho*(1+1e-9), delta); !(more > eps) {
					t.Errorf("eps=%v delta=%v %v: rho*(1+1e-9) still meets the target (%v)", eps, delta, c, more)
				}
			}
			paper, _, _ := rhoForDP(Guarantee{eps, delta}, PaperConversion)
			improved, _, _ := rhoForDP(Guarantee{eps, delta}, ImprovedConversion)
			if !(improved > paper) {
				t.Errorf("eps=%v delta=%v: improved rho %v not above paper rho %v", eps, delta, improved, paper)
			}
		}
	}
}

func TestConvertRDPNegative(t *testing.T) {
	// ρ = 1e-12 at α = 1e5 with δ = 1e-3: the improved bound is below 0.
	eps, err := ImprovedConversion.ConvertRDP(1e-7, 1e5, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	if eps != 0 {
		t.Errorf("ConvertRDP = %v, want 0 for a negative bound", eps)
	}
}

// TestConversionRoundsUpUnderCancellation checks that the improved
// conversion is never below the exact value of its bound where its terms
// cancel: at order 1024 log t and log1p t are near 6.93 while ε is 10^-3,
// and near α = 1/δ the cost cancels ρα. The references are 200-bit
// evaluations (mpmath) of the bound at the float64 inputs: for ConvertRDP
// at its order, for RhoToDP its least value over every order, which no
// order's bound is below. Rounded by a few ulps of the result alone, each
// was below the reference by 4e-13 to 2.4e-11 relative, so that the
// Rényi and zCDP filters admitted sums whose guarantee exceeds the budget.
func TestConversionRoundsUpUnderCancellation(t *testing.T) {
	atLeast := func(name string, got float64, ref string) {
		t.Helper()
		r, _, err := big.ParseFloat(ref, 10, 200, big.ToNearestEven)
		if err != nil {
			t.Fatal(err)
		}
		if new(big.Float).SetPrec(200).SetFloat64(got).Cmp(r) < 0 {
			t.Errorf("%s = %.17g: below the exact bound %s", name, got, ref)
		}
	}
	eps, err := ImprovedConversion.ConvertRDP(0.0042510392759906234, 1024, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	atLeast("ConvertRDP(0.0042510392759906234, 1024, 0.01)", eps, "0.00100000000000041168701627643773")
	// At a subnormal δ, whose logarithm math.Log on amd64 takes for about
	// -709.09 (golang/go#56600): ε was 29 below the bound.
	if eps, err = PaperConversion.ConvertRDP(1, 2, 1e-320); err != nil {
		t.Fatal(err)
	}
	atLeast("ConvertRDP(1, 2, 1e-320)", eps, "737.82724089097390615098690567193177899059655673106")
	for _, c := range []struct {
		rho, delta float64
		ref        string
	}{
		{3.490607335082147e-09, 1e-5, "0.000100000000000500024823129115089"},
		{6.778793546807581e-08, 0.0002158410797515841, "0.0000124525947033762911905527634898"},
	} {
		eps, _, err := ImprovedConversion.RhoToDP(c.rho, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		atLeast(fmt.Sprintf("RhoToDP(%v, %v)", c.rho, c.delta), eps, c.ref)
	}

	// The filters' decisions: each sum's exact bound is above the budget.
	renyi := Filter{Parts: []FilterPart{{Method: RenyiFilter, Delta: 0.01, Order: 1024}}}
	seq := Sequence{Steps: 1, Step: Guarantee{Eps: 1}, Renyi: 0.0042510392759906234}
	if _, ok, err := renyi.Total(seq, Guarantee{Eps: 0.001, Delta: 0.01}); err != nil || ok {
		t.Errorf("Renyi filter at order 1024: Σ D_α = %v admitted within (0.001, 0.01) (err %v); its bound is 0.001·(1 + 4.1e-13)", seq.Renyi, err)
	}
	z := Sequence{Steps: 1, Step: Guarantee{Eps: 1}, Rho: 3.490607335082147e-09}
	if _, ok, err := z.FilterTotal(ZCDPFilter, Guarantee{Eps: 1e-4, Delta: 1e-5}); err != nil || ok {
		t.Errorf("zCDP filter: Σρ = %v admitted within (1e-4, 1e-5) (err %v); its least bound is 1e-4·(1 + 5.0e-12)", z.Rho, err)
	}
}

// TestSigmaForHugeEps checks that a target ε so large that the order of
// its calibration rounds to 1 is refused by its name, eps: the error named
// alpha, which no caller of a calibration gives (account gnmax
// --target-eps 1e100 read "--alpha = 1: must be a finite number > 1").
func TestSigmaForHugeEps(t *testing.T) {
	for _, c := range []Conversion{PaperConversion, ImprovedConversion} {
		_, _, err := c.SigmaFor(1, Guarantee{Eps: 1e100, Delta: 3e-4})
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != "eps" {
			t.Errorf("%v: SigmaFor at eps 1e100: %v; want a param.Error on eps", c, err)
		}
	}
}
