package provenance

import (
	"errors"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/votefile"
)

// TestSettingsAgree: settings given may repeat what a label file states;
// one that differs, or that its mechanism does not have, is a
// *contradictionError with both values.
func TestSettingsAgree(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	discrete, continuous := noisymax.DiscreteNoise, noisymax.ContinuousNoise
	stated := Settings{Sigma2: f(40), Noise: &discrete}
	for _, tc := range []struct {
		given         Settings
		setting, want string // the error's setting and stated value, "" for none
	}{
		{Settings{}, "", ""},
		{Settings{Sigma2: f(40), Noise: &discrete}, "", ""},
		{Settings{Sigma2: f(80)}, "sigma2", "40"},
		{Settings{Noise: &continuous}, "noise", "discrete"},
		{Settings{Threshold: f(200)}, "threshold", ""},
		{Settings{LaplaceScale: f(20)}, "laplace-scale", ""},
	} {
		got, err := tc.given.Agree(GNMax, stated)
		var se *contradictionError
		switch {
		case tc.setting == "" && (err != nil || *got.Sigma2 != 40 || *got.Noise != discrete):
			t.Errorf("%+v: %+v, %v", tc.given, got, err)
		case tc.setting != "" && (!errors.As(err, &se) || se.setting != tc.setting || se.stated != tc.want || se.given == ""):
			t.Errorf("%+v: %v, want the setting %s stated %q", tc.given, err, tc.setting, tc.want)
		}
	}
}

// TestSettingsGNMax: a threshold step with sigma1, which must be > 0 and
// is named when it is not; sigma2 checked by the parameters' Validate.
func TestSettingsGNMax(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	m, err := Settings{Threshold: v(200), Sigma1: v(150), Sigma2: v(40)}.GNMax(noisymax.DiscreteNoise)
	if err != nil || m != (noisymax.ConfidentGNMax{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}) {
		t.Errorf("%+v, %v", m, err)
	}
	for _, tc := range []struct {
		s    Settings
		name string
	}{{Settings{Sigma1: v(0), Sigma2: v(40)}, "sigma1"}, {Settings{Sigma2: v(-1)}, "sigma2"}} {
		var pe *accountant.ParamError
		if _, err := tc.s.GNMax(noisymax.DiscreteNoise); !errors.As(err, &pe) || pe.Name != tc.name {
			t.Errorf("%s: error %v", tc.name, err)
		}
	}
}

// TestLabelSettings: the settings a label file's header states come back
// as written; an unknown noise, relation or partition is refused.
func TestLabelSettings(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	discrete := noisymax.DiscreteNoise
	s := Settings{Threshold: f(200), Sigma1: f(150), Sigma2: f(40), Noise: &discrete}
	m := &votefile.LabelMeta{Mechanism: "confident-gnmax", Relation: "one-vote", Partition: "keyed-hash"}
	s.Label(m)
	got, err := LabelSettings(m)
	if err != nil || got.named() != nil && len(got.named()) != 5 || *got.Threshold != 200 || *got.Sigma1 != 150 || *got.Sigma2 != 40 || *got.Noise != discrete || got.LaplaceScale != nil {
		t.Errorf("%+v, %v", got, err)
	}
	for _, edit := range []func(*votefile.LabelMeta){
		func(m *votefile.LabelMeta) { m.Noise = "loud" },
		func(m *votefile.LabelMeta) { m.Relation = "friends" },
		func(m *votefile.LabelMeta) { m.Partition = "random" },
	} {
		bad := *m
		edit(&bad)
		if _, err := LabelSettings(&bad); err == nil {
			t.Errorf("%+v read", bad)
		}
	}
}
