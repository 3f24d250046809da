package provenance

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/votefile"
)

// TestCheck: every parameter a caller states is checked against the
// header, with and without one, and the binding is the header's (the
// teachers' common bound, or a calibration of non-private teachers) or,
// without a header, what is stated.
func TestCheck(t *testing.T) {
	// As ensemble's registry answers: two-class GNMax is calibrated to a
	// teachers' guarantee, no multi-class mechanism.
	twoClass := func(m *votefile.Meta) bool { return m != nil && m.Input() == votefile.TwoClass }
	f := func(x float64) *float64 { return &x }
	r := func(x accountant.Relation) *accountant.Relation { return &x }
	private := statedMeta(5, 1, 1e-5)
	hetero := statedMeta(3, 0.2, 1e-6)
	hetero.Teachers = []votefile.TeacherGroup{StatedTeachers(1, accountant.Guarantee{Eps: 0.2, Delta: 1e-6}), StatedTeachers(2, accountant.Guarantee{Eps: 0.1, Delta: 1e-5})}
	sgd := Binding{Ensemble: "sgd", Teachers: Teachers{K: 3, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash}}.Header(2, votefile.LayoutVotes)
	pate := Binding{Ensemble: "pate", Teachers: Teachers{K: 4, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash}}.Header(3, votefile.LayoutCounts)
	oneVote := Binding{Ensemble: "test-ensemble", Teachers: Teachers{K: 4, Each: accountant.Guarantee{Eps: 0.5}, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash}}.Header(3, votefile.LayoutCounts)
	for _, m := range []*votefile.Meta{private, hetero, sgd, pate, oneVote} {
		if err := m.Validate(); err != nil {
			t.Fatalf("fixture %s: %v", m.Ensemble, err)
		}
		if _, err := Check(m, Stated{}); err != nil {
			t.Fatalf("fixture %s: %v", m.Ensemble, err)
		}
	}
	privateB := Binding{Ensemble: "test-ensemble", Teachers: Teachers{K: 5, Each: accountant.Guarantee{Eps: 1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: Fixed, Partition: SharedData}}
	sgdB := Binding{Ensemble: "sgd", Teachers: Teachers{K: 3, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash}}
	pateB := Binding{Ensemble: "pate", Teachers: Teachers{K: 4, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash}}
	all := Stated{Ensemble: "test-ensemble", K: 5, Classes: 2, Relation: r(accountant.PrivateTeachers), Kind: Fixed, Partition: SharedData, Eps: f(1), Delta: f(1e-5)}
	for _, tc := range []struct {
		name   string
		meta   *votefile.Meta
		s      Stated
		want   Binding
		field  string // of the *TeachersError, "" for none
		header string // its Header, when field is set
	}{
		{"no header, nothing stated", nil, Stated{}, Binding{}, "", ""},
		{"no header: what is stated", nil, Stated{Ensemble: "e", K: 7, Classes: 2, Relation: r(accountant.OneVote), Kind: PerQuery, Partition: KeyedHash, Eps: f(0.5), Delta: f(0)},
			Binding{Ensemble: "e", Teachers: Teachers{K: 7, Each: accountant.Guarantee{Eps: 0.5}, Relation: accountant.OneVote, Kind: PerQuery, Partition: KeyedHash}}, "", ""},
		{"no header, non-private", nil, Stated{K: 4, Relation: r(accountant.OneVote), NonPrivate: true}, Binding{Teachers: Teachers{K: 4, Relation: accountant.OneVote}}, "", ""},
		{"header, nothing stated", private, Stated{}, privateB, "", ""},
		{"header, every parameter repeated", private, all, privateB, "", ""},
		{"ensemble", private, Stated{Ensemble: "another"}, Binding{}, "ensemble", "test-ensemble"},
		{"K", private, Stated{K: 7}, Binding{}, "K", "5"},
		{"classes", private, Stated{Classes: 3}, Binding{}, "classes", "2"},
		{"relation one-vote on private teachers", private, Stated{Relation: r(accountant.OneVote)}, Binding{}, "relation", "private-teachers"},
		{"relation private-teachers on one-vote teachers", sgd, Stated{Relation: r(accountant.PrivateTeachers)}, Binding{}, "relation", "one-vote"},
		{"kind", private, Stated{Kind: PerQuery}, Binding{}, "kind", "fixed"},
		{"partition", private, Stated{Partition: KeyedHash}, Binding{}, "partition", "shared"},
		{"eps", private, Stated{Eps: f(0.5)}, Binding{}, "eps", "1"},
		{"Delta", private, Stated{Eps: f(1), Delta: f(0)}, Binding{}, "Delta", "1e-05"},
		{"private teachers stated non-private", private, Stated{NonPrivate: true}, Binding{}, "eps", "1"},
		{"different teachers: their common bound", hetero, Stated{Eps: f(0.2), Delta: f(1e-5)},
			Binding{Ensemble: "test-ensemble", Teachers: Teachers{K: 3, Each: accountant.Guarantee{Eps: 0.2, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: Fixed, Partition: SharedData}}, "", ""},
		{"different teachers: one teacher's eps", hetero, Stated{Eps: f(0.1)}, Binding{}, "eps", "0.2"},
		{"different teachers: one teacher's Delta", hetero, Stated{Delta: f(1e-6)}, Binding{}, "Delta", "1e-05"},
		{"non-private two-class, nothing stated", sgd, Stated{Relation: r(accountant.OneVote)}, sgdB, "", ""},
		{"non-private stated non-private", sgd, Stated{NonPrivate: true}, sgdB, "", ""},
		{"non-private two-class, a calibration", sgd, Stated{Eps: f(0.1), Delta: f(1e-5)},
			Binding{Ensemble: "sgd", Teachers: Teachers{K: 3, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash}}, "", ""},
		{"non-private two-class, eps alone", sgd, Stated{Eps: f(0.1)}, Binding{}, "Delta", noGuarantee},
		{"non-private two-class, Delta alone", sgd, Stated{Delta: f(1e-5)}, Binding{}, "eps", noGuarantee},
		{"non-private multi-class, nothing stated", pate, Stated{K: 4, Classes: 3, Relation: r(accountant.OneVote)}, pateB, "", ""},
		{"non-private multi-class, eps", pate, Stated{Eps: f(0.1), Delta: f(1e-5)}, Binding{}, "eps", noGuarantee},
		{"non-private multi-class, Delta", pate, Stated{Delta: f(1e-5)}, Binding{}, "Delta", noGuarantee},
		{"one-vote private teachers: their guarantee", oneVote, Stated{Relation: r(accountant.OneVote)},
			Binding{Ensemble: "test-ensemble", Teachers: Teachers{K: 4, Each: accountant.Guarantee{Eps: 0.5}, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash}}, "", ""},
		{"one-vote private teachers, another eps", oneVote, Stated{Eps: f(0.1)}, Binding{}, "eps", "0.5"},
	} {
		tc.s.Calibrated = twoClass(tc.meta)
		got, err := Check(tc.meta, tc.s)
		var te *TeachersError
		switch {
		case tc.field == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		case tc.field != "" && (!errors.As(err, &te) || te.Field != tc.field || te.Header != tc.header):
			t.Errorf("%s: %+v, %v; want a *TeachersError on %s, header %s", tc.name, got, err, tc.field, tc.header)
		}
	}
	// The error names the field, both values, who gave one and the rule.
	_, err := Check(private, Stated{By: "the gnmax mechanism", Relation: r(accountant.OneVote)})
	want := "the teachers' relation: one-vote given by the gnmax mechanism, but the vote file's metadata header states private-teachers: the one-vote relation needs"
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "leave it out") {
		t.Errorf("error %q, want it to start %q", err, want)
	}
	_, err = Check(private, Stated{K: 7})
	if want := "the ensemble's K: 7 given, but the vote file's metadata header states 5: a value given must equal the header's (leave it out to use the header's)"; err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestBindingEnsemble: a binding's ensemble name beyond its bound is
// refused, quoted cut: a ledger's header states it, and may be forged.
func TestBindingEnsemble(t *testing.T) {
	long := strings.Repeat("e", votefile.MaxEnsembleID+1)
	b := Binding{Ensemble: long, Teachers: Teachers{K: 3, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Kind: Fixed, Partition: SharedData}}
	err := b.Validate()
	if want := `ensemble = "` + long[:32] + `"...: must name the teacher ensemble, in at most 256 bytes`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("an ensemble of %d bytes: %v, want %q", len(long), err, want)
	}
}

// TestPartitionRules: the one table of which partition keeps which
// relation has a row for every relation and partition, the one-vote
// relation holds on keyed-hash shares only, and every check consults it:
// a header (Check), a binding a ledger is to hold
// (Binding.Validate), what a caller asserts of votes without a header
// (Check), and teachers a plan states (Teachers.Holds).
func TestPartitionRules(t *testing.T) {
	rules := rulesOfPartitions()
	if len(rules) != 2*3 {
		t.Fatalf("%d rules, want one per relation and partition (6)", len(rules))
	}
	r := func(x accountant.Relation) *accountant.Relation { return &x }
	for _, rel := range []accountant.Relation{accountant.PrivateTeachers, accountant.OneVote} {
		for _, p := range []Partition{KeyedHash, FilePosition, SharedData} {
			rule, ok := partitionRuleOf(rel, p)
			want := rel == accountant.PrivateTeachers || p == KeyedHash
			if !ok || rule.Holds != want || rule.Why == "" {
				t.Errorf("%v on %v: %+v, %v; want holds = %v with a reason", rel, p, rule, ok, want)
			}
			meta := statedMeta(3, 0.1, 1e-5)
			meta.Relation, meta.Partition = rel.String(), p.String()
			if _, err := Check(meta, Stated{}); (err == nil) != want {
				t.Errorf("%v on %v: header: %v", rel, p, err)
			}
			b := Binding{Ensemble: "e", Teachers: Teachers{K: 3, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: rel, Kind: Fixed, Partition: p}}
			if err := b.Validate(); (err == nil) != want {
				t.Errorf("%v on %v: binding: %v", rel, p, err)
			}
			var se *param.SettingError
			for _, k := range []Kind{Fixed, PerQuery, KindUnstated} {
				tt := b.Teachers
				tt.Kind = k
				if err := tt.Holds(); (err == nil) != want || err != nil && (!errors.As(err, &se) || se.Name != "partition" || se.Value != p.String() || se.Rule != rule.Why) {
					t.Errorf("%v on %v, kind %v: teachers: %v", rel, p, k, err)
				}
			}
			_, err := Check(nil, Stated{K: 3, Relation: r(rel), Partition: p})
			var te *TeachersError
			if (err == nil) != want || (err != nil && (!errors.As(err, &te) || te.Field != "partition" || !strings.Contains(err.Error(), rule.Why))) {
				t.Errorf("%v on %v: asserted without a header: %v", rel, p, err)
			}
		}
	}
}

// TestPartitionRulesDocumented: the table in docs/aggregate.md is the
// table of rulesOfPartitions, row for row.
func TestPartitionRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/aggregate.md")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| relation | partition | holds | why |\n|---|---|---|---|\n")
	for _, r := range rulesOfPartitions() {
		holds := "no"
		if r.Holds {
			holds = "yes"
		}
		fmt.Fprintf(&b, "| `%v` | `%v` | %s | %s |\n", r.Relation, r.Partition, holds, r.Why)
	}
	if !strings.Contains(string(doc), b.String()) {
		t.Errorf("docs/aggregate.md does not hold the table of rulesOfPartitions; want:\n%s", b.String())
	}
}
