package pate

import (
	"testing"

	"github.com/darrm/darrm/votefile"
)

// TestSettle: without a header the settings given choose the mechanism;
// with one, its settings complete those given and its mechanism is the
// labels', and a setting that contradicts it is refused.
func TestSettle(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	m := &votefile.LabelMeta{Mechanism: votefile.ConfidentGNMax, Settings: votefile.Settings{Threshold: f(200), Sigma1: f(150), Sigma2: f(40)}}
	for _, c := range []struct {
		name  string
		given votefile.Settings
		meta  *votefile.LabelMeta
		mech  votefile.MechanismName
		fails bool
	}{
		{"no labels, sigma2", votefile.Settings{Sigma2: f(40)}, nil, votefile.GNMax, false},
		{"no labels, scale", votefile.Settings{LaplaceScale: f(20)}, nil, votefile.LNMax, false},
		{"header", votefile.Settings{}, m, votefile.ConfidentGNMax, false},
		{"header, repeated", votefile.Settings{Sigma2: f(40)}, m, votefile.ConfidentGNMax, false},
		{"header, contradicted", votefile.Settings{Sigma2: f(5)}, m, "", true},
	} {
		s, stated, mech, err := Settle(c.given, c.meta)
		switch {
		case c.fails != (err != nil):
			t.Errorf("%s: %v", c.name, err)
		case !c.fails && mech != c.mech:
			t.Errorf("%s: mechanism %s, want %s", c.name, mech, c.mech)
		case !c.fails && c.meta != nil && (s.Threshold == nil || *s.Threshold != 200 || stated.Sigma1 == nil):
			t.Errorf("%s: settings %+v, stated %+v", c.name, s, stated)
		}
	}
}
