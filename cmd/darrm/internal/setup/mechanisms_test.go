package setup

import (
	"reflect"
	"slices"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/votefile"
)

// TestMechanismFlags: the flags of each mechanism, which its fields' tags
// name, are those its help and errors list, in their order, and those
// it needs on vote counts (all but those tagged optional, which it takes).
func TestMechanismFlags(t *testing.T) {
	calibrated := []string{"m", "eps", "Delta", "delta"}
	gammaFlags := []string{"prior", "gamma", "no-solve"}
	gamma := ensemble.Needs{Teachers: true, Gamma: true}
	teachers := ensemble.Needs{Teachers: true}
	want := []MechanismInfo{
		{Name: "darrm", Relation: accountant.PrivateTeachers, Uses: gamma, Optional: append(slices.Clone(calibrated), gammaFlags...)},
		{Name: "subsample", Relation: accountant.PrivateTeachers, Uses: teachers, Optional: calibrated},
		{Name: "dsub", Relation: accountant.PrivateTeachers, Uses: teachers, Optional: calibrated},
		{Name: "rr", Relation: accountant.PrivateTeachers, Uses: teachers, Optional: append(slices.Clone(calibrated), "rr-composition", "rr-delta-prime")},
		{Name: "gnmax", Relation: accountant.OneVote, Uses: teachers, Optional: append(slices.Clone(calibrated), "gnmax-search")},
		{Name: "darrm-one-vote", Relation: accountant.OneVote, Uses: ensemble.Needs{Eps: true, Gamma: true}, Optional: append([]string{"target-eps", "delta"}, gammaFlags...)},
		{Name: "gnmax", Input: votefile.ManyClasses, Relation: accountant.OneVote, Required: []string{"sigma2", "delta"}},
		{Name: "confident-gnmax", Input: votefile.ManyClasses, Relation: accountant.OneVote, Required: []string{"threshold", "sigma1", "sigma2", "delta"}},
		{Name: "lnmax", Input: votefile.ManyClasses, Relation: accountant.OneVote, Required: []string{"laplace-scale"}},
		{Name: "progressive-gnmax", Input: votefile.ManyClasses, Relation: accountant.OneVote, Uses: ensemble.Needs{Budget: true}, Required: []string{"levels", "kappa"}, Optional: []string{"give-up", "threshold", "sigma1"}},
	}
	all := NewMechanisms(ensemble.Mechanisms()).All()
	if len(all) != len(want) {
		t.Fatalf("%d mechanisms, want %d", len(all), len(want))
	}
	for i, w := range want {
		got := all[i]
		got.mech = nil
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s on %v: %+v, want %+v", w.Name, w.Input, got, w)
		}
	}
}
