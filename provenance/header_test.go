package provenance

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/votefile"
)

// statedMeta is the header of k teachers stated (eps, Delta)-DP, fixed,
// on shared data.
func statedMeta(k int, eps, delta float64) *votefile.Meta {
	return Binding{Ensemble: "test-ensemble", Teachers: Teachers{K: k, Each: accountant.Guarantee{Eps: eps, Delta: delta}, Relation: accountant.PrivateTeachers, Kind: Fixed, Partition: SharedData}}.Header(2, votefile.LayoutVotes)
}

// sgdRun is a DP-SGD run and the guarantee the accountant gives it.
func sgdRun(t testing.TB) (DPSGDRun, accountant.Guarantee) {
	t.Helper()
	r := DPSGDRun{SGM: accountant.SGM{Q: 30.0 / 1024, Sigma: 12, Steps: 171}, Conversion: accountant.ImprovedConversion, Delta: 1e-4}
	g, err := r.Guarantee()
	if err != nil {
		t.Fatal(err)
	}
	return r, g
}

// parse reads a header from its JSON object, as a vote file's is read.
func parse(j string) (*votefile.Meta, error) {
	var m votefile.Meta
	err := json.Unmarshal([]byte(j), &m)
	return &m, err
}

const statedJSON = `{"darrm-votes":1,"ensemble":"test-ensemble","K":3,"classes":2,"layout":"votes","relation":"private-teachers","kind":"fixed","partition":"shared","teachers":[{"count":3,"eps":0.1,"Delta":0.00001,"source":{"method":"stated","neighbours":"add-remove"}}]}`

// TestHeaderBytes: the header this package builds is the one vote files
// hold, byte for byte.
func TestHeaderBytes(t *testing.T) {
	if b, err := statedMeta(3, 0.1, 1e-5).MarshalJSON(); err != nil || string(b) != statedJSON {
		t.Errorf("%s (%v), want %s", b, err, statedJSON)
	}
}

// TestHeaderRules: every rule of what a header states, each broken once,
// is a *votefile.HeaderError that names its field and value.
func TestHeaderRules(t *testing.T) {
	run, g := sgdRun(t)
	sgd := func(edit func(*DPSGDRun, *accountant.Guarantee)) string {
		r, gg := run, g
		edit(&r, &gg)
		tg := votefile.TeacherGroup{Count: 3, Eps: &gg.Eps, Delta: &gg.Delta, Source: votefile.TeacherSource{Method: "dp-sgd",
			Sigma: &r.Sigma, SamplingRate: &r.Q, Steps: &r.Steps, Conversion: r.Conversion.String(), Delta: &r.Delta}}
		m := statedMeta(3, 0, 0)
		m.Teachers = []votefile.TeacherGroup{tg}
		b, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	swap := func(old, new string) string {
		if !strings.Contains(statedJSON, old) {
			t.Fatalf("%q not in the header", old)
		}
		return strings.Replace(statedJSON, old, new, 1)
	}
	for _, tc := range []struct {
		name, json, want string
	}{
		{"relation", swap(`"relation":"private-teachers"`, `"relation":"friends"`), `relation "friends"`},
		{"kind", swap(`"kind":"fixed"`, `"kind":"sometimes"`), `kind "sometimes": must be one of fixed, per-query`},
		{"partition", swap(`"partition":"shared"`, `"partition":"random"`), `partition "random": must be one of keyed-hash, file-position, shared`},
		{"one-vote on shared data", swap(`"relation":"private-teachers"`, `"relation":"one-vote"`), `header field partition = shared: the one-vote relation does not hold on shared data`},
		{"one-vote by file position", strings.Replace(swap(`"relation":"private-teachers"`, `"relation":"one-vote"`), `"partition":"shared"`, `"partition":"file-position"`, 1),
			`header field partition = file-position: the one-vote relation does not hold on file-position shares: one added record moves every later record`},
		{"eps 0", swap(`"eps":0.1`, `"eps":0`), `header field teachers[0].eps = 0: must be a finite number > 0`},
		{"eps missing", swap(`"eps":0.1,`, ``), `header field teachers[0].eps: is missing`},
		{"Delta 1", swap(`"Delta":0.00001`, `"Delta":1`), `header field teachers[0].Delta = 1: must be in [0, 1)`},
		{"method", swap(`"method":"stated"`, `"method":"trust-me"`), `method "trust-me": must be one of stated, dp-sgd, none`},
		{"stated with sigma", swap(`"method":"stated"`, `"method":"stated","sigma":3`), `header field teachers[0].source.sigma = 3: only a dp-sgd source has sigma`},
		{"non-private with eps", swap(`"method":"stated"`, `"method":"none"`), `header field teachers[0].eps = 0.1: non-private teachers (method none) have no guarantee`},
		{"non-private private-teachers", swap(`"eps":0.1,"Delta":0.00001,"source":{"method":"stated","neighbours":"add-remove"}`, `"source":{"method":"none"}`), `the private-teachers relation needs every teacher's (eps, Delta)`},
		{"dp-sgd without run", swap(`"method":"stated","neighbours":"add-remove"`, `"method":"dp-sgd"`), `header field teachers[0].source.sigma: is missing`},
		{"dp-sgd with neighbours", strings.Replace(sgd(func(*DPSGDRun, *accountant.Guarantee) {}), `"method":"dp-sgd"`, `"method":"dp-sgd","neighbours":"add-remove"`, 1), `only a stated source has neighbours`},
		{"dp-sgd conversion", strings.Replace(sgd(func(*DPSGDRun, *accountant.Guarantee) {}), `"improved"`, `"magic"`, 1), `header field teachers[0].source.conversion: `},
		{"dp-sgd sigma 0", sgd(func(r *DPSGDRun, _ *accountant.Guarantee) { r.Sigma = 0 }), `header field teachers[0].source.sigma = 0: must be a finite number > 0`},
		{"dp-sgd rate", sgd(func(r *DPSGDRun, _ *accountant.Guarantee) { r.Q = 1.5 }), `header field teachers[0].source.sampling_rate = 1.5: must be in (0, 1]`},
		{"dp-sgd steps", sgd(func(r *DPSGDRun, _ *accountant.Guarantee) { r.Steps = 0 }), `header field teachers[0].source.steps = 0: must be an integer >= 1`},
		{"dp-sgd delta", sgd(func(r *DPSGDRun, _ *accountant.Guarantee) { r.Delta = 0 }), `header field teachers[0].source.delta = 0: must be in (0, 1)`},
		{"dp-sgd Delta below delta", sgd(func(_ *DPSGDRun, g *accountant.Guarantee) { g.Delta = 1e-5 }), `header field teachers[0].Delta = 1e-05: the DP-SGD run is converted at delta = 0.0001: Delta must be >= it`},
		{"dp-sgd eps below the accountant", sgd(func(_ *DPSGDRun, g *accountant.Guarantee) { g.Eps *= 0.999 }), `by the accountant: eps must be >= `},
		{"dp-sgd per query", strings.Replace(sgd(func(*DPSGDRun, *accountant.Guarantee) {}), `"fixed"`, `"per-query"`, 1), `header field kind = per-query: DP-SGD trains fixed models`},
		{"replace-one", swap(`"add-remove"`, `"replace-one"`), `header field teachers[0].source.neighbours = replace-one: darrm's releases and the teachers' cap need each teacher's guarantee for adding or removing a record`},
		{"unknown neighbours", swap(`"add-remove"`, `"swap"`), `header field teachers[0].source.neighbours = "swap": must be add-remove`},
		{"non-private neighbours", strings.Replace(swap(`"eps":0.1,"Delta":0.00001,`, ``), `"stated"`, `"none"`, 1), `only a stated source has neighbours`},
	} {
		var err error
		m, perr := parse(tc.json)
		if err = perr; err == nil {
			_, err = Check(m, Stated{})
		}
		var he *votefile.HeaderError
		if !errors.As(err, &he) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *votefile.HeaderError with %q", tc.name, err, tc.want)
		}
	}
	m, err := parse(sgd(func(_ *DPSGDRun, gg *accountant.Guarantee) { gg.Eps *= 2; gg.Delta = 1e-3 }))
	if err == nil {
		_, err = Check(m, Stated{})
	}
	if err != nil || *m.Teachers[0].Eps != 2*g.Eps {
		t.Errorf("a DP-SGD guarantee weaker than the accountant's is valid: %v", err)
	}
}

// headerTeachers returns the teachers' guarantee the header m states
// (CheckedHeader.teachers); false when it breaks a rule.
func headerTeachers(t *testing.T, m *votefile.Meta) (TeacherGuarantee, bool) {
	t.Helper()
	c, err := CheckHeader(m)
	if err != nil {
		t.Errorf("header %+v: %v", m, err)
		return TeacherGuarantee{}, false
	}
	return c.teachers()
}

// TestHeaderTeachers: a header's teachers' common bound, and the origin
// of each group's guarantee.
func TestHeaderTeachers(t *testing.T) {
	run, g := sgdRun(t)
	hetero := statedMeta(5, 0.2, 1e-6)
	hetero.Teachers = []votefile.TeacherGroup{StatedTeachers(2, accountant.Guarantee{Eps: 0.2, Delta: 1e-6}), StatedTeachers(3, accountant.Guarantee{Eps: 0.1, Delta: 1e-5})}
	if c, ok := headerTeachers(t, hetero); !ok || c != (TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: 0.2, Delta: 1e-5}, Heterogeneous: true}) {
		t.Errorf("common bound of (0.2, 1e-6) and (0.1, 1e-5): %+v, %v", c, ok)
	}
	if c, ok := headerTeachers(t, statedMeta(3, 0.1, 1e-5)); !ok || c != (TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}}) {
		t.Errorf("common bound of equal teachers: %+v, %v", c, ok)
	}
	sgd := Binding{Ensemble: "sgd", Teachers: Teachers{K: 3, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash}}.Header(2, votefile.LayoutVotes)
	if _, ok := headerTeachers(t, sgd); ok {
		t.Error("non-private teachers have a common guarantee")
	}
	if _, ok := headerTeachers(t, nil); ok {
		t.Error("no header has a common guarantee")
	}
	tg, err := run.Teachers(11)
	if err != nil || *tg.Eps != g.Eps || *tg.Delta != g.Delta {
		t.Fatalf("DP-SGD teachers %+v: %v", tg, err)
	}
	for _, tc := range []struct {
		g    votefile.TeacherGroup
		want origin
	}{{tg, fromDPSGD}, {StatedTeachers(1, g), fromStated}, {nonPrivateTeachers(1), nonPrivate}} {
		if o, err := originOf(tc.g); err != nil || o != tc.want {
			t.Errorf("%+v: origin %v (%v), want %v", tc.g, o, err, tc.want)
		}
	}
}

// TestEnsembleText: the kinds and partitions read back from their names.
func TestEnsembleText(t *testing.T) {
	for _, v := range []interface {
		MarshalText() ([]byte, error)
	}{Fixed, PerQuery, KeyedHash, FilePosition, SharedData} {
		b, _ := v.MarshalText()
		p := reflect.New(reflect.TypeOf(v))
		if err := p.Interface().(interface{ UnmarshalText([]byte) error }).UnmarshalText(b); err != nil || p.Elem().Interface() != v {
			t.Errorf("%v: %q reads back as %v (%v)", v, b, p.Elem(), err)
		}
	}
	var k Kind
	if err := k.UnmarshalText(nil); err == nil || KindUnstated.String() != "unstated" || PartitionUnstated.String() != "unstated" {
		t.Errorf("the unstated kind reads back (%v) or prints %q", err, KindUnstated)
	}
}

// TestFixtureTeachers: the README's vote file states its teachers, (0.1,
// 1e-5)-DP, stated.
func TestFixtureTeachers(t *testing.T) {
	f, err := os.Open("../testdata/votes-K11.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := votefile.Open("votes-K11.csv", votefile.Options{In: f})
	if err != nil {
		t.Fatal(err)
	}
	m := in.Meta()
	c, ok := headerTeachers(t, m)
	o, _ := originOf(m.Teachers[0])
	if !ok || c.Guarantee != (accountant.Guarantee{Eps: 0.1, Delta: 1e-5}) || c.Heterogeneous || o != fromStated {
		t.Errorf("header %+v: teachers %+v", m, c)
	}
}
