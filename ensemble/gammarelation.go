package ensemble

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// GammaRelationError says that a gamma certified in one neighbouring
// relation is given to mechanisms that release in another: a gamma is
// private only in the relation it was certified in.
type GammaRelationError struct {
	Gamma      accountant.Relation        // the relation the gamma is for
	Mechanisms []provenance.MechanismName // the mechanisms it was given to
	Release    accountant.Relation        // the relation they release in
	Use        provenance.MechanismName   // the mechanism that samples a gamma in Gamma
}

func (e *GammaRelationError) Error() string {
	return fmt.Sprintf("a gamma for the %v relation (%s); %s releases in the %v relation: use %s, or a gamma for the %v relation",
		e.Gamma, e.Gamma.Describe(), provenance.JoinMechanisms(e.Mechanisms, " and "), e.Release, e.Use, e.Release)
}

// BadInput says that the gamma given is the caller's error.
func (e *GammaRelationError) BadInput() bool { return true }

// CheckGammaRelation returns nil when one of the mechanisms infos, which
// sample a gamma, releases in rel, the relation of a gamma given to them,
// and otherwise a *GammaRelationError naming the mechanism that samples a
// gamma in rel.
func CheckGammaRelation(rel accountant.Relation, infos []MechanismInfo) error {
	e := &GammaRelationError{Gamma: rel, Mechanisms: make([]provenance.MechanismName, len(infos)), Release: accountant.OneVote}
	if rel == accountant.OneVote {
		e.Release = accountant.PrivateTeachers
	}
	for i, info := range infos {
		if info.Relation == rel {
			return nil
		}
		e.Mechanisms[i] = info.Name
	}
	for _, info := range registry {
		if info.Gamma && info.Relation == rel {
			e.Use = info.Name
		}
	}
	return e
}
