package ensemble

import (
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestLabelsRoundTrip: what ReleaseTo writes, NewLabelReader reads back,
// in both formats and both layouts: the header (how the labels were
// made) and every row, with its query's key, label and answer.
func TestLabelsRoundTrip(t *testing.T) {
	g, err := classOf(ConfidentGNMax{Threshold: 8, Sigma1: 0.6, GNMax: GNMax{Sigma2: 0.6, Noise: noisymax.DiscreteNoise}}, 10, 3, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		read   func() votefile.Reader
		agg    Labeler
		labels []string // key:label, label -1 when withheld
		meta   votefile.LabelMeta
	}{
		{"two classes", func() votefile.Reader {
			r, _ := votefile.Open("v", votefile.Options{In: strings.NewReader("1,1,1\n0,0,1\n")})
			return r
		}, zeroDaRRM(t, 3), nil, votefile.LabelMeta{Mechanism: "darrm", K: 3, Classes: 2, Relation: "private-teachers", ForRelease: false}},
		{"counts", func() votefile.Reader {
			r, _ := votefile.Open("v", votefile.Options{In: strings.NewReader(countsHead + "id,a,b,c\n\"x,1\",4,0,0\n7,2,1,1\n"), Layout: votefile.LayoutCounts})
			return r
		}, g, []string{"x,1:0", "7:-1"}, votefile.LabelMeta{Mechanism: "confident-gnmax", K: 4, Classes: 3, Relation: "one-vote", Ensemble: "pate-test"}},
	} {
		for _, f := range []votefile.Format{votefile.FormatCSV, votefile.FormatJSONL} {
			in := tc.read()
			agg := tc.agg
			if tc.name == "counts" {
				m := g.Mechanism().(ConfidentGNMax)
				m.Threshold = 3
				agg, _ = classOf(m, in.K(), in.Classes(), 1e-5)
			}
			out, _, err := releaseOut(t, in, agg, noise.NewSeededSource(3), -1, ReleaseOptions{Experiment: true, Partition: provenance.KeyedHash}, f)
			if err != nil {
				t.Fatalf("%s, %v: %v", tc.name, f, err)
			}
			lr, err := votefile.NewLabelReader(strings.NewReader(out), "labels")
			if err != nil {
				t.Fatalf("%s, %v: %v\n%s", tc.name, f, err, out)
			}
			m := lr.Meta()
			if m == nil || m.Mechanism != tc.meta.Mechanism || m.K != tc.meta.K || m.Classes != tc.meta.Classes || m.Relation != tc.meta.Relation ||
				m.Ensemble != tc.meta.Ensemble || m.ForRelease || (accountant.Guarantee{Eps: m.Eps, Delta: m.Delta}) != agg.Privacy().Guarantee {
				t.Errorf("%s, %v: header %+v", tc.name, f, m)
			}
			var got []string
			for lr.Next() {
				r := lr.Row()
				got = append(got, r.ID+":"+map[bool]string{true: string(rune('0' + r.Label)), false: "-1"}[r.Answered])
			}
			if lr.Err() != nil || len(got) != 2 || tc.labels != nil && strings.Join(got, " ") != strings.Join(tc.labels, " ") {
				t.Errorf("%s, %v: rows %v, %v", tc.name, f, got, lr.Err())
			}
		}
	}
	// The header of a confident-gnmax release states its settings.
	in, _ := votefile.Open("v", votefile.Options{In: strings.NewReader("4,3,3\n"), Layout: votefile.LayoutCounts})
	out, _, _ := releaseOut(t, in, g, noise.NewSource(), -1, ReleaseOptions{Partition: provenance.KeyedHash}, votefile.FormatCSV)
	lr, err := votefile.NewLabelReader(strings.NewReader(out), "labels")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Mechanisms().FromHeader(lr.Meta())
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := m.(ConfidentGNMax); !ok || s.Threshold != 8 || s.Sigma1 != 0.6 || s.Sigma2 != 0.6 || s.Noise != noisymax.DiscreteNoise || strings.Contains(string(lr.Meta().Settings), "laplace_scale") || !lr.Meta().ForRelease {
		t.Errorf("settings %+v", m)
	}
}

// countsHead is the metadata header of a counts file of K = 4 non-private
// teachers over C = 3 classes.
var countsHead = func() string {
	m := provenance.Binding{Ensemble: "pate-test", Teachers: provenance.Teachers{K: 4, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(3, votefile.LayoutCounts)
	b, err := m.AppendHeader(nil, votefile.FormatCSV)
	if err != nil {
		panic(err)
	}
	return string(b)
}()
