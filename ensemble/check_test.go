package ensemble

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func TestReleaseTeachers(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	hetero := statedMeta(3, 0.2, 1e-6)
	hetero.Teachers = []votefile.TeacherGroup{provenance.StatedTeachers(1, accountant.Guarantee{Eps: 0.2, Delta: 1e-6}), provenance.StatedTeachers(2, accountant.Guarantee{Eps: 0.1, Delta: 1e-5})}
	sgd := provenance.Header(provenance.Binding{Ensemble: "sgd", Teachers: provenance.Teachers{K: 3, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}, 2, votefile.LayoutVotes)
	for _, tc := range []struct {
		name       string
		meta       *votefile.Meta
		eps, delta *float64
		want       provenance.TeacherGuarantee
		field      string // of the *TeachersError, "" for none
	}{
		{"header", statedMeta(3, 1, 1e-4), nil, nil, provenance.TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-4}}, ""},
		{"header, repeated", statedMeta(3, 1, 1e-4), f(1), f(1e-4), provenance.TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-4}}, ""},
		{"header, eps contradicted", statedMeta(3, 1, 1e-4), f(0.1), nil, provenance.TeacherGuarantee{}, "eps"},
		{"header, Delta contradicted", statedMeta(3, 1, 1e-4), nil, f(0), provenance.TeacherGuarantee{}, "Delta"},
		{"different teachers", hetero, nil, nil, provenance.TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: 0.2, Delta: 1e-5}, Heterogeneous: true}, ""},
		{"different teachers, one of them given", hetero, f(0.1), nil, provenance.TeacherGuarantee{}, "eps"},
		{"no header", nil, f(0.5), f(0), provenance.TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: 0.5}, FromFlags: true}, ""},
		{"no header, nothing given", nil, nil, nil, provenance.TeacherGuarantee{}, "eps and Delta"},
		{"no header, no Delta", nil, f(0.5), nil, provenance.TeacherGuarantee{}, "Delta"},
		{"no header, no eps", nil, nil, f(0), provenance.TeacherGuarantee{}, "eps"},
		{"non-private", sgd, f(0.5), f(1e-5), provenance.TeacherGuarantee{Guarantee: accountant.Guarantee{Eps: 0.5, Delta: 1e-5}, FromFlags: true}, ""},
		{"non-private, nothing given", sgd, nil, nil, provenance.TeacherGuarantee{}, "eps and Delta"},
	} {
		got, err := ReleaseTeachers(tc.meta, tc.eps, tc.delta)
		var te *provenance.TeachersError
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
	head, _ := statedMeta(5, 1, 1e-5).AppendHeader(nil, votefile.FormatCSV)
	votes := string(head) + "1,1,1,0,0\n0,0,0,1,1\n"
	at := func(eps float64, k int) Aggregator {
		p := constraints.New(k, 1, 0.1, 1e-5)
		p.Eps = eps
		d, err := newPrivateDaRRM(ctx, p, make(gamma.Gamma, k+1), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	gn, err := newGNMax(constraints.New(5, 1, 0.1, 1e-5), noisymax.GNMaxGrid)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		agg   Aggregator
		field string
	}{{at(1, 5), ""}, {at(0.1, 5), "eps"}, {gn, "relation"}, {at(1, 3), "K"}} {
		in, err := votefile.Open("votes", votefile.Options{In: strings.NewReader(votes)})
		if err != nil {
			t.Fatal(err)
		}
		b, berr := releaseBinding(in, tc.agg, provenance.PartitionUnstated)
		var out bytes.Buffer
		res, err := ReleaseTo(ctx, in, tc.agg, noise.NewSeededSource(1), LabelSink{Stdout: &out, Format: votefile.FormatCSV}, -1, ReleaseOptions{Experiment: true})
		var te *provenance.TeachersError
		if tc.field == "" {
			want := provenance.Binding{Ensemble: "test-ensemble", Teachers: provenance.Teachers{K: 5, Each: accountant.Guarantee{Eps: 1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.Fixed, Partition: provenance.SharedData}}
			if err != nil || berr != nil || res.Released != 2 || b != want {
				t.Errorf("eps %v: %v, %v, %d answered, binding %+v", tc.agg.Privacy().Teachers, err, berr, res.Released, b)
			}
			continue
		}
		if !errors.As(err, &te) || te.Field != tc.field || !errors.As(berr, &te) || res.Released != 0 || out.Len() != 0 {
			t.Errorf("%s aggregator for %v: %v, %v, %d answered", tc.agg.Name(), tc.agg.Privacy().Teachers, err, berr, res.Released)
		}
	}
}

// statedMeta is the header of k teachers, each (eps, delta)-DP on shared
// data, voting on two classes.
func statedMeta(k int, eps, delta float64) *votefile.Meta {
	return provenance.Header(provenance.Binding{Ensemble: "test-ensemble", Teachers: provenance.Teachers{K: k, Each: accountant.Guarantee{Eps: eps, Delta: delta}, Relation: accountant.PrivateTeachers, Kind: provenance.Fixed, Partition: provenance.SharedData}}, 2, votefile.LayoutVotes)
}

// TestCalibrated: the registry calibrates two-class GNMax, in the one-vote
// relation, to a teachers' guarantee, and no multi-class mechanism, so
// provenance.Check takes a guarantee stated for non-private teachers of
// two-class votes only.
func TestCalibrated(t *testing.T) {
	for _, tc := range []struct {
		classes int
		layout  votefile.Layout
		rel     accountant.Relation
		want    bool
	}{
		{2, votefile.LayoutVotes, accountant.OneVote, true},
		{2, votefile.LayoutVotes, accountant.PrivateTeachers, true},
		{3, votefile.LayoutCounts, accountant.OneVote, false},
		{2, votefile.LayoutCounts, accountant.OneVote, false},
	} {
		m := &votefile.Meta{Classes: tc.classes, Layout: tc.layout, Relation: tc.rel.String()}
		if got := Calibrated(m); got != tc.want {
			t.Errorf("%d classes, layout %v, %v: calibrated %t, want %t", tc.classes, tc.layout, tc.rel, got, tc.want)
		}
	}
}
