package ensemble

import (
	"context"
	"strconv"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
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
		return NewSubsample(context.Background(), constraints.New(13, 3, 0.1, 1e-5), Options{})
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
// labels (Accounting.Totals, the exact composition of the pairs among
// them), about 20 and 1,000 labels. The accountant remembers what it
// answered, so each iteration asks of one label more (a new question,
// as a fresh process would).
func BenchmarkOneBitTotals(b *testing.B) {
	for _, c := range benchOneBit {
		agg, err := c.build()
		if err != nil {
			b.Fatal(err)
		}
		a, err := NewAccounting(context.Background(), agg.Privacy(), votefile.Binding{K: agg.K(), Relation: accountant.PrivateTeachers}, accountant.Composition{Method: accountant.Optimal, DeltaPrime: 1e-5}, nil)
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
// (NewAccounting: accountant.MaxRunSteps over the pairs), at a budget of
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
				a, err := NewAccounting(context.Background(), agg.Privacy(), votefile.Binding{K: agg.K(), Relation: accountant.PrivateTeachers}, accountant.Composition{Method: accountant.Optimal, DeltaPrime: 1e-5}, &budget)
				if err != nil || a.Budget.MaxQueries < 1 {
					b.Fatal(err, a.Budget)
				}
			}
		})
	}
}
