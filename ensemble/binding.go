package ensemble

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
)

// EpsSource says where the teachers' (ε, Δ) of a release came from.
type EpsSource int

const (
	// FromHeader is the vote file's metadata header.
	FromHeader EpsSource = iota
	// FromFlags is the caller (darrm's --eps and --Delta), for a vote file
	// whose header states no guarantee, or that has none.
	FromFlags
)

var epsSourceEnum = textEnum{"eps source", []string{FromHeader: "header", FromFlags: "flags"}}

// String returns "header" or "flags".
func (s EpsSource) String() string { return epsSourceEnum.name(int(s)) }

// MarshalText returns the source's name.
func (s EpsSource) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText sets s from "header" or "flags".
func (s *EpsSource) UnmarshalText(b []byte) error {
	i, err := epsSourceEnum.parse(b)
	*s = EpsSource(i)
	return err
}

// TeacherGuarantee is the (ε, Δ) a release takes every teacher to have,
// and where it came from.
type TeacherGuarantee struct {
	accountant.Guarantee
	Source EpsSource
	// Heterogeneous says that the header gives the teachers different
	// guarantees: Guarantee is then their common bound (VoteMeta.Common).
	Heterogeneous bool
}

// TeachersError reports a release whose teachers' guarantee is missing, or
// contradicts the vote file's metadata header: Field is "eps", "Delta" or
// "relation"; Header is the header's value ("" when there is no header or
// it states none), Given the caller's ("" when not stated). Nothing is
// released.
type TeachersError struct {
	Field, Header, Given string
	Rule                 string
}

func (e *TeachersError) Error() string {
	switch {
	case e.Header != "" && e.Given != "":
		return fmt.Sprintf("the teachers' %s: %s given, but the vote file's metadata header states %s: %s", e.Field, e.Given, e.Header, e.Rule)
	case e.Header != "":
		return fmt.Sprintf("the teachers' %s: the vote file's metadata header states %s: %s", e.Field, e.Header, e.Rule)
	}
	return fmt.Sprintf("the teachers' %s: %s", e.Field, e.Rule)
}

// ReleaseTeachers returns the teachers' (ε, Δ) of a release from a vote
// file whose metadata header is meta (nil: none), given the values the
// caller states (nil: not stated). With a header that states every
// teacher's guarantee the answer is the header's common bound
// (VoteMeta.Common), and a stated value must equal it. Without a header,
// or with non-private teachers (whose header states no guarantee: GNMax's
// target is then a choice, not a property of the teachers), both must be
// stated: there is no default for a property of the user's own teachers.
// Every refusal is a *TeachersError.
func ReleaseTeachers(meta *VoteMeta, eps, delta *float64) (TeacherGuarantee, error) {
	if meta == nil || !meta.Private() {
		why := "the vote file has no metadata header, so they must be stated (there is no default for a property of your teachers)"
		if meta != nil {
			why = "the vote file's metadata header states non-private teachers, so the guarantee the release is calibrated to must be stated"
		}
		switch {
		case eps == nil && delta == nil:
			return TeacherGuarantee{}, &TeachersError{Field: "eps and Delta", Rule: why}
		case eps == nil:
			return TeacherGuarantee{}, &TeachersError{Field: "eps", Rule: why}
		case delta == nil:
			return TeacherGuarantee{}, &TeachersError{Field: "Delta", Rule: why}
		}
		return TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: *eps, Delta: *delta}, Source: FromFlags}, nil
	}
	g, het := meta.Common()
	rule := "a value given must equal the header's (leave it out to use the header's)"
	if het {
		rule = "the teachers' guarantees differ, and a release uses their common bound (the largest eps and the largest Delta); a value given must equal it (leave it out to use it)"
	}
	for _, c := range []struct {
		name   string
		given  *float64
		header float64
	}{{"eps", eps, g.Eps}, {"Delta", delta, g.Delta}} {
		if c.given != nil && *c.given != c.header {
			return TeacherGuarantee{}, &TeachersError{Field: c.name, Header: fmt.Sprint(c.header), Given: fmt.Sprint(*c.given), Rule: rule}
		}
	}
	return TeacherGuarantee{Guarantee: g, Source: FromHeader, Heterogeneous: het}, nil
}

// Binding is what a release states about the teacher ensemble it draws
// on. A ledger binds one (ledger init) and refuses releases that state
// another, and the teacher-level cap on every total follows from it (Cap).
type Binding struct {
	// Ensemble is the ensemble's id; "" when not stated.
	Ensemble string
	K        int
	// Teachers is each teacher's (ε, Δ): for teachers with different
	// guarantees, their common bound; for non-private teachers, the ε and
	// Δ a release was calibrated to (ReleaseTeachers).
	Teachers  accountant.Guarantee
	Relation  Relation
	Kind      Kind
	Partition Partition
}

// Binding returns what the header states of its ensemble, with the
// teachers' (ε, Δ) of t (ReleaseTeachers).
func (m *VoteMeta) Binding(t TeacherGuarantee) Binding {
	return Binding{Ensemble: m.Ensemble, K: m.K, Teachers: t.Guarantee, Relation: m.Relation, Kind: m.Kind, Partition: m.Partition}
}

// Check is the check of every release and every account against the
// votes it draws on, whose metadata header is meta (nil: none): a
// mechanism named name, whose per-query guarantee is priv, for K = k
// teachers. Its relation must be the header's (a *TeachersError: a
// one-vote mechanism is not private for teachers that may share data,
// nor a private-teachers one for non-private teachers), and the teachers'
// (ε, Δ) it assumes, if any, the header's (ReleaseTeachers). The header's
// own rules (the teachers' guarantees, the relation, kind, partition, K
// and classes) were checked when it was read (VoteMeta.Validate).
//
// It returns what the release states of the ensemble: K, the relation,
// and the teachers' (ε, Δ) priv assumes, else the header's common bound
// of private teachers; the ensemble id, kind and partition the header's,
// unstated without one (Binding.Stated).
func Check(meta *VoteMeta, k int, name string, priv Privacy) (Binding, error) {
	b := Binding{K: k, Teachers: priv.Teachers, Relation: priv.Relation}
	if meta == nil {
		return b, nil
	}
	if priv.Relation != meta.Relation {
		rule := "a release is in the relation of the teachers' guarantee: use a mechanism private in it"
		if priv.Relation == OneVote {
			rule = "the mechanism is private only in the one-vote relation (one record changes at most one teacher's vote), which teachers that may share data do not meet"
		}
		return Binding{}, &TeachersError{Field: "relation", Header: meta.Relation.String(), Given: fmt.Sprintf("%v (the %s mechanism's)", priv.Relation, name), Rule: rule}
	}
	if meta.Private() {
		g, _ := meta.Common()
		if b.Teachers == (accountant.Guarantee{}) {
			b.Teachers = g
		} else if b.Teachers != g {
			field, header, given := "eps", g.Eps, b.Teachers.Eps
			if b.Teachers.Eps == g.Eps {
				field, header, given = "Delta", g.Delta, b.Teachers.Delta
			}
			return Binding{}, &TeachersError{Field: field, Header: fmt.Sprint(header), Given: fmt.Sprintf("%v (the %s aggregator's)", given, name),
				Rule: "the aggregator must be built for the header's guarantee (ReleaseTeachers)"}
		}
	}
	b.Ensemble, b.Kind, b.Partition = meta.Ensemble, meta.Kind, meta.Partition
	return b, nil
}

// ReleaseBinding checks agg against the votes of in as ReleaseTo does,
// before anything is drawn: K and the classes must be the file's, a
// two-class aggregator needs 0/1 votes and a multi-class one counts; then
// Check.
func ReleaseBinding(in Reader, agg Labeler) (Binding, error) {
	if twoClass(agg) == in.MultiClass() {
		return Binding{}, fmt.Errorf("the %s aggregator labels %v, but the vote file is read as %v", agg.Name(), inputOf(agg), InputOf(in))
	}
	if in.K() != agg.K() || in.Classes() != agg.Classes() {
		return Binding{}, fmt.Errorf("the vote file has K = %d votes per row over %d classes, the %s aggregator K = %d over %d", in.K(), in.Classes(), agg.Name(), agg.K(), agg.Classes())
	}
	return Check(in.Meta(), in.K(), agg.Name(), agg.Privacy())
}

// inputOf returns the kind of votes agg labels.
func inputOf(agg Labeler) Input {
	if twoClass(agg) {
		return TwoClass
	}
	return MultiClass
}

// Stated reports whether the release states its ensemble (a vote file
// with a metadata header): its id, kind and partition. A release that
// does not cannot be tied to a ledger's teachers, nor fall under their
// cap.
func (b Binding) Stated() bool {
	return b.Ensemble != "" && b.Kind != KindUnstated && b.Partition != PartitionUnstated
}

// Cap returns the teacher-level post-processing cap on every total of
// releases from the ensemble (accountant.TeacherCap), with slack deltaPrime
// for shared data, or nil and why there is none. Fixed private teachers
// have one: disjoint shares when the partition is a keyed hash of each
// record's identity (a share that depends on that record alone), the
// K-fold composition otherwise (by file position, one added record can
// move every later one to another teacher, so parallel composition does
// not apply). Teachers that are a fresh mechanism per query, teachers in
// the one-vote relation (which need not be private) and a release that
// does not state its kind (no header) have none.
func (b Binding) Cap(deltaPrime float64) (*accountant.Cap, string, error) {
	switch {
	case b.Kind == KindUnstated:
		return nil, "the votes have no metadata header, so nothing says the teachers are fixed models", nil
	case b.Kind == PerQuery:
		return nil, "the teachers are a fresh mechanism per query: only the composition over the queries bounds the total", nil
	case b.Relation == OneVote:
		return nil, "in the one-vote relation the teachers need not be private: only the composition over the queries bounds the total", nil
	}
	shares := accountant.Shared
	if b.Partition == KeyedHash {
		shares = accountant.Disjoint
	}
	c, err := accountant.TeacherCap(b.Teachers, b.K, shares, deltaPrime)
	if err != nil {
		return nil, "", err
	}
	return &c, "", nil
}

// Validate checks a binding that a ledger is to hold: every parameter
// stated, each in its domain, and the relation and partition compatible
// (as in a header). K must be odd in the private-teachers relation (only
// the binary mechanisms release in it), and only >= 1 in the one-vote
// relation (PATE's ensembles of any size vote among C classes); the
// teachers' (ε, Δ) may be zero, i.e. none, in the one-vote relation,
// whose teachers need not be private.
func (b Binding) Validate() error {
	bad := func(field string, v any, rule string) error {
		return fmt.Errorf("ensemble parameters: %s = %v: %s", field, v, rule)
	}
	// Non-private teachers in the one-vote relation: that relation's
	// guarantees do not rest on the teachers', so there is none to bind.
	none := b.Teachers == (accountant.Guarantee{}) && b.Relation == OneVote
	switch {
	case b.Ensemble == "" || len(b.Ensemble) > maxEnsembleID:
		return bad("ensemble", fmt.Sprintf("%q", b.Ensemble), fmt.Sprintf("must name the teacher ensemble, in at most %d bytes", maxEnsembleID))
	case b.K < 1 || (b.K%2 == 0 && b.Relation == PrivateTeachers):
		return bad("K", b.K, "must be odd and >= 1 (in the one-vote relation, whose multi-class mechanisms take any K, >= 1)")
	case !none && (!(b.Teachers.Eps > 0) || b.Teachers.Eps > math.MaxFloat64):
		return bad("eps", b.Teachers.Eps, "must be a finite number > 0")
	case !none && !(b.Teachers.Delta >= 0 && b.Teachers.Delta < 1):
		return bad("Delta", b.Teachers.Delta, "must be in [0, 1)")
	}
	if field, v, rule := ensembleRule(b.Relation, b.Kind, b.Partition); field != "" {
		return bad(field, v, rule)
	}
	return nil
}

// ensembleRule returns the first rule that an ensemble's relation, kind
// and partition break, with the field and its value, or "" when they keep
// every one: the rules of a header (VoteMeta.Validate) and of a binding
// (Binding.Validate).
func ensembleRule(r Relation, k Kind, p Partition) (field string, value fmt.Stringer, rule string) {
	switch {
	case r != PrivateTeachers && r != OneVote:
		return "relation", r, fmt.Sprintf("must be %v or %v", PrivateTeachers, OneVote)
	case k != Fixed && k != PerQuery:
		return "kind", k, "must be fixed or per-query"
	case p < KeyedHash || p > SharedData:
		return "partition", p, "must be keyed-hash, file-position or shared"
	case r == OneVote && p == SharedData:
		return "partition", p, "the one-vote relation needs disjoint shares: adding or removing one record must change one teacher's vote at most"
	}
	return "", nil, ""
}

// BindingDiff is a parameter on which two bindings differ, with each one's
// value.
type BindingDiff struct {
	Field, A, B string
}

// Diff returns the parameters on which b and o differ, in the order of
// Binding's fields. A parameter that either one leaves unstated (an empty
// id, K 0, zero teachers' guarantee, KindUnstated, PartitionUnstated) is
// not compared; the relation always is.
func (b Binding) Diff(o Binding) []BindingDiff {
	var d []BindingDiff
	add := func(field string, x, y any) { d = append(d, BindingDiff{field, fmt.Sprint(x), fmt.Sprint(y)}) }
	if b.Ensemble != "" && o.Ensemble != "" && b.Ensemble != o.Ensemble {
		add("ensemble", b.Ensemble, o.Ensemble)
	}
	if b.K != 0 && o.K != 0 && b.K != o.K {
		add("K", b.K, o.K)
	}
	zero := accountant.Guarantee{}
	if b.Teachers != zero && o.Teachers != zero {
		if b.Teachers.Eps != o.Teachers.Eps {
			add("eps", b.Teachers.Eps, o.Teachers.Eps)
		}
		if b.Teachers.Delta != o.Teachers.Delta {
			add("Delta", b.Teachers.Delta, o.Teachers.Delta)
		}
	}
	if b.Relation != o.Relation {
		add("relation", b.Relation, o.Relation)
	}
	if b.Kind != KindUnstated && o.Kind != KindUnstated && b.Kind != o.Kind {
		add("kind", b.Kind, o.Kind)
	}
	if b.Partition != PartitionUnstated && o.Partition != PartitionUnstated && b.Partition != o.Partition {
		add("partition", b.Partition, o.Partition)
	}
	return d
}

// String says the binding in one line.
func (b Binding) String() string {
	teachers := fmt.Sprintf("eps = %v, Delta = %v", b.Teachers.Eps, b.Teachers.Delta)
	if b.Teachers == (accountant.Guarantee{}) {
		teachers = "no teachers' guarantee"
	}
	return fmt.Sprintf("ensemble %s: K = %d, %s, relation %v, kind %v, partition %v", b.Ensemble, b.K, teachers, b.Relation, b.Kind, b.Partition)
}
