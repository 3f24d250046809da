package accountant

import (
	"fmt"

	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/param"
)

// Relation is a neighbouring relation: what may change between the two
// datasets (or vote vectors) a guarantee compares, and so the relation
// under which a release must be private. Guarantees in different relations
// imply nothing of each other: one in the one-vote relation says nothing
// about teachers that share their training data, and one in the
// private-teachers relation nothing about non-private teachers. They must
// not be composed or charged to one budget. The relations are
// PrivateTeachers (DaRRM's, the zero value) and OneVote (PATE's).
type Relation int

const (
	// PrivateTeachers is DaRRM's relation (thesis Section 3.3): the
	// datasets differ by adding or removing one record and every teacher
	// is (Eps, Delta)-DP for that change, so any number of votes may
	// change, each within its teacher's guarantee. Add/remove is the
	// relation of DP-SGD with Poisson sampling and the one the teachers'
	// cap on disjoint shares needs (a replaced record may move between two
	// shares). DaRRM's constraints in it are Lemma 3.4.4 over the corner
	// multisets of Lemma 3.6.1 (package constraints).
	PrivateTeachers Relation = iota
	// OneVote is PATE's relation (Papernot et al., ICLR 2018): the vote
	// vectors differ in one teacher's vote, as when teachers are trained
	// on disjoint shares of the data and one record is added or removed:
	// it lies in one share (replacing a record may change two votes). The
	// teachers need not be private. The vote count L moves by at most one,
	// and DaRRM_gamma is private exactly when its release probabilities at
	// every two neighbouring counts satisfy the (eps, delta)-DP
	// inequalities for both outputs: 4K inequalities (docs/solve.md,
	// "DaRRM under the one-vote relation").
	OneVote
)

var relationNames = enum.Names[Relation]{What: "relation", List: []string{PrivateTeachers: "private-teachers", OneVote: "one-vote"}}

// String returns "private-teachers" or "one-vote".
func (r Relation) String() string { return relationNames.String(r) }

// MarshalText returns the relation's name.
func (r Relation) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText sets r from a relation's name, so that a Relation reads
// as a flag or a JSON value; its error says what each relation is.
func (r *Relation) UnmarshalText(b []byte) error {
	if relationNames.Unmarshal(r, b) == nil {
		return nil
	}
	return fmt.Errorf("relation %s: must be %v (each teacher private, any vote may change: DaRRM, RR, subsampling) or %v (one record changes at most one vote: GNMax, DaRRM)", param.Quote(string(b)), PrivateTeachers, OneVote)
}

// Describe says the relation in words.
func (r Relation) Describe() string {
	if r == OneVote {
		return "neighbouring vote vectors differ in one teacher's vote (PATE: teachers on disjoint shares of the data, not necessarily private, so adding or removing one record changes one teacher's vote)"
	}
	return "neighbouring datasets differ by adding or removing one record; every teacher is (eps, Delta)-DP for that change, so any vote may change"
}
