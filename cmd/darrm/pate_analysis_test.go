package main

import (
	"errors"
	"math"
	"testing"

	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/pate"
)

// TestSmoothParams: a parameter given is checked against its rule and
// named; one not given is left open.
func TestSmoothParams(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	p, err := smoothParams(v(20), nil, v(3), true)
	if err != nil || p != (pate.SmoothParams{Order: 20, Sigma: 3, FromVotes: true}) {
		t.Errorf("%+v, %v", p, err)
	}
	for _, tc := range []struct {
		order, beta, sigma *float64
		name               string
	}{{v(1), nil, nil, "ss order"}, {nil, v(0), nil, "beta"}, {nil, nil, v(-2), "sigma ss"}, {v(math.NaN()), nil, nil, "ss order"}} {
		var pe *param.Error
		if _, err := smoothParams(tc.order, tc.beta, tc.sigma, false); !errors.As(err, &pe) || pe.Name != tc.name {
			t.Errorf("%s: error %v", tc.name, err)
		}
	}
}
