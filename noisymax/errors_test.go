package noisymax

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
)

// TestBadInput checks that the calibrations of GNMax reject out-of-domain
// input with a parameter error naming the parameter and its value.
func TestBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ok := accountant.Guarantee{Eps: 0.1, Delta: 1e-5}
	tests := []struct {
		name  string
		param string
		call  func() error
	}{
		{"gnmax eps 0", "eps", func() error {
			_, _, err := gnmaxSigma(accountant.Guarantee{Eps: 0, Delta: 1e-5}, accountant.PaperConversion)
			return err
		}},
		{"gnmax grid delta 0", "delta", func() error { _, _, err := gnmaxSigmaGrid(accountant.Guarantee{Eps: 1, Delta: 0}); return err }},
		{"gnmax tight eps NaN", "eps", func() error { _, err := GNMaxSigmaTight(accountant.Guarantee{Eps: nan, Delta: 1e-5}, 11); return err }},
		{"gnmax tight delta 1", "delta", func() error { _, err := GNMaxSigmaTight(accountant.Guarantee{Eps: 0.1, Delta: 1}, 11); return err }},
		{"gnmax tight delta < 0", "delta", func() error { _, err := GNMaxSigmaTight(accountant.Guarantee{Eps: 0.1, Delta: -1e-9}, 11); return err }},
		{"gnmax tight K 0", "K", func() error { _, err := GNMaxSigmaTight(ok, 0); return err }},
		{"gnmax bit sigma 0", "sigma", func() error { _, err := gnmaxBitDelta(0.1, 0, 11); return err }},
		{"gnmax bit sigma Inf", "sigma", func() error { _, err := gnmaxBitDelta(0.1, inf, 11); return err }},
		{"gnmax bit eps 0", "eps", func() error { _, err := gnmaxBitDelta(0, 1, 11); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var pe *param.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParamError", err)
			}
			if pe.Name != tt.param {
				t.Errorf("error names %q, want %q (%v)", pe.Name, tt.param, err)
			}
			if !strings.Contains(err.Error(), pe.Rule) || !strings.Contains(err.Error(), tt.param) {
				t.Errorf("message %q does not state the parameter and the rule", err)
			}
		})
	}
}

// TestBitTeachersBound: the two-class GNMax bit's curve, O(K) at each
// point, refuses a K beyond what a calibration evaluates in a second.
func TestBitTeachersBound(t *testing.T) {
	var pe *param.Error
	if _, err := gnmaxBitDelta(1, 5, math.MaxInt); !errors.As(err, &pe) || pe.Name != "K" {
		t.Errorf("gnmaxBitDelta at K = MaxInt: %v", err)
	}
	if _, err := GNMaxSigmaTight(accountant.Guarantee{Eps: 1, Delta: 1e-5}, maxBitTeachers+1); !errors.As(err, &pe) || pe.Name != "K" {
		t.Errorf("GNMaxSigmaTight at K = maxBitTeachers+1: %v", err)
	}
}

// TestGridHugeEps: an eps so large that the grid's least order rounds to 1
// is calibrated on the orders above it, not refused as an order of 1.
func TestGridHugeEps(t *testing.T) {
	if sigma, lambda, err := gnmaxSigmaGrid(accountant.Guarantee{Eps: 1e300, Delta: 1e-300}); err != nil || !(lambda > 1) || !(sigma > 0) {
		t.Errorf("eps 1e300: sigma %v, lambda %v, %v", sigma, lambda, err)
	}
}
