package votefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/param"
)

// headerKey is the key that makes a JSON object a vote file's metadata
// header; its value is the header's version.
const headerKey = "darrm-votes"

// headerVersion is the version of the metadata header this darrm writes,
// and the only one it reads.
const headerVersion = 1

// MaxEnsembleID bounds the length of an ensemble id, in bytes.
const MaxEnsembleID = 256

// AddRemove is the neighbouring relation of a stated guarantee, as a
// header's "neighbours" key writes it: datasets that differ by adding or
// removing one record. A header written before darrm recorded it has no
// such key and is read as AddRemove.
const AddRemove = "add-remove"

// Meta is the metadata header of a vote file: which teacher ensemble
// voted and what its guarantee rests on, as plain data, each field as the
// file writes it. This package checks the header's form (Validate); what
// it states of privacy (the relation, the kind of teachers, the partition,
// the teachers' guarantees and their sources) is read and checked by
// package provenance (provenance.Check), which every release, account and
// ledger goes through.
//
// In a file it is one line before the data, the JSON object that
// MarshalJSON writes: in CSV behind "# " (a comment line), in JSON lines
// as the first line itself (see AppendHeader and docs/aggregate.md). A
// file that cannot hold it (a NumPy array) takes it from a file of its
// own beside it, which holds the same object (Open).
type Meta struct {
	// Ensemble identifies the teacher ensemble: the same models, the same
	// id.
	Ensemble string `json:"ensemble"`
	// K is the number of teachers, which every data row must match.
	K int `json:"K"`
	// Classes is the number of classes a teacher votes among (2: votes 0
	// and 1).
	Classes int `json:"classes"`
	// Layout is how a row holds the teachers' answers.
	Layout Layout `json:"layout"`
	// Relation, Kind and Partition name the neighbouring relation of the
	// teachers' guarantee, whether the teachers are fixed models or a
	// fresh mechanism per query, and the rule that split the training
	// data between them: "private-teachers" or "one-vote"
	// (accountant.Relation), "fixed" or "per-query" (provenance.Kind),
	// and "keyed-hash", "file-position" or "shared"
	// (provenance.Partition). Validate does not read them; every
	// release, account and ledger refuses other values (provenance.Check).
	Relation  string `json:"relation"`
	Kind      string `json:"kind"`
	Partition string `json:"partition"`
	// Teachers are the teachers' guarantees, in groups of equal ones, in
	// the order of the vote columns; their counts sum to K.
	Teachers []TeacherGroup `json:"teachers"`
	// Orientation, when stated, says which axis of a matrix of class
	// labels holds the teachers, as Options.Orientation does: a header in
	// a sidecar may state TeachersInRows (PATE's published layout), which
	// a NumPy array's shape does not; unstated, a row per query.
	Orientation Orientation `json:"orientation,omitempty"`
}

// TeacherGroup is Count consecutive teachers with the same guarantee and
// the same derivation of it: each teacher's (ε, Δ) (nil for teachers
// that have none) and its source.
type TeacherGroup struct {
	Count  int           `json:"count"`
	Eps    *float64      `json:"eps,omitempty"`
	Delta  *float64      `json:"Delta,omitempty"`
	Source TeacherSource `json:"source"`
}

// TeacherSource says how a group's guarantee was obtained: its Method
// ("stated", "dp-sgd" or "none") and, for a stated one, the Neighbours of
// its guarantee, or for a DP-SGD one the run (Sigma, SamplingRate, Steps)
// and its Conversion to (ε, δ) at Delta.
type TeacherSource struct {
	Method       string   `json:"method"`
	Neighbours   string   `json:"neighbours,omitempty"`
	Sigma        *float64 `json:"sigma,omitempty"`
	SamplingRate *float64 `json:"sampling_rate,omitempty"`
	Steps        *int     `json:"steps,omitempty"`
	Conversion   string   `json:"conversion,omitempty"`
	Delta        *float64 `json:"delta,omitempty"`
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

// HeaderError reports a metadata header that breaks a rule: the field (a
// path such as "teachers[0].eps"), its value as written, and the rule.
// The checks of package provenance report the rules of what a header
// states with it too.
type HeaderError struct {
	Field string
	Value string // "" when the field is missing or the rule concerns no value
	Rule  string
}

// Error names the header field, its value when it has one, and the rule
// it breaks.
func (e *HeaderError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("header field %s: %s", e.Field, e.Rule)
	}
	return fmt.Sprintf("header field %s = %s: %s", e.Field, e.Value, e.Rule)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *HeaderError) BadInput() bool { return true }

func headerErr(field string, value any, rule string, args ...any) *HeaderError {
	v := ""
	if value != nil {
		v = fmt.Sprint(value)
	}
	return &HeaderError{Field: field, Value: v, Rule: fmt.Sprintf(rule, args...)}
}

// showJSON shows a JSON value for an error message as the header writes
// it, cut (param.Cut).
func showJSON(raw []byte) string {
	if c, cut := param.Cut(string(raw)); cut {
		return c + "..."
	}
	return string(raw)
}

// Validate checks the header's form, field by field and between fields:
// the ensemble id, the classes, K (odd for 0/1 votes), the layout, and
// teachers' groups whose counts sum to K. A broken rule is a
// *HeaderError. What the header states of privacy is provenance.Check's.
func (m *Meta) Validate() error {
	if m.Ensemble == "" {
		return headerErr("ensemble", nil, "must name the teacher ensemble")
	}
	if len(m.Ensemble) > MaxEnsembleID || !utf8.ValidString(m.Ensemble) || strings.IndexFunc(m.Ensemble, unicode.IsControl) >= 0 {
		return headerErr("ensemble", param.Quote(m.Ensemble), "must be printable UTF-8 text of at most %d bytes", MaxEnsembleID)
	}
	if !validClasses(m.Classes) {
		return headerErr("classes", m.Classes, "must be in [2, %d] (at most as many classes as a row of counts can hold)", MaxClasses)
	}
	var pe *param.Error
	if errors.As(param.Teachers(m.K, m.Input() == TwoClass), &pe) {
		return headerErr("K", m.K, "%s", pe.Rule)
	}
	if m.Layout < 0 || int(m.Layout) >= len(layoutEnum.List) {
		return headerErr("layout", m.Layout.String(), "must be one of %s", strings.Join(layoutEnum.List, ", "))
	}
	if m.Orientation < orientationUnstated || m.Orientation > TeachersInRows {
		return headerErr("orientation", m.Orientation.String(), "must be one of %s", strings.Join(orientationNames.List[QueriesInRows:], ", "))
	}
	if m.Orientation == TeachersInRows && (m.Layout != LayoutVotes || m.Classes == 2) {
		return headerErr("orientation", m.Orientation.String(), "only class labels of more than two classes (layout votes) are read a row per teacher; counts and two-class 0/1 votes have a row per query")
	}
	if len(m.Teachers) == 0 {
		return headerErr("teachers", nil, "must list the teachers' guarantees")
	}
	n := 0
	for i, g := range m.Teachers {
		if g.Count < 1 || g.Count > m.K {
			return headerErr(fmt.Sprintf("teachers[%d].count", i), g.Count, "must be in [1, K] = [1, %d]", m.K)
		}
		n += g.Count
	}
	if n != m.K {
		return headerErr("teachers", nil, "the counts sum to %d teachers, but K = %d", n, m.K)
	}
	return nil
}

// Input returns the kind of votes the header heads: ManyClasses, for the
// many-class mechanisms, for counts or votes among more than two classes;
// else TwoClass, 0/1 votes, DaRRM's and its baselines'.
func (m *Meta) Input() Input {
	if m.Layout != LayoutVotes || m.Classes != 2 {
		return ManyClasses
	}
	return TwoClass
}

// MarshalJSON writes the header as it appears in a file, version first.
func (m *Meta) MarshalJSON() ([]byte, error) {
	type fields Meta // the same fields, without this method
	return json.Marshal(struct {
		Version int `json:"darrm-votes"`
		*fields
	}{headerVersion, (*fields)(m)})
}

// UnmarshalJSON reads a header written by MarshalJSON (parseMeta), so
// that a header stored in another JSON document is checked as strictly as
// one in a vote file.
func (m *Meta) UnmarshalJSON(b []byte) error {
	x, err := parseMeta(b)
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
	metaKeys   = []string{headerKey, "ensemble", "K", "classes", "layout", "relation", "kind", "partition", "teachers", "orientation"}
	groupKeys  = []string{"count", "eps", "Delta", "source"}
	sourceKeys = []string{"method", "neighbours", "sigma", "sampling_rate", "steps", "conversion", "delta"}
)

// parseMeta reads a header from its JSON object and validates its form
// (Validate). Keys are case-sensitive; an unknown or repeated key, a
// missing field, a null or a value of the wrong type is a *HeaderError, as
// is a version other than headerVersion, which is checked first. The
// fields a group of teachers has depend on its source's method, which
// provenance.Check checks with what the header states.
func parseMeta(b []byte) (*Meta, error) {
	top, err := object(b, "header", metaKeys)
	if err != nil {
		return nil, err
	}
	var version int
	if err := field(top, headerKey, headerKey, &version); err != nil {
		return nil, err
	}
	if version != headerVersion {
		return nil, headerErr(headerKey, version, "this darrm reads version %d headers", headerVersion)
	}
	m := &Meta{}
	for _, f := range []struct {
		key string
		dst any
	}{
		{"ensemble", &m.Ensemble}, {"K", &m.K}, {"classes", &m.Classes}, {"layout", &m.Layout},
		{"relation", (*name)(&m.Relation)}, {"kind", (*name)(&m.Kind)}, {"partition", (*name)(&m.Partition)},
	} {
		if err := field(top, f.key, f.key, f.dst); err != nil {
			return nil, err
		}
	}
	var groups []json.RawMessage
	if err := field(top, "teachers", "teachers", &groups); err != nil {
		return nil, err
	}
	if _, ok := top["orientation"]; ok {
		if err := field(top, "orientation", "orientation", &m.Orientation); err != nil {
			return nil, err
		}
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

// name is a field that names one of several choices, for errors.
type name string

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
	if err := field(src, "method", at+".source.method", (*name)(&g.Source.Method)); err != nil {
		return g, err
	}
	s := &g.Source
	if _, ok := src["neighbours"]; !ok && s.Method == "stated" {
		// A header written before darrm recorded the neighbours of a
		// stated guarantee has none, and means AddRemove.
		s.Neighbours = AddRemove
	}
	for _, f := range []struct {
		obj map[string]json.RawMessage
		key string
		at  string
		dst any
	}{
		{obj, "eps", at + ".eps", &g.Eps}, {obj, "Delta", at + ".Delta", &g.Delta},
		{src, "neighbours", at + ".source.neighbours", &s.Neighbours},
		{src, "sigma", at + ".source.sigma", &s.Sigma}, {src, "sampling_rate", at + ".source.sampling_rate", &s.SamplingRate},
		{src, "steps", at + ".source.steps", &s.Steps}, {src, "conversion", at + ".source.conversion", (*name)(&s.Conversion)},
		{src, "delta", at + ".source.delta", &s.Delta},
	} {
		if _, ok := f.obj[f.key]; !ok {
			continue
		}
		if err := field(f.obj, f.key, f.at, f.dst); err != nil {
			return g, err
		}
	}
	// An empty name would read as a name left out.
	if _, ok := src["neighbours"]; ok && s.Neighbours == "" {
		return g, headerErr(at+".source.neighbours", `""`, "must not be empty")
	}
	if _, ok := src["conversion"]; ok && s.Conversion == "" {
		return g, headerErr(at+".source.conversion", `""`, "must not be empty")
	}
	return g, nil
}

// object reads one level of a JSON object into its members, refusing
// anything but an object, repeated keys and keys not in allowed (any key
// when allowed is nil).
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
			return nil, headerErr(at, param.Quote(key), "repeated key")
		}
		if allowed != nil && !contains(allowed, key) {
			return nil, headerErr(at, param.Quote(key), "unknown key: want %s", strings.Join(allowed, ", "))
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			// A key of any mechanism's settings is said quoted and cut
			// where it is long or not plain text.
			name := key
			if _, cut := param.Cut(key); cut || strconv.Quote(key) != `"`+key+`"` {
				name = param.Quote(key)
			}
			return nil, headerErr(at+"."+name, nil, "invalid JSON: %v", err)
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
			return headerErr(at, showJSON(raw), "want %s", typeName(dst))
		}
		return headerErr(at, nil, "%v", err)
	}
	return nil
}

// typeName says what a field's Go type holds, for errors.
func typeName(dst any) string {
	switch dst.(type) {
	case *int, **int:
		return "an integer"
	case *float64, **float64:
		return "a number"
	case *string:
		return "a string"
	case *name:
		return "a name (a string)"
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
	_, ok := keys[headerKey]
	return ok
}
