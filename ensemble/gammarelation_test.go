package ensemble

import (
	"errors"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestCheckGammaRelation: a gamma fits a mechanism of its own relation; for
// mechanisms of the other relation the error names them and the mechanism
// that samples a gamma in the gamma's relation.
func TestCheckGammaRelation(t *testing.T) {
	darrm, _ := LookupMechanism(provenance.DaRRM, votefile.TwoClass)
	oneVote, _ := LookupMechanism(provenance.DaRRMOneVote, votefile.TwoClass)
	for _, c := range []struct {
		rel     accountant.Relation
		infos   []MechanismInfo
		release accountant.Relation
		use     provenance.MechanismName
	}{
		{accountant.PrivateTeachers, []MechanismInfo{darrm}, 0, ""},
		{accountant.OneVote, []MechanismInfo{darrm, oneVote}, 0, ""},
		{accountant.OneVote, []MechanismInfo{darrm}, accountant.PrivateTeachers, provenance.DaRRMOneVote},
		{accountant.PrivateTeachers, []MechanismInfo{oneVote}, accountant.OneVote, provenance.DaRRM},
	} {
		err := CheckGammaRelation(c.rel, c.infos)
		var re *GammaRelationError
		switch {
		case c.use == "" && err != nil:
			t.Errorf("%v gamma for %v: %v", c.rel, c.infos[0].Name, err)
		case c.use != "" && (!errors.As(err, &re) || re.Gamma != c.rel || re.Release != c.release || re.Use != c.use || !re.BadInput()):
			t.Errorf("%v gamma for %v: %v, want a *GammaRelationError to use %s", c.rel, c.infos[0].Name, err, c.use)
		}
	}
}
