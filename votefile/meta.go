package votefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/enum"
)

// HeaderKey is the key that makes a JSON object a vote file's metadata
// header; its value is the header's version.
const HeaderKey = "darrm-votes"

// HeaderVersion is the version of the metadata header this darrm writes,
// and the only one it reads.
const HeaderVersion = 1

// maxEnsembleID bounds the length of an ensemble id, in bytes.
const maxEnsembleID = 256

// Meta is the metadata header of a vote file: which teacher ensemble
// voted and what its guarantee rests on. A release takes the teachers'
// (ε, Δ) from it (ensemble.ReleaseTeachers), a ledger binds it (Binding), and the
// teacher-level cap on every total follows from it (Binding.Cap).
//
// In a file it is one line before the data, the JSON object that
// MarshalJSON writes: in CSV behind "# " (a comment line), in JSON lines
// as the first line itself (see AppendHeader and docs/aggregate.md).
type Meta struct {
	// Ensemble identifies the teacher ensemble: the same models, the same
	// id.
	Ensemble string
	// K is the number of teachers, which every data row must match.
	K int
	// Classes is the number of classes a teacher votes among (2: votes 0
	// and 1).
	Classes int
	// Layout is how a row holds the teachers' answers.
	Layout Layout
	// Relation is the neighbouring relation the teachers' guarantee, and
	// every release from their votes, is stated in.
	Relation accountant.Relation
	// Kind says whether the teachers are fixed models or a fresh
	// mechanism per query.
	Kind Kind
	// Partition is the rule that split the training data between the
	// teachers.
	Partition Partition
	// Teachers are the teachers' guarantees, in groups of equal ones, in
	// the order of the vote columns; their counts sum to K.
	Teachers []TeacherGroup
}

// TeacherGroup is Count consecutive teachers with the same guarantee and
// the same derivation of it.
type TeacherGroup struct {
	Count int
	// Guarantee is each teacher's (ε, Δ)-DP guarantee; zero for
	// non-private teachers (Origin NonPrivate).
	accountant.Guarantee
	// Origin says how the guarantee was obtained; DPSGD is the run it was
	// computed from, when Origin is FromDPSGD.
	Origin Origin
	DPSGD  *DPSGDRun
}

// DPSGDRun is the DP-SGD training a teacher's guarantee was computed
// from: the sampled Gaussian mechanism over its steps (accountant.SGM),
// converted from Rényi DP to (ε, δ) by Conversion at δ = Delta.
type DPSGDRun struct {
	accountant.SGM
	Conversion accountant.Conversion
	Delta      float64
}

// Guarantee returns the (ε, δ) the accountant gives the run at its δ.
func (r DPSGDRun) Guarantee() (accountant.Guarantee, error) {
	eps, _, err := r.SGM.Eps(r.Delta, r.Conversion)
	return accountant.Guarantee{Eps: eps, Delta: r.Delta}, err
}

// Layout is how a vote file's rows hold the teachers' answers: LayoutVotes
// (one vote per teacher) or LayoutCounts (one count per class).
type Layout int

const (
	// LayoutVotes is one column per teacher, each the index of the class
	// it votes for: 0 or 1 for two classes, 0..C-1 for C.
	LayoutVotes Layout = iota
	// LayoutCounts is one column per class, each the number of teachers
	// that vote for it: C counts summing to K (the layout of PATE's
	// published vote matrices).
	LayoutCounts
)

var layoutEnum = enum.Names[Layout]{What: "layout", List: []string{LayoutVotes: "votes", LayoutCounts: "counts"}}

// String returns the layout's name, "votes" or "counts".
func (l Layout) String() string { return layoutEnum.String(l) }

// MarshalText returns the layout's name.
func (l Layout) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText sets l from a layout's name.
func (l *Layout) UnmarshalText(b []byte) error {
	return layoutEnum.Unmarshal(l, b)
}

// Kind says whether a release is post-processing of fixed teachers
// (Fixed) or of teachers drawn anew for each query (PerQuery); KindUnstated
// when a header does not say.
type Kind int

const (
	// KindUnstated is a release that says nothing about its teachers (a
	// vote file without a header).
	KindUnstated Kind = iota
	// Fixed teachers are trained models: every label released from their
	// votes, however many, is post-processing of the models, so the
	// teacher-level cap bounds every total.
	Fixed
	// PerQuery teachers answer each query with a fresh mechanism (new
	// randomness, or a new look at the data, per query): only the
	// composition over the queries bounds the total.
	PerQuery
)

var kindEnum = enum.Names[Kind]{What: "kind", List: []string{Fixed: "fixed", PerQuery: "per-query"}, Zero: "unstated"}

// String returns "fixed" or "per-query".
func (k Kind) String() string { return kindEnum.String(k) }

// MarshalText returns the kind's name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText sets k from "fixed" or "per-query".
func (k *Kind) UnmarshalText(b []byte) error {
	return kindEnum.Unmarshal(k, b)
}

// Partition is the rule that split the training data between the
// teachers: KeyedHash or FilePosition (disjoint shares), SharedData (all
// on the whole set), or PartitionUnstated.
type Partition int

const (
	// PartitionUnstated is a release that does not say (no header).
	PartitionUnstated Partition = iota
	// KeyedHash assigns each record to one teacher by a keyed hash of the
	// record's identity: disjoint shares, and a record's share depends on
	// that record alone, so adding or removing a record changes one
	// teacher's data and no other's (parallel composition applies).
	KeyedHash
	// FilePosition cuts the training file into consecutive shares:
	// disjoint, but a record's share depends on the records before it, so
	// adding one can move every later record to another teacher.
	FilePosition
	// SharedData is training data that the teachers share, in whole or in
	// part (e.g. each trained on the whole set with its own randomness).
	SharedData
)

var partitionEnum = enum.Names[Partition]{What: "partition", List: []string{KeyedHash: "keyed-hash", FilePosition: "file-position", SharedData: "shared"}, Zero: "unstated"}

// String returns "keyed-hash", "file-position" or "shared".
func (p Partition) String() string { return partitionEnum.String(p) }

// MarshalText returns the partition's name.
func (p Partition) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText sets p from a partition's name.
func (p *Partition) UnmarshalText(b []byte) error {
	return partitionEnum.Unmarshal(p, b)
}

// Origin says how a teacher's guarantee was obtained: FromStated (the
// ensemble's owner states it), FromDPSGD (DP-SGD's accounting), or NonPrivate (no
// guarantee: teachers of the one-vote relation).
type Origin int

const (
	// FromStated is a guarantee the ensemble's owner states, for datasets
	// that differ by adding or removing one record: the header records it
	// as "neighbours":"add-remove" (AddRemove). A header written before
	// darrm recorded it has no such key and is read the same way.
	FromStated Origin = iota
	// FromDPSGD is computed by the accountant from the teacher's DP-SGD
	// run (TeacherGroup.DPSGD).
	FromDPSGD
	// NonPrivate teachers have no guarantee (e.g. plain SGD, for GNMax
	// under the one-vote relation).
	NonPrivate
)

var originEnum = enum.Names[Origin]{What: "method", List: []string{FromStated: "stated", FromDPSGD: "dp-sgd", NonPrivate: "none"}}

// String returns "stated", "dp-sgd" or "none".
func (o Origin) String() string { return originEnum.String(o) }

// MarshalText returns the origin's name.
func (o Origin) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText sets o from "stated", "dp-sgd" or "none".
func (o *Origin) UnmarshalText(b []byte) error {
	return originEnum.Unmarshal(o, b)
}

// AddRemove is the neighbouring relation of every teacher's guarantee in
// a header, as written in a stated source's "neighbours" key: datasets
// that differ by adding or removing one record. It is DP-SGD's with
// Poisson sampling, and the teachers' cap on disjoint shares needs it (a
// replaced record may leave one share and join another, a change no
// teacher's guarantee for replacing a record covers). A guarantee stated
// for replacing a record ("replace-one") does not imply it and is refused;
// from an add/remove (ε, Δ) the replace-one guarantee follows by group
// privacy (docs/aggregate.md).
const AddRemove = "add-remove"

// replaceOne is the name of the relation a stated guarantee may not have.
const replaceOne = "replace-one"

// HeaderError reports a metadata header that breaks a rule: the field (a
// path such as "teachers[0].eps"), its value as written, and the rule.
type HeaderError struct {
	Field string
	Value string // "" when the field is missing or the rule concerns no value
	Rule  string
}

func (e *HeaderError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("header field %s: %s", e.Field, e.Rule)
	}
	return fmt.Sprintf("header field %s = %s: %s", e.Field, e.Value, e.Rule)
}

func headerErr(field string, value any, rule string, args ...any) *HeaderError {
	v := ""
	if value != nil {
		v = fmt.Sprint(value)
	}
	return &HeaderError{Field: field, Value: v, Rule: fmt.Sprintf(rule, args...)}
}

// Validate checks the header's rules, field by field and between fields;
// a broken rule is a *HeaderError. DP-SGD guarantees are recomputed by the
// accountant: a stated ε below what the run gives is refused.
func (m *Meta) Validate() error {
	if m.Ensemble == "" {
		return headerErr("ensemble", nil, "must name the teacher ensemble")
	}
	if len(m.Ensemble) > maxEnsembleID || !utf8.ValidString(m.Ensemble) || strings.IndexFunc(m.Ensemble, unicode.IsControl) >= 0 {
		return headerErr("ensemble", strconv.Quote(m.Ensemble), "must be printable UTF-8 text of at most %d bytes", maxEnsembleID)
	}
	if !validClasses(m.Classes) {
		return headerErr("classes", m.Classes, "must be in [2, %d] (at most as many classes as a row of counts can hold)", MaxClasses)
	}
	if m.K < 1 || (m.K%2 == 0 && m.Input() == TwoClass) {
		return headerErr("K", m.K, "must be odd and >= 1 for two-class votes (the majority of an even number of votes can tie), >= 1 for counts or more classes")
	}
	if m.Layout < 0 || int(m.Layout) >= len(layoutEnum.List) {
		return headerErr("layout", m.Layout.String(), "must be one of %s", strings.Join(layoutEnum.List, ", "))
	}
	if field, v, rule := ensembleRule(m.Relation, m.Kind, m.Partition); field != "" {
		return headerErr(field, v.String(), "%s", rule)
	}
	if len(m.Teachers) == 0 {
		return headerErr("teachers", nil, "must list the teachers' guarantees")
	}
	n := 0
	for i := range m.Teachers {
		if err := m.Teachers[i].validate(fmt.Sprintf("teachers[%d]", i), m); err != nil {
			return err
		}
		n += m.Teachers[i].Count
	}
	if n != m.K {
		return headerErr("teachers", nil, "the counts sum to %d teachers, but K = %d", n, m.K)
	}
	return nil
}

func (g *TeacherGroup) validate(at string, m *Meta) error {
	if g.Count < 1 || g.Count > m.K {
		return headerErr(at+".count", g.Count, "must be in [1, K] = [1, %d]", m.K)
	}
	switch g.Origin {
	case NonPrivate:
		if g.Eps != 0 || g.Delta != 0 || g.DPSGD != nil {
			return headerErr(at+".source.method", "none", "non-private teachers have no eps, Delta or DP-SGD run")
		}
		if m.Relation == accountant.PrivateTeachers {
			return headerErr(at+".source.method", "none", "the private-teachers relation needs every teacher's (eps, Delta)")
		}
		return nil
	case FromStated, FromDPSGD:
	default:
		return headerErr(at+".source.method", g.Origin.String(), "must be stated, dp-sgd or none")
	}
	if !(g.Eps > 0) || math.IsInf(g.Eps, 0) {
		return headerErr(at+".eps", g.Eps, "must be a finite number > 0")
	}
	if !(g.Delta >= 0 && g.Delta < 1) {
		return headerErr(at+".Delta", g.Delta, "must be in [0, 1)")
	}
	if g.Origin == FromStated {
		if g.DPSGD != nil {
			return headerErr(at+".source.method", "stated", "a stated guarantee has no DP-SGD run")
		}
		return nil
	}
	r := g.DPSGD
	if r == nil {
		return headerErr(at+".source", nil, "dp-sgd needs sigma, sampling_rate, steps, conversion and delta")
	}
	if m.Kind != Fixed {
		return headerErr("kind", m.Kind.String(), "DP-SGD trains fixed models: the kind of %s must be fixed", at)
	}
	switch {
	case !(r.Sigma > 0) || math.IsInf(r.Sigma, 0):
		return headerErr(at+".source.sigma", r.Sigma, "must be a finite number > 0")
	case !(r.Q > 0 && r.Q <= 1):
		return headerErr(at+".source.sampling_rate", r.Q, "must be in (0, 1]")
	case r.Steps < 1:
		return headerErr(at+".source.steps", r.Steps, "must be an integer >= 1")
	case r.Conversion != accountant.PaperConversion && r.Conversion != accountant.ImprovedConversion:
		return headerErr(at+".source.conversion", r.Conversion.String(), "must be paper or improved")
	case !(r.Delta > 0 && r.Delta < 1):
		return headerErr(at+".source.delta", r.Delta, "must be in (0, 1)")
	case g.Delta < r.Delta:
		return headerErr(at+".Delta", g.Delta, "the DP-SGD run is converted at delta = %v: Delta must be >= it", r.Delta)
	}
	acc, err := r.Guarantee()
	if err != nil {
		return headerErr(at+".source", nil, "%v", err)
	}
	if g.Eps < acc.Eps {
		return headerErr(at+".eps", g.Eps, "the DP-SGD run (sigma %v, sampling rate %v, %d steps, %v conversion at delta = %v) is %v by the accountant: eps must be >= %v", r.Sigma, r.Q, r.Steps, r.Conversion, r.Delta, acc, acc.Eps)
	}
	return nil
}

// Input returns the kind of votes the header heads: ManyClasses, for the
// many-class mechanisms (ensemble.ClassGNMax, ensemble.LNMax), for counts
// or votes among more than two classes; else TwoClass, 0/1 votes, DaRRM's
// and its baselines'.
func (m *Meta) Input() Input {
	if m.Layout != LayoutVotes || m.Classes != 2 {
		return ManyClasses
	}
	return TwoClass
}

// Private reports whether every teacher has a guarantee.
func (m *Meta) Private() bool {
	for _, g := range m.Teachers {
		if g.Origin == NonPrivate {
			return false
		}
	}
	return true
}

// Common returns one guarantee that every teacher has: the largest ε and
// the largest Δ of any teacher (each teacher that is (ε_i, Δ_i)-DP is also
// (max ε, max Δ)-DP), and whether the teachers' guarantees differ. DaRRM's
// certificate assumes one (ε, Δ) for all K teachers, so a release from
// teachers with different guarantees uses this common bound. It is zero
// when no teacher has a guarantee.
func (m *Meta) Common() (g accountant.Guarantee, heterogeneous bool) {
	var first *accountant.Guarantee
	for _, t := range m.Teachers {
		if t.Origin == NonPrivate {
			continue
		}
		if first == nil {
			first = &t.Guarantee
		} else if t.Guarantee != *first {
			heterogeneous = true
		}
		g.Eps, g.Delta = max(g.Eps, t.Eps), max(g.Delta, t.Delta)
	}
	return g, heterogeneous
}

// The JSON form of a header, in the order it is written.
type (
	jsonMeta struct {
		Version   int                 `json:"darrm-votes"`
		Ensemble  string              `json:"ensemble"`
		K         int                 `json:"K"`
		Classes   int                 `json:"classes"`
		Layout    Layout              `json:"layout"`
		Relation  accountant.Relation `json:"relation"`
		Kind      Kind                `json:"kind"`
		Partition Partition           `json:"partition"`
		Teachers  []jsonGroup         `json:"teachers"`
	}
	jsonGroup struct {
		Count  int        `json:"count"`
		Eps    *float64   `json:"eps,omitempty"`
		Delta  *float64   `json:"Delta,omitempty"`
		Source jsonSource `json:"source"`
	}
	jsonSource struct {
		Method       Origin                 `json:"method"`
		Neighbours   string                 `json:"neighbours,omitempty"`
		Sigma        *float64               `json:"sigma,omitempty"`
		SamplingRate *float64               `json:"sampling_rate,omitempty"`
		Steps        *int                   `json:"steps,omitempty"`
		Conversion   *accountant.Conversion `json:"conversion,omitempty"`
		Delta        *float64               `json:"delta,omitempty"`
	}
)

// MarshalJSON writes the header as it appears in a file, version first.
func (m *Meta) MarshalJSON() ([]byte, error) {
	j := jsonMeta{Version: HeaderVersion, Ensemble: m.Ensemble, K: m.K, Classes: m.Classes, Layout: m.Layout,
		Relation: m.Relation, Kind: m.Kind, Partition: m.Partition, Teachers: make([]jsonGroup, len(m.Teachers))}
	for i, g := range m.Teachers {
		jg := jsonGroup{Count: g.Count, Source: jsonSource{Method: g.Origin}}
		if g.Origin == FromStated {
			jg.Source.Neighbours = AddRemove
		}
		if g.Origin != NonPrivate {
			jg.Eps, jg.Delta = &g.Eps, &g.Delta
		}
		if r := g.DPSGD; r != nil {
			jg.Source.Sigma, jg.Source.SamplingRate, jg.Source.Steps = &r.Sigma, &r.Q, &r.Steps
			jg.Source.Conversion, jg.Source.Delta = &r.Conversion, &r.Delta
		}
		j.Teachers[i] = jg
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a header written by MarshalJSON (ParseMeta), so
// that a header stored in another JSON document is checked as strictly as
// one in a vote file.
func (m *Meta) UnmarshalJSON(b []byte) error {
	x, err := ParseMeta(b)
	if err != nil {
		return err
	}
	*m = *x
	return nil
}

// AppendHeader appends the header line of a vote file in format f: for
// CSV the comment line "# " followed by the JSON object, for JSON lines
// the object itself; each ends with a line break. The header must be
// valid (Validate).
func (m *Meta) AppendHeader(b []byte, f Format) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return b, err
	}
	j, err := m.MarshalJSON()
	if err != nil {
		return b, err
	}
	switch f {
	case FormatCSV:
		b = append(b, "# "...)
	case FormatJSONL:
	default:
		return b, fmt.Errorf("vote header format %v: must be csv or jsonl", f)
	}
	b = append(b, j...)
	return append(b, '\n'), nil
}

// The keys of each object of a header, exactly as spelt (JSON keys are
// case-sensitive here, unlike in encoding/json's matching).
var (
	metaKeys   = []string{HeaderKey, "ensemble", "K", "classes", "layout", "relation", "kind", "partition", "teachers"}
	groupKeys  = []string{"count", "eps", "Delta", "source"}
	sourceKeys = []string{"method", "neighbours", "sigma", "sampling_rate", "steps", "conversion", "delta"}
)

// ParseMeta reads a header from its JSON object and validates it
// (Validate). Keys are case-sensitive; an unknown or repeated key, a
// missing field, a null or a value of the wrong type is a *HeaderError, as
// is a version other than HeaderVersion, which is checked first.
func ParseMeta(b []byte) (*Meta, error) {
	top, err := object(b, "header", metaKeys)
	if err != nil {
		return nil, err
	}
	var version int
	if err := field(top, HeaderKey, HeaderKey, &version); err != nil {
		return nil, err
	}
	if version != HeaderVersion {
		return nil, headerErr(HeaderKey, version, "this darrm reads version %d headers", HeaderVersion)
	}
	m := &Meta{}
	for _, f := range []struct {
		key string
		dst any
	}{
		{"ensemble", &m.Ensemble}, {"K", &m.K}, {"classes", &m.Classes}, {"layout", &m.Layout},
		{"relation", &m.Relation}, {"kind", &m.Kind}, {"partition", &m.Partition},
	} {
		if err := field(top, f.key, f.key, f.dst); err != nil {
			return nil, err
		}
	}
	var groups []json.RawMessage
	if err := field(top, "teachers", "teachers", &groups); err != nil {
		return nil, err
	}
	for i, raw := range groups {
		g, err := parseGroup(raw, fmt.Sprintf("teachers[%d]", i))
		if err != nil {
			return nil, err
		}
		m.Teachers = append(m.Teachers, g)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

func parseGroup(raw []byte, at string) (TeacherGroup, error) {
	var g TeacherGroup
	obj, err := object(raw, at, groupKeys)
	if err != nil {
		return g, err
	}
	if err := field(obj, "count", at+".count", &g.Count); err != nil {
		return g, err
	}
	src, err := object(obj["source"], at+".source", sourceKeys)
	if err != nil {
		if obj["source"] == nil {
			return g, headerErr(at+".source", nil, "is missing")
		}
		return g, err
	}
	if err := field(src, "method", at+".source.method", &g.Origin); err != nil {
		return g, err
	}
	if g.Origin == NonPrivate {
		for _, k := range []string{"eps", "Delta"} {
			if obj[k] != nil {
				return g, headerErr(at+"."+k, string(obj[k]), "non-private teachers (method none) have no guarantee")
			}
		}
	} else {
		if err := field(obj, "eps", at+".eps", &g.Eps); err != nil {
			return g, err
		}
		if err := field(obj, "Delta", at+".Delta", &g.Delta); err != nil {
			return g, err
		}
	}
	if raw, ok := src["neighbours"]; ok {
		if g.Origin != FromStated {
			return g, headerErr(at+".source.neighbours", string(raw), "only a stated source has neighbours (a dp-sgd run's guarantee is for adding or removing a record; non-private teachers have none)")
		}
		var n string
		if err := field(src, "neighbours", at+".source.neighbours", &n); err != nil {
			return g, err
		}
		switch n {
		case AddRemove:
		case replaceOne:
			return g, headerErr(at+".source.neighbours", n, "darrm's releases and the teachers' cap need each teacher's guarantee for adding or removing a record, which one for replacing a record does not imply: state the add-remove guarantee")
		default:
			return g, headerErr(at+".source.neighbours", strconv.Quote(n), "must be %s", AddRemove)
		}
	}
	run := sourceKeys[2:]
	if g.Origin != FromDPSGD {
		for _, k := range run {
			if src[k] != nil {
				return g, headerErr(at+".source."+k, string(src[k]), "only a dp-sgd source has %s", strings.Join(run, ", "))
			}
		}
		return g, nil
	}
	r := &DPSGDRun{}
	for _, f := range []struct {
		key string
		dst any
	}{{"sigma", &r.Sigma}, {"sampling_rate", &r.Q}, {"steps", &r.Steps}, {"conversion", &r.Conversion}, {"delta", &r.Delta}} {
		if err := field(src, f.key, at+".source."+f.key, f.dst); err != nil {
			return g, err
		}
	}
	g.DPSGD = r
	return g, nil
}

// object reads one level of a JSON object into its members, refusing
// anything but an object, repeated keys and keys not in allowed.
func object(b []byte, at string, allowed []string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, headerErr(at, nil, "must be a JSON object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, headerErr(at, nil, "invalid JSON: %v", err)
		}
		key, _ := tok.(string)
		if _, dup := out[key]; dup {
			return nil, headerErr(at, strconv.Quote(key), "repeated key")
		}
		if !contains(allowed, key) {
			return nil, headerErr(at, strconv.Quote(key), "unknown key: want %s", strings.Join(allowed, ", "))
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, headerErr(at+"."+key, nil, "invalid JSON: %v", err)
		}
		out[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, headerErr(at, nil, "invalid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, headerErr(at, nil, "unexpected data after the JSON object")
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// field decodes the member key of obj into dst, which must be there and
// not null.
func field(obj map[string]json.RawMessage, key, at string, dst any) error {
	raw, ok := obj[key]
	if !ok {
		return headerErr(at, nil, "is missing")
	}
	if string(raw) == "null" {
		return headerErr(at, nil, "must not be null")
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return headerErr(at, string(raw), "want %s", typeName(dst))
		}
		return headerErr(at, nil, "%v", err)
	}
	return nil
}

// typeName says what a field's Go type holds, for errors.
func typeName(dst any) string {
	switch dst.(type) {
	case *int:
		return "an integer"
	case *float64:
		return "a number"
	case *string:
		return "a string"
	case *[]json.RawMessage:
		return "an array"
	}
	return "a name (a string)"
}

// isHeaderObject reports whether a JSON-lines line is an object with the
// header's key: the metadata header, not a row.
func isHeaderObject(line []byte) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(line, &keys) != nil {
		return false
	}
	_, ok := keys[HeaderKey]
	return ok
}
