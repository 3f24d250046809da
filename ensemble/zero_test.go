package ensemble

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// zeroMeta are the headers of the votes of TestReleaseSpecZeroValues: 11
// fixed teachers each (0.1, 1e-5)-DP voting 0/1, and 250 non-private ones
// whose votes are counted over 10 classes.
var zeroMeta = map[votefile.Input]*votefile.Meta{
	votefile.TwoClass: {Ensemble: "zero-two", K: 11, Classes: 2, Layout: votefile.LayoutVotes, Relation: "private-teachers",
		Kind: "fixed", Partition: "keyed-hash", Teachers: []votefile.TeacherGroup{{Count: 11, Eps: ptr(0.1), Delta: ptr(1e-5), Source: votefile.TeacherSource{Method: "stated"}}}},
	votefile.ManyClasses: {Ensemble: "zero-many", K: 250, Classes: 10, Layout: votefile.LayoutCounts, Relation: "one-vote",
		Kind: "fixed", Partition: "keyed-hash", Teachers: []votefile.TeacherGroup{{Count: 250, Source: votefile.TeacherSource{Method: "none"}}}},
}

var zeroRows = map[votefile.Input][][]int{
	votefile.TwoClass:    {{1, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1}, {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}},
	votefile.ManyClasses: {{240, 5, 5, 0, 0, 0, 0, 0, 0, 0}, {60, 40, 30, 30, 20, 20, 20, 10, 10, 10}},
}

// oneVote is the header of 11 non-private teachers voting 0/1.
var oneVote = &votefile.Meta{Ensemble: "zero-one-vote", K: 11, Classes: 2, Layout: votefile.LayoutVotes, Relation: "one-vote",
	Kind: "fixed", Partition: "keyed-hash", Teachers: []votefile.TeacherGroup{{Count: 11, Source: votefile.TeacherSource{Method: "none"}}}}

func mustRows(t *testing.T, rows [][]int, meta *votefile.Meta) votefile.Reader {
	t.Helper()
	in, err := votefile.ReadRows(rows, meta)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// zeroSpec is a complete release by mechanism name of the votes of
// input, every field given, its labels into out.
func zeroSpec(t *testing.T, name provenance.MechanismName, input votefile.Input, out *bytes.Buffer) ReleaseSpec {
	t.Helper()
	s := ReleaseSpec{
		Votes:      mustRows(t, zeroRows[input], zeroMeta[input]),
		DeltaPrime: 1e-5,
		Sink:       LabelSink{Stdout: out, Format: votefile.FormatCSV},
		Random:     noise.NewSeededSource(1),
		Options:    ReleaseOptions{Experiment: true},
	}
	target := built(constraints.New(11, 3, 0.1, 1e-5))
	switch name {
	case DaRRM{}.Name():
		g, err := gamma.Sub(11, 3)
		if err != nil {
			t.Fatal(err)
		}
		s.Mechanism = DaRRM{Target: target, Gamma: optimal.Source{Given: g, Name: "gamma_Sub"}}
	case Subsample{}.Name():
		s.Mechanism = Subsample{Target: target}
	case RR{}.Name():
		s.Mechanism = RR{Target: target, Composition: accountant.Composition{Method: accountant.RRComposition(1e-5), DeltaPrime: accountant.DefaultDeltaPrime}}
	case GNMax{}.Name():
		s.Mechanism = GNMax{Target: target, Search: noisymax.GNMaxGrid}
	case ConfidentGNMax{}.Name():
		s.Mechanism = ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: GNMax{Target: Target{Delta: 1e-5}, Sigma2: 40, Noise: noisymax.DiscreteNoise}}
	case LNMax{}.Name():
		s.Mechanism = LNMax{Scale: 20}
	}
	if input == votefile.TwoClass {
		s.Teachers = &accountant.Guarantee{Eps: 0.1, Delta: 1e-5}
	}
	return s
}

// TestReleaseSpecZeroValues: every field of a ReleaseSpec, and of the
// mechanisms it holds, left at its zero value either means the default
// its comment documents, and the release runs, or is refused by an error
// that names the field.
func TestReleaseSpecZeroValues(t *testing.T) {
	ctx := context.Background()
	two, many := votefile.TwoClass, votefile.ManyClasses
	darrm := func(edit func(*DaRRM)) func(*ReleaseSpec) {
		return func(s *ReleaseSpec) {
			m := s.Mechanism.(DaRRM)
			edit(&m)
			s.Mechanism = m
		}
	}
	conf := func(edit func(*ConfidentGNMax)) func(*ReleaseSpec) {
		return func(s *ReleaseSpec) {
			m := s.Mechanism.(ConfidentGNMax)
			edit(&m)
			s.Mechanism = m
		}
	}
	rr := func(edit func(*RR)) func(*ReleaseSpec) {
		return func(s *ReleaseSpec) {
			m := s.Mechanism.(RR)
			edit(&m)
			s.Mechanism = m
		}
	}
	sub := func(edit func(*Subsample)) func(*ReleaseSpec) {
		return func(s *ReleaseSpec) {
			m := s.Mechanism.(Subsample)
			edit(&m)
			s.Mechanism = m
		}
	}
	for _, tc := range []struct {
		field string
		name  provenance.MechanismName
		input votefile.Input
		zero  func(s *ReleaseSpec)
		want  string // "" when the zero value is a default
		check func(t *testing.T, out Released, labels string)
	}{
		{field: "Votes", name: Subsample{}.Name(), input: two, zero: func(s *ReleaseSpec) { s.Votes = nil }, want: "ReleaseSpec.Votes"},
		{field: "Mechanism", name: Subsample{}.Name(), input: two, zero: func(s *ReleaseSpec) { s.Mechanism = nil }, want: "ReleaseSpec.Mechanism"},
		{field: "Mechanism.Gamma.Given", name: DaRRM{}.Name(), input: two, zero: darrm(func(m *DaRRM) {
			m.Gamma = optimal.Source{Prior: gamma.UniformPrior()}
		}), check: func(t *testing.T, out Released, _ string) {
			if out.Label != "DaRRM with gamma_opt (prior uniform), solved now" {
				t.Errorf("label %q: want gamma_opt solved", out.Label)
			}
		}},
		{field: "Mechanism.Gamma.Name", name: DaRRM{}.Name(), input: two, zero: darrm(func(m *DaRRM) {
			src := m.Gamma.(optimal.Source)
			src.Name = ""
			m.Gamma = src
		}),
			check: func(t *testing.T, out Released, _ string) {
				if out.Label != "DaRRM with a gamma given" {
					t.Errorf("label %q", out.Label)
				}
			}},
		{field: "Mechanism.Composition", name: RR{}.Name(), input: two, zero: rr(func(m *RR) { m.Composition = accountant.Composition{} }),
			check: func(t *testing.T, out Released, _ string) {
				if !strings.Contains(out.Label, "general composition") {
					t.Errorf("label %q: want the paper's composition", out.Label)
				}
			}},
		{field: "Mechanism.Composition.DeltaPrime", name: RR{}.Name(), input: two, zero: rr(func(m *RR) { m.Composition.DeltaPrime = 0 })},
		{field: "Mechanism.Sigma2", name: ConfidentGNMax{}.Name(), input: many, zero: conf(func(m *ConfidentGNMax) { m.Sigma2 = 0 }), want: "ReleaseSpec.Mechanism.Sigma2"},
		{field: "Mechanism.Sigma1", name: ConfidentGNMax{}.Name(), input: many, zero: conf(func(m *ConfidentGNMax) { m.Sigma1 = 0 }), want: "ReleaseSpec.Mechanism.Sigma1"},
		{field: "Mechanism.Noise", name: ConfidentGNMax{}.Name(), input: many, zero: conf(func(m *ConfidentGNMax) { m.Noise = 0 })},
		{field: "Mechanism.Scale", name: LNMax{}.Name(), input: many, zero: func(s *ReleaseSpec) { s.Mechanism = LNMax{} }, want: "ReleaseSpec.Mechanism.Scale"},
		{field: "Mechanism.M", name: Subsample{}.Name(), input: two, zero: sub(func(m *Subsample) { m.M = 0 }), want: "ReleaseSpec.Mechanism.M"},
		{field: "Teachers", name: Subsample{}.Name(), input: two, zero: func(s *ReleaseSpec) { s.Teachers = nil },
			check: func(t *testing.T, out Released, _ string) {
				if out.Aggregator.Privacy().Teachers != (accountant.Guarantee{Eps: 0.1, Delta: 1e-5}) {
					t.Errorf("teachers %v: want the header's", out.Aggregator.Privacy().Teachers)
				}
			}},
		{field: "Teachers.Delta", name: Subsample{}.Name(), input: two, zero: func(s *ReleaseSpec) { s.Teachers.Delta = 0 }, want: "the teachers' Delta: 0 given by the subsample mechanism, but the vote file's metadata header states 1e-05"},
		{field: "Mechanism.Threshold", name: ConfidentGNMax{}.Name(), input: many, zero: conf(func(m *ConfidentGNMax) { m.Threshold = 0 })},
		{field: "Mechanism.Search", name: GNMax{}.Name(), input: two, zero: func(s *ReleaseSpec) {
			m := s.Mechanism.(GNMax)
			m.Search = 0
			s.Mechanism = m
			s.Votes = mustRows(t, zeroRows[two], oneVote)
		}, check: func(t *testing.T, out Released, _ string) {
			if !strings.Contains(out.Label, "grid search") {
				t.Errorf("label %q: want the paper's grid search", out.Label)
			}
		}},
		{field: "Mechanism.Delta", name: ConfidentGNMax{}.Name(), input: many, zero: conf(func(m *ConfidentGNMax) { m.Delta = 0 }), want: "ReleaseSpec.Mechanism.Delta"},
		{field: "Mechanism.Delta", name: Subsample{}.Name(), input: two, zero: sub(func(m *Subsample) { m.Delta = 1e-6 }), want: "ReleaseSpec.Mechanism.Delta = 1e-06: must be >= Delta = 1e-05"},
		{field: "Mechanism.Delta", name: Subsample{}.Name(), input: two, zero: sub(func(m *Subsample) { m.Delta = 0 }),
			check: func(t *testing.T, out Released, _ string) {
				if d := out.Aggregator.Privacy().Delta; d != constraints.DefaultTargetDelta(1e-5, 3) {
					t.Errorf("delta %v: want the thesis' default", d)
				}
			}},
		{field: "Mechanism.Gamma", name: DaRRM{}.Name(), input: two, zero: darrm(func(m *DaRRM) { m.Gamma = nil }), want: "ReleaseSpec.Mechanism.Gamma is not set"},
		{field: "Mechanism.Gamma.Prior", name: DaRRM{}.Name(), input: two, zero: darrm(func(m *DaRRM) { m.Gamma = optimal.Source{} }), check: func(t *testing.T, out Released, _ string) {
			if out.Label != "DaRRM with gamma_opt (prior uniform), solved now" {
				t.Errorf("label %q: want the uniform prior", out.Label)
			}
		}},
		{field: "DeltaPrime", name: Subsample{}.Name(), input: two, zero: func(s *ReleaseSpec) { s.DeltaPrime = 0 },
			check: func(t *testing.T, out Released, _ string) {
				if out.Account.DeltaPrime != accountant.DefaultDeltaPrime {
					t.Errorf("delta' %v", out.Account.DeltaPrime)
				}
			}},
		{field: "DeltaPrime", name: Subsample{}.Name(), input: two, zero: func(s *ReleaseSpec) {
			s.DeltaPrime = 0
			s.Budget = &accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-4}}
		}},
		{field: "Sink.Stdout", name: Subsample{}.Name(), input: two, zero: func(s *ReleaseSpec) { s.Sink.Stdout = nil }, want: "ReleaseSpec.Sink: LabelSink.Stdout is not set"},
		{field: "Sink.Format", name: ConfidentGNMax{}.Name(), input: many, zero: func(s *ReleaseSpec) { s.Sink.Format = 0 },
			check: func(t *testing.T, _ Released, labels string) {
				if !strings.Contains(labels, "\nid,label,answered\n1,0,1\n") {
					t.Errorf("labels %q: want CSV", labels)
				}
			}},
		{field: "Random", name: Subsample{}.Name(), input: two, zero: func(s *ReleaseSpec) { s.Random, s.Options.Experiment = nil, false },
			check: func(t *testing.T, _ Released, labels string) {
				if strings.HasPrefix(labels, notForRelease) {
					t.Errorf("labels from crypto/rand marked %q", notForRelease)
				}
			}},
		{field: "Certificate", name: DaRRM{}.Name(), input: two, zero: func(s *ReleaseSpec) { s.Certificate = Options{Memo: testMemo} }},
		{field: "Ledger", name: LNMax{}.Name(), input: many, zero: func(s *ReleaseSpec) { s.Ledger = nil }},
	} {
		t.Run(tc.field+"/"+string(tc.name), func(t *testing.T) {
			var labels bytes.Buffer
			s := zeroSpec(t, tc.name, tc.input, &labels)
			tc.zero(&s)
			out, err := Release(ctx, s)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("zero %s: %v; want its default", tc.field, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("zero %s: error %v; want one naming %s", tc.field, err, tc.want)
			case tc.want == "" && (out.Result.Released != 2 || labels.Len() == 0):
				t.Errorf("zero %s: %d released, labels %q", tc.field, out.Result.Released, labels.String())
			}
			if tc.check != nil && err == nil {
				tc.check(t, out, labels.String())
			}
		})
	}
}

// TestReleaseToZeroSink: ReleaseTo, which takes a LabelSink of its own,
// refuses one with nowhere to write (no panic on a nil writer), and
// writes CSV for a zero Format and votes held in memory.
func TestReleaseToZeroSink(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	s := zeroSpec(t, LNMax{}.Name(), votefile.ManyClasses, &out)
	agg, _, err := New(ctx, s.Mechanism, s.Votes.K(), s.Votes.Classes(), accountant.Guarantee{}, Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReleaseTo(ctx, s.Votes, agg, s.Random, LabelSink{}, -1, s.Options); err == nil || !strings.Contains(err.Error(), "LabelSink.Stdout is not set") {
		t.Errorf("no writer: %v", err)
	}
	res, err := ReleaseTo(ctx, s.Votes, agg, s.Random, LabelSink{Stdout: &out}, -1, s.Options)
	if err != nil || res.Released != 2 || !strings.Contains(out.String(), "\nid,label,answered\n1,") {
		t.Errorf("zero format: %+v, %v, labels %q", res, err, out.String())
	}
}
