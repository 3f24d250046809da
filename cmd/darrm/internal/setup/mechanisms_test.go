package setup

import (
	"reflect"
	"slices"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/votefile"
)

// TestMechanismFlags: the flags of each mechanism, which its fields' tags
// name, are those its help and errors list, in their order, and those
// it needs on vote counts (all but those tagged optional, which it takes).
func TestMechanismFlags(t *testing.T) {
	calibrated := []string{"m", "eps", "Delta", "delta"}
	gammaFlags := []string{"prior", "gamma", "no-solve"}
	want := []MechanismInfo{
		{Name: "darrm", Relation: accountant.PrivateTeachers, Gamma: true, Takes: append(slices.Clone(calibrated), gammaFlags...)},
		{Name: "subsample", Relation: accountant.PrivateTeachers, Takes: calibrated},
		{Name: "dsub", Relation: accountant.PrivateTeachers, Takes: calibrated},
		{Name: "rr", Relation: accountant.PrivateTeachers, Takes: append(slices.Clone(calibrated), "rr-composition", "rr-delta-prime")},
		{Name: "gnmax", Relation: accountant.OneVote, Takes: append(slices.Clone(calibrated), "gnmax-search")},
		{Name: "darrm-one-vote", Relation: accountant.OneVote, Gamma: true, Takes: append([]string{"target-eps", "delta"}, gammaFlags...)},
		{Name: "gnmax", Input: votefile.ManyClasses, Relation: accountant.OneVote, Needs: []string{"sigma2", "delta"}},
		{Name: "confident-gnmax", Input: votefile.ManyClasses, Relation: accountant.OneVote, Needs: []string{"threshold", "sigma1", "sigma2", "delta"}},
		{Name: "lnmax", Input: votefile.ManyClasses, Relation: accountant.OneVote, Needs: []string{"laplace-scale"}},
		{Name: "progressive-gnmax", Input: votefile.ManyClasses, Relation: accountant.OneVote, Needs: []string{"levels", "kappa"}, Takes: []string{"threshold", "sigma1", "give-up"}},
	}
	if len(MechanismTable) != len(want) {
		t.Fatalf("%d mechanisms, want %d", len(MechanismTable), len(want))
	}
	for i, w := range want {
		got := MechanismTable[i]
		got.mech = nil
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s on %v: %+v, want %+v", w.Name, w.Input, got, w)
		}
	}
}
