package provenance

import "strings"

// MechanismName names a mechanism that releases labels, as a label file's
// header states it (votefile.LabelMeta.Mechanism) and darrm aggregate's --mechanism
// takes it. The release's registry of mechanisms (ensemble.Registry) says
// which votes each labels and which settings it takes. Two-class votes:
// DaRRM, Subsample, DSub, RR, GNMax and, for non-private teachers,
// DaRRMOneVote; votes of C classes: GNMax, ConfidentGNMax and LNMax.
type MechanismName string

// The mechanisms of release. GNMax names two: GNMax on the two counts of
// 0/1 votes (thesis Appendix B.4) and GNMax on the counts of C classes
// (Papernot et al. 2018); the kind of votes tells them apart.
const (
	DaRRM          MechanismName = "darrm"          // DaRRM with gamma_opt (thesis Chapter 3)
	Subsample      MechanismName = "subsample"      // majority of m of the K teachers (Algorithm 8)
	DSub           MechanismName = "dsub"           // majority of 2m-1 of the K teachers (Theorem 3.5.1)
	RR             MechanismName = "rr"             // randomized response (Algorithm 7, Lemma B.1.1)
	GNMax          MechanismName = "gnmax"          // Gaussian noise on the counts
	DaRRMOneVote   MechanismName = "darrm-one-vote" // DaRRM in the one-vote relation
	ConfidentGNMax MechanismName = "confident-gnmax"
	LNMax          MechanismName = "lnmax" // discrete Laplace noise on the counts
)

// String returns the mechanism's name.
func (m MechanismName) String() string { return string(m) }

// JoinMechanisms lists the names ms separated by sep, as strings.Join
// does for strings.
func JoinMechanisms(ms []MechanismName, sep string) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = string(m)
	}
	return strings.Join(names, sep)
}
