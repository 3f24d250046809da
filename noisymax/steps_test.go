package noisymax

import (
	"strings"
	"testing"
)

// TestRunSlope: the slope of a run of Q threshold steps and N label steps
// is N/σ2² + Q/(2σ1²), rounded up (without a threshold step: N/σ2²); one
// step of each is one query's, the slope a release charges; negative
// counts and an unset noise are refused.
func TestRunSlope(t *testing.T) {
	cg := Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: DiscreteNoise}
	g := Steps{Sigma2: 40, Noise: DiscreteNoise}
	for _, tc := range []struct {
		s               Steps
		queries, labels int
		want            float64
	}{
		{cg, 5000, 286, 286/1600.0 + 5000/45000.0},
		{cg, 194, 194, 194/1600.0 + 194/45000.0},
		{cg, 10, 0, 10 / 45000.0},
		{cg, 1, 1, 1/1600.0 + 1/45000.0},
		{g, 5000, 300, 300 / 1600.0},
	} {
		got, err := tc.s.RunSlope(tc.queries, tc.labels)
		if err != nil || got < tc.want || got > tc.want*(1+1e-14) {
			t.Errorf("%+v, %d, %d: %v (%v), want %v rounded up", tc.s, tc.queries, tc.labels, got, err, tc.want)
		}
	}
	if _, err := cg.RunSlope(-1, 0); err == nil {
		t.Error("-1 queries accepted")
	}
	if _, err := (Steps{Sigma2: 40}).RunSlope(1, 1); err == nil {
		t.Error("unset noise accepted")
	}
}

// TestCheckFor: the steps are checked as set (an unset noise is refused),
// steps without a threshold step (sigma1 = 0) take no threshold, and for
// K teachers a threshold step's threshold is in [0, K + 10·sigma1]; K = 0,
// not known yet, checks the steps alone.
func TestCheckFor(t *testing.T) {
	d := DiscreteNoise
	for _, tc := range []struct {
		s        Steps
		teachers int
		bad      string // a word of the error, "" for none
	}{
		{Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: d}, 250, ""},
		{Steps{Threshold: 1750, Sigma1: 150, Sigma2: 40, Noise: d}, 250, ""},
		{Steps{Threshold: 1751, Sigma1: 150, Sigma2: 40, Noise: d}, 250, "K + 10·sigma1"},
		{Steps{Threshold: -1, Sigma1: 150, Sigma2: 40, Noise: d}, 250, "threshold"},
		{Steps{Threshold: 1751, Sigma1: 150, Sigma2: 40, Noise: d}, 0, ""},
		{Steps{Sigma2: 40, Noise: d}, 250, ""},
		{Steps{Threshold: 5, Sigma2: 40, Noise: d}, 250, "needs sigma1"},
		{Steps{Threshold: 200, Sigma1: 150, Sigma2: 40}, 250, "noise"},
		{Steps{Threshold: 200, Sigma1: 0.1, Sigma2: 40, Noise: d}, 250, "sigma1"},
		{Steps{Threshold: 200, Sigma1: 0.1, Sigma2: 40, Noise: ContinuousNoise}, 250, ""},
	} {
		err := tc.s.CheckFor(tc.teachers)
		if (err != nil) != (tc.bad != "") || err != nil && !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("%+v for K = %d: %v, want an error with %q", tc.s, tc.teachers, err, tc.bad)
		}
	}
}
