package pate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/votefile"
)

// ptrMemo is the memo of the package's tests (testMemo is this package's
// part of it): a plan costs up to a second of CPU, and several tests plan,
// release and account with the same settings, as a program holding one
// accountant.Memo would.
var ptrMemo = new(accountant.Memo)

// releasePTR plans a PTR release of the first opts.Queries queries of
// counts (every query when 0) by s's mechanism (PlanPTR) and releases s as
// the plan says (ReleasePTR), as darrm aggregate --accounting ptr does.
func releasePTR(s ensemble.ReleaseSpec, counts [][]int, opts PTROptions) (ensemble.Released, PTRResult, error) {
	if opts.Queries == 0 {
		opts.Queries = len(counts)
	}
	plan, err := PlanPTR(ptrMemo, s.Mechanism, s.Votes.Classes(), opts)
	if err != nil {
		return ensemble.Released{}, plan, err
	}
	return ReleasePTR(context.Background(), s, counts, plan)
}

// synthCounts returns n queries of k teachers' counts over c classes: in
// a share high of them each teacher votes the query's class with
// probability 0.95, in the others with probability 0.3, and otherwise a
// uniform other class.
func synthCounts(r *rand.Rand, n, k, c int, high float64) [][]int {
	out := make([][]int, n)
	for i := range out {
		p := 0.3
		if r.Float64() < high {
			p = 0.95
		}
		truth := r.IntN(c)
		row := make([]int, c)
		for range k {
			if r.Float64() < p {
				row[truth]++
				continue
			}
			o := r.IntN(c - 1)
			if o >= truth {
				o++
			}
			row[o]++
		}
		out[i] = row
	}
	return out
}

// TestPTRLocalSensitivityBruteForce checks the local sensitivity at every
// distance d that ptrBound gives one query against brute force: the
// largest change of the bound between a histogram within d of the query's
// and any of its neighbours, over every histogram of K teachers and C
// classes, with and without abstaining teachers.
func TestPTRLocalSensitivityBruteForce(t *testing.T) {
	for _, c := range []struct {
		name    string
		k, cl   int
		m       noisymax.Steps
		order   float64
		abstain bool
	}{
		{"confident-gnmax", 14, 3, noisymax.Steps{Threshold: 10, Sigma1: 2, Sigma2: 1, Noise: noisymax.DiscreteNoise}, 2, false},
		{"confident-gnmax abstain", 12, 3, noisymax.Steps{Threshold: 8, Sigma1: 1.5, Sigma2: 1, Noise: noisymax.DiscreteNoise}, 2, true},
		{"confident-gnmax continuous", 14, 3, noisymax.Steps{Threshold: 10, Sigma1: 2, Sigma2: 1.5, Noise: noisymax.ContinuousNoise}, 2, false},
		{"confident-gnmax four classes", 10, 4, noisymax.Steps{Threshold: 6, Sigma1: 1, Sigma2: 0.8, Noise: noisymax.DiscreteNoise}, 1.5, true},
		{"gnmax", 12, 3, noisymax.Steps{Sigma2: 1, Noise: noisymax.DiscreteNoise}, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := newSpace(neighbours{abstain: c.abstain, teachers: c.k}, c.cl)
			hs := sp.hs
			f := make([]float64, len(hs))
			ls := make([][]float64, len(hs))
			varies := false
			for i, h := range hs {
				acct, err := newRDPAccount(c.m, c.k, c.cl, rdpOptions{memo: testMemo, Orders: []float64{c.order}, Abstain: c.abstain})
				if err != nil {
					t.Fatal(err)
				}
				if err := acct.add(h, answerUnknown); err != nil {
					t.Fatal(err)
				}
				if f[i], ls[i], err = acct.ptrBound(context.Background(), c.order); err != nil {
					t.Fatal(err)
				}
				varies = varies || f[i] != f[0]
			}
			if !varies {
				t.Fatal("the bound is the same at every histogram: nothing is checked")
			}
			local := sp.localSensitivity(f)
			tight := 0.0
			for i, x := range hs {
				for d := 0; d <= c.k; d++ {
					brute := 0.0
					for j := range hs {
						if sp.dist(i, j) <= d {
							brute = math.Max(brute, local[j])
						}
					}
					if brute > ls[i][d]*(1+1e-12)+1e-15 {
						t.Fatalf("%v at distance %d: a change of %g by brute force, above the bound %g", x, d, brute, ls[i][d])
					}
					if brute > 0 {
						tight = math.Max(tight, brute/ls[i][d])
					}
				}
			}
			t.Logf("largest brute-force change over the bound: %.3f", tight)
		})
	}
}

// TestPTRDistanceLipschitz checks, by brute force, that the distance to
// instability the test draws on (ptrDistance) changes by at most one
// between neighbouring votes: for every pair of histograms of two queries
// at small K and C and every neighbour of the pair (each query's
// histogram itself or one of its neighbours: a changed teacher changes
// every query), at proposals across the bound's range. This is what the
// test's privacy rests on, and it holds only if the local sensitivity at
// a neighbour is at most the one at the next distance.
func TestPTRDistanceLipschitz(t *testing.T) {
	// Under -short three proposals of the six, at a smaller size: each
	// checks every pair of histograms and every neighbour of the pair.
	step := 1
	if testing.Short() {
		step = 2
	}
	for _, c := range []struct {
		name    string
		k, cl   int
		m       noisymax.Steps
		order   float64
		abstain bool
	}{
		{"confident-gnmax", 14, 3, noisymax.Steps{Threshold: 10, Sigma1: 2, Sigma2: 1, Noise: noisymax.DiscreteNoise}, 2, false},
		{"confident-gnmax abstain", 12, 3, noisymax.Steps{Threshold: 8, Sigma1: 1.5, Sigma2: 1, Noise: noisymax.DiscreteNoise}, 2, true},
		{"gnmax", 12, 3, noisymax.Steps{Sigma2: 1, Noise: noisymax.DiscreteNoise}, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := newSpace(neighbours{abstain: c.abstain, teachers: c.k}, c.cl)
			n := len(sp.hs)
			f := make([]float64, n)
			ls := make([][]float64, n)
			near := make([][]int, n)
			var margin float64
			for i, h := range sp.hs {
				acct, err := newRDPAccount(c.m, c.k, c.cl, rdpOptions{memo: testMemo, Orders: []float64{c.order}, Abstain: c.abstain})
				if err != nil {
					t.Fatal(err)
				}
				if err := acct.add(h, answerUnknown); err != nil {
					t.Fatal(err)
				}
				if f[i], ls[i], err = acct.ptrBound(context.Background(), c.order); err != nil {
					t.Fatal(err)
				}
				if margin, err = acct.margin(c.order); err != nil {
					t.Fatal(err)
				}
				near[i] = []int{i}
				for _, y := range relNeighbours(sp.rel, h) {
					near[i] = append(near[i], sp.index[fmt.Sprint(y)])
				}
			}
			lo, hi := math.Inf(1), 0.0
			for i := range f {
				lo, hi = math.Min(lo, f[i]), math.Max(hi, f[i]+ls[i][len(ls[i])/2])
			}
			seen := map[int]bool{}
			for p := 1; p <= 6; p += step {
				proposal := 2*lo + (2*hi-2*lo)*float64(p)/6
				g := make([]int, n*n)
				for i1 := range n {
					for i2 := range n {
						sum := make([]float64, len(ls[i1]))
						for d := range sum {
							sum[d] = ls[i1][d] + ls[i2][d]
						}
						g[i1*n+i2] = ptrDistance(f[i1]+f[i2], sum, 2*margin, proposal)
						seen[g[i1*n+i2]] = true
					}
				}
				for i1 := range n {
					for i2 := range n {
						for _, j1 := range near[i1] {
							for _, j2 := range near[i2] {
								if a, b := g[i1*n+i2], g[j1*n+j2]; a-b > 1 || b-a > 1 {
									t.Fatalf("proposal %g: distance %d at %v, %v and %d at its neighbour %v, %v", proposal, a, sp.hs[i1], sp.hs[i2], b, sp.hs[j1], sp.hs[j2])
								}
							}
						}
					}
				}
			}
			if len(seen) < 5 {
				t.Fatalf("distances %v: too few to check anything", seen)
			}
			t.Logf("%d distances seen", len(seen))
		})
	}
}

// TestPTRFalsePassRate draws the test many times at votes whose bound
// lies just above the proposal, where it passes only falsely, with the
// budget's δ set so that the false-pass bound is 0.05: the rate must be
// within four standard deviations of the bound (at the boundary, the
// distance to instability -1, the bound is the rate, up to the slack:
// Φ(-z + 2^-20 + 2^-40) against Φ(-z)).
func TestPTRFalsePassRate(t *testing.T) {
	m := noisymax.Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}
	votes := synthCounts(rand.New(rand.NewPCG(7, 8)), 40, 250, 10, 0.5)
	r, err := ptrRule(testMemo, m, 10, len(votes), PTROptions{Budget: accountant.Guarantee{Eps: 4, Delta: 0.05 / (1 - ptrShareTest)}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.FalsePass-0.05) > 1e-6 {
		t.Fatalf("false-pass bound %v, want 0.05", r.FalsePass)
	}
	acct, err := newRDPAccount(m, 250, 10, rdpOptions{memo: testMemo, Orders: []float64{r.Order}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range votes {
		if err := acct.add(v, answerUnknown); err != nil {
			t.Fatal(err)
		}
	}
	f, _, err := acct.ptrBound(context.Background(), r.Order)
	if err != nil {
		t.Fatal(err)
	}
	r.Proposal = math.Nextafter(f, 0) // f > the proposal: a pass is false
	g, err := acct.ptrStatistic(context.Background(), r)
	if err != nil || g != -1 {
		t.Fatalf("distance to instability %d (%v) above the proposal, want -1", g, err)
	}
	// Under -short 5,000 draws, at a smaller size: the bound within four
	// of their standard deviations, twice 20,000's.
	n := 20000
	if testing.Short() {
		n = 5000
	}
	src := noise.NewSeededSource(70)
	passed := 0
	for range n {
		ok, err := ptrDraw(g, r, src)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			passed++
		}
	}
	rate, sd := float64(passed)/float64(n), math.Sqrt(r.FalsePass*(1-r.FalsePass)/float64(n))
	if math.Abs(rate-r.FalsePass) > 4*sd {
		t.Errorf("false passes: %d of %d (%.4f), want %.4f within %.4f", passed, n, rate, r.FalsePass, 4*sd)
	}
}

// TestLogPhiAboveOne: above phiOne logPhiUp and logPhiDown return the
// bounds they would compute there (math.Erfc is 2 below -6).
func TestLogPhiAboveOne(t *testing.T) {
	xs := []float64{math.Nextafter(phiOne, math.Inf(1)), 8.6, 9, 12, 28 * math.Sqrt2, 40, ptrClamp + ptrSlack, 1e10, 1e300, math.Inf(1)}
	for x := phiOne; x < 60; x += 0x1p-7 {
		xs = append(xs, math.Nextafter(x, math.Inf(1)))
	}
	for _, x := range xs {
		if up, down := logPhiUpAt(x), logPhiDownAt(x); math.Float64bits(logPhiUp(x)) != math.Float64bits(up) || math.Float64bits(logPhiDown(x)) != math.Float64bits(down) {
			t.Errorf("at %v: bounds %v, %v; computed there %v, %v", x, logPhiUp(x), logPhiDown(x), up, down)
		}
	}
}

// bruteBitRDP returns the largest Rényi divergence at order λ between
// the test's outcomes, Bern(Φ(clamp(u - z))) against Bern(Φ(clamp(u' -
// z))), over u on a grid of step 1/256 in [-50, 50] and, at each u,
// u' - u in {-1/σ, 0, 1/σ}: plain float arithmetic, no slack, no cells.
func bruteBitRDP(sigma, z, order float64) float64 {
	logPhi := func(x float64) float64 { return logErfc(-x/math.Sqrt2) - math.Ln2 }
	clamp := func(x float64) float64 { return math.Max(-ptrClamp, math.Min(ptrClamp, x)) }
	worst := 0.0
	for i := -50 * 256; i <= 50*256; i++ {
		u := float64(i) / 256
		a := clamp(u - z)
		// Each Φ once: u + 0/σ is u, so b is a at j = 0.
		pa, qa := logPhi(a), logPhi(-a)
		for j := -1; j <= 1; j++ {
			pb, qb := pa, qa
			if j != 0 {
				b := clamp(u + float64(j)/sigma - z)
				pb, qb = logPhi(b), logPhi(-b)
			}
			t1 := order*pa + (1-order)*pb
			t2 := order*qa + (1-order)*qb
			m := math.Max(t1, t2)
			worst = math.Max(worst, (m+math.Log(math.Exp(t1-m)+math.Exp(t2-m)))/(order-1))
		}
	}
	return worst
}

// TestPTRBitRDPBruteForce checks the test's Rényi DP (ptrTestRDP) against
// brute force (bruteBitRDP): never below it, and within 3% of it plus
// 10^-4 (the cells' and the slack's excess).
func TestPTRBitRDPBruteForce(t *testing.T) {
	for _, c := range []struct{ sigma, z, order float64 }{
		{4.1, 4.27, 10.2},
		{3, 4.33, 10.2},
		{10, 3, 6},
		{2, 2, 2},
		{20, 5, 30},
		{1, 1, 1.5},
	} {
		got, err := ptrTestRDP(testMemo, c.sigma, c.z, c.order)
		if err != nil {
			t.Fatal(err)
		}
		brute := bruteBitRDP(c.sigma, c.z, c.order)
		if got < brute || got > brute*1.03+1e-4 {
			t.Errorf("%+v: bound %v, brute force %v", c, got, brute)
		}
	}
}

// TestPTRLeastConversion checks ptrLeastConversion, which skips the orders
// whose lower bound (ptrTestLower) rules them out, against the least
// conversion over every order computed, for the test alone and composed
// with a release of Rényi DP λ·slope (rounded up, as ptrFallback adds it),
// and each lower bound against the bound. Under -short at a smaller size:
// the orders up to 8 (each bound a few milliseconds of CPU, where those at
// 24 to 64 take a tenth of a second), which still rule each other out.
func TestPTRLeastConversion(t *testing.T) {
	orders := ptrTestOrders(10.2)
	if testing.Short() {
		orders = []float64{1.5, 2, 3, 4, 6, 8}
	}
	for _, c := range []struct{ sigma, z, delta float64 }{
		{4.05, 4.27, 2e-7},
		{12.5, 1.64, 1e-3},
	} {
		lower := ptrTestLower(c.sigma, orders)
		rdp := make([]float64, len(orders))
		for i, o := range orders {
			var err error
			if rdp[i], err = ptrTestRDP(testMemo, c.sigma, c.z, o); err != nil {
				t.Fatal(err)
			}
			if !(lower[i] > 0 && lower[i] <= rdp[i]) {
				t.Errorf("%+v at order %v: lower bound %v, bound %v", c, o, lower[i], rdp[i])
			}
		}
		// Slopes from 0 to 1 by 0.05: the least order moves from the
		// highest to the lowest.
		for k := range 21 {
			slope := float64(k) / 20
			want := math.Inf(1)
			for i, o := range orders {
				e, err := accountant.ImprovedConversion.ConvertRDP(outward.AddUp(rdp[i], outward.MulUp(o, slope)), o, c.delta)
				if err != nil {
					t.Fatal(err)
				}
				want = math.Min(want, e)
			}
			got, err := ptrLeastConversion(testMemo, c.sigma, c.z, orders, lower, c.delta, slope)
			if err != nil || got != want {
				t.Errorf("%+v, slope %v: least conversion %v (%v), over every order %v", c, slope, got, err, want)
			}
		}
	}
}

// TestPTRDrawPassProbability draws the test at three distances to
// instability g, standardised gaps u - z = (g + 1)/σ - z, and checks the
// pass rate against Φ(u - z) within four standard deviations.
func TestPTRDrawPassProbability(t *testing.T) {
	src := noise.NewSeededSource(71)
	r := PTRResult{Sigma: 4, Margin: 2}
	// Under -short 5,000 draws at each g, at a smaller size: the rate
	// within four of their standard deviations, twice 20,000's.
	n := 20000
	if testing.Short() {
		n = 5000
	}
	for _, g := range []int{1, 8, 15} {
		a := float64(g+1)/r.Sigma - r.Margin
		passed := 0
		for range n {
			ok, err := ptrDraw(g, r, src)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				passed++
			}
		}
		p := math.Erfc(-a/math.Sqrt2) / 2
		if rate, sd := float64(passed)/float64(n), math.Sqrt(p*(1-p)/float64(n)); math.Abs(rate-p) > 4*sd {
			t.Errorf("gap %v: passed %.4f, want %.4f within %.4f", a, rate, p, 4*sd)
		}
	}
}

// TestPTRTotal checks the plan's total against an independent computation
// of each piece: the test's Rényi DP by brute force (bruteBitRDP), the
// conversion of the proposal plus the test's cost by Canonne, Kamath and
// Steinke's Proposition 12, the false-pass bound from erfc, and the
// published (ε, δ) as their maxima; and the bound tested, for continuous
// noise, from erfc and gnmaxRDP by plain float arithmetic. Under -short
// it plans within one budget, not three: each plan and its brute force
// take about a second of CPU, and the pieces are the same code at each.
func TestPTRTotal(t *testing.T) {
	m := noisymax.Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.ContinuousNoise}
	budgets := []accountant.Guarantee{{Eps: 2, Delta: 1e-5}, {Eps: 4, Delta: 1e-6}, {Eps: 8, Delta: 1e-8}}
	if testing.Short() {
		budgets = budgets[:1]
	}
	for _, b := range budgets {
		r, err := ptrRule(testMemo, m, 10, 300, PTROptions{Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		l := r.Order
		rhoT := bruteBitRDP(r.Sigma, r.Margin, l)
		if r.TestRDP < rhoT || r.TestRDP > rhoT*1.03+1e-4 {
			t.Errorf("%v: test's Renyi DP %v, brute force %v", b, r.TestRDP, rhoT)
		}
		eps1 := r.Proposal + r.TestRDP + math.Log((l-1)/l) - (math.Log(b.Delta)+math.Log(l))/(l-1)
		if eps1 > b.Eps+1e-9 || eps1 < b.Eps-1e-6 {
			t.Errorf("%v: the proposal and the test convert to %v, want the budget's eps", b, eps1)
		}
		fp := math.Erfc((r.Margin-ptrSlack)/math.Sqrt2) / 2
		if math.Abs(fp-r.FalsePass) > 1e-9*fp || fp > (1-ptrShareTest)*b.Delta {
			t.Errorf("%v: false-pass bound %v, want %v <= %v", b, r.FalsePass, fp, (1-ptrShareTest)*b.Delta)
		}
		want := accountant.Guarantee{Eps: math.Max(eps1, r.Test.Eps), Delta: math.Max(b.Delta, r.Test.Delta+fp)}
		if r.Publish.Eps > b.Eps || r.Publish.Delta > b.Delta || math.Abs(r.Publish.Eps-want.Eps) > 1e-6 || math.Abs(r.Publish.Delta-want.Delta) > 1e-12 {
			t.Errorf("%v: publishes %v, want %v within the budget", b, r.Publish, want)
		}
	}

	votes := synthCounts(rand.New(rand.NewPCG(3, 4)), 50, 250, 10, 0.5)
	const order = 8.0
	acct, err := newRDPAccount(m, 250, 10, rdpOptions{memo: testMemo, Orders: []float64{order}})
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0
	pass := func(v float64) float64 { return math.Erfc((m.Threshold-v)/(m.Sigma1*math.Sqrt2)) / 2 }
	for _, q := range votes {
		if err := acct.add(q, answerUnknown); err != nil {
			t.Fatal(err)
		}
		v := float64(q[argmax(q)])
		tq, pq := 0.0, 0.0
		for _, w := range []float64{v - 1, v, v + 1} {
			if w < 0 || w > 250 {
				continue
			}
			for _, o := range [][2]float64{{v, w}, {w, v}} {
				p, p2 := pass(o[0]), pass(o[1])
				x := math.Pow(1-p, order) * math.Pow(1-p2, 1-order)
				y := math.Pow(p, order) * math.Pow(p2, 1-order)
				tq = math.Max(tq, math.Log(x+y)/(order-1))
				pq = math.Max(pq, y/(x+y))
			}
		}
		lq, err := checkedGNMaxNeighbourLogQ(q, m.Sigma2, m.Noise, neighbours{teachers: 250})
		if err != nil {
			t.Fatal(err)
		}
		bq, err := gnmaxRDP(lq, m.Sigma2, order)
		if err != nil {
			t.Fatal(err)
		}
		want += tq + pq*math.Expm1((order-1)*bq)/(order-1)
	}
	f, _, err := acct.ptrBound(context.Background(), order)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f-want) > 1e-9*want {
		t.Errorf("bound tested %v, want %v", f, want)
	}
}

// TestPTRFallback checks the fallback a failed test may release against an
// independent computation: with PTROptions.Fallback the total is the same
// as without; the fallback's Q queries fit, at the bound's order, within
// the proposal (Q times the data-independent slope times λ), and the test
// and the fallback composed, by the brute force of the test's Rényi DP
// (bruteBitRDP) and Canonne, Kamath and Steinke's conversion at δ_t at one
// of the orders, within the total's ε; 2% more queries fit neither. A
// release whose test fails then labels the Q queries, its header stating
// the proposal, and an account of those labels recomputes its total.
func TestPTRFallback(t *testing.T) {
	m := noisymax.Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}
	b := accountant.Guarantee{Eps: 2, Delta: 1e-5}
	const n = 600
	plain, err := ptrRule(testMemo, m, 10, n, PTROptions{Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ptrRule(testMemo, m, 10, n, PTROptions{Budget: b, Fallback: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Publish != plain.Publish || plain.Fallback != 0 || r.Fallback < 1 || r.Fallback >= n {
		t.Fatalf("with a fallback of %d: total %v, without (fallback %d): %v", r.Fallback, r.Publish, plain.Fallback, plain.Publish)
	}
	slope := 1/(40*40.0) + 1/(2*150*150.0) // GNMax's λ/σ2², the threshold's λ/(2σ1²)
	orders := ptrTestOrders(r.Order)
	brute := make([]float64, len(orders))
	for i, o := range orders {
		brute[i] = bruteBitRDP(r.Sigma, r.Margin, o)
	}
	fits := func(q int) bool {
		if r.Order*slope*float64(q) > r.Proposal {
			return false
		}
		for i, o := range orders {
			rho := brute[i] + o*slope*float64(q)
			if rho+math.Log((o-1)/o)-(math.Log(b.Delta*ptrShareTest)+math.Log(o))/(o-1) <= r.Publish.Eps {
				return true
			}
		}
		return false
	}
	if !fits(r.Fallback) || fits(r.Fallback+r.Fallback/50+1) {
		t.Errorf("fallback of %d queries: fits %v, %d fit %v; want it to fit and not the other", r.Fallback, fits(r.Fallback), r.Fallback+r.Fallback/50+1, fits(r.Fallback+r.Fallback/50+1))
	}

	counts := synthCounts(rand.New(rand.NewPCG(7, 8)), n, 250, 10, 0)
	var labels bytes.Buffer
	s := ensemble.ReleaseSpec{Votes: countsReader(t, counts, accountant.OneVote), Mechanism: ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}},
		Sink: ensemble.LabelSink{Stdout: &labels}, Random: noise.NewSeededSource(3), Options: ensemble.ReleaseOptions{Experiment: true}}
	out, rel, err := releasePTR(s, counts, PTROptions{Budget: b, Fallback: true})
	if err != nil || rel.Pass || out.Result.Released != r.Fallback || out.Publish.Guarantee != r.Publish {
		t.Fatalf("release: %v, pass %v, %d released, total %v; want no error, the test failed, the fallback's %d and %v", err, rel.Pass, out.Result.Released, out.Publish.Guarantee, r.Fallback, r.Publish)
	}
	lr, err := votefile.NewLabelReader(&labels, "labels")
	if err != nil {
		t.Fatal(err)
	}
	if h := lr.Meta(); h == nil || h.Total == nil || h.Total.FallbackOf != n {
		t.Errorf("label header %+v, want the fallback of the %d queries proposed", h, n)
	}
	got, err := labelsPTR(testMemo, AccountOptions{Memo: ptrMemo, Labels: lr, Mechanism: classMechanism(ensemble.ConfidentGNMax{}.Name(), m, 1e-5)}, 10, r.Fallback)
	if err != nil || got.Publish != r.Publish || got.Pass {
		t.Errorf("account of the fallback's labels: %+v, %v; want the total %v, not passed", got, err, r.Publish)
	}
}

// TestPTRBoundHoldsExactly checks the bound PTR tests against the exact
// Rényi divergences, in both directions, between Confident-GNMax's output
// distributions (withheld, or each label) at every histogram and each of
// its neighbours, summed over the discrete noise (exactThreshold,
// exactGNMax), at small K and C, with and without abstaining teachers.
func TestPTRBoundHoldsExactly(t *testing.T) {
	m := noisymax.Steps{Threshold: 10, Sigma1: 2, Sigma2: 1, Noise: noisymax.DiscreteNoise}
	const order = 2.0
	for _, rel := range relations(12) {
		out := func(x []int) []float64 {
			th := exactThreshold(t, x[argmax(x)], m.Threshold, m.Sigma1)
			o := []float64{th[1]}
			for _, g := range exactGNMax(t, x, m.Sigma2) {
				o = append(o, th[0]*g)
			}
			return o
		}
		worst := 0.0
		for _, x := range relHistograms(rel, 3) {
			acct, err := newRDPAccount(m, rel.teachers, 3, rdpOptions{memo: testMemo, Orders: []float64{order}, Abstain: rel.abstain})
			if err != nil {
				t.Fatal(err)
			}
			if err := acct.add(x, answerUnknown); err != nil {
				t.Fatal(err)
			}
			f, _, err := acct.ptrBound(context.Background(), order)
			if err != nil {
				t.Fatal(err)
			}
			p := out(x)
			for _, y := range distinctNeighbours(rel, x) {
				q := out(y)
				fwd, _ := renyi(p, q, order)
				rev, _ := renyi(q, p, order)
				if d := math.Max(fwd, rev); d > f {
					t.Fatalf("%+v: %v to %v: divergence %v above the bound %v", rel, x, y, d, f)
				} else {
					worst = math.Max(worst, d/f)
				}
			}
		}
		t.Logf("%+v: largest divergence over the bound %.3f", rel, worst)
	}
}

// TestPTRQueries checks the plan on proxy votes: the N it returns passes
// with at least the probability asked, N + 1 with less.
// TestPlanPTRQueriesBounded: a proposal of more queries than the
// accountant counts exactly (accountant.CountLimit) is refused, naming
// the queries, as a plan refuses it, where 2^60 were planned.
func TestPlanPTRQueriesBounded(t *testing.T) {
	m := ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 10}
	for _, q := range []int{accountant.CountLimit + 1, 1 << 60} {
		r, err := PlanPTR(nil, m, 3, PTROptions{Budget: accountant.Guarantee{Eps: 2, Delta: 1e-5}, Queries: q})
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != "queries" {
			t.Errorf("%d queries: plan of %d, %v; want an error naming the queries", q, r.Queries, err)
		}
	}
}

func TestPTRQueries(t *testing.T) {
	if testing.Short() {
		t.Skip("a search of PTR plans takes seconds")
	}
	m := ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Sigma2: 40, Noise: noisymax.DiscreteNoise}}
	proxy := synthCounts(rand.New(rand.NewPCG(5, 6)), 400, 250, 10, 0.5)
	opts := PTROptions{Budget: accountant.Guarantee{Eps: 1, Delta: 1e-5}}
	r, p, err := PTRQueries(context.Background(), nil, proxy, 250, 10, m, opts, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	n := r.Queries
	if n < 1 || n >= len(proxy) || p < 0.9 {
		t.Fatalf("N = %d at pass probability %v", n, p)
	}
	opts.Queries = n
	g, err := ptrFamily(m, 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ptrPlanned{mech: g, classes: 10, budget: opts.Budget}); r.planned != want {
		t.Errorf("the plan of N = %d is for %+v, want %+v", n, r.planned, want)
	}
	got := r
	got.planned = ptrPlanned{} // the search's own plans record nothing
	if want, q, err := ptrPassProbability(context.Background(), testMemo, proxy, 250, 10, m, opts, true); err != nil || q != p || want != got {
		t.Errorf("the plan of N = %d: %+v at %v, want %+v at %v (%v)", n, got, p, want, q, err)
	}
	opts.Queries = n + 1
	if _, q, err := ptrPassProbability(context.Background(), testMemo, proxy, 250, 10, m, opts, true); err != nil || q >= 0.9 {
		t.Errorf("N + 1 = %d passes with probability %v (%v), want below 0.9", n+1, q, err)
	}
}

// TestReleasePTR releases labels by generalized PTR through
// ensemble.Release: on high-consensus votes the test passes and the first
// N queries are labelled, the label file's header stating the accounting
// and the total; on low-consensus votes of many queries it fails, and
// nothing is written. Either way the total published is the plan's, by
// PTRArgument, within the budget; the same seed draws the same test.
func TestReleasePTR(t *testing.T) {
	m := ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}}
	budget := accountant.Guarantee{Eps: 2, Delta: 1e-5}
	for _, tc := range []struct {
		name       string
		n, queries int
		high       float64
		pass       bool
		labelled   int
	}{
		{name: "pass", n: 60, queries: 40, high: 1, pass: true, labelled: 40},
		{name: "fail", n: 600, high: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counts := synthCounts(rand.New(rand.NewPCG(7, 8)), tc.n, 250, 10, tc.high)
			var first PTRResult
			for run := range 2 {
				var labels bytes.Buffer
				s := ensemble.ReleaseSpec{Votes: countsReader(t, counts, accountant.OneVote), Mechanism: m,
					Sink: ensemble.LabelSink{Stdout: &labels}, Random: noise.NewSeededSource(3), Options: ensemble.ReleaseOptions{Experiment: true}}
				out, r, err := releasePTR(s, counts, PTROptions{Budget: budget, Queries: tc.queries})
				switch {
				case tc.pass && err != nil:
					t.Fatalf("release: %v", err)
				case !tc.pass && !errors.Is(err, ensemble.ErrTestFailed):
					t.Fatalf("release: %v, want the test to fail", err)
				}
				if r.Pass != tc.pass || out.Result.Released != tc.labelled {
					t.Fatalf("pass %v, %d released; want %v, %d", r.Pass, out.Result.Released, tc.pass, tc.labelled)
				}
				p := out.Publish
				if p.Argument != PTRArgument || p.Name() != PTRArgument || p.Guarantee != r.Publish || p.Guarantee.Eps > budget.Eps || p.Guarantee.Delta > budget.Delta {
					t.Errorf("publishes %+v, want the plan's %v by %q within %v", p, r.Publish, PTRArgument, budget)
				}
				if run == 0 {
					first = r
				} else if r != first {
					t.Errorf("seeded runs differ: %+v, %+v", first, r)
				}
				if !tc.pass {
					if labels.Len() != 0 {
						t.Errorf("a failed test wrote %q", labels.String())
					}
					return
				}
				lr, err := votefile.NewLabelReader(&labels, "labels")
				if err != nil {
					t.Fatal(err)
				}
				h := lr.Meta()
				if h == nil || h.Accounting != "ptr" || h.Total == nil || h.Total.Argument != PTRArgument || h.Total.Eps != r.Publish.Eps || h.Total.Delta != r.Publish.Delta {
					t.Errorf("label header %+v, want accounting ptr and the total %v", h, r.Publish)
				}
			}
		})
	}
}

// TestReleasePTRVotesChanged: a PTR release labels only the votes its
// test was drawn on; a reader whose rows differ from them (a file changed
// between the test's read and the release's) stops at the first such row.
func TestReleasePTRVotesChanged(t *testing.T) {
	m := ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}}
	counts := synthCounts(rand.New(rand.NewPCG(7, 8)), 60, 250, 10, 1)
	read := make([][]int, len(counts))
	for i := range counts {
		read[i] = slices.Clone(counts[i])
	}
	read[5][0], read[5][1] = read[5][1], read[5][0]
	if slices.Equal(read[5], counts[5]) {
		t.Fatal("the changed row equals the tested one")
	}
	var labels bytes.Buffer
	s := ensemble.ReleaseSpec{Votes: countsReader(t, read, accountant.OneVote), Mechanism: m,
		Sink: ensemble.LabelSink{Stdout: &labels}, Random: noise.NewSeededSource(3), Options: ensemble.ReleaseOptions{Experiment: true}}
	out, r, err := releasePTR(s, counts, PTROptions{Budget: accountant.Guarantee{Eps: 2, Delta: 1e-5}, Queries: 40})
	if !r.Pass {
		t.Fatalf("the test failed (%v); the case needs one that passes", err)
	}
	if err == nil || !strings.Contains(err.Error(), "the votes changed since they were tested") {
		t.Fatalf("release of changed votes: %v, want it refused", err)
	}
	if out.Result.Released > 5 {
		t.Errorf("%d queries released, want at most the 5 before the changed one", out.Result.Released)
	}
}

// TestReleasePTRSeeded checks that a seeded stream, whose test outcome
// anyone who knows the seed could read, is refused before the test unless
// the run is declared an experiment.
func TestReleasePTRSeeded(t *testing.T) {
	m := ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}}
	// TestReleasePTR's votes and proposal, whose plan (a second of CPU,
	// made before the refusal) ptrMemo keeps.
	counts := synthCounts(rand.New(rand.NewPCG(7, 8)), 60, 250, 10, 1)
	var labels bytes.Buffer
	s := ensemble.ReleaseSpec{Votes: countsReader(t, counts, accountant.OneVote), Mechanism: m,
		Sink: ensemble.LabelSink{Stdout: &labels}, Random: noise.NewSeededSource(3)}
	out, r, err := releasePTR(s, counts, PTROptions{Budget: accountant.Guarantee{Eps: 2, Delta: 1e-5}, Queries: 40})
	if err == nil || !strings.Contains(err.Error(), "seeded") {
		t.Fatalf("seeded release without Experiment: %v, want it refused", err)
	}
	if r.Pass || out.Result.Released != 0 || labels.Len() != 0 {
		t.Errorf("refused release drew the test (pass %v) or released %d queries (%d bytes)", r.Pass, out.Result.Released, labels.Len())
	}
}

// TestPTRRuleSmallBudget: a budget below what the test alone can be at
// any noise, or one whose order leaves no room for a proposal at any
// noise, is refused at once, naming the budget's eps; one that needs σ
// raised gives the σ of the search that bounds the test at every step
// (the lower bounds only skip steps whose bounds would fail too), and,
// where no proposal fits beside the test, is refused naming the budget's
// eps.
func TestPTRRuleSmallBudget(t *testing.T) {
	gnmax := func(sigma2 float64) noisymax.Steps {
		return noisymax.Steps{Threshold: 200, Sigma1: 150, Sigma2: sigma2, Noise: noisymax.ContinuousNoise}
	}
	budgetEps := func(err error) bool {
		var pe *param.Error
		return errors.As(err, &pe) && pe.Name == "budget eps"
	}
	for _, c := range []struct {
		eps  float64
		want string
	}{{0.01, "at any noise (Rényi DP 0"}, {0.25, "leaves no room for a proposal at any noise"}} {
		if _, err := newPTRRule(testMemo, gnmax(40), 10, 20, PTROptions{Budget: accountant.Guarantee{Eps: c.eps, Delta: 1e-5}}, true); !budgetEps(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("budget (%v, 1e-5): %v, want the budget's eps refused: %s", c.eps, err, c.want)
		}
	}
	for _, c := range []struct {
		sigma2, eps float64
		noRoom      bool
	}{{5, 2, true}, {20, 1, false}} {
		m, b := gnmax(c.sigma2), accountant.Guarantee{Eps: c.eps, Delta: 1e-5}
		const classes, queries = 10, 300
		r, err := newPTRRule(testMemo, m, classes, queries, PTROptions{Budget: b}, true)
		if c.noRoom != budgetEps(err) || (!c.noRoom && err != nil) {
			t.Fatalf("sigma2 %v, budget %v: %v", c.sigma2, b, err)
		}
		rho, err := m.RunSlope(queries, queries)
		if err != nil {
			t.Fatal(err)
		}
		deltaTest := b.Delta * ptrShareTest
		sigma := ptrSigma(testMemo, r.Margin, r.Order, r.Order*rho*ptrStandIn)
		start := sigma
		for {
			g, err := ptrTestGuarantee(testMemo, sigma, r.Margin, r.Order, deltaTest)
			if err != nil {
				t.Fatal(err)
			}
			if g.Eps <= b.Eps || sigma >= ptrSigmaMax {
				break
			}
			sigma *= 1.05
		}
		if r.Sigma != sigma || !(sigma > start) {
			t.Errorf("sigma2 %v, budget %v: sigma %v, the search bounding every step %v (from %v)", c.sigma2, b, r.Sigma, sigma, start)
		}
		if floor := ptrTestFloor(ptrTestOrders(r.Order), deltaTest); !(r.Test.Eps >= floor) {
			t.Errorf("sigma2 %v, budget %v: the test's guarantee %v is below the floor %v", c.sigma2, b, r.Test, floor)
		}
	}
}

// TestPlanPTRChecksClasses: a plan for classes out of [2, MaxClasses] is
// refused, as the votes' header refuses them: one was made for 0, 1, -1
// and 2^31 classes; and a budget's δ too small
// is said of δ.
func TestPlanPTRChecksClasses(t *testing.T) {
	m := ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}}
	for _, c := range []int{-1, 0, 1, 1 << 31} {
		if _, err := PlanPTR(ptrMemo, m, c, PTROptions{Budget: accountant.Guarantee{Eps: 2, Delta: 1e-5}, Queries: 40}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("classes %d: must be in [2, ", c)) {
			t.Errorf("%d classes: %v", c, err)
		}
	}
	// A δ whose test share underflows is said of δ, not as "budget eps =
	// 8: must be at least +Inf".
	if _, err := PlanPTR(ptrMemo, m, 10, PTROptions{Budget: accountant.Guarantee{Eps: 8, Delta: 5e-324}, Queries: 40}); err == nil || !strings.Contains(err.Error(), "budget delta = 5e-324: too small") {
		t.Errorf("budget (8, 5e-324): %v", err)
	}
}

// TestReleasePTRHoldsToItsPlan: a release draws its test as the plan
// PlanPTR made for its mechanism and classes says, and refuses a plan of
// another making or for other settings before anything is drawn.
func TestReleasePTRHoldsToItsPlan(t *testing.T) {
	m := ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}}
	// TestReleasePTR's proposal, whose plan ptrMemo keeps.
	counts := synthCounts(rand.New(rand.NewPCG(7, 8)), 60, 250, 10, 1)
	plan, err := PlanPTR(ptrMemo, m, 10, PTROptions{Budget: accountant.Guarantee{Eps: 2, Delta: 1e-5}, Queries: 40})
	if err != nil {
		t.Fatal(err)
	}
	forged := plan
	forged.planned = ptrPlanned{}
	for _, tc := range []struct {
		name string
		mech ensemble.Mechanism
		plan PTRResult
	}{
		{"another mechanism", ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}, plan},
		{"other settings", ensemble.ConfidentGNMax{Threshold: 190, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}}, plan},
		{"not PlanPTR's", m, forged},
	} {
		var labels bytes.Buffer
		s := ensemble.ReleaseSpec{Votes: countsReader(t, counts, accountant.OneVote), Mechanism: tc.mech,
			Sink: ensemble.LabelSink{Stdout: &labels}, Random: noise.NewSeededSource(3), Options: ensemble.ReleaseOptions{Experiment: true}}
		out, r, err := ReleasePTR(context.Background(), s, counts, tc.plan)
		if err == nil || !strings.Contains(err.Error(), "not PlanPTR's") || r.Pass || out.Result.Released != 0 || labels.Len() != 0 {
			t.Errorf("%s: %v, pass %v, %d released; want the plan refused", tc.name, err, r.Pass, out.Result.Released)
		}
	}
}

// TestTestedVotesChangedSaysNoVotes: votes that changed between the PTR
// test and the release stop it, with an error that names the query and
// its line but quotes neither its votes nor those tested.
func TestTestedVotesChangedSaysNoVotes(t *testing.T) {
	row := func(c ...int) []int { return append(c, make([]int, 10-len(c))...) }
	in := countsReader(t, [][]int{row(200, 50), row(245, 2, 3)}, accountant.OneVote)
	v := &testedVotes{Reader: in, counts: [][]int{row(200, 50), row(0, 250)}}
	for v.Next() {
	}
	err := v.Err()
	if err == nil || !strings.Contains(err.Error(), "query 2") || strings.Contains(err.Error(), "245") || strings.Contains(err.Error(), "250") {
		t.Errorf("votes changed at query 2: %v, want an error naming query 2 and no votes", err)
	}
}
