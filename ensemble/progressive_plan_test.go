package ensemble

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
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
// without delta, proxy votes of no query, an agreement no setting
// reaches, and a proxy none of whose settings a release builds are
// refused, naming what.
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
		{req(manyQueries(proxy, maxProxyQueries+1), budget, 0), "votes"},
	} {
		_, err := ProgressiveGNMax{}.planOnProxy(context.Background(), tc.r)
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != tc.name {
			t.Errorf("%+v: %v, want a ParamError on %s", tc.r.MinAgreement, err, tc.name)
		}
	}
	// Eleven teachers: every setting's levels have deviations so small
	// that one query's every draw exceeds μ_B² at (2, 1e-5), so no
	// release could begin, and the plan says so instead of planning one.
	small := randomProxy(11, 2, 9, 0)
	small.Budget, small.MinAgreement, small.Seed = budget, 0.6, 0
	_, err := ProgressiveGNMax{}.planOnProxy(context.Background(), small)
	if pe := new(param.Error); !errors.As(err, &pe) || pe.Name != "budget eps" || !strings.Contains(pe.Rule, "is one a release builds") {
		t.Errorf("a proxy of 11 teachers: %v, want a ParamError on budget eps saying no setting builds", err)
	}
	// Forty queries cannot show an agreement of 0.999 with confidence.
	_, err = ProgressiveGNMax{}.planOnProxy(context.Background(), req(proxy, budget, 0.999))
	var se *param.SettingError
	if !errors.As(err, &se) || se.Name != "min-agreement" {
		t.Errorf("an agreement out of reach: %v", err)
	}
}

// manyQueries returns p with its queries repeated to n.
func manyQueries(p ProxyRequest, n int) ProxyRequest {
	counts, truth := make([][]int, n), make([]int, n)
	for i := range n {
		counts[i], truth[i] = p.Counts[i%len(p.Counts)], p.Truth[i%len(p.Truth)]
	}
	p.Counts, p.Truth = counts, truth
	return p
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
	// Under -short, a plan checked again with fresh noise many times, one
	// from a few queries, and one of no candidate at all (K = 1).
	cases := []tc{{11, 2, 9, 0.6}, {5, 3, 12, 0.5}, {30, 4, 25, 0.8}, {1, 2, 4, 0.5}}
	if !testing.Short() {
		cases = append(cases, tc{100, 5, 1, 0.5}, tc{250, 10, 30, 0.9}, tc{60, 1, 6, 0.5}, tc{100, 5, 40, 0.999},
			tc{250, 10, 300, 0}, tc{100, 5, 200, 0.97}, tc{17, 3, 150, 0.7}, tc{1000, 7, 120, 0.95})
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
	r.Budget, r.MinAgreement, r.Seed = accountant.Guarantee{Eps: 2, Delta: 1e-5}, 0.8, 1
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

// TestSimulationMatchesOracle: run draws the oracle's ladders to the bit,
// into fresh memory or into that of a longer ladder.
func TestSimulationMatchesOracle(t *testing.T) {
	var into *runState
	for i, levels := range [][]float64{{80, 60, 45, 30, 20}, {50}, {120, 40}, {90, 30}} {
		classes := []int{10, 10, 10, 1}[i] // one class: no second, a gap of +Inf
		s := newSimulator(randomProxy(250, classes, 60, 4), 0)
		want, err := oracleRun(context.Background(), s, ProgressiveGNMax{Levels: levels}, 3, 9)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []*runState{nil, into} {
			got, err := s.run(context.Background(), ProgressiveGNMax{Levels: levels}, 3, 9, st)
			if err != nil {
				t.Fatal(err)
			}
			if !sameBits(got.z, want.z) || !slices.Equal(got.ok, want.ok) || !sameBits(got.dev, want.dev) || !sameBits(got.cost, want.cost) {
				t.Errorf("ladder %v: the simulation differs from the oracle's", levels)
			}
			for i, z := range got.z {
				if j := i % got.levels; math.Float64bits(got.zs[i]) != math.Float64bits(z*got.dev[j]) {
					t.Fatalf("ladder %v: z·S at %d is %v, want %v", levels, i, got.zs[i], z*got.dev[j])
				}
			}
			into = got
		}
	}
}

// TestLadderScoreMatchesOracle: the scores of every κ of a list in one
// pass, and their expectations with each threshold step, are those of
// the oracle's walk of each κ alone, to the bit: on ladders of one to
// eight levels, one to twelve replicates, give-up fractions 0 to 2, κ
// lists of the search, of one κ (0 among them), uneven and with repeats,
// and gaps that fall on a κ or a give-up test's side exactly, just beside
// them, at 0, +Inf and NaN. (Run it with GOAMD64=v3 too: a build that
// fuses multiplications and additions must fuse both alike.)
func TestLadderScoreMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	r := randomProxy(100, 5, 80, 5)
	s := newSimulator(r, 0)
	steps := append(s.thresholdSteps(), s.step(37, 3.3))
	lists := [][]float64{kappas(), {0}, {1.45}, {0.3, 0.3, 0.9, 1, 1, 2.5, 7}, {0.5, 0.55, 3}}
	gs := []float64{0, 0.25, 1, 2, 0.37}
	var sc ladderScore
	est := make([]estimate, len(kappas()))
	for trial := range 60 {
		levels, reps := 1+rng.IntN(8), []int{1, 3, 12}[rng.IntN(3)]
		ks, g := lists[trial%len(lists)], gs[trial%len(gs)]
		st := syntheticRun(rng, s, levels, reps, ks, g)
		ost := &oracleState{s: s, levels: st.levels, reps: reps, z: st.z, ok: st.ok, dev: st.dev, cost: st.cost}
		if err := st.score(context.Background(), ks, g, &sc); err != nil {
			t.Fatal(err)
		}
		for i, kappa := range ks {
			var o oracleScore
			ost.score(kappa, g, &o)
			for u, top := range s.tops {
				at := u*sc.stride + i
				same := sameBits([]float64{sc.cost[at], sc.answer[at], sc.agree[at]}, []float64{o.cost[top], o.answer[top], o.agree[top]})
				if u < s.lowRows { // the low-consensus sums are these
					same = same && sameBits([]float64{sc.answer[at], sc.agree[at]}, []float64{o.lowAnswer[top], o.lowAgree[top]})
				}
				if !same {
					t.Fatalf("trial %d (%d levels, %d replicates, g %v): κ %v, plurality count %d: the sums differ from the oracle's", trial, levels, reps, g, kappa, top)
				}
			}
			for _, th := range steps {
				sc.at(s, th, 0.25, est[:len(ks)])
				if want := o.at(s, th, 0.25); fmt.Sprintf("%#v", est[i]) != fmt.Sprintf("%#v", want) {
					t.Fatalf("trial %d: κ %v, step (%v, %v): %+v, oracle %+v", trial, kappa, th.t, th.sigma, est[i], want)
				}
			}
		}
	}
}

// syntheticRun returns a simulated ladder of the given levels whose gaps
// z lie on, beside and between the κ of ks and the give-up test's sides
// of g, with 0, +Inf and NaN among them.
func syntheticRun(rng *rand.Rand, s *simulator, levels, reps int, ks []float64, g float64) *runState {
	n := len(s.p.Counts) * reps * levels
	st := &runState{s: s, levels: levels, reps: reps, z: make([]float64, n), zs: make([]float64, n), ok: make([]bool, n)}
	var precision, cost float64
	for range levels {
		x := 1 + 80*rng.Float64()
		precision += 1 / (x * x)
		cost += 2 / (x * x)
		st.dev = append(st.dev, 1/math.Sqrt(precision))
		st.cost = append(st.cost, cost)
	}
	last := st.dev[levels-1]
	for i := range st.z {
		j := i % levels
		kappa := ks[rng.IntN(len(ks))]
		var z float64
		switch rng.IntN(8) {
		case 0:
			z = kappa
		case 1:
			z = math.Nextafter(kappa, math.Inf(rng.IntN(2)*2-1))
		case 2:
			// On the give-up test's side, where a z·S_j meets it.
			z = g * kappa * last / st.dev[j]
			for range 4 {
				if z*st.dev[j] == g*kappa*last {
					break
				}
				z = math.Nextafter(z, math.Inf(1))
			}
		case 3:
			z = []float64{0, math.Inf(1), math.NaN()}[rng.IntN(3)]
		default:
			z = 3.5 * rng.Float64()
		}
		st.z[i], st.zs[i], st.ok[i] = z, z*st.dev[j], rng.IntN(4) != 0
	}
	return st
}

// sameBits reports whether a and b hold the same float64 values, bit for bit.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestProgressivePlanCancelled: a plan whose context ends, before it or
// in its search of the ladders, stops with the context's error.
func TestProgressivePlanCancelled(t *testing.T) {
	r := randomProxy(100, 5, 300, 8)
	r.Budget = accountant.Guarantee{Eps: 2, Delta: 1e-5}
	// The baseline's simulation of 300 queries asks the context twice.
	for _, n := range []int64{0, 2, 40} {
		ctx := &endsAfter{Context: context.Background(), n: n}
		if _, err := (ProgressiveGNMax{}).planOnProxy(ctx, r); !errors.Is(err, context.Canceled) {
			t.Errorf("a plan cancelled after %d looks: %v, want %v", n, err, context.Canceled)
		}
	}
}

// endsAfter is a context that ends when asked after n looks at it.
type endsAfter struct {
	context.Context
	looks atomic.Int64
	n     int64
}

func (c *endsAfter) Err() error {
	if c.looks.Add(1) > c.n {
		return context.Canceled
	}
	return nil
}
