package ensemble

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/tally"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func TestLNMax(t *testing.T) {
	g, err := newLNMax(2, 50, 4)
	if err != nil {
		t.Fatal(err)
	}
	if p := g.Privacy(); p.Eps != 1 || p.Delta != 0 || p.Relation != accountant.OneVote {
		t.Errorf("privacy %+v, want (2/b, 0) = (1, 0) in the one-vote relation", p)
	}
	src := noise.NewSeededSource(2)
	for range 200 {
		if l, ans, err := g.Answer(&votefile.Query{Counts: []int{2, 45, 3, 0}}, src); err != nil || !ans || l != 1 {
			t.Fatalf("label %d answered %v err %v, want class 1", l, ans, err)
		}
	}
	seen := map[int]int{}
	for range 4000 {
		l, _, _ := g.Answer(&votefile.Query{Counts: []int{25, 25, 0, 0}}, src)
		seen[l]++
	}
	if seen[0] < 1800 || seen[1] < 1800 || seen[0]+seen[1] != 4000 {
		t.Errorf("tied classes 0 and 1: %v", seen)
	}
	// With noise comparable to the gap the runner-up wins at the rate the
	// difference of two discrete Laplace draws gives.
	g1, _ := newLNMax(1, 3, 2)
	wins := 0
	const n = 40000
	for range n {
		if l, _, _ := g1.Answer(&votefile.Query{Counts: []int{2, 1}}, src); l == 1 {
			wins++
		}
	}
	// Pr[1 + Y1 > 2 + Y0] + Pr[tie]/2 with Y ~ discrete Laplace(1).
	var p float64
	norm := (1 + math.Exp(-1)) / (1 - math.Exp(-1))
	for y0 := -40; y0 <= 40; y0++ {
		for y1 := -40; y1 <= 40; y1++ {
			q := math.Exp(-math.Abs(float64(y0))-math.Abs(float64(y1))) / (norm * norm)
			switch d := 1 + y1 - (2 + y0); {
			case d > 0:
				p += q
			case d == 0:
				p += q / 2
			}
		}
	}
	if got := float64(wins) / n; math.Abs(got-p) > 5*math.Sqrt(p*(1-p)/n) {
		t.Errorf("runner-up wins %v, want %v", got, p)
	}
	var ce *tally.CountsError
	if _, _, err := g.Answer(&votefile.Query{Counts: []int{25, 26, 0, 0}}, src); !errors.As(err, &ce) {
		t.Errorf("counts summing to 51 for K = 50: %v", err)
	}
	// One teacher abstained: the counts sum to 49.
	if _, _, err := g.Answer(&votefile.Query{Counts: []int{25, 24, 0, 0}}, src); err != nil {
		t.Errorf("counts summing to 49 for K = 50, one teacher abstaining: %v", err)
	}
	if _, err := newLNMax(0, 50, 4); err == nil {
		t.Error("scale 0 accepted")
	}
	if _, err := newLNMax(1, 50, 1); err == nil {
		t.Error("C = 1 accepted")
	}
}

// A header in the private-teachers relation is refused before any label;
// a one-vote header binds its ensemble, and its teachers' common
// guarantee when they have one.
func TestReleaseBindingMulti(t *testing.T) {
	agg, _ := newLNMax(20, 4, 3)
	read := func(head string) votefile.Reader {
		t.Helper()
		in, err := votefile.Open("v.csv", votefile.Options{In: strings.NewReader(head + "3,1,0\n0,0,4\n"), Layout: votefile.LayoutCounts})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	// Votes without a header assert nothing: a one-vote release needs
	// the partition asserted, one that keeps the relation.
	var te *provenance.TeachersError
	for _, p := range []provenance.Partition{provenance.PartitionUnstated, provenance.FilePosition, provenance.SharedData} {
		if _, err := releaseBinding(read(""), agg, p, nil); !errors.As(err, &te) || te.Field != "partition" {
			t.Errorf("no header, partition %v asserted: %v", p, err)
		}
		var buf strings.Builder
		if _, err := ReleaseTo(t.Context(), read(""), agg, noise.NewSource(), LabelSink{Stdout: &buf, Format: votefile.FormatCSV}, -1, ReleaseOptions{Partition: p}); !errors.As(err, &te) || buf.Len() != 0 {
			t.Errorf("release without a header, partition %v asserted: %v, wrote %q", p, err, buf.String())
		}
	}
	b, err := releaseBinding(read(""), agg, provenance.KeyedHash, nil)
	if err != nil || b != (provenance.Binding{Teachers: provenance.Teachers{K: 4, Relation: accountant.OneVote, Partition: provenance.KeyedHash}}) {
		t.Errorf("no header, keyed-hash asserted: %+v, %v", b, err)
	}
	var buf strings.Builder
	if _, err := ReleaseTo(t.Context(), read(""), agg, noise.NewSource(), LabelSink{Stdout: &buf, Format: votefile.FormatCSV}, -1, ReleaseOptions{Partition: provenance.KeyedHash}); err != nil || !strings.Contains(buf.String(), `"partition":"keyed-hash"`) {
		t.Errorf("release without a header, keyed-hash asserted: %v, the label header does not state it: %q", err, buf.String())
	}
	if _, err := releaseBinding(read(countsHead), agg, provenance.FilePosition, nil); !errors.As(err, &te) || te.Field != "partition" || te.Header != "keyed-hash" {
		t.Errorf("a partition asserted against the header's: %v", err)
	}
	b, err = releaseBinding(read(countsHead), agg, provenance.PartitionUnstated, nil)
	if err != nil || b != (provenance.Binding{Ensemble: "pate-test", Teachers: provenance.Teachers{K: 4, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}) {
		t.Errorf("non-private teachers: %+v, %v", b, err)
	}
	private := strings.Replace(countsHead, `{"count":4,"source":{"method":"none"}}`, `{"count":4,"eps":0.5,"Delta":0.00001,"source":{"method":"stated"}}`, 1)
	b, err = releaseBinding(read(private), agg, provenance.PartitionUnstated, nil)
	if err != nil || b.Each != (accountant.Guarantee{Eps: 0.5, Delta: 1e-5}) {
		t.Errorf("private teachers: %+v, %v", b, err)
	}
	shared := strings.NewReplacer(`"relation":"one-vote"`, `"relation":"private-teachers"`, `"partition":"keyed-hash"`, `"partition":"shared"`).Replace(private)
	in := read(shared)
	if _, err := releaseBinding(in, agg, provenance.PartitionUnstated, nil); !errors.As(err, &te) || te.Field != "relation" || te.Header != "private-teachers" {
		t.Errorf("private-teachers header: %v", err)
	}
	buf.Reset()
	if _, err := ReleaseTo(t.Context(), in, agg, noise.NewSource(), LabelSink{Stdout: &buf, Format: votefile.FormatCSV}, -1, ReleaseOptions{}); !errors.As(err, &te) || buf.Len() != 0 {
		t.Errorf("release from a private-teachers header: %v, wrote %q", err, buf.String())
	}
	other, _ := newLNMax(20, 5, 3)
	if _, err := releaseBinding(read(""), other, provenance.KeyedHash, nil); err == nil {
		t.Error("an aggregator for K = 5 accepted votes of 4")
	}
	// Against a header, K and the classes are the one check's.
	five, _ := newLNMax(20, 4, 5)
	for _, tc := range []struct {
		agg   *lnmaxAggregator
		field string
	}{{other, "K"}, {five, "classes"}} {
		if _, err := releaseBinding(read(countsHead), tc.agg, provenance.PartitionUnstated, nil); !errors.As(err, &te) || te.Field != tc.field || te.By != "the lnmax mechanism" {
			t.Errorf("an aggregator for K = %d, %d classes on the header of K = 4, 3 classes: %v", tc.agg.K(), tc.agg.Classes(), err)
		}
	}
}
