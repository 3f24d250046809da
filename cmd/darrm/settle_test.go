package main

import (
	"testing"

	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestSettle: without a header the settings given choose the mechanism;
// with one, its settings complete those given and its mechanism is the
// labels', and a setting that contradicts it is refused.
func TestSettle(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	m := &votefile.LabelMeta{Mechanism: provenance.ConfidentGNMax.String(), Relation: "one-vote", Threshold: f(200), Sigma1: f(150), Sigma2: f(40)}
	for _, c := range []struct {
		name  string
		given provenance.Settings
		meta  *votefile.LabelMeta
		mech  provenance.MechanismName
		fails bool
	}{
		{"no labels, sigma2", provenance.Settings{Sigma2: f(40)}, nil, provenance.GNMax, false},
		{"no labels, scale", provenance.Settings{LaplaceScale: f(20)}, nil, provenance.LNMax, false},
		{"header", provenance.Settings{}, m, provenance.ConfidentGNMax, false},
		{"header, repeated", provenance.Settings{Sigma2: f(40)}, m, provenance.ConfidentGNMax, false},
		{"header, contradicted", provenance.Settings{Sigma2: f(5)}, m, "", true},
	} {
		s, stated, mech, err := settle(c.given, c.meta)
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
