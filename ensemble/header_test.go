package ensemble

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/votefile"
)

// TestMechanismOf: the settings a mechanism writes into a label file's
// header read back as the mechanism (the GNMax family's σs, threshold,
// noise and δ, LNMax's scale, darrm-one-vote's (ε, δ)); an unknown noise,
// relation, partition or mechanism is refused.
func TestMechanismOf(t *testing.T) {
	delta := 1e-5
	for _, m := range []Mechanism{
		ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: GNMax{Target: Target{Delta: delta}, Sigma2: 40, Noise: noisymax.DiscreteNoise}},
		ConfidentGNMax{Threshold: 0, Sigma1: 150, GNMax: GNMax{Target: Target{Delta: delta}, Sigma2: 40, Noise: noisymax.DiscreteNoise}},
		GNMax{Target: Target{Delta: delta}, Sigma2: 40, Noise: noisymax.DiscreteNoise},
		GNMax{Target: Target{Delta: delta}, Sigma2: 21.67, Noise: noisymax.ContinuousNoise},
		LNMax{Scale: 20},
		OneVoteDaRRM{Eps: 0.3, Delta: delta},
	} {
		meta := &votefile.LabelMeta{Mechanism: m.Name().String(), Relation: "one-vote", Partition: "keyed-hash", Eps: 0.3, Delta: delta}
		labelSettings(m, meta)
		got, err := Mechanisms().FromHeader(meta)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("%#v read back as %#v, %v", m, got, err)
		}
	}
	ok := &votefile.LabelMeta{Mechanism: "gnmax", Relation: "one-vote", Partition: "keyed-hash", Settings: []byte(`{"sigma2":40,"noise":"discrete"}`)}
	if _, err := Mechanisms().FromHeader(ok); err != nil {
		t.Fatalf("%+v: %v", ok, err)
	}
	settings := func(mech, s string) func(*votefile.LabelMeta) {
		return func(m *votefile.LabelMeta) { m.Mechanism, m.Settings = mech, []byte(s) }
	}
	for _, edit := range []func(*votefile.LabelMeta){
		settings("gnmax", `{"sigma2":40,"noise":"loud"}`),
		func(m *votefile.LabelMeta) { m.Relation = "friends" },
		func(m *votefile.LabelMeta) { m.Partition = "random" },
		func(m *votefile.LabelMeta) { m.Mechanism = "median" },
		// A setting of the mechanism left out is not read as 0.
		settings("gnmax", `{"noise":"discrete"}`),
		settings("confident-gnmax", `{"sigma1":150,"sigma2":40,"noise":"discrete"}`),
		settings("confident-gnmax", `{"threshold":0,"sigma2":40,"noise":"discrete"}`),
		settings("lnmax", `{"noise":"discrete"}`),
		// Nor is a setting of another mechanism, of a mechanism darrm
		// does not know, or one of none.
		settings("gnmax", `{"sigma2":40,"threshold":200}`),
		settings("gnmax", `{"sigma2":40,"noise":"discrete","width":20}`),
		settings("darrm", `{"sigma2":40}`),
	} {
		bad := *ok
		edit(&bad)
		if m, err := Mechanisms().FromHeader(&bad); err == nil {
			t.Errorf("%+v read as %#v", bad, m)
		}
	}
	// A key of a megabyte is named, not repeated.
	long := *ok
	long.Settings = []byte(`{"sigma2":40,"noise":"discrete","` + strings.Repeat("k", 1<<20) + `":1}`)
	if _, err := Mechanisms().FromHeader(&long); err == nil || len(err.Error()) > 300 {
		t.Errorf("a key of 1 MiB: an error of %d bytes (%.80v)", len(fmt.Sprint(err)), err)
	}
	// Nor is a number of a megabyte, which encoding/json quotes whole.
	long.Settings = []byte(`{"sigma2":` + strings.Repeat("4", 1<<20) + `,"noise":"discrete"}`)
	if _, err := Mechanisms().FromHeader(&long); err == nil || len(err.Error()) > 300 {
		t.Errorf("a number of 1 MiB: an error of %d bytes (%.80v)", len(fmt.Sprint(err)), err)
	}
}

// TestMechanismValidate: each mechanism checks its own settings, a bad
// one a parameter error that names it: Confident-GNMax's threshold
// step needs sigma1 > 0, GNMax's sigma2 is the parameters' own rule
// (ConfidentGNMax.Validate), a target's m at least 1, a δ in
// [0, 0.5].
func TestMechanismValidate(t *testing.T) {
	delta, big := 1e-5, 0.9
	for _, tc := range []struct {
		m    Mechanism
		name string // "" for valid
	}{
		{ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: GNMax{Target: Target{Delta: delta}, Sigma2: 40}}, ""},
		{ConfidentGNMax{Threshold: 200, GNMax: GNMax{Target: Target{Delta: delta}, Sigma2: 40}}, "sigma1"},
		{GNMax{Target: Target{Delta: delta}, Sigma2: -1}, "sigma2"},
		{GNMax{Target: Target{M: 3}}, ""},
		{DaRRM{Target: Target{M: 0.5}}, "m"},
		{Subsample{Target: Target{M: 3, Delta: big}}, "delta"},
		{OneVoteDaRRM{Eps: 0, Delta: delta}, "target eps"},
		{LNMax{Scale: 20}, ""},
	} {
		err := tc.m.Validate()
		var pe *param.Error
		switch {
		case tc.name == "" && err != nil:
			t.Errorf("%#v: %v", tc.m, err)
		case tc.name != "" && (!errors.As(err, &pe) || pe.Name != tc.name):
			t.Errorf("%#v: %v, want a *ParamError naming %s", tc.m, err, tc.name)
		}
	}
}

// TestMechanismJSON: a mechanism's JSON is the object of its settings
// that a label file's header states ({} for none: the header states
// none).
func TestMechanismJSON(t *testing.T) {
	for _, e := range examples() {
		raw, err := json.Marshal(e.m)
		if err != nil {
			t.Errorf("%s: %v", e.m.Name(), err)
			continue
		}
		meta := &votefile.LabelMeta{}
		if err := labelSettings(e.m, meta); err != nil {
			t.Fatal(err)
		}
		want := string(meta.Settings)
		if want == "" {
			want = "{}"
		}
		if string(raw) != want {
			t.Errorf("%s: JSON %s, header %s", e.m.Name(), raw, meta.Settings)
		}
	}
}

// TestFromHeaderNil: a nil header, what votefile.LabelReader.Meta
// returns for a label file without one, is an error of the registry and
// of every mechanism, where it was a nil dereference.
func TestFromHeaderNil(t *testing.T) {
	noHeader := func(err error) bool { return err != nil && strings.Contains(err.Error(), "meta is nil") }
	if m, err := Mechanisms().FromHeader(nil); !noHeader(err) {
		t.Errorf("Registry.FromHeader(nil) = %v, %v; want an error that meta is nil", m, err)
	}
	for _, m := range append(Mechanisms(), DSub{}) {
		got, err := func() (got Mechanism, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return m.FromHeader(nil)
		}()
		if !noHeader(err) {
			t.Errorf("%s: FromHeader(nil) = %v, %v; want an error that meta is nil", m.Name(), got, err)
		}
	}
}
