package provenance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/votefile"
)

// TeacherGuarantee is the (ε, Δ) a release takes every teacher to have,
// and where it came from.
type TeacherGuarantee struct {
	accountant.Guarantee
	// FromFlags says that the caller gave it (darrm's --eps and --Delta),
	// for a vote file whose header states no guarantee, or that has none;
	// otherwise the vote file's metadata header states it.
	FromFlags bool
	// Heterogeneous says that the header gives the teachers different
	// guarantees: Guarantee is then their common bound
	// (CheckedHeader.ReleaseTeachers).
	Heterogeneous bool
}

// TeachersError reports what a caller states of a teacher ensemble that is
// missing, or contradicts the metadata header of its votes (Check): Field
// is the parameter ("ensemble", "K", "classes", "relation", "kind",
// "partition", "eps", "Delta", or "eps and Delta" when both are missing),
// Header the header's value ("" when there is no header, or it states
// none), Given the caller's ("" when not stated) and By who states it (""
// for the caller's own flags, which the field names), and Rule the rule
// it breaks. Nothing is released, written or bound.
type TeachersError struct {
	Field, Header, Given, By string
	Rule                     string
	// Advice are the hints Rule gives (votefile.Hint).
	Advice []votefile.Hint
}

// Hints returns the hints the rule gives.
func (e *TeachersError) Hints() []votefile.Hint { return e.Advice }

// Error names the teachers' field at fault, what the votes state and
// what was given, and the rule.
func (e *TeachersError) Error() string {
	what := "the teachers' " + e.Field
	switch e.Field {
	case "ensemble":
		what = "the ensemble id"
	case "K", "classes":
		what = "the ensemble's " + e.Field
	}
	given := e.Given + " given"
	if e.By != "" {
		given += " by " + e.By
	}
	switch {
	case e.Header != "" && e.Given != "":
		return fmt.Sprintf("%s: %s, but the vote file's metadata header states %s: %s", what, given, e.Header, e.Rule)
	case e.Header != "":
		return fmt.Sprintf("%s: the vote file's metadata header states %s: %s", what, e.Header, e.Rule)
	}
	return fmt.Sprintf("%s: %s", what, e.Rule)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *TeachersError) BadInput() bool { return true }

// Stated is what a caller states of the teacher ensemble whose votes it
// draws on, for Check against their metadata header: a release or an
// account states its mechanism's relation, K and classes and the
// teachers' (ε, Δ) the mechanism assumes; darrm ledger init its flags; a
// writer of votes the ensemble's own parameters. A zero field (an empty
// id, K or classes 0, a nil pointer, KindUnstated, PartitionUnstated) is
// not stated.
type Stated struct {
	// By says who states the values, in errors (e.g. "the gnmax
	// mechanism"); "" for the caller's own flags, named as the fields.
	By       string
	Ensemble string
	K        int
	Classes  int
	Relation *accountant.Relation
	Kind     Kind
	// Partition is the rule that split the teachers' training data.
	Partition Partition
	// Eps and Delta are each teacher's guarantee; for non-private
	// teachers, the guarantee a release is calibrated to (two-class
	// GNMax's target m·ε).
	Eps, Delta *float64
	// NonPrivate states that the teachers have no guarantee.
	NonPrivate bool
	// Release says that the caller releases labels from the votes. Votes
	// without a header assert nothing, so a release in a relation that
	// holds on some partitions only (rulesOfPartitions: one-vote) must state
	// the partition, one on which it holds.
	Release bool
	// Calibrated says that a mechanism for the votes the header heads, in
	// its relation, is calibrated to a teachers' guarantee: only then may
	// Eps and Delta be stated for non-private teachers. The mechanism
	// registry answers it (ensemble.Calibrated).
	Calibrated bool
}

// noGuarantee is the header's value of the teachers' guarantee of
// non-private teachers, in a *TeachersError.
const noGuarantee = "none (non-private teachers)"

// Check is the one check of what a release, an account, a ledger or a
// writer of votes states of a teacher ensemble (s) against the metadata
// header of its votes (meta; nil: none). It first checks what the header
// states (its relation, kind and partition, each teacher's guarantee and
// its source, a DP-SGD run's recomputed by the accountant; a broken rule
// is a *votefile.HeaderError naming the field); the header's form was
// checked when it was read (votefile.Meta.Validate). Then every parameter
// s states must be the header's: the ensemble id, K, the number of
// classes, the relation (a one-vote mechanism is not private for teachers
// that may share data, nor a private-teachers one for teachers that need
// not be private), the kind, the partition, and the teachers' (ε, Δ): for
// private teachers the header's common bound (the largest ε and the
// largest Δ of teachers with different guarantees); non-private
// teachers have none, and a guarantee stated for them is the one a
// release is calibrated to, whole (ε and Δ), and only for votes that a
// mechanism of the header's relation calibrates to one
// (Stated.Calibrated). Every such refusal is a *TeachersError.
//
// It returns the binding: with a header, the header's ensemble with the
// teachers' (ε, Δ) above (zero for non-private teachers without a stated
// one); without, what s states (the relation private-teachers unless
// stated), which does not state its ensemble unless s states the id,
// kind and partition (Binding.Stated).
//
// It is CheckHeader, then CheckedHeader.Check: a caller that compares
// with one header in several places (a release: its teachers' guarantee,
// its binding) checks the header once, with CheckHeader, and keeps it.
func Check(meta *votefile.Meta, s Stated) (Binding, error) {
	c, err := CheckHeader(meta)
	if err != nil {
		return Binding{}, err
	}
	return c.Check(s)
}

// CheckedHeader is a vote file's metadata header whose statements were
// checked once (CheckHeader), where its votes were opened, for every
// check of what a caller states against it (Check): a release checks the
// header once, however many of its steps compare with it.
type CheckedHeader struct {
	meta *votefile.Meta
	h    *header // nil: the votes have no header
}

// CheckHeader checks what the metadata header meta (nil: none) states,
// as Check does before it compares anything: its relation, kind and
// partition, each teacher's guarantee and its source, a DP-SGD run's
// recomputed by the accountant. A broken rule is a *votefile.HeaderError
// naming the field.
func CheckHeader(meta *votefile.Meta) (*CheckedHeader, error) {
	c := &CheckedHeader{meta: meta}
	if meta == nil {
		return c, nil
	}
	h, err := readHeader(meta)
	if err != nil {
		return nil, err
	}
	c.h = h
	return c, nil
}

// Meta returns the header checked; nil when the votes have none.
func (c *CheckedHeader) Meta() *votefile.Meta { return c.meta }

// Check checks what s states of the teacher ensemble against the header,
// and returns the binding, as the function Check does.
func (c *CheckedHeader) Check(s Stated) (Binding, error) {
	meta, h := c.meta, c.h
	var stated accountant.Guarantee
	if s.Eps != nil {
		stated.Eps = *s.Eps
	}
	if s.Delta != nil {
		stated.Delta = *s.Delta
	}
	if meta == nil {
		b := Binding{Ensemble: s.Ensemble, Teachers: Teachers{K: s.K, Each: stated, Kind: s.Kind, Partition: s.Partition}}
		if s.Relation != nil {
			b.Relation = *s.Relation
		}
		return b, checkAsserted(b, s)
	}
	bad := func(field string, header, given any, rule string) error {
		return &TeachersError{Field: field, Header: fmt.Sprint(header), Given: fmt.Sprint(given), By: s.By, Rule: rule}
	}
	// A caller's own flags may leave a value out; a mechanism or an
	// ensemble states what it is.
	leave := ""
	if s.By == "" {
		leave = " (leave it out to use the header's)"
	}
	same := "a value given must equal the header's" + leave
	switch {
	case s.Ensemble != "" && s.Ensemble != meta.Ensemble:
		return Binding{}, bad("ensemble", meta.Ensemble, s.Ensemble, same)
	case s.K != 0 && s.K != meta.K:
		return Binding{}, bad("K", meta.K, s.K, same)
	case s.Classes != 0 && s.Classes != meta.Classes:
		return Binding{}, bad("classes", meta.Classes, s.Classes, same)
	case s.Relation != nil && *s.Relation != h.relation:
		return Binding{}, bad("relation", h.relation, *s.Relation, relationRule(*s.Relation)+leave)
	case s.Kind != KindUnstated && s.Kind != h.kind:
		return Binding{}, bad("kind", h.kind, s.Kind, same)
	case s.Partition != PartitionUnstated && s.Partition != h.partition:
		return Binding{}, bad("partition", h.partition, s.Partition, same)
	}
	g, het := h.common()
	given := s.Eps != nil || s.Delta != nil
	switch {
	case s.NonPrivate && g != (accountant.Guarantee{}):
		return Binding{}, bad("eps", g.Eps, "none", "non-private teachers have no guarantee: the header must state method none for every teacher")
	case h.private():
		rule := same
		if het {
			rule = "the teachers' guarantees differ, and a release uses their common bound (the largest eps and the largest Delta); a value given must equal it" + leave
		}
		if s.Eps != nil && *s.Eps != g.Eps {
			return Binding{}, bad("eps", g.Eps, *s.Eps, rule)
		}
		if s.Delta != nil && *s.Delta != g.Delta {
			return Binding{}, bad("Delta", g.Delta, *s.Delta, rule)
		}
		stated = g
	case given && !s.Calibrated:
		field, v := "eps", s.Eps
		if v == nil {
			field, v = "Delta", s.Delta
		}
		return Binding{}, bad(field, noGuarantee, *v, fmt.Sprintf("no mechanism for %v in the %v relation is calibrated to a teachers' guarantee: leave it out", meta.Input(), h.relation))
	case given && s.Eps == nil:
		return Binding{}, &TeachersError{Field: "eps", Header: noGuarantee, By: s.By, Rule: "the guarantee a release is calibrated to needs eps with Delta"}
	case given && s.Delta == nil:
		return Binding{}, &TeachersError{Field: "Delta", Header: noGuarantee, By: s.By, Rule: "the guarantee a release is calibrated to needs Delta with eps"}
	}
	return h.binding(stated), nil
}

// checkAsserted checks the relation and partition that s asserts of votes
// without a header (b, what it states) against rulesOfPartitions: a
// partition stated must keep the relation, and a release in a relation
// that some partition breaks must state one.
func checkAsserted(b Binding, s Stated) error {
	if b.Partition != PartitionUnstated {
		if rule, ok := partitionRuleOf(b.Relation, b.Partition); ok && !rule.Holds {
			return &TeachersError{Field: "partition", Given: b.Partition.String(), By: s.By, Rule: rule.Why}
		}
		return nil
	}
	if !s.Release {
		return nil
	}
	for _, rule := range rulesOfPartitions() {
		if rule.Relation == b.Relation && !rule.Holds {
			hint := votefile.Hint{Field: "Stated.Partition", Value: KeyedHash.String()}
			rule := fmt.Sprintf("the vote file has no metadata header, so nothing says how the teachers' data were split, and the %v relation holds only on %s shares: assert it (%v) or put the ensemble's metadata header on the vote file's first line or in a sidecar beside it",
				b.Relation, strings.Join(holding(b.Relation), " or "), hint)
			return &TeachersError{Field: "partition", By: s.By, Rule: rule, Advice: []votefile.Hint{hint}}
		}
	}
	return nil
}

// partitionRule is one row of rulesOfPartitions: whether the neighbouring
// Relation holds for teachers whose training data were split by Partition,
// and why.
type partitionRule struct {
	Relation  accountant.Relation
	Partition Partition
	Holds     bool
	Why       string
}

// partitionRules is the table of rulesOfPartitions.
var partitionRules = []partitionRule{
	{accountant.PrivateTeachers, KeyedHash, true, "each teacher's (eps, Delta) is for adding or removing one record, whatever its share"},
	{accountant.PrivateTeachers, FilePosition, true, "each teacher's (eps, Delta) is for adding or removing one record, whatever its share"},
	{accountant.PrivateTeachers, SharedData, true, "each teacher's (eps, Delta) is for adding or removing one record, whatever its share"},
	{accountant.OneVote, KeyedHash, true, "a record's share is a keyed hash of its identity alone: adding or removing it changes one teacher's data, so at most one vote"},
	{accountant.OneVote, FilePosition, false, "the one-vote relation does not hold on file-position shares: one added record moves every later record to another teacher, so it can change up to K votes"},
	{accountant.OneVote, SharedData, false, "the one-vote relation does not hold on shared data: a record in every teacher's data can change every vote"},
}

// rulesOfPartitions returns the one table of which partition of the training
// data keeps which neighbouring relation (the one-vote relation needs that
// adding or removing one record changes at most one teacher's vote:
// PATE, Papernot et al. 2018, Section 2), a row for each relation and
// partition. The checks of a header (Check), of a ledger's binding
// (Binding.Validate) and of what a release asserts of votes without a
// header (Check) consult it, and docs/aggregate.md prints it.
func rulesOfPartitions() []partitionRule { return slices.Clone(partitionRules) }

// partitionRuleOf returns the row of rulesOfPartitions for relation r and
// partition p, false when there is none (an unknown relation or
// partition).
func partitionRuleOf(r accountant.Relation, p Partition) (partitionRule, bool) {
	for _, rule := range partitionRules {
		if rule.Relation == r && rule.Partition == p {
			return rule, true
		}
	}
	return partitionRule{}, false
}

// holding returns the partitions on which relation r holds.
func holding(r accountant.Relation) []string {
	var ps []string
	for _, rule := range partitionRules {
		if rule.Relation == r && rule.Holds {
			ps = append(ps, rule.Partition.String())
		}
	}
	return ps
}

// relationRule says why a stated relation r cannot be the other one of a
// header.
func relationRule(r accountant.Relation) string {
	if r == accountant.OneVote {
		return "the one-vote relation needs that one record changes at most one teacher's vote, which teachers that may share data (the private-teachers relation) do not meet"
	}
	return "the private-teachers relation needs every teacher's (eps, Delta) for adding or removing a record, which teachers in the one-vote relation need not have"
}

// Teachers is a teacher ensemble as a release, a ledger and the cap on
// their totals take it: K teachers, each teacher's (ε, Δ), the
// neighbouring relation of the release, whether the teachers are fixed
// models, and the rule that split their training data. A vote file's
// metadata header states it as plain data (votefile.Meta); Check reads it.
type Teachers struct {
	K int
	// Each is each teacher's (ε, Δ): for teachers with different
	// guarantees, their common bound; for non-private teachers, the ε and
	// Δ a release was calibrated to, or none (Check).
	Each      accountant.Guarantee
	Relation  accountant.Relation
	Kind      Kind
	Partition Partition
}

// Binding is what a release states about the teacher ensemble it draws
// on: its id and its teachers. A ledger binds one (ledger init) and
// refuses releases that state another, and the teacher-level cap on every
// total follows from it (Cap).
type Binding struct {
	// Ensemble is the ensemble's id; "" when not stated.
	Ensemble string
	Teachers
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
// have one, which is then the only bound of their releases (accountant.Cap): disjoint shares when the partition is a keyed hash of each
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
	case b.Relation == accountant.OneVote:
		return nil, "in the one-vote relation the teachers need not be private: only the composition over the queries bounds the total", nil
	}
	shares := accountant.Shared
	if b.Partition == KeyedHash {
		shares = accountant.Disjoint
	}
	c, err := accountant.TeacherCap(b.Each, b.K, shares, deltaPrime)
	if err != nil {
		return nil, "", err
	}
	return &c, "", nil
}

// Validate checks a binding that a ledger is to hold: every parameter
// stated, each in its domain, and the relation and partition compatible
// (as in a header). K must be odd in the private-teachers relation (only
// the binary mechanisms release in it), and only >= 1 in the one-vote
// relation (PATE's ensembles of any size vote among C classes)
// (param.Teachers); the
// teachers' (ε, Δ) may be zero, i.e. none, in the one-vote relation,
// whose teachers need not be private.
func (b Binding) Validate() error {
	bad := func(field string, v any, rule string) error {
		return fmt.Errorf("ensemble parameters: %s = %v: %s", field, v, rule)
	}
	// Non-private teachers in the one-vote relation: that relation's
	// guarantees do not rest on the teachers', so there is none to bind.
	none := b.Each == (accountant.Guarantee{}) && b.Relation == accountant.OneVote
	if b.Ensemble == "" || len(b.Ensemble) > votefile.MaxEnsembleID {
		return bad("ensemble", param.Quote(b.Ensemble), fmt.Sprintf("must name the teacher ensemble, in at most %d bytes", votefile.MaxEnsembleID))
	}
	// K and the teachers' (eps, Delta) by the checks of every command and
	// header that states them.
	checks := []error{param.Teachers(b.K, b.Relation == accountant.PrivateTeachers)}
	if !none {
		checks = append(checks, teachersRule(b.Each))
	}
	for _, err := range checks {
		if err != nil {
			return fmt.Errorf("ensemble parameters: %w", err)
		}
	}
	if field, v, rule := ensembleRule(b.Relation, b.Kind, b.Partition); field != "" {
		return bad(field, v, rule)
	}
	return nil
}

// Holds reports teachers whose relation does not hold on the partition of
// their data (a one-vote ensemble on shared data or on file-position
// shares), or a partition not stated, as a *param.SettingError naming the
// setting: the rule of a header (Check) and of a binding (Validate), for a
// caller that has neither, as a plan. The rule is of the relation and the
// partition: a kind not stated (votes without a header) breaks none.
func (t Teachers) Holds() error {
	k := t.Kind
	if k == KindUnstated {
		k = PerQuery
	}
	if field, v, rule := ensembleRule(t.Relation, k, t.Partition); field != "" {
		return &param.SettingError{Name: field, Value: v.String(), Rule: rule}
	}
	return nil
}

// teachersRule checks a teacher's (eps, Delta) guarantee, as a binding
// and a header state it: eps finite and > 0 (param.Positive), Delta in
// [0, 1) (param.Delta), each a parameter error named "eps" or "Delta".
func teachersRule(g accountant.Guarantee) error {
	if err := param.Positive("eps", g.Eps); err != nil {
		return err
	}
	return param.Delta("Delta", g.Delta)
}

// ensembleRule returns the first rule that an ensemble's relation, kind
// and partition break, with the field and its value, or "" when they keep
// every one: the rules of a header (Check) and of a binding
// (Binding.Validate).
func ensembleRule(r accountant.Relation, k Kind, p Partition) (field string, value fmt.Stringer, rule string) {
	switch {
	case r != accountant.PrivateTeachers && r != accountant.OneVote:
		return "relation", r, fmt.Sprintf("must be %v or %v", accountant.PrivateTeachers, accountant.OneVote)
	case k != Fixed && k != PerQuery:
		return "kind", k, "must be fixed or per-query"
	case p < KeyedHash || p > SharedData:
		return "partition", p, "must be keyed-hash, file-position or shared"
	}
	if rule, _ := partitionRuleOf(r, p); !rule.Holds {
		return "partition", p, rule.Why
	}
	return "", nil, ""
}

// NonPrivateOneVote is how outputs say the teachers' guarantee of a
// one-vote ensemble that states none: its teachers need none, since one
// record changes one vote whatever the teachers are.
const NonPrivateOneVote = "non-private teachers (one-vote relation)"

// String says the binding in one line.
func (b Binding) String() string {
	teachers := fmt.Sprintf("eps = %v, Delta = %v", b.Each.Eps, b.Each.Delta)
	switch {
	case b.Each == (accountant.Guarantee{}) && b.Relation == accountant.OneVote:
		teachers = NonPrivateOneVote
	case b.Each == (accountant.Guarantee{}):
		teachers = "no teachers' guarantee"
	}
	return fmt.Sprintf("ensemble %s: K = %d, %s, relation %v, kind %v, partition %v", b.Ensemble, b.K, teachers, b.Relation, b.Kind, b.Partition)
}
