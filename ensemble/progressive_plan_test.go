package ensemble

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/darrm/darrm/internal/param"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/votefile"
)

// progressiveProxy returns n queries of K = 100 teachers over 5 classes,
// of every consensus: a plurality of 25 to 100 votes, the rest spread
// below it.
func progressiveProxy(n int, seed uint64) ProxyRequest {
	r := rand.New(rand.NewPCG(seed, 1))
	p := ProxyRequest{K: 100, Classes: 5}
	for range n {
		c := make([]int, 5)
		top := r.IntN(5)
		c[top] = 25 + r.IntN(76)
		for left := 100 - c[top]; left > 0; {
			if i := r.IntN(5); i != top && c[i] < c[top]-1 {
				c[i]++
				left--
			}
		}
		p.Counts, p.Truth = append(p.Counts, c), append(p.Truth, top)
	}
	return p
}

// labelRates labels each query of counts reps times with m through its own
// labeler (ensemble.New: discrete noise, each draw charged, a budget that
// labels every query), and returns the share of the labels that agree
// with the plurality, and the number of labels.
func labelRates(t *testing.T, m Mechanism, k, classes int, counts [][]int, reps int) (float64, int) {
	t.Helper()
	agg, _, err := New(context.Background(), m, k, classes, accountant.Guarantee{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := noise.NewSeededSource(11)
	var answered, agree int
	for range reps {
		for i, c := range counts {
			label, ok, err := agg.Answer(&votefile.Query{Index: i + 1, Counts: c}, src)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				answered++
				if label == maxAt(c) {
					agree++
				}
			}
		}
	}
	if answered == 0 {
		return 1, 0
	}
	return float64(agree) / float64(answered), answered
}

// TestProgressivePlan: the plan's settings, released through the
// mechanism's own labeler on the proxy, agree with its plurality at least
// as often as asked (within the sampling error), and on its
// lowest-consensus fifth at least as often as Confident-GNMax's
// (the guard); the plan is a function of the proxy and the seed.
func TestProgressivePlan(t *testing.T) {
	for _, a := range []float64{0.97, 0.6} { // 0.6: the guard decides
		checkPlan(t, progressiveProxy(300, 1), a)
	}
}

func checkPlan(t *testing.T, proxy ProxyRequest, minAgree float64) {
	budget := accountant.Guarantee{Eps: 2, Delta: 1e-5}
	r := proxy
	r.Budget, r.MinAgreement, r.Seed = budget, minAgree, 3
	p, err := ProgressiveGNMax{}.planOnProxy(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Mechanism
	if m.Validate() != nil || m.Budget != budget || !(p.Answered > 0) || p.Agreement < minAgree || p.LowAgreement < p.LowBaseline-lowTolerance {
		t.Fatalf("plan %+v", p)
	}
	// Every query labelled: a budget far above the run's.
	wide := m
	wide.Budget = accountant.Guarantee{Eps: 60, Delta: 1e-5}
	agree, n := labelRates(t, wide, proxy.K, proxy.Classes, proxy.Counts, 20)
	if se := 0.5 / float64(n); agree < minAgree-2*se-0.01 {
		t.Errorf("the plan's labels agree %.4f of %d times, asked %v", agree, n, minAgree)
	}
	var low [][]int
	for _, c := range proxy.Counts {
		if maxOf(c) <= p.LowTop {
			low = append(low, c)
		}
	}
	ours, n1 := labelRates(t, wide, proxy.K, proxy.Classes, low, 40)
	base, err := chargedForm(p.Baseline)
	if err != nil {
		t.Fatal(err)
	}
	base.Budget = wide.Budget
	theirs, n2 := labelRates(t, base, proxy.K, proxy.Classes, low, 40)
	if n1 > 0 && ours < theirs-0.03 {
		t.Errorf("least agreement %v: on the %d low-consensus queries the plan's labels agree %.3f (%d), Confident-GNMax's %.3f (%d)", minAgree, len(low), ours, n1, theirs, n2)
	}
	if !testing.Short() {
		again, err := ProgressiveGNMax{}.planOnProxy(context.Background(), r)
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Errorf("the same request planned %+v, then %+v (%v)", p, again, err)
		}
	}
}

func maxOf(c []int) int {
	m := c[0]
	for _, x := range c {
		m = max(m, x)
	}
	return m
}

// maxAt returns the first class of the largest count.
func maxAt(c []int) int {
	best := 0
	for i, x := range c {
		if x > c[best] {
			best = i
		}
	}
	return best
}

// TestProgressivePlanRefuses: a least agreement out of (0, 1), a budget
// without delta, proxy votes of no query, and an agreement no setting
// reaches are refused, naming what.
func TestProgressivePlanRefuses(t *testing.T) {
	proxy := progressiveProxy(40, 2)
	budget := accountant.Guarantee{Eps: 2, Delta: 1e-5}
	req := func(p ProxyRequest, b accountant.Guarantee, a float64) ProxyRequest {
		p.Budget, p.MinAgreement = b, a
		return p
	}
	for _, tc := range []struct {
		r    ProxyRequest
		name string
	}{
		{req(proxy, budget, 1), "min-agreement"},
		{req(proxy, budget, -0.5), "min-agreement"},
		{req(proxy, accountant.Guarantee{Eps: 2}, 0), "budget delta"},
		{req(ProxyRequest{K: 100, Classes: 5}, budget, 0), "votes queries"},
	} {
		_, err := ProgressiveGNMax{}.planOnProxy(context.Background(), tc.r)
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != tc.name {
			t.Errorf("%+v: %v, want a ParamError on %s", tc.r.MinAgreement, err, tc.name)
		}
	}
	// Forty queries cannot show an agreement of 0.999 with confidence.
	_, err := ProgressiveGNMax{}.planOnProxy(context.Background(), req(proxy, budget, 0.999))
	var se *param.SettingError
	if !errors.As(err, &se) || se.Name != "min-agreement" {
		t.Errorf("an agreement out of reach: %v", err)
	}
}

// randomProxy returns n queries of k teachers over classes classes: each
// query's plurality drawn from every consensus, the rest of the votes
// spread below it and some teachers abstaining, its class the plurality
// but for one query in eight whose class is another (a wrong plurality).
func randomProxy(k, classes, n int, seed uint64) ProxyRequest {
	r := rand.New(rand.NewPCG(seed, 2))
	p := ProxyRequest{K: k, Classes: classes}
	for range n {
		c := make([]int, classes)
		voters := k - r.IntN(k/10+1)
		top := r.IntN(classes)
		c[top] = (voters + classes - 1) / classes
		c[top] += r.IntN(voters - c[top] + 1)
		for left := voters - c[top]; left > 0; {
			if i := r.IntN(classes); i != top && c[i] < c[top] {
				c[i]++
				left--
			}
		}
		truth := top
		if r.IntN(8) == 0 {
			truth = r.IntN(classes)
		}
		p.Counts, p.Truth = append(p.Counts, c), append(p.Truth, truth)
	}
	return p
}

// TestPlanSearchMatchesOracle: the plan search returns, for proxies of
// every size, K and number of classes, the plan of its straightforward
// form (oraclePlan) to the bit, counts of candidates and errors included.
func TestPlanSearchMatchesOracle(t *testing.T) {
	type tc struct {
		k, classes, n int
		minAgree      float64
	}
	cases := []tc{
		{100, 5, 1, 0.5}, {11, 2, 9, 0.6}, {5, 3, 12, 0.5}, {30, 4, 25, 0.8},
		{250, 10, 30, 0.9}, {60, 1, 6, 0.5}, {1, 2, 4, 0.5}, {100, 5, 40, 0.999},
	}
	if !testing.Short() {
		cases = append(cases, tc{250, 10, 300, 0}, tc{100, 5, 200, 0.97}, tc{17, 3, 150, 0.7}, tc{1000, 7, 120, 0.95})
	}
	for i, c := range cases {
		r := randomProxy(c.k, c.classes, c.n, uint64(i))
		r.Budget, r.MinAgreement, r.Seed = accountant.Guarantee{Eps: 2, Delta: 1e-5}, c.minAgree, uint64(7*i)
		want, werr := oraclePlan(context.Background(), r)
		got, err := ProgressiveGNMax{}.planOnProxy(context.Background(), r)
		if g, w := fmt.Sprintf("%#v %v", got, err), fmt.Sprintf("%#v %v", want, werr); g != w {
			t.Errorf("K %d, %d classes, %d queries, least agreement %v:\nplanned %s\noracle  %s", c.k, c.classes, c.n, c.minAgree, g, w)
		}
	}
}

// BenchmarkPlanOnProxy: the plan search on 500 queries of K = 250
// teachers over 10 classes, beside its straightforward form (oracle).
func BenchmarkPlanOnProxy(b *testing.B) {
	r := randomProxy(250, 10, 500, 1)
	r.Budget, r.Seed = accountant.Guarantee{Eps: 2, Delta: 1e-5}, 1
	for _, bc := range []struct {
		name string
		plan func(context.Context, ProxyRequest) (ProxyPlan, error)
	}{{"oracle", oraclePlan}, {"search", ProgressiveGNMax{}.planOnProxy}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := bc.plan(context.Background(), r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
