package ensemble

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noise"
)

func TestReleaseTeachers(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	hetero := statedMeta(3, 0.2, 1e-6)
	hetero.Teachers = []TeacherGroup{{Count: 1, Guarantee: accountant.Guarantee{Eps: 0.2, Delta: 1e-6}}, {Count: 2, Guarantee: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}}}
	sgd := &VoteMeta{Ensemble: "sgd", K: 3, Classes: 2, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash, Teachers: []TeacherGroup{{Count: 3, Origin: NonPrivate}}}
	for _, tc := range []struct {
		name       string
		meta       *VoteMeta
		eps, delta *float64
		want       TeacherGuarantee
		field      string // of the *TeachersError, "" for none
	}{
		{"header", statedMeta(3, 1, 1e-4), nil, nil, TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-4}, Source: FromHeader}, ""},
		{"header, repeated", statedMeta(3, 1, 1e-4), f(1), f(1e-4), TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-4}, Source: FromHeader}, ""},
		{"header, eps contradicted", statedMeta(3, 1, 1e-4), f(0.1), nil, TeacherGuarantee{}, "eps"},
		{"header, Delta contradicted", statedMeta(3, 1, 1e-4), nil, f(0), TeacherGuarantee{}, "Delta"},
		{"different teachers", hetero, nil, nil, TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: 0.2, Delta: 1e-5}, Source: FromHeader, Heterogeneous: true}, ""},
		{"different teachers, one of them given", hetero, f(0.1), nil, TeacherGuarantee{}, "eps"},
		{"no header", nil, f(0.5), f(0), TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: 0.5}, Source: FromFlags}, ""},
		{"no header, nothing given", nil, nil, nil, TeacherGuarantee{}, "eps and Delta"},
		{"no header, no Delta", nil, f(0.5), nil, TeacherGuarantee{}, "Delta"},
		{"no header, no eps", nil, nil, f(0), TeacherGuarantee{}, "eps"},
		{"non-private", sgd, f(0.5), f(1e-5), TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: 0.5, Delta: 1e-5}, Source: FromFlags}, ""},
		{"non-private, nothing given", sgd, nil, nil, TeacherGuarantee{}, "eps and Delta"},
	} {
		got, err := ReleaseTeachers(tc.meta, tc.eps, tc.delta)
		var te *TeachersError
		if tc.field == "" && (err != nil || got != tc.want) || tc.field != "" && (!errors.As(err, &te) || te.Field != tc.field) {
			t.Errorf("%s: %+v, %v; want %+v, error field %q", tc.name, got, err, tc.want, tc.field)
		}
	}
}

// TestReleaseChecksHeader: ReleaseTo refuses, before any label, an
// aggregator built for other teachers, another K or another relation than
// the vote file's header states (Check).
func TestReleaseChecksHeader(t *testing.T) {
	ctx := context.Background()
	head, _ := statedMeta(5, 1, 1e-5).AppendHeader(nil, FormatCSV)
	votes := string(head) + "1,1,1,0,0\n0,0,0,1,1\n"
	at := func(eps float64, k int) Aggregator {
		p := problem(k, 1, 1e-5)
		p.Eps = eps
		d, err := NewDaRRM(ctx, p, make(gamma.Gamma, k+1), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	gn, err := NewGNMax(problem(5, 1, 1e-5), accountant.GNMaxGrid)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		agg   Aggregator
		field string
	}{{at(1, 5), ""}, {at(0.1, 5), "eps"}, {gn, "relation"}, {at(1, 3), "K"}} {
		in, err := NewVoteReader(strings.NewReader(votes), "votes", ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, berr := ReleaseBinding(in, tc.agg)
		var out bytes.Buffer
		res, err := ReleaseTo(ctx, in, tc.agg, noise.NewSeededSource(1), LabelSink{Stdout: &out, Format: FormatCSV}, -1, ReleaseOptions{Experiment: true})
		var te *TeachersError
		if tc.field == "" {
			want := Binding{Ensemble: "test-ensemble", K: 5, Teachers: accountant.Guarantee{Eps: 1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: Fixed, Partition: SharedData}
			if err != nil || berr != nil || res.Answered != 2 || b != want {
				t.Errorf("eps %v: %v, %v, %d answered, binding %+v", tc.agg.Privacy().Teachers, err, berr, res.Answered, b)
			}
			continue
		}
		if !errors.As(err, &te) || te.Field != tc.field || !errors.As(berr, &te) || res.Answered != 0 || out.Len() != 0 {
			t.Errorf("%s aggregator for %v: %v, %v, %d answered", tc.agg.Name(), tc.agg.Privacy().Teachers, err, berr, res.Answered)
		}
	}
}

// TestCheck: every parameter a caller states is checked against the
// header, with and without one, and the binding is the header's (the
// teachers' common bound, or a calibration of non-private teachers) or,
// without a header, what is stated.
func TestCheck(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	r := func(x accountant.Relation) *accountant.Relation { return &x }
	private := statedMeta(5, 1, 1e-5)
	hetero := statedMeta(3, 0.2, 1e-6)
	hetero.Teachers = []TeacherGroup{{Count: 1, Guarantee: accountant.Guarantee{Eps: 0.2, Delta: 1e-6}}, {Count: 2, Guarantee: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}}}
	sgd := &VoteMeta{Ensemble: "sgd", K: 3, Classes: 2, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash, Teachers: []TeacherGroup{{Count: 3, Origin: NonPrivate}}}
	pate := &VoteMeta{Ensemble: "pate", K: 4, Classes: 3, Layout: LayoutCounts, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash, Teachers: []TeacherGroup{{Count: 4, Origin: NonPrivate}}}
	oneVote := statedMeta(4, 0.5, 0)
	oneVote.Classes, oneVote.Layout, oneVote.Relation, oneVote.Partition = 3, LayoutCounts, accountant.OneVote, KeyedHash
	for _, m := range []*VoteMeta{private, hetero, sgd, pate, oneVote} {
		if err := m.Validate(); err != nil {
			t.Fatalf("fixture %s: %v", m.Ensemble, err)
		}
	}
	privateB := Binding{Ensemble: "test-ensemble", K: 5, Teachers: accountant.Guarantee{Eps: 1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: Fixed, Partition: SharedData}
	sgdB := Binding{Ensemble: "sgd", K: 3, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash}
	pateB := Binding{Ensemble: "pate", K: 4, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash}
	all := Stated{Ensemble: "test-ensemble", K: 5, Classes: 2, Relation: r(accountant.PrivateTeachers), Kind: Fixed, Partition: SharedData, Eps: f(1), Delta: f(1e-5)}
	for _, tc := range []struct {
		name   string
		meta   *VoteMeta
		s      Stated
		want   Binding
		field  string // of the *TeachersError, "" for none
		header string // its Header, when field is set
	}{
		{"no header, nothing stated", nil, Stated{}, Binding{}, "", ""},
		{"no header: what is stated", nil, Stated{Ensemble: "e", K: 7, Classes: 2, Relation: r(accountant.OneVote), Kind: PerQuery, Partition: KeyedHash, Eps: f(0.5), Delta: f(0)},
			Binding{Ensemble: "e", K: 7, Teachers: accountant.Guarantee{Eps: 0.5}, Relation: accountant.OneVote, Kind: PerQuery, Partition: KeyedHash}, "", ""},
		{"no header, non-private", nil, Stated{K: 4, Relation: r(accountant.OneVote), NonPrivate: true}, Binding{K: 4, Relation: accountant.OneVote}, "", ""},
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
			Binding{Ensemble: "test-ensemble", K: 3, Teachers: accountant.Guarantee{Eps: 0.2, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: Fixed, Partition: SharedData}, "", ""},
		{"different teachers: one teacher's eps", hetero, Stated{Eps: f(0.1)}, Binding{}, "eps", "0.2"},
		{"different teachers: one teacher's Delta", hetero, Stated{Delta: f(1e-6)}, Binding{}, "Delta", "1e-05"},
		{"non-private two-class, nothing stated", sgd, Stated{Relation: r(accountant.OneVote)}, sgdB, "", ""},
		{"non-private stated non-private", sgd, Stated{NonPrivate: true}, sgdB, "", ""},
		{"non-private two-class, a calibration", sgd, Stated{Eps: f(0.1), Delta: f(1e-5)},
			Binding{Ensemble: "sgd", K: 3, Teachers: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash}, "", ""},
		{"non-private two-class, eps alone", sgd, Stated{Eps: f(0.1)}, Binding{}, "Delta", noGuarantee},
		{"non-private two-class, Delta alone", sgd, Stated{Delta: f(1e-5)}, Binding{}, "eps", noGuarantee},
		{"non-private multi-class, nothing stated", pate, Stated{K: 4, Classes: 3, Relation: r(accountant.OneVote)}, pateB, "", ""},
		{"non-private multi-class, eps", pate, Stated{Eps: f(0.1), Delta: f(1e-5)}, Binding{}, "eps", noGuarantee},
		{"non-private multi-class, Delta", pate, Stated{Delta: f(1e-5)}, Binding{}, "Delta", noGuarantee},
		{"one-vote private teachers: their guarantee", oneVote, Stated{Relation: r(accountant.OneVote)},
			Binding{Ensemble: "test-ensemble", K: 4, Teachers: accountant.Guarantee{Eps: 0.5}, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash}, "", ""},
		{"one-vote private teachers, another eps", oneVote, Stated{Eps: f(0.1)}, Binding{}, "eps", "0.5"},
	} {
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
