package noisymax

import "testing"

// TestRunSlope: the slope of a run of Q threshold steps and N label steps
// is N/σ2² + Q/(2σ1²), rounded up (GNMax: N/σ2²); one step of each is
// one query's, the slope ensemble charges; negative counts are refused.
func TestRunSlope(t *testing.T) {
	cg := ConfidentGNMax{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: DiscreteNoise}
	g := ConfidentGNMax{Sigma2: 40, Noise: DiscreteNoise}
	for _, tc := range []struct {
		m               ConfidentGNMax
		queries, labels int
		want            float64
	}{
		{cg, 5000, 286, 286/1600.0 + 5000/45000.0},
		{cg, 194, 194, 194/1600.0 + 194/45000.0},
		{cg, 10, 0, 10 / 45000.0},
		{cg, 1, 1, 1/1600.0 + 1/45000.0},
		{g, 5000, 300, 300 / 1600.0},
	} {
		got, err := tc.m.RunSlope(tc.queries, tc.labels)
		if err != nil || got < tc.want || got > tc.want*(1+1e-14) {
			t.Errorf("%+v, %d, %d: %v (%v), want %v rounded up", tc.m, tc.queries, tc.labels, got, err, tc.want)
		}
	}
	if _, err := cg.RunSlope(-1, 0); err == nil {
		t.Error("-1 queries accepted")
	}
}
