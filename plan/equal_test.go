package plan

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestEqualTotals: at one total budget over Q queries, each mechanism's
// planned parameter fits Q queries by the release's own count (count,
// called here on the planned request, not taken from the plan), with a
// total within the budget, and the same parameter made 5% more generous
// here does not fit (counted here at the plan's own neighbour, which must
// be that value to 1e-12: the accountant then answers from the
// compositions the plan made); every plan is held to the one budget
// given, whatever budget its request held before; GNMax on two classes is
// planned by the exact composition of its bit. Under -short randomized
// response on private teachers is left out (its search composes 11 runs
// by an FFT of 2^19 points): subsampling is planned by the same knob, m,
// and checked against its neighbour by the same rules.
func TestEqualTotals(t *testing.T) {
	ctx := context.Background()
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 4, Delta: 1e-5}}
	// Under -short one Q, 10, whose one-bit searches compose fewer runs
	// by an FFT of 2^19 points (short runs are convolved directly).
	// Teachers of eps 0.2 there, so that subsampling still plans an m
	// below K at that Q.
	qs, teachersEps := []int{30, 100}, 0.07
	if testing.Short() {
		qs, teachersEps = []int{10}, 0.2
	}
	teachers := constraints.Problem{K: 11, M: 1, Eps: teachersEps, Delta: 1e-8}
	oneVote := request(ensemble.OneVoteDaRRM{}.Name(), votefile.TwoClass, constraints.NewOneVote(11, 1, 0), 2, 1, 0)
	gnmax := request(ensemble.GNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: 11, TargetDelta: 1e-5}, 2, 1, 0)
	base := Request{ReleaseSpec: ensemble.ReleaseSpec{Certificate: ensemble.Options{Memo: testMemo}, Budget: &accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1}}}}
	rr := twoClass(base, ensemble.RR{}.Name(), teachers, false)
	sub := twoClass(base, ensemble.Subsample{}.Name(), teachers, false)
	lnmax := request(ensemble.LNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: 11}, 2, 1, 0)
	// Each request with its planned parameter's value 5% more generous
	// than r's (m within its range [1, K]: a plan below K whose neighbour
	// would pass K is checked at K), and a setter of that parameter.
	type mechanism struct {
		r    Request
		more func(r Request) float64
		set  func(r *Request, v float64)
	}
	moreTeachers := func(r Request) float64 {
		m := r.Mechanism.(interface {
			Name() provenance.MechanismName
		})
		switch m := m.(type) {
		case ensemble.RR:
			return math.Min(m.M*generosity, float64(r.K))
		case ensemble.Subsample:
			return math.Min(m.M*generosity, float64(r.K))
		}
		return 0
	}
	setM := func(r *Request, v float64) {
		r.Mechanism = r.planned().With(v)
	}
	ms := []mechanism{
		{oneVote, func(r Request) float64 { return r.Mechanism.(ensemble.OneVoteDaRRM).Eps * generosity }, func(r *Request, v float64) {
			m := r.Mechanism.(ensemble.OneVoteDaRRM)
			m.Eps = v
			r.Mechanism = m
		}},
		{gnmax, func(r Request) float64 { return r.Mechanism.(ensemble.GNMax).Sigma2 / generosity }, func(r *Request, v float64) {
			m := r.Mechanism.(ensemble.GNMax)
			m.Sigma2 = v
			r.Mechanism = m
		}},
		{rr, moreTeachers, setM},
		{sub, moreTeachers, setM},
		{lnmax, func(r Request) float64 { return r.Mechanism.(ensemble.LNMax).Scale / generosity }, func(r *Request, v float64) { r.Mechanism = ensemble.LNMax{Scale: v} }},
	}
	if testing.Short() {
		ms = slices.Delete(ms, 2, 3)
	}
	var rs []Request
	for _, m := range ms {
		rs = append(rs, m.r)
	}
	// These checks come first: under -short TestCompare's two-class
	// cases, the loop below and ExampleCompareAtTotals plan GNMax alike
	// (Q = 10, this budget), and the accountant keeps the answers of the
	// sets of pairs used last (64), so that the plan's 17 compositions by
	// an FFT of 2^19 points are made once, if the pairs the loop uses are
	// among the last used when the loop and the example ask again.
	for _, bad := range []accountant.Guarantee{{Eps: -1, Delta: 1e-5}, {Eps: math.NaN(), Delta: 1e-5}, {Eps: 1, Delta: 1}} {
		if _, err := EqualTotals(ctx, rs, accountant.Budget{Guarantee: bad}, 10); !asParam(err, new(interface{ Param() (string, any, string) })) {
			t.Errorf("budget %v: err %v, want a ParamError", bad, err)
		}
	}
	// A budget that fits not one query of RR at m = 1 is that mechanism's
	// answer, beside the others' plans.
	plans, err := EqualTotals(ctx, []Request{rr, oneVote}, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 0.001, Delta: 1e-5}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !asParam(plans[0].NoFit, new(interface{ Param() (string, any, string) })) || plans[1].NoFit != nil || plans[1].Plan.Count.Run < 1 {
		t.Errorf("budget 0.001, RR at m = 1: %v; darrm-one-vote: %v, %d queries: want RR not to fit, darrm-one-vote to", plans[0].NoFit, plans[1].NoFit, plans[1].Plan.Count.Run)
	}
	for _, q := range qs {
		plans, err := EqualTotals(ctx, rs, budget, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(plans) != len(rs) {
			t.Fatalf("Q %d: %d plans for %d requests", q, len(plans), len(rs))
		}
		for i, e := range plans {
			name := rs[i].Mechanism.Name()
			if e.NoFit != nil {
				t.Errorf("Q %d %s: %v", q, name, e.NoFit)
				continue
			}
			pl := e.Plan
			if *pl.Request.Budget != budget || pl.Queries != q {
				t.Errorf("Q %d %s: planned for %v over %d queries, want %v over %d", q, name, pl.Request.Budget, pl.Queries, budget, q)
			}
			c, err := count(ctx, pl.Request)
			if err != nil {
				t.Fatalf("Q %d %s: %v", q, name, err)
			}
			if c.Run < q || !c.Total.Guarantee.Within(budget.Guarantee) {
				t.Errorf("Q %d %s: %s = %v releases %d queries, total %v: want >= %d within %v", q, name, pl.Parameter, pl.Value, c.Run, c.Total.Guarantee, q, budget)
			}
			if _, ok := rs[i].Mechanism.(ensemble.GNMax); ok {
				// Two classes: planned and counted by the bit it releases.
				agg, _, err := pl.Request.Aggregator(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if s := agg.Privacy().Spend; s.Kind != accountant.OneBitSpend || c.Total.Method != accountant.Exact {
					t.Errorf("Q %d gnmax on two classes: described as %v, total %v by %v: want the exact composition of its bit", q, s.Kind, c.Total.Guarantee, c.Total.Method)
				}
			}
			if pl.AtLimit {
				t.Errorf("Q %d %s: at the limit of its parameter, so the test does not check its neighbour", q, name)
				continue
			}
			more := ms[i].more(pl.Request)
			if math.Abs(pl.Neighbour-more) > 1e-12*more {
				t.Errorf("Q %d %s: the plan's neighbour %s = %v, want %v, 5%% more generous than %v", q, name, pl.Parameter, pl.Neighbour, more, pl.Value)
			}
			next := pl.Request
			ms[i].set(&next, pl.Neighbour)
			n, err := count(ctx, next)
			if err != nil {
				t.Fatalf("Q %d %s, 5%% more generous: %v", q, name, err)
			}
			if n.Run >= q {
				t.Errorf("Q %d %s: %s 5%% more generous than %v still releases %d >= %d queries", q, name, pl.Parameter, pl.Value, n.Run, q)
			}
		}
	}
}

// TestChosen: the parameters a plan chooses, by mechanism.
func TestChosen(t *testing.T) {
	for _, c := range []struct {
		name provenance.MechanismName
		in   votefile.Input
		want []string
	}{
		{ensemble.DaRRM{}.Name(), votefile.TwoClass, []string{"m"}},
		{ensemble.OneVoteDaRRM{}.Name(), votefile.TwoClass, []string{"target-eps"}},
		{ensemble.GNMax{}.Name(), votefile.ManyClasses, []string{"sigma2"}},
		{ensemble.ConfidentGNMax{}.Name(), votefile.ManyClasses, []string{"sigma2", "sigma1", "threshold"}},
		{ensemble.LNMax{}.Name(), votefile.ManyClasses, []string{"laplace-scale"}},
	} {
		r := request(c.name, c.in, constraints.Problem{K: 11, M: 1, Eps: 1}, 10, 1, 1e-5)
		if got := r.Chosen(); !slices.Equal(got, c.want) {
			t.Errorf("%s: Chosen() = %v, want %v", c.name, got, c.want)
		}
	}
}
