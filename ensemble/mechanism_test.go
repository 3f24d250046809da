package ensemble

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// TestMechanismNew builds every mechanism by name and checks it is the
// aggregator its constructor returns, with a description that says so.
func TestMechanismNew(t *testing.T) {
	ctx := context.Background()
	p := problem(11, 3, 1e-5)
	for _, tc := range []struct {
		m     Mechanism
		label string
	}{
		{Mechanism{Name: "darrm", Gamma: optGamma(t, p), GammaSource: "the fixture"}, "DaRRM with the fixture"},
		{Mechanism{Name: "subsample"}, "majority of 3 of the 11 teachers"},
		{Mechanism{Name: "rr", RRComposition: accountant.General, RRDeltaPrime: 1e-5}, "general composition"},
		{Mechanism{Name: "gnmax", GNMaxSearch: accountant.GNMaxGrid}, "(grid search)"},
	} {
		agg, label, err := tc.m.New(ctx, p, Options{})
		if err != nil {
			t.Errorf("%s: %v", tc.m.Name, err)
			continue
		}
		if agg.Name() != tc.m.Name || agg.K() != p.K || !strings.Contains(label, tc.label) {
			t.Errorf("%s: aggregator %s for K = %d, label %q; want %q in it", tc.m.Name, agg.Name(), agg.K(), label, tc.label)
		}
	}
	// dsub needs Delta = 0; its description names Theorem 3.5.1.
	pure := problem(11, 3, 0)
	if agg, label, err := (Mechanism{Name: "dsub"}).New(ctx, pure, Options{}); err != nil || agg.Name() != "dsub" || !strings.Contains(label, "majority of 5 of the 11") {
		t.Errorf("dsub: %v, %q", err, label)
	}
	if _, _, err := (Mechanism{Name: "median"}).New(ctx, p, Options{}); err == nil || !strings.Contains(err.Error(), "darrm, subsample, dsub, rr, gnmax") {
		t.Errorf("unknown mechanism: %v", err)
	}
	// A gamma that is not (m·eps, delta)-DP is refused by the certificate.
	if _, _, err := (Mechanism{Name: "darrm", Gamma: slices.Repeat([]float64{1}, 12)}).New(ctx, p, Options{}); !errors.Is(err, ErrNotCertified) {
		t.Errorf("gamma = 1: %v, want ErrNotCertified", err)
	}
}

func TestDefaultMechanisms(t *testing.T) {
	for _, tc := range []struct {
		delta, target float64
		want          []string
	}{
		{1e-5, 3e-5, []string{"darrm", "subsample", "rr", "gnmax"}},
		{0, 1e-6, []string{"darrm", "subsample", "dsub", "rr", "gnmax"}},
		{0, 0, []string{"darrm", "subsample", "dsub", "rr"}},
	} {
		p := problem(11, 3, tc.delta)
		p.TargetDelta = tc.target
		if got := DefaultMechanisms(p); !slices.Equal(got, tc.want) {
			t.Errorf("Delta %v delta %v: %v, want %v", tc.delta, tc.target, got, tc.want)
		}
	}
}

func TestAbove(t *testing.T) {
	res := []SimResult{
		{Name: "darrm", Lo: 0.8, Hi: 0.9},
		{Name: "rr", Lo: 0.6, Hi: 0.7},
		{Name: "subsample", Lo: 0.75, Hi: 0.85},
		{Name: "gnmax", Lo: 0.5, Hi: 0.79},
	}
	if got := Above(res, "darrm"); !slices.Equal(got, []string{"rr", "gnmax"}) {
		t.Errorf("Above(darrm) = %v", got)
	}
	if got := Above(res, "rr"); got != nil {
		t.Errorf("Above(rr) = %v", got)
	}
	if got := Above(res, "dsub"); got != nil {
		t.Errorf("Above(dsub), not in the results: %v", got)
	}
}
