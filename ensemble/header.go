package ensemble

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// labelSettings writes the settings of m that a label file's header
// states into meta: m's JSON, the object of its settings, none for a nil
// m or a mechanism whose guarantee says all (its JSON is {}). A setting
// whose key is one of the header's own is refused (LabelMeta.SetSettings).
func labelSettings(m Mechanism, meta *votefile.LabelMeta) error {
	meta.Settings = nil
	if m == nil {
		return nil
	}
	raw, err := json.Marshal(m)
	if err == nil {
		err = meta.SetSettings(raw)
	}
	if err != nil {
		return fmt.Errorf("%s: its settings for the label file's header: %w", m.Name(), err)
	}
	return nil
}

// errNoLabelHeader is FromHeader's error for a nil meta, what
// votefile.LabelReader.Meta returns for a file without a header: it was a
// nil dereference.
var errNoLabelHeader = errors.New("meta is nil: a label file without a metadata header (votefile.LabelReader.Meta) states no mechanism")

// decode reads the settings the header meta states into v, a pointer to
// the settings of the mechanism name (nil for one that has none): each
// must be stated (every release states them all, and an absent one read
// as 0 would account a mechanism the labels were not made by: a threshold
// of 0 is a setting like any other), but one it marks omitempty, and none
// that it does not have.
func decode(meta *votefile.LabelMeta, name provenance.MechanismName, v any) error {
	var got map[string]json.RawMessage
	if len(meta.Settings) > 0 {
		if err := json.Unmarshal(meta.Settings, &got); err != nil {
			return param.CutJSON(err)
		}
	}
	var all, required []string
	if v != nil {
		all, required = jsonKeys(reflect.TypeOf(v).Elem())
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if !slices.Contains(all, k) {
			return fmt.Errorf("it states %s, which %s does not have", param.Quote(k), name)
		}
	}
	for _, k := range required {
		if _, ok := got[k]; !ok {
			return fmt.Errorf("it states no %s, a setting of %s (a release states every setting of its mechanism)", k, name)
		}
	}
	if len(got) == 0 {
		return nil
	}
	return param.CutJSON(json.Unmarshal(meta.Settings, v))
}

// jsonKeys returns the JSON keys of the fields of the struct type t, its
// embedded structs' among them, in order, and those not marked omitempty.
func jsonKeys(t reflect.Type) (all, required []string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opt, _ := strings.Cut(tag, ",")
		switch {
		case name == "-" || !f.IsExported():
		case f.Anonymous && tag == "":
			a, r := jsonKeys(f.Type)
			all, required = append(all, a...), append(required, r...)
		default:
			if name == "" {
				name = f.Name
			}
			all = append(all, name)
			if opt != "omitempty" {
				required = append(required, name)
			}
		}
	}
	return all, required
}

// FromHeader returns the mechanism of r whose labels a label file's
// header meta describes, with the settings it states
// (Mechanism.FromHeader): the GNMax family's σs, threshold and noise and
// their per-query δ, LNMax's scale; of darrm-one-vote its (ε, δ); of the
// mechanisms for private teachers, whose header states their per-query δ
// but not m, their δ (M is 0). The names the header states (the
// mechanism, the relation, the partition, the noise) are checked, and an
// unknown one refused.
func (r Registry) FromHeader(meta *votefile.LabelMeta) (Mechanism, error) {
	if meta == nil {
		return nil, fmt.Errorf("label file header: %w", errNoLabelHeader)
	}
	var rel accountant.Relation
	if err := rel.UnmarshalText([]byte(meta.Relation)); err != nil {
		return nil, fmt.Errorf("label file header: %v", err)
	}
	if meta.Partition != "" {
		var p provenance.Partition
		if err := p.UnmarshalText([]byte(meta.Partition)); err != nil {
			return nil, fmt.Errorf("label file header: %v", err)
		}
	}
	name := provenance.MechanismName(meta.Mechanism)
	var m Mechanism
	for _, x := range r {
		if x.Name() == name {
			m = x
			break
		}
	}
	if m == nil {
		_, err := r.Lookup(name, votefile.ManyClasses)
		return nil, fmt.Errorf("label file header: %v", err)
	}
	m, err := m.FromHeader(meta)
	if err != nil {
		return nil, fmt.Errorf("label file header: %v", err)
	}
	return m, nil
}
