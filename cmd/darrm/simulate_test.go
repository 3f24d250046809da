package main

import (
	"slices"
	"testing"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
)

func TestDefaultMechanisms(t *testing.T) {
	for _, tc := range []struct {
		delta, target float64
		want          []provenance.MechanismName
	}{
		{1e-5, 3e-5, []provenance.MechanismName{"darrm", "subsample", "rr", "gnmax", "darrm-one-vote"}},
		{0, 1e-6, []provenance.MechanismName{"darrm", "subsample", "dsub", "rr", "gnmax", "darrm-one-vote"}},
		{0, 0, []provenance.MechanismName{"darrm", "subsample", "dsub", "rr"}},
	} {
		p := constraints.New(11, 3, 0.1, tc.delta)
		p.TargetDelta = tc.target
		if got := defaultMechanisms(p); !slices.Equal(got, tc.want) {
			t.Errorf("Delta %v delta %v: %v, want %v", tc.delta, tc.target, got, tc.want)
		}
	}
}

func TestTeachersOf(t *testing.T) {
	src := noise.NewSeededSource(1)
	p, err := teachersOf("U(0.5,1)", 11, src)
	if err != nil || len(p) != 11 {
		t.Fatal(p, err)
	}
	for _, v := range p {
		if v < 0.5 || v > 1 {
			t.Errorf("U(0.5,1) drew %v", v)
		}
	}
	if p, err := teachersOf("0.7", 3, src); err != nil || p[0] != 0.7 || p[2] != 0.7 {
		t.Errorf("0.7: %v %v", p, err)
	}
	if p, err := teachersOf("0.1, 0.2,0.3", 3, src); err != nil || p[1] != 0.2 {
		t.Errorf("list: %v %v", p, err)
	}
	for _, bad := range []string{"U(0.6,0.5)", "U(0,2)", "1.5", "0.1,0.2", "NaN", "x", "U(a,b)"} {
		if _, err := teachersOf(bad, 3, src); err == nil {
			t.Errorf("teachersOf(%q) accepted", bad)
		}
	}
}
