package ensemble

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestMechanismBuild builds every mechanism by its type and checks it is
// the aggregator its constructor returns, with a description that says so.
func TestMechanismBuild(t *testing.T) {
	ctx := context.Background()
	p := constraints.New(11, 3, 0.1, 1e-5)
	teachers := accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}
	target := Target{M: 3}
	for _, tc := range []struct {
		m     Mechanism
		label string
	}{
		{DaRRM{Target: target, Gamma: optimal.Source{Given: optGamma(t, p), Name: "the fixture"}}, "DaRRM with the fixture"},
		{Subsample{Target: target}, "majority of 3 of the 11 teachers"},
		{RR{Target: target, Composition: accountant.Composition{Method: accountant.General, DeltaPrime: 1e-5}}, "general composition"},
		{GNMax{Target: target, Search: noisymax.GNMaxGrid}, "(grid search)"},
		{OneVoteDaRRM{Eps: p.MEps(), Delta: p.TargetDelta, Gamma: optimal.Source{Given: oneVoteGamma(t, p)}}, "DaRRM in the one-vote relation with a gamma given"},
	} {
		agg, label, err := New(ctx, tc.m, p.K, 2, teachers, Options{Memo: testMemo})
		if err != nil {
			t.Errorf("%s: %v", tc.m.Name(), err)
			continue
		}
		if agg.Name() != tc.m.Name() || agg.K() != p.K || !strings.Contains(label, tc.label) {
			t.Errorf("%s: aggregator %s for K = %d, label %q; want %q in it", tc.m.Name(), agg.Name(), agg.K(), label, tc.label)
		}
	}
	// dsub needs Delta = 0; its description names Theorem 3.5.1.
	if agg, label, err := New(ctx, DSub{Target: Target{M: 3}}, 11, 2, accountant.Guarantee{Eps: 0.1}, Options{Memo: testMemo}); err != nil || agg.Name() != "dsub" || !strings.Contains(label, "majority of 5 of the 11") {
		t.Errorf("dsub: %v, %q", err, label)
	}
	if _, err := Mechanisms().Lookup("median", votefile.TwoClass); err == nil || !strings.Contains(err.Error(), "darrm, subsample, dsub, rr, gnmax") {
		t.Errorf("unknown mechanism: %v", err)
	}
	// A gamma that is not (m·eps, delta)-DP is refused by the certificate.
	if _, _, err := New(ctx, DaRRM{Target: target, Gamma: optimal.Source{Given: slices.Repeat([]float64{1}, 12)}}, 11, 2, teachers, Options{Memo: testMemo}); !errors.Is(err, gamma.ErrNotCertified) {
		t.Errorf("gamma = 1: %v, want ErrNotCertified", err)
	}
}

// TestNewChecksK: a K below 1 is refused naming K, for every registered
// mechanism, before the settings checked against it (darrm's was refused
// as "m = 0: must be in [1, K] = [1, -1]"), and no mechanism is an error,
// not a panic.
func TestNewChecksK(t *testing.T) {
	for _, ex := range examples() {
		for _, k := range []int{0, -1, math.MinInt} {
			classes := 2
			if ex.in == votefile.ManyClasses {
				classes = 10
			}
			_, _, err := New(context.Background(), ex.m, k, classes, accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Options{Memo: testMemo})
			var pe *param.Error
			if !errors.As(err, &pe) || pe.Name != "K" {
				t.Errorf("%s, K = %d: %v, want a ParamError on K", ex.m.Name(), k, err)
			}
		}
	}
	if _, _, err := New(context.Background(), nil, 11, 2, accountant.Guarantee{Eps: 0.1}, Options{}); err == nil || !strings.Contains(err.Error(), "no mechanism") {
		t.Errorf("a nil mechanism: %v", err)
	}
}

// examples returns, for each registered mechanism and kind of votes it
// labels, a mechanism with settings it builds with for K = 11 teachers
// (0.1, 1e-5)-DP (dsub's pure), a gamma of zeros for those that sample
// one, and the votes it labels.
func examples() []struct {
	m  Mechanism
	in votefile.Input
} {
	zeros := optimal.Source{Given: make([]float64, 12)}
	t := Target{M: 3}
	delta := 1e-5
	two, many := votefile.TwoClass, votefile.ManyClasses
	return []struct {
		m  Mechanism
		in votefile.Input
	}{
		{DaRRM{Target: t, Gamma: zeros}, two}, {Subsample{Target: t}, two}, {DSub{Target: t}, two},
		{RR{Target: t, Composition: accountant.Composition{Method: accountant.General, DeltaPrime: 1e-5}}, two},
		{GNMax{Target: t}, two}, {OneVoteDaRRM{Eps: 0.3, Delta: 1e-5, Gamma: zeros}, two},
		{GNMax{Target: Target{Delta: delta}, Sigma2: 40}, many}, {ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: GNMax{Target: Target{Delta: 1e-5}, Sigma2: 40}}, many},
		{LNMax{Scale: 20}, many},
		{ProgressiveGNMax{Levels: []float64{100, 75, 56, 45}, Kappa: 1.2, GiveUp: 0.25, Threshold: 7, Sigma1: 200, Budget: accountant.Guarantee{Eps: 2, Delta: 1e-5}}, many},
	}
}

// TestRegistry: every registered mechanism, on every kind of votes it
// labels, builds from its settings (New), labels the votes of its kind
// in its relation, and is found by its name and input; a name known for
// the other kind of votes is refused saying so.
func TestRegistry(t *testing.T) {
	ctx := context.Background()
	ex := examples()
	var n int
	for _, m := range Mechanisms() {
		n += len(m.Votes())
	}
	if len(ex) != n {
		t.Fatalf("%d examples for the %d mechanisms and inputs registered", len(ex), n)
	}
	for _, e := range ex {
		m, classes := e.m, 3
		teachers := accountant.Guarantee{Eps: 0.1, Delta: 1e-5}
		if e.in == votefile.TwoClass {
			classes = 2
		}
		if m.Name() == (DSub{}).Name() {
			teachers.Delta = 0
		}
		r, err := Mechanisms().Lookup(m.Name(), e.in)
		if err != nil || VotesOf(m, classes) != e.in {
			t.Errorf("%s on %v: registered for it: %v; labels %v", m.Name(), e.in, err, VotesOf(m, classes))
		}
		if reflect.TypeOf(r) != reflect.TypeOf(m) {
			t.Errorf("%s: registered as %T", m.Name(), r)
		}
		agg, label, err := New(ctx, m, 11, classes, teachers, Options{Memo: testMemo})
		if err != nil {
			t.Errorf("%s on %v: %v", m.Name(), e.in, err)
			continue
		}
		if agg.Name() != m.Name() || agg.Classes() != classes || agg.Privacy().Relation != m.Relation() || twoClass(agg) != (e.in == votefile.TwoClass) || label == "" {
			t.Errorf("%s on %v: built %s, %d classes, relation %v, label %q", m.Name(), e.in, agg.Name(), agg.Classes(), agg.Privacy().Relation, label)
		}
		if got := agg.Mechanism(); got == nil || got.Name() != m.Name() || got.Validate() != nil {
			t.Errorf("%s on %v: built as %#v", m.Name(), e.in, got)
		}
	}
	if _, err := Mechanisms().Lookup("darrm", votefile.ManyClasses); err == nil || !strings.Contains(err.Error(), "darrm labels two-class votes, not multi-class votes") {
		t.Errorf("darrm on multi-class votes: %v", err)
	}
	if _, err := Mechanisms().Lookup("lnmax", votefile.TwoClass); err == nil || !strings.Contains(err.Error(), "lnmax labels multi-class votes") {
		t.Errorf("lnmax on two-class votes: %v", err)
	}
}

// TestPlanned: the setting a plan chooses of each registered mechanism,
// on every kind of votes it labels, and the mechanism with it set; the
// settings of the GNMax family on counts as they are set, and no others.
func TestPlanned(t *testing.T) {
	for _, e := range examples() {
		classes := 3
		if e.in == votefile.TwoClass {
			classes = 2
		}
		var setting string
		var want Mechanism
		var family noisymax.Steps
		switch m := e.m.(type) {
		case DaRRM:
			m.M = 7
			setting, want = "m", m
		case Subsample:
			m.M = 7
			setting, want = "m", m
		case DSub:
			m.M = 7
			setting, want = "m", m
		case RR:
			m.M = 7
			setting, want = "m", m
		case OneVoteDaRRM:
			m.Eps = 7
			setting, want = "target eps", m
		case GNMax:
			if e.in == votefile.TwoClass {
				m.M = 7
				setting, want = "m", m
				break
			}
			family = m.Steps()
			m.Sigma2 = 7
			setting, want = "sigma2", m
		case ConfidentGNMax:
			family = m.Steps()
			m.Sigma2 = 7
			setting, want = "sigma2", m
		case LNMax:
			setting, want = "Laplace scale", LNMax{Scale: 7}
		case ProgressiveGNMax:
			setting = "" // planned on its own
		}
		p := e.m.Plan(VotesOf(e.m, classes))
		switch {
		case p.Setting != setting:
			t.Errorf("%s on %v: plans %q, want %q", e.m.Name(), e.in, p.Setting, setting)
		case setting != "" && !reflect.DeepEqual(p.With(7), want):
			t.Errorf("%s on %v: set to 7 %#v; want %#v", e.m.Name(), e.in, p.With(7), want)
		case setting != "" && !slices.Contains(flagsOf(e.m), p.Flag):
			t.Errorf("%s on %v: planned by --%s, not one of its flags %v", e.m.Name(), e.in, p.Flag, flagsOf(e.m))
		case (p.Expect != nil) != (e.in == votefile.ManyClasses && setting != ""):
			t.Errorf("%s on %v: scored on proxy votes: %v", e.m.Name(), e.in, p.Expect != nil)
		case p.Expect != nil:
			// At the setting 7, the plurality of 10, 2, 1 is likelier than
			// a class of 1, and no probability is out of [0, 1].
			x := p.With(7).Plan(e.in).Expect
			if top, low := x([]int{10, 2, 1}, 0), x([]int{10, 2, 1}, 2); !(top > low && top <= 1 && low >= 0) {
				t.Errorf("%s at 7: scores the plurality %v, a class of one vote %v", e.m.Name(), top, low)
			}
		}
		g, ok := Steps(e.m, classes)
		if ok != (family.Sigma2 != 0) || g != family {
			t.Errorf("%s on %v: Steps = %+v, %v; want %+v", e.m.Name(), e.in, g, ok, family)
		}
	}
}

// TestAccounting: the limit a budget sets (none without one, none when
// the teachers' cap is within it, no label when it is not: the cap is
// the only bound of fixed teachers), and totals that are the cap.
func TestAccounting(t *testing.T) {
	step := Privacy{Spend: accountant.ApproxStep(accountant.Guarantee{Eps: 0.3, Delta: 3e-5}), Relation: accountant.PrivateTeachers}
	capped := provenance.Binding{Ensemble: "e", Teachers: provenance.Teachers{K: 11, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.Fixed, Partition: provenance.SharedData}}
	unstated := provenance.Binding{Teachers: provenance.Teachers{K: 11, Each: capped.Each, Relation: accountant.PrivateTeachers}}
	for _, tc := range []struct {
		name   string
		b      provenance.Binding
		budget *accountant.Guarantee
		limit  int
		cap    bool
	}{
		{"no budget", capped, nil, -1, true},
		{"a budget below the cap", capped, &accountant.Guarantee{Eps: 0.75, Delta: 1e-3}, 0, true},
		{"the cap within the budget", capped, &accountant.Guarantee{Eps: 2, Delta: 1e-3}, -1, true},
		{"no header: no cap", unstated, &accountant.Guarantee{Eps: 2, Delta: 1e-3}, 6, false},
	} {
		a, err := newAccounting(context.Background(), step, tc.b, accountant.Composition{Method: accountant.Simple, DeltaPrime: 1e-5}, tc.budget)
		if err != nil || a.Limit() != tc.limit || (a.Cap != nil) != tc.cap || (a.Cap == nil) == (a.CapNote == "") {
			t.Errorf("%s: limit %d, cap %v (%q), %v", tc.name, a.Limit(), a.Cap, a.CapNote, err)
			continue
		}
		totals := a.Totals(100)
		if len(totals) != 3 || a.Totals(0) != nil {
			t.Fatalf("%s: totals %v", tc.name, totals)
		}
		if simple := totals[0]; tc.cap && (simple.Bound != accountant.TeachersBound || simple.Guarantee != a.Cap.Guarantee) || !tc.cap && simple.Bound != accountant.QueriesBound {
			t.Errorf("%s: 100 labels total %+v", tc.name, simple)
		}
	}
	if _, err := newAccounting(context.Background(), step, capped, accountant.Composition{Method: accountant.Simple, DeltaPrime: 1e-5}, &accountant.Guarantee{Eps: -1}); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("a negative budget: %v", err)
	}
	// More than 2^53 queries fit: a limit no run reaches, not an error,
	// under every composition.
	pure := Privacy{Spend: accountant.ApproxStep(accountant.Guarantee{Eps: 1e-20}), Relation: accountant.PrivateTeachers, Profile: []accountant.Guarantee{{Eps: 1e-20}}}
	for _, m := range []accountant.Method{accountant.Simple, accountant.General, accountant.Optimal} {
		a, err := newAccounting(context.Background(), pure, unstated, accountant.Composition{Method: m, DeltaPrime: 1e-5}, &accountant.Guarantee{Eps: 2, Delta: 1e-5})
		if err != nil || a.Limit() != accountant.CountLimit {
			t.Errorf("%v: a budget beyond counting: limit %d, %v", m, a.Limit(), err)
		}
	}
}

// TestMechanismLists: the lists of names are the registered mechanisms',
// each name once in the order registered, by the votes they label.
func TestMechanismLists(t *testing.T) {
	for _, tc := range []struct {
		in   votefile.Input
		want []provenance.MechanismName
	}{
		{votefile.TwoClass, []provenance.MechanismName{"darrm", "subsample", "dsub", "rr", "gnmax", "darrm-one-vote"}},
		{votefile.ManyClasses, []provenance.MechanismName{"gnmax", "confident-gnmax", "lnmax", "progressive-gnmax"}},
	} {
		var got []provenance.MechanismName
		for _, m := range Mechanisms().On(tc.in) {
			got = append(got, m.Name())
			// At its defaults: a Target's delta is the default, not 0.
			if f := reflect.ValueOf(m).FieldByName("Target"); f.IsValid() && f.Interface() != (Target{}) {
				t.Errorf("%s: registered with %+v, want the default delta", m.Name(), f.Interface())
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestTotalsAtExtremes: the totals a release's summary reports, computed
// after its labels have left, hold for every setting the mechanisms
// accept and every count of labels: 400,000 GNMax labels at sigma2 = 1e15
// (whose discrete-Gaussian window once overflowed to a negative length and
// panicked after the labels were written), and the largest counts.
func TestTotalsAtExtremes(t *testing.T) {
	ctx := context.Background()
	var labelers []Labeler
	for _, m := range []GNMax{} {
		g, err := classOf(m, 250, 2, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		labelers = append(labelers, g)
	}
	for _, scale := range []float64{1e15, 0.02} {
		l, err := newLNMax(scale, 250, 2)
		if err != nil {
			t.Fatal(err)
		}
		labelers = append(labelers, l)
	}
	for _, l := range labelers {
		priv := l.Privacy()
		a, err := newAccounting(ctx, priv, provenance.Binding{Teachers: provenance.Teachers{K: l.K(), Relation: priv.Relation}}, accountant.Composition{Method: accountant.General, DeltaPrime: 1e-5}, &accountant.Guarantee{Eps: 2, Delta: 1e-5})
		if err != nil {
			t.Fatalf("%v: %v", l.Mechanism(), err)
		}
		for _, n := range []int{1, 400000, accountant.CountLimit} {
			totals := a.Totals(n)
			if len(totals) == 0 {
				t.Errorf("%v, %d labels: no totals", l.Mechanism(), n)
			}
			for _, x := range totals {
				if x.Err == nil && (math.IsNaN(x.Guarantee.Eps) || x.Guarantee.Eps < 0) {
					t.Errorf("%v, %d labels: %v total %v", l.Mechanism(), n, x.Method, x.Guarantee)
				}
			}
		}
	}
}

// TestTargetDeltaZero: a Target's Delta left at 0 is the thesis' default
// δ for every mechanism of private teachers, and one given below the
// teachers' Δ is refused naming Target.Delta, the field the caller set,
// never the constraints.New the caller did not call.
func TestTargetDeltaZero(t *testing.T) {
	ctx := context.Background()
	teachers := accountant.Guarantee{Eps: 0.1, Delta: 1e-5}
	want := constraints.DefaultTargetDelta(1e-5, 3)
	for _, m := range []Mechanism{Subsample{Target: Target{M: 3}}, RR{Target: Target{M: 3}}, GNMax{Target: Target{M: 3}}} {
		agg, _, err := New(ctx, m, 11, 2, teachers, Options{})
		if err != nil || agg.Privacy().Delta != want {
			t.Errorf("%s with Target.Delta 0: %v, delta %v; want the default %v", m.Name(), err, agg.Privacy().Delta, want)
		}
	}
	_, _, err := New(ctx, Subsample{Target: Target{M: 3, Delta: 1e-6}}, 11, 2, teachers, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "Target.Delta = 1e-06: must be >= Delta = 1e-05") || strings.Contains(err.Error(), "constraints.New") {
		t.Errorf("Target.Delta 1e-6 below the teachers' 1e-5: %v, want refused naming Target.Delta", err)
	}
	var pe *param.Error
	if !errors.As(err, &pe) || pe.Name != "delta" {
		t.Errorf("%v: want the problem's delta underneath, as a program names it", err)
	}
}

// flagsOf returns the flags that the fields of m name by their tags.
func flagsOf(m Mechanism) []string {
	var out []string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if tag, ok := f.Tag.Lookup("flag"); ok {
				out = append(out, strings.Split(tag, ",")...)
			} else if f.Anonymous {
				walk(v.Field(i))
			}
		}
	}
	walk(reflect.ValueOf(m))
	return out
}
