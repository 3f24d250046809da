package ensemble

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestMechanismBuild builds every mechanism by name and checks it is the
// aggregator its constructor returns, with a description that says so.
func TestMechanismBuild(t *testing.T) {
	ctx := context.Background()
	p := constraints.New(11, 3, 0.1, 1e-5)
	for _, tc := range []struct {
		m     Mechanism
		src   optimal.Source
		label string
	}{
		{Mechanism{Name: "darrm"}, optimal.Source{Given: optGamma(t, p), Name: "the fixture"}, "DaRRM with the fixture"},
		{Mechanism{Name: "subsample"}, optimal.Source{}, "majority of 3 of the 11 teachers"},
		{Mechanism{Name: "rr", RR: accountant.Composition{Method: accountant.General, DeltaPrime: 1e-5}}, optimal.Source{}, "general composition"},
		{Mechanism{Name: "gnmax", GNMaxSearch: noisymax.GNMaxGrid}, optimal.Source{}, "(grid search)"},
		{Mechanism{Name: "darrm-one-vote"}, optimal.Source{Given: oneVoteGamma(t, p)}, "DaRRM in the one-vote relation with a gamma given"},
	} {
		agg, label, _, err := tc.m.Build(ctx, tc.src, p, 2, Options{})
		if err != nil {
			t.Errorf("%s: %v", tc.m.Name, err)
			continue
		}
		if agg.Name() != tc.m.Name || agg.K() != p.K || !strings.Contains(label, tc.label) {
			t.Errorf("%s: aggregator %s for K = %d, label %q; want %q in it", tc.m.Name, agg.Name(), agg.K(), label, tc.label)
		}
	}
	// dsub needs Delta = 0; its description names Theorem 3.5.1.
	pure := constraints.New(11, 3, 0.1, 0)
	if agg, label, _, err := (Mechanism{Name: "dsub"}).Build(ctx, optimal.Source{}, pure, 2, Options{}); err != nil || agg.Name() != "dsub" || !strings.Contains(label, "majority of 5 of the 11") {
		t.Errorf("dsub: %v, %q", err, label)
	}
	if _, _, _, err := (Mechanism{Name: "median"}).Build(ctx, optimal.Source{}, p, 2, Options{}); err == nil || !strings.Contains(err.Error(), "darrm, subsample, dsub, rr, gnmax") {
		t.Errorf("unknown mechanism: %v", err)
	}
	// A gamma that is not (m·eps, delta)-DP is refused by the certificate.
	if _, _, _, err := (Mechanism{Name: "darrm"}).Build(ctx, optimal.Source{Given: slices.Repeat([]float64{1}, 12)}, p, 2, Options{}); !errors.Is(err, gamma.ErrNotCertified) {
		t.Errorf("gamma = 1: %v, want ErrNotCertified", err)
	}
}

// TestRegistry: every registered mechanism builds from its settings
// (Build), labels the votes of its kind with the relation it is
// registered in, and is found by its name and input; a name known for
// the other kind of votes is refused saying so.
func TestRegistry(t *testing.T) {
	ctx := context.Background()
	f := func(x float64) *float64 { return &x }
	for _, info := range Registry(nil) {
		m := Mechanism{Name: info.Name, Input: info.Input, RR: accountant.Composition{Method: accountant.General, DeltaPrime: 1e-5},
			GNMax: noisymax.ConfidentGNMax{Sigma2: 40, Noise: noisymax.DiscreteNoise}, LNMax: noisymax.LNMax{Scale: 20}}
		p, classes := constraints.New(11, 3, 0.1, 1e-5), 3
		var src optimal.Source
		switch {
		case info.Input == votefile.TwoClass:
			classes = 2
			if info.PureTeachers {
				p = constraints.New(11, 3, 0.1, 0)
			}
			src.Given = make([]float64, 12)
		case info.Name == "confident-gnmax":
			m.GNMax.Threshold, m.GNMax.Sigma1 = 200, 150
		}
		agg, label, _, err := m.Build(ctx, src, p, classes, Options{})
		if err != nil {
			t.Errorf("%s on %v: %v", info.Name, info.Input, err)
			continue
		}
		if agg.Name() != info.Name || agg.Classes() != classes || agg.Privacy().Relation != info.Relation || twoClass(agg) != (info.Input == votefile.TwoClass) || label == "" {
			t.Errorf("%s on %v: built %s, %d classes, relation %v, label %q", info.Name, info.Input, agg.Name(), agg.Classes(), agg.Privacy().Relation, label)
		}
		if got, err := LookupMechanism(info.Name, info.Input); err != nil || got.Name != info.Name || got.Input != info.Input {
			t.Errorf("lookup of %s on %v: %+v, %v", info.Name, info.Input, got, err)
		}
		if len(info.Needs)+len(info.Takes) == 0 || len(info.Example) == 0 {
			t.Errorf("%s on %v: no settings or no example", info.Name, info.Input)
		}
	}
	if _, err := LookupMechanism("darrm", votefile.ManyClasses); err == nil || !strings.Contains(err.Error(), "darrm labels two-class votes, not multi-class votes") {
		t.Errorf("darrm on multi-class votes: %v", err)
	}
	if _, err := LookupMechanism("lnmax", votefile.TwoClass); err == nil || !strings.Contains(err.Error(), "lnmax labels multi-class votes") {
		t.Errorf("lnmax on two-class votes: %v", err)
	}
	if s := (provenance.Settings{Sigma2: f(1)}); !settingSigma2.statedIn(s) || settingSigma1.statedIn(s) || settingTargetDelta.statedIn(s) {
		t.Error("Setting.statedIn")
	}
}

// TestAccounting: the limit a budget sets (none without one, none when
// the teachers' cap is within it), and totals capped by the cap.
func TestAccounting(t *testing.T) {
	step := Privacy{Spend: accountant.ApproxStep(accountant.Guarantee{Eps: 0.3, Delta: 3e-5}), Relation: accountant.PrivateTeachers}
	capped := provenance.Binding{Ensemble: "e", K: 11, Teachers: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.Fixed, Partition: provenance.SharedData}
	unstated := provenance.Binding{K: 11, Teachers: capped.Teachers, Relation: accountant.PrivateTeachers}
	for _, tc := range []struct {
		name   string
		b      provenance.Binding
		budget *accountant.Guarantee
		limit  int
		cap    bool
	}{
		{"no budget", capped, nil, -1, true},
		{"a budget below the cap", capped, &accountant.Guarantee{Eps: 0.75, Delta: 1e-3}, 2, true},
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

// TestMechanismLists: the lists of names are the registry's, each name
// once in the order registered: the two-class and multi-class ones by
// their input, the ones that sample a gamma by MechanismInfo.Gamma (DaRRM
// in each relation).
func TestMechanismLists(t *testing.T) {
	var two, many, withGamma []provenance.MechanismName
	for _, r := range Registry(nil) {
		if r.Input == votefile.TwoClass {
			two = append(two, r.Name)
		} else {
			many = append(many, r.Name)
		}
		if r.Gamma {
			withGamma = append(withGamma, r.Name)
		}
	}
	for _, tc := range []struct {
		name      string
		got, want []provenance.MechanismName
	}{{"two-class", namesFor(votefile.TwoClass), two}, {"many-class", namesFor(votefile.ManyClasses), many},
		{"gamma", gammaNames(), withGamma}} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if got, want := gammaNames(), []provenance.MechanismName{provenance.DaRRM, provenance.DaRRMOneVote}; !slices.Equal(got, want) {
		t.Errorf("the mechanisms that sample a gamma = %v, want %v", got, want)
	}
}

// TestCheckSettings: a setting given to a mechanism that does not take it
// is named with the mechanisms that do (each once) and their kind of
// votes; a setting needed and not given is asked for unless stated (a
// label file's header) or not one the caller can give.
func TestCheckSettings(t *testing.T) {
	lookup := func(name provenance.MechanismName, in votefile.Input) MechanismInfo {
		info, err := LookupMechanism(name, in)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	givenOf := func(set ...Setting) func(Setting) (bool, bool) {
		return func(s Setting) (bool, bool) { return slices.Contains(set, s), true }
	}
	sigma := 3.0
	rr, conf := lookup(provenance.RR, votefile.TwoClass), lookup(provenance.ConfidentGNMax, votefile.ManyClasses)
	for _, tc := range []struct {
		name   string
		info   MechanismInfo
		given  func(Setting) (bool, bool)
		stated provenance.Settings
		want   *SettingUse
	}{
		{"all taken", rr, givenOf(settingM, settingRRComposition), provenance.Settings{}, nil},
		{"another kind's", rr, givenOf(settingSigma2), provenance.Settings{},
			&SettingUse{Setting: settingSigma2, Takes: rr.Takes, Input: votefile.ManyClasses, TakenBy: []provenance.MechanismName{provenance.GNMax, provenance.ConfidentGNMax}}},
		{"needed", conf, givenOf(settingSigma2, settingSigma1), provenance.Settings{}, &SettingUse{Setting: settingThreshold, Missing: true}},
		{"needed, stated", conf, givenOf(settingSigma1, settingThreshold, settingTargetDelta), provenance.Settings{Sigma2: &sigma}, nil},
		{"needed, not the caller's", conf, func(Setting) (bool, bool) { return false, false }, provenance.Settings{}, nil},
	} {
		got := tc.info.CheckSettings(tc.given, tc.stated)
		switch {
		case (got == nil) != (tc.want == nil):
			t.Errorf("%s: CheckSettings = %+v, want %+v", tc.name, got, tc.want)
		case got == nil:
		case got.Setting != tc.want.Setting || got.Missing != tc.want.Missing || !got.Missing && (got.Input != tc.want.Input || !slices.Equal(got.TakenBy, tc.want.TakenBy)):
			t.Errorf("%s: CheckSettings = %+v, want %+v", tc.name, got, tc.want)
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
	for _, m := range []noisymax.ConfidentGNMax{
		{Sigma2: 1e15, Noise: noisymax.DiscreteNoise},
		{Sigma2: 0.5, Noise: noisymax.DiscreteNoise},
		{Threshold: 200, Sigma1: 1e15, Sigma2: 1e15, Noise: noisymax.DiscreteNoise},
	} {
		g, err := newClassGNMax(m, 250, 2, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		labelers = append(labelers, g)
	}
	for _, scale := range []float64{1e15, 0.02} {
		l, err := newLNMax(noisymax.LNMax{Scale: scale}, 250, 2)
		if err != nil {
			t.Fatal(err)
		}
		labelers = append(labelers, l)
	}
	for _, l := range labelers {
		priv := l.Privacy()
		a, err := newAccounting(ctx, priv, provenance.Binding{K: l.K(), Relation: priv.Relation}, accountant.Composition{Method: accountant.General, DeltaPrime: 1e-5}, &accountant.Guarantee{Eps: 2, Delta: 1e-5})
		if err != nil {
			t.Fatalf("%v: %v", l.Settings(), err)
		}
		for _, n := range []int{1, 400000, accountant.CountLimit} {
			totals := a.Totals(n)
			if len(totals) == 0 {
				t.Errorf("%v, %d labels: no totals", l.Settings(), n)
			}
			for _, x := range totals {
				if x.Err == nil && (math.IsNaN(x.Guarantee.Eps) || x.Guarantee.Eps < 0) {
					t.Errorf("%v, %d labels: %v total %v", l.Settings(), n, x.Method, x.Guarantee)
				}
			}
		}
	}
}

// TestOwnTarget: darrm-one-vote alone has a per-query target of its own.
func TestOwnTarget(t *testing.T) {
	for _, info := range Registry(nil) {
		if info.OwnTarget() != (info.Name == provenance.DaRRMOneVote) {
			t.Errorf("%s on %v: OwnTarget %v", info.Name, info.Input, info.OwnTarget())
		}
	}
}

// gammaNames returns the names of the mechanisms that sample a gamma.
func gammaNames() []provenance.MechanismName {
	var names []provenance.MechanismName
	for _, r := range Registry(func(r MechanismInfo) bool { return r.Gamma }) {
		names = append(names, r.Name)
	}
	return names
}
