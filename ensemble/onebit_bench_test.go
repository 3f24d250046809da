package ensemble

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/fixtures"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// benchOneBit are private-teacher releases whose label is accounted by
// its pairs of output probabilities at every corner multiset: DaRRM
// with gamma_opt at K = 11 (31,824 multisets) and subsampling at K = 13
// (77,520).
var benchOneBit = []struct {
	name  string
	build func() (Aggregator, error)
}{
	{"darrm-K11", func() (Aggregator, error) { return benchDaRRM(constraints.New(11, 3, 0.1, 1e-5)) }},
	{"subsample-K13", func() (Aggregator, error) {
		return newSubsample(context.Background(), constraints.New(13, 3, 0.1, 1e-5), Options{})
	}},
}

// BenchmarkOneBitBuild is a private-teacher mechanism's construction:
// its certificate and the pairs at every corner multiset.
func BenchmarkOneBitBuild(b *testing.B) {
	for _, c := range benchOneBit {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.build(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOneBitTotals is what a release reports: the totals of its
// labels (accountant.Account.Totals, the exact composition of the pairs among
// them), about 20 and 1,000 labels. The accountant remembers what it
// answered, so each iteration asks of one label more (a new question,
// as a fresh process would).
func BenchmarkOneBitTotals(b *testing.B) {
	for _, c := range benchOneBit {
		agg, err := c.build()
		if err != nil {
			b.Fatal(err)
		}
		a, err := newAccounting(context.Background(), agg.Privacy(), provenance.Binding{Teachers: provenance.Teachers{K: agg.K(), Relation: accountant.PrivateTeachers}}, accountant.Composition{Method: accountant.Optimal, DeltaPrime: 1e-5}, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, labels := range []int{20, 1000} {
			b.Run(c.name+"/labels="+strconv.Itoa(labels), func(b *testing.B) {
				n := labels
				for b.Loop() {
					if len(a.Totals(n)) == 0 {
						b.Fatal("no totals")
					}
					n++
				}
			})
		}
	}
}

// BenchmarkOneBitBudget is the count of a budgeted release
// (Allowed: accountant.Account.MaxSteps over the pairs), at a budget of
// about (2, 1e-4) that stops it: each iteration's ε a millionth more (a
// new question, as a fresh process would ask).
func BenchmarkOneBitBudget(b *testing.B) {
	for _, c := range benchOneBit {
		agg, err := c.build()
		if err != nil {
			b.Fatal(err)
		}
		budget := accountant.Guarantee{Eps: 2, Delta: 1e-4}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				budget.Eps *= 1 + 1e-6
				a, err := newAccounting(context.Background(), agg.Privacy(), provenance.Binding{Teachers: provenance.Teachers{K: agg.K(), Relation: accountant.PrivateTeachers}}, accountant.Composition{Method: accountant.Optimal, DeltaPrime: 1e-5}, &budget)
				if err != nil || a.MaxQueries < 1 {
					b.Fatal(err, a.Budget)
				}
			}
		})
	}
}

// BenchmarkPrivateTeacherRelease is a budgeted release of 100 DaRRM
// labels from K = 11 private teachers (gamma_opt at m = 3, teachers
// (0.1, 1e-5)): the aggregator built and certified, the count its
// budget of about (10, 0.02) allows (160 labels, by the exact
// composition of the label's pairs), the labels written, and the totals
// a report prints (Publish, Totals). Each iteration's budget is a
// millionth larger in ε and δ, so the accountant answers new questions,
// as a fresh process would.
func BenchmarkPrivateTeacherRelease(b *testing.B) {
	ctx := context.Background()
	p := constraints.New(11, 3, 0.1, 1e-5)
	g, err := fixtures.GammaK11M3()
	if err != nil {
		b.Fatal(err)
	}
	votes := benchVotes(100, false)
	budget := accountant.Guarantee{Eps: 10, Delta: 0.02}
	for b.Loop() {
		budget.Eps *= 1 + 1e-6
		budget.Delta *= 1 + 1e-6
		in, err := votefile.Open("votes.csv", votefile.Options{In: bytes.NewReader(votes)})
		if err != nil {
			b.Fatal(err)
		}
		out, err := Release(ctx, ReleaseSpec{
			Votes: in, Mechanism: DaRRM{Target: built(p), Gamma: optimal.Source{Given: g}}, Teachers: ptr(teachers(p)), Budget: &accountant.Budget{Guarantee: budget},
			DeltaPrime: 1e-5,
			Sink:       LabelSink{Stdout: io.Discard, Format: votefile.FormatCSV},
		})
		if err != nil || out.Result.Released != 100 || out.MaxQueries != 160 {
			b.Fatal(err, out.Result, out.Account.Budget)
		}
		if ts, err := out.Account.Totals(nil); err != nil || len(ts) == 0 {
			b.Fatal("no totals")
		}
	}
}

// BenchmarkPrivateTeacherBits is the label's pairs at every corner
// multiset (teacherBitsOf, past privateTeacherBits' memo), what a private-teacher DaRRM, RR or
// subsampling release computes once before its first label: gamma_opt
// at K = 11 with Δ > 0 (31,824 multisets), gamma_Sub at K = 13 with
// Δ > 0 (77,520) and at K = 61 with Δ = 0 (41,664).
func BenchmarkPrivateTeacherBits(b *testing.B) {
	g, err := fixtures.GammaK11M3()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p    constraints.Problem
		g    gamma.Gamma
	}{
		{"darrm-K11", constraints.New(11, 3, 0.1, 1e-5), g},
		{"sub-K13", constraints.New(13, 3, 0.1, 1e-5), nil},
		{"sub-K61-pure", constraints.New(61, 3, 0.1, 0), nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			g := c.g
			if g == nil {
				if g, err = gamma.Sub(c.p.K, gamma.SubSize(c.p.M)); err != nil {
					b.Fatal(err)
				}
			}
			tb, _ := newTable(g)
			for b.Loop() {
				if _, ok := teacherBitsOf(c.p, tb.labelProbs()); !ok {
					b.Fatal("too many corner multisets")
				}
			}
		})
	}
}
