package ensemble

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/gamma"
)

func TestReleaseTeachers(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	hetero := statedMeta(3, 0.2, 1e-6)
	hetero.Teachers = []TeacherGroup{{Count: 1, Guarantee: accountant.Guarantee{Eps: 0.2, Delta: 1e-6}}, {Count: 2, Guarantee: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}}}
	sgd := &VoteMeta{Ensemble: "sgd", K: 3, Classes: 2, Relation: OneVote, Kind: Fixed, Partition: KeyedHash, Teachers: []TeacherGroup{{Count: 3, Origin: NonPrivate}}}
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
// aggregator built for other teachers or another relation than the vote
// file's header states.
func TestReleaseChecksHeader(t *testing.T) {
	ctx := context.Background()
	head, _ := statedMeta(5, 1, 1e-5).AppendHeader(nil, FormatCSV)
	votes := string(head) + "1,1,1,0,0\n0,0,0,1,1\n"
	at := func(eps float64) Aggregator {
		p := problem(5, 1, 1e-5)
		p.Eps = eps
		d, err := NewDaRRM(ctx, p, make(gamma.Gamma, 6), Options{})
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
	}{{at(1), ""}, {at(0.1), "eps"}, {gn, "relation"}} {
		in, err := NewVoteReader(strings.NewReader(votes), "votes", ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, berr := ReleaseBinding(in, tc.agg)
		var out bytes.Buffer
		res, err := ReleaseTo(ctx, in, tc.agg, NewSeededSource(1), LabelSink{Stdout: &out, Format: FormatCSV}, -1, ReleaseOptions{Experiment: true})
		var te *TeachersError
		if tc.field == "" {
			want := Binding{Ensemble: "test-ensemble", K: 5, Teachers: accountant.Guarantee{Eps: 1, Delta: 1e-5}, Relation: PrivateTeachers, Kind: Fixed, Partition: SharedData}
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
