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

// TestReleaseTeachers: the teachers' (ε, Δ) of a two-class release, from
// the votes' header checked once (provenance.CheckedHeader.ReleaseTeachers)
// and what the caller states, with the registry's answer of whether a
// mechanism is calibrated to them (Calibrated).
func TestReleaseTeachers(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	hetero := statedMeta(3, 0.2, 1e-6)
	hetero.Teachers = []votefile.TeacherGroup{provenance.StatedTeachers(1, accountant.Guarantee{Eps: 0.2, Delta: 1e-6}), provenance.StatedTeachers(2, accountant.Guarantee{Eps: 0.1, Delta: 1e-5})}
	sgd := provenance.Binding{Ensemble: "sgd", Teachers: provenance.Teachers{K: 3, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(2, votefile.LayoutVotes)
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
		h, err := provenance.CheckHeader(tc.meta)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := h.ReleaseTeachers(provenance.Stated{Eps: tc.eps, Delta: tc.delta, Calibrated: Mechanisms().Calibrated(tc.meta)})
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
		d, err := newPrivateDaRRM(ctx, p, make(gamma.Gamma, k+1), Options{Memo: testMemo})
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
		b, berr := releaseBinding(in, tc.agg, provenance.PartitionUnstated, nil)
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
	return provenance.Binding{Ensemble: "test-ensemble", Teachers: provenance.Teachers{K: k, Each: accountant.Guarantee{Eps: eps, Delta: delta}, Relation: accountant.PrivateTeachers, Kind: provenance.Fixed, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes)
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
		if got := Mechanisms().Calibrated(m); got != tc.want {
			t.Errorf("%d classes, layout %v, %v: calibrated %t, want %t", tc.classes, tc.layout, tc.rel, got, tc.want)
		}
	}
}

// TestReleaseChecksHeaderOnce: Release checks the votes' metadata header
// once (provenance.CheckHeader), for the teachers' guarantee and the
// binding alike, when the caller did not (ReleaseSpec.Header nil); not
// again when the caller did; and refuses a check of another header. The
// votes' Meta turns into a header that fails the check after the reads
// a release may make: a release that reads it once more (checks it twice,
// or again after its caller) fails, and one that does not read it at all
// (checks nothing) labels a header that fails the check.
func TestReleaseChecksHeaderOnce(t *testing.T) {
	head, _ := statedMeta(5, 0.1, 1e-5).AppendHeader(nil, votefile.FormatCSV)
	votes := string(head) + "1,1,1,0,0\n0,0,0,1,1\n"
	open := func(reads int) votefile.Reader {
		in, err := votefile.Open("votes.csv", votefile.Options{In: strings.NewReader(votes)})
		if err != nil {
			t.Fatal(err)
		}
		return &metaReads{Reader: in, left: reads}
	}
	for _, tc := range []struct {
		name     string
		teachers *accountant.Guarantee
		checked  bool // the caller checked the header (ReleaseSpec.Header)
		reads    int  // the reads of Meta before it fails the check
		wantErr  bool
	}{
		{"teachers from the header", nil, false, 1, false},
		{"teachers given", &accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, false, 1, false},
		{"teachers from the header, no check passes", nil, false, 0, true},
		{"teachers given, no check passes", &accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, false, 0, true},
		{"header checked by the caller", nil, true, 1, false},
		{"header checked by the caller, teachers given", &accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, true, 1, false},
	} {
		in := open(tc.reads)
		s := ReleaseSpec{Votes: in, Mechanism: RR{Target: Target{M: 3}}, Teachers: tc.teachers,
			Sink: LabelSink{Stdout: &bytes.Buffer{}, Format: votefile.FormatCSV}, Random: noise.NewSeededSource(1), Options: ReleaseOptions{Experiment: true}}
		if tc.checked {
			h, err := provenance.CheckHeader(in.Meta())
			if err != nil {
				t.Fatal(err)
			}
			s.Header = h
		}
		out, err := Release(context.Background(), s)
		switch {
		case tc.wantErr && err == nil:
			t.Errorf("%s: released %d labels of a header that fails the check", tc.name, out.Result.Released)
		case tc.wantErr && !strings.Contains(err.Error(), `relation "no-such-relation"`):
			t.Errorf("%s: %v, want the header's check refusing its relation", tc.name, err)
		case !tc.wantErr && (err != nil || out.Result.Released != 2):
			t.Errorf("%s: released %d: %v (a second check of the header?)", tc.name, out.Result.Released, err)
		}
	}
	other, err := provenance.CheckHeader(statedMeta(5, 0.1, 1e-5))
	if err != nil {
		t.Fatal(err)
	}
	s := ReleaseSpec{Votes: open(1), Header: other, Mechanism: RR{Target: Target{M: 3}},
		Sink: LabelSink{Stdout: &bytes.Buffer{}, Format: votefile.FormatCSV}, Random: noise.NewSeededSource(1), Options: ReleaseOptions{Experiment: true}}
	var re *ReleaseError
	if _, err := Release(context.Background(), s); !errors.As(err, &re) || re.Step != StepBuild || !strings.Contains(err.Error(), "ReleaseSpec.Header") {
		t.Errorf("the check of another header: %v, want refused at build naming ReleaseSpec.Header", err)
	}
}

// metaReads is votes whose Meta is their header for its first left
// reads, and after those one of the same file that fails the check (its
// relation unknown): the same pointer, so that a CheckedHeader made from
// an earlier read still belongs to these votes.
type metaReads struct {
	votefile.Reader
	left int
}

func (r *metaReads) Meta() *votefile.Meta {
	m := r.Reader.Meta()
	if r.left == 0 {
		m.Relation = "no-such-relation"
	}
	r.left--
	return m
}
