package ensemble

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// gdpCurve is the privacy profile of μ-Gaussian DP at ε, written here
// from its closed form (Dong, Roth and Su 2022, Cor. 2.13), apart from
// the accountant's: Φ(μ/2 - ε/μ) - e^ε·Φ(-μ/2 - ε/μ).
func gdpCurve(mu, eps float64) float64 {
	phi := func(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }
	return phi(mu/2-eps/mu) - math.Exp(eps)*phi(-mu/2-eps/mu)
}

// muBudget returns μ_B of budget by the accountant's filter.
func muBudget(t *testing.T, budget accountant.Guarantee) float64 {
	t.Helper()
	f := accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.GDPFilter, Delta: budget.Delta}}}
	mu2, ok := f.GDPBudget(budget)
	if !ok {
		t.Fatalf("no mu_B for %v", budget)
	}
	return math.Sqrt(mu2)
}

// TestProgressiveSettings: each setting out of its range is refused
// naming it, and a ladder whose draw's μ the accountant does not certify
// (levels too close) names --levels.
func TestProgressiveSettings(t *testing.T) {
	ok := ProgressiveGNMax{Levels: []float64{100, 75, 56, 45}, Kappa: 1.2, Budget: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
	if _, err := newProgressive(testMemo, ok, 250, 10); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(*ProgressiveGNMax)
		name string
	}{
		{func(m *ProgressiveGNMax) { m.Levels = nil }, "levels"},
		{func(m *ProgressiveGNMax) { m.Levels = []float64{40, 50} }, "levels"},
		{func(m *ProgressiveGNMax) { m.Levels = []float64{40, 0.5} }, "levels"},
		{func(m *ProgressiveGNMax) { m.Levels = []float64{math.Inf(1), 40} }, "levels"},
		{func(m *ProgressiveGNMax) { m.Levels = make([]float64, 17) }, "levels"},
		{func(m *ProgressiveGNMax) { m.Levels = []float64{100, 99.9} }, "levels"}, // a draw of deviation 2236: not certified
		{func(m *ProgressiveGNMax) { m.Levels = []float64{1e16} }, "levels"},      // beyond what discrete Gaussian noise samples
		{func(m *ProgressiveGNMax) { m.Sigma1, m.Threshold = 1e16, 100 }, "sigma1"},
		{func(m *ProgressiveGNMax) { m.Kappa = -1 }, "kappa"},
		{func(m *ProgressiveGNMax) { m.Kappa = math.NaN() }, "kappa"},
		{func(m *ProgressiveGNMax) { m.Kappa = 51 }, "kappa"},
		{func(m *ProgressiveGNMax) { m.GiveUp = 1.5 }, "give-up"},
		{func(m *ProgressiveGNMax) { m.Threshold = 200 }, "threshold"},
		{func(m *ProgressiveGNMax) { m.Sigma1 = 0.5 }, "sigma1"},
		{func(m *ProgressiveGNMax) { m.Sigma1, m.Threshold = 150, 2000 }, "threshold"},
		{func(m *ProgressiveGNMax) { m.Sigma1, m.Threshold = 150, -1 }, "threshold"},
		{func(m *ProgressiveGNMax) { m.Budget.Delta = 0 }, "budget delta"},
		{func(m *ProgressiveGNMax) { m.Budget.Eps = -1 }, "budget eps"},
	} {
		m := ok
		m.Levels = append([]float64(nil), ok.Levels...)
		tc.edit(&m)
		_, err := newProgressive(testMemo, m, 250, 10)
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != tc.name {
			t.Errorf("%+v: %v, want a ParamError on %s", m, err, tc.name)
		}
	}
}

// TestProgressiveWithheldWords: the summary's reason for a withheld
// query names the threshold step only for a ladder that has one.
func TestProgressiveWithheldWords(t *testing.T) {
	ladder := ProgressiveGNMax{Levels: []float64{12, 9, 7}, Kappa: 0.8}
	if w := ladder.Words().Withheld; strings.Contains(w, "threshold") {
		t.Errorf("without a threshold step: %q", w)
	}
	ladder.Threshold, ladder.Sigma1 = 35, 10
	if w := ladder.Words().Withheld; !strings.Contains(w, "threshold step") {
		t.Errorf("with a threshold step: %q", w)
	}
}

// TestChargedPerDraw: Confident-GNMax and GNMax on counts charged when
// drawn are progressive GNMax of one level, their σ2, with κ = 0 (and the
// threshold step); GNMax on 0/1 votes and the others have no such form.
func TestChargedPerDraw(t *testing.T) {
	c, ok := ChargedPerDraw(ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: GNMax{Target: Target{Delta: 1e-5}, Sigma2: 40}}, accountant.Guarantee{})
	if want := (ProgressiveGNMax{Levels: []float64{40}, Threshold: 200, Sigma1: 150}); !ok || !equalProgressive(c, want) {
		t.Errorf("confident-gnmax: %+v, %v", c, ok)
	}
	if g, ok := ChargedPerDraw(GNMax{Sigma2: 40}, accountant.Guarantee{}); !ok || !equalProgressive(g, ProgressiveGNMax{Levels: []float64{40}}) {
		t.Errorf("gnmax: %+v, %v", g, ok)
	}
	b := accountant.Guarantee{Eps: 2, Delta: 1e-5}
	if g, ok := ChargedPerDraw(GNMax{Sigma2: 40}, b); !ok || g.(ProgressiveGNMax).Budget != b || g.Validate() != nil {
		t.Errorf("gnmax held to %v: %+v, %v", b, g, ok)
	}
	for _, m := range []Mechanism{GNMax{Target: Target{M: 3}}, LNMax{Scale: 20}, DaRRM{}} {
		if _, ok := ChargedPerDraw(m, accountant.Guarantee{}); ok {
			t.Errorf("%s: charged per draw", m.Name())
		}
	}
}

func equalProgressive(m Mechanism, want ProgressiveGNMax) bool {
	a, _ := json.Marshal(m)
	b, _ := json.Marshal(want)
	_, is := m.(ProgressiveGNMax)
	return is && string(a) == string(b)
}

// TestDrawMeterHoldsBudget: under draws chosen adaptively (each query's
// draws and their number follow from earlier outputs), the filter's sum of
// μ² never exceeds μ_B², and it stops a run only when the next query's
// every draw would not fit.
func TestDrawMeterHoldsBudget(t *testing.T) {
	budget := accountant.Guarantee{Eps: 1, Delta: 1e-6}
	muB := muBudget(t, budget)
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		var steps []drawStep
		for range 1 + r.IntN(5) {
			steps = append(steps, drawStep{sigma: 2 + 30*r.Float64(), coords: 1 + r.IntN(2), param: "levels"})
		}
		m, err := newDrawMeter(testMemo, budget, steps)
		var pe *param.Error
		if errors.As(err, &pe) && pe.Name == "budget eps" {
			// Refused: a query's every draw must not fit μ_B², so that no
			// query could begin (its μ² is the same under any budget).
			wide, err := newDrawMeter(testMemo, accountant.Guarantee{Eps: 50, Delta: budget.Delta}, steps)
			if err != nil {
				t.Fatal(err)
			}
			var worst float64
			for _, c := range wide.charges {
				worst += *c.Mu2
			}
			if !(worst > muB*muB) {
				t.Errorf("trial %d: refused, %v, where a query's draws cost at most %v of mu_B^2 %v", trial, pe, worst, muB*muB)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var worst float64
		for _, c := range m.charges {
			worst += *c.Mu2
		}
		queries := 0
		for {
			if err := m.begin(); errors.Is(err, errFilterFull) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			queries++
			// An adaptive query: how many of its draws it takes is an
			// output of the draws before.
			for i := range m.charges {
				if err := m.pay(i); err != nil {
					t.Fatal(err)
				}
				if m.spent.Mu2 > muB*muB {
					t.Fatalf("trial %d: sum of mu^2 %v over mu_B^2 %v", trial, m.spent.Mu2, muB*muB)
				}
				if r.Float64() < 0.3 {
					break
				}
			}
		}
		if queries == 0 {
			continue
		}
		// Stopped: the next query's every draw would not fit, but a
		// query's worth less of them would (up to the rounding of sums).
		if left := muB*muB - m.spent.Mu2; !(left < worst*(1+1e-9)) || !(left >= 0) {
			t.Errorf("trial %d: stopped after %d queries with %v of mu_B^2 %v left, a query costs at most %v", trial, queries, left, muB*muB, worst)
		}
	}
}

// TestProgressivePrivacyLossMonteCarlo: a short run on a pair of
// neighbouring vote files, one teacher's vote moved on every query, whose
// every draw the test sees (trace): the privacy loss of the whole
// transcript of noisy draws, sampled under one file, has a profile δ(ε)
// within that of μ_B-Gaussian DP, the budget's, and near it (the run takes
// draws until the filter is nearly full, so a charge that were too small,
// say 1/σ² for a draw that moves two counts, would show as a profile
// above the curve, and one too large as a profile far below it). It
// checks the charges, not the decisions: κ = 50 releases nothing, and the
// loss is the draws' alone, which holds when the labels and stops are
// post-processing of the transcript; that they are functions of the
// noisy draws only, never of the counts, is TestProgressiveMatchesSimulation's
// (a give-up that read the counts' own gap fails it).
func TestProgressivePrivacyLossMonteCarlo(t *testing.T) {
	const runs = 8000
	// μ_B² = 1.476: two queries of every draw (0.617 each), 84% of it.
	budget := accountant.Guarantee{Eps: 4, Delta: 1e-3}
	// κ = 50 never releases: every query takes the threshold step and both
	// levels until the filter is full.
	m := ProgressiveGNMax{Levels: []float64{3, 2}, Kappa: 50, Threshold: 0, Sigma1: 3, Budget: budget}
	d, dd := []int{6, 3, 2}, []int{5, 4, 2} // teacher 0 votes class 0, or class 1
	p, err := newProgressive(testMemo, m, 11, 3)
	if err != nil {
		t.Fatal(err)
	}
	draws := m.Draws()
	src := noise.NewSeededSource(7)
	muB := muBudget(t, budget)
	losses := make([]float64, 0, runs)
	var spent float64
	for range runs {
		p.meter.spent, p.meter.draws = accountant.Sequence{}, 0 // a new run
		var loss float64
		p.trace = func(step int, y []int64) {
			v := draws[step].Sigma * draws[step].Sigma
			a, b := d, dd
			if draws[step].Coords == 1 {
				a, b = d[:1], dd[:1] // the largest count: 6 or 5
			}
			for i, x := range y {
				e, f := float64(x-int64(a[i])), float64(x-int64(b[i]))
				loss += (f*f - e*e) / (2 * v)
			}
		}
		for q := 1; ; q++ {
			if _, _, err := p.Answer(&votefile.Query{Index: q, Counts: d}, src); errors.Is(err, errFilterFull) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		spent = p.meter.spent.Mu2
		losses = append(losses, loss)
	}
	if !(spent > 0.7*muB*muB && spent <= muB*muB) {
		t.Fatalf("the run used %v of mu_B^2 = %v: too little for the check to bite", spent, muB*muB)
	}
	for _, eps := range []float64{0.5, 1, 2, 3} {
		var sum, sq float64
		for _, l := range losses {
			x := math.Max(0, 1-math.Exp(eps-l))
			sum += x
			sq += x * x
		}
		mean := sum / runs
		se := math.Sqrt((sq/runs - mean*mean) / runs)
		bound, near := gdpCurve(muB, eps), gdpCurve(0.8*muB, eps)
		if mean > bound+4*se {
			t.Errorf("eps %v: the transcript's delta %.5f (± %.1e) exceeds mu_B-GDP's %.5f", eps, mean, se, bound)
		}
		if mean < near-4*se {
			t.Errorf("eps %v: the transcript's delta %.5f (± %.1e) below 0.8·mu_B-GDP's %.5f: the filter stopped far short of its budget", eps, mean, se, near)
		}
	}
}

// simulateProgressive is an independent simulation of progressive GNMax
// on one query of counts: continuous Gaussian noise of the deviations
// drawn, the threshold step, the averages, the bars and the give-up rule
// written from the definition (docs/pate.md), not from the labeler. It
// returns whether the query was answered and whether its label is the
// plurality.
func simulateProgressive(m ProgressiveGNMax, counts []int, r *rand.Rand) (answered, plurality bool) {
	top := 0
	for i, n := range counts {
		if n > counts[top] {
			top = i
		}
	}
	draws := m.Draws()
	if m.Sigma1 != 0 {
		if float64(counts[top])+draws[0].Sigma*r.NormFloat64() < math.Ceil(m.Threshold)-0.5 {
			return false, false
		}
		draws = draws[1:]
	}
	total := make([]float64, len(counts))
	var prec float64
	for j, d := range draws {
		w := 1 / (d.Sigma * d.Sigma)
		prec += w
		for i, n := range counts {
			total[i] += w * (float64(n) + d.Sigma*r.NormFloat64())
		}
		best, second := 0, -1
		for i := 1; i < len(total); i++ {
			switch {
			case total[i] > total[best]:
				best, second = i, best
			case second < 0 || total[i] > total[second]:
				second = i
			}
		}
		gap := (total[best] - total[second]) / prec
		s := 1 / math.Sqrt(prec)
		if gap >= m.Kappa*math.Sqrt2*s {
			return true, best == top
		}
		last := 1 / math.Sqrt(prec)
		for _, e := range draws[j+1:] {
			last = 1 / math.Sqrt(1/(last*last)+1/(e.Sigma*e.Sigma))
		}
		if j < len(draws)-1 && gap < m.GiveUp*m.Kappa*math.Sqrt2*last {
			return false, false
		}
	}
	return false, false
}

// TestProgressiveMatchesSimulation: the labels of a release (the one
// release path, discrete noise, a budget that labels every query) answer
// and agree with the plurality as often as an independent simulation of
// the mechanism with continuous noise says, on queries of every
// consensus.
func TestProgressiveMatchesSimulation(t *testing.T) {
	const k, queries = 60, 3000
	r := rand.New(rand.NewPCG(3, 4))
	rows := make([][]int, queries)
	for q := range rows {
		// A plurality of 16 to 60 votes of 60, the rest spread over the
		// other classes, each below it.
		c := make([]int, 4)
		top := r.IntN(4)
		c[top] = 16 + r.IntN(45)
		for left := k - c[top]; left > 0; {
			if i := r.IntN(4); i != top && c[i] < c[top]-1 {
				c[i]++
				left--
			}
		}
		rows[q] = c
	}
	for _, m := range []ProgressiveGNMax{
		{Levels: []float64{20, 15, 11, 9}, Kappa: 1.2, GiveUp: 0.5, Threshold: 30, Sigma1: 20},
		{Levels: []float64{9.6}, Threshold: 48, Sigma1: 36}, // Confident-GNMax charged when drawn
	} {
		m.Budget = accountant.Guarantee{Eps: 80, Delta: 1e-5} // labels every query
		meta := provenance.Binding{Ensemble: "sim", Teachers: provenance.Teachers{K: k, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(4, votefile.LayoutCounts)
		in, err := votefile.ReadRows(rows, meta)
		if err != nil {
			t.Fatal(err)
		}
		var labels strings.Builder
		out, err := Release(context.Background(), ReleaseSpec{Votes: in, Mechanism: m, Random: noise.NewSeededSource(5),
			Sink: LabelSink{Stdout: &labels}, Options: ReleaseOptions{Experiment: true}})
		if err != nil {
			t.Fatal(err)
		}
		if out.Result.Released != queries {
			t.Fatalf("%v: released %d of %d", m.Levels, out.Result.Released, queries)
		}
		var answered, agree int
		for _, line := range strings.Split(labels.String(), "\n") {
			f := strings.Split(line, ",")
			if len(f) != 3 || f[2] != "1" {
				continue
			}
			answered++
			id := 0
			for _, ch := range f[0] {
				id = 10*id + int(ch-'0')
			}
			if plurality(rows[id-1]) == int(f[1][0]-'0') {
				agree++
			}
		}
		const reps = 4
		var simAnswered, simAgree float64
		for _, c := range rows {
			for range reps {
				a, g := simulateProgressive(m, c, r)
				if a {
					simAnswered++
				}
				if g {
					simAgree++
				}
			}
		}
		simAnswered /= reps
		simAgree /= reps
		// Binomial sampling error of the release and of the simulation.
		tol := 4*math.Sqrt(float64(queries)*0.25) + 4*math.Sqrt(float64(queries)*0.25/reps)
		if math.Abs(float64(answered)-simAnswered) > tol || math.Abs(float64(agree)-simAgree) > tol {
			t.Errorf("%v: the release answered %d, %d agreeing; the simulation %.1f, %.1f (tolerance %.0f)", m.Levels, answered, agree, simAnswered, simAgree, tol)
		}
		if answered < queries/10 || answered == queries {
			t.Errorf("%v: %d answered of %d: the check needs queries both answered and not", m.Levels, answered, queries)
		}
	}
}

func plurality(c []int) int {
	b := 0
	for i, x := range c {
		if x > c[b] {
			b = i
		}
	}
	return b
}

// drawLedger is a ledger of a release charged per draw: it records the
// units reserved and settled, says its filter, and lets a test check that
// every draw is covered by a reservation made before it.
type drawLedger struct {
	fakeLedger
	allowed int
	filter  *accountant.Filter
	unit    accountant.Spend
}

func (l *drawLedger) Begin(_ context.Context, _ provenance.MechanismName, _ provenance.Binding, unit accountant.Spend, _ int) (int, error) {
	l.unit = unit
	return l.allowed, nil
}

func (l *drawLedger) RunFilter() *accountant.Filter { return l.filter }

// TestProgressiveOnALedger: a release charged per draw reserves units on
// its ledger, a line a chunk of queries (not one per draw), before any
// draw they cover, settles the units its draws used, and stops where the
// ledger allows no more; a ledger without a Gaussian-DP part (or that
// does not say its filter) is refused, settled at 0, before any draw.
func TestProgressiveOnALedger(t *testing.T) {
	rows := make([][]int, 2000)
	for i := range rows {
		rows[i] = []int{30 + i%20, 20 - i%20, 10}
	}
	meta := provenance.Binding{Ensemble: "led", Teachers: provenance.Teachers{K: 60, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(3, votefile.LayoutCounts)
	m := ProgressiveGNMax{Levels: []float64{24, 16, 12}, Kappa: 1, GiveUp: 0.5, Threshold: 20, Sigma1: 24, Budget: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
	gdp := &accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.GDPFilter, Delta: 1e-5}, {Method: accountant.Simple}}}
	run := func(l *drawLedger, path string) (Released, error) {
		in, err := votefile.ReadRows(rows, meta)
		if err != nil {
			t.Fatal(err)
		}
		return Release(context.Background(), ReleaseSpec{Votes: in, Mechanism: m, Ledger: l, Random: noise.NewSeededSource(9),
			Sink: LabelSink{Path: path}, Options: ReleaseOptions{Experiment: true}})
	}
	dir := t.TempDir()
	l := &drawLedger{allowed: 150000, filter: gdp}
	out, err := run(l, filepath.Join(dir, "labels.csv"))
	if err != nil || out.Result.StoppedByBudget == 0 {
		t.Fatalf("a ledger allowing fewer draws than the budget: %v, %+v", err, out.Result)
	}
	if len(l.reserves) == 0 || len(l.reserves) > 2+int(math.Log2(1+float64(out.Result.Released)/chunkQueries)) || len(l.settles) != 1 {
		t.Fatalf("%d queries released: reservations %v, settlements %v", out.Result.Released, l.reserves, l.settles)
	}
	for i := 1; i < len(l.reserves); i++ {
		if l.reserves[i] <= l.reserves[i-1] || l.reserves[i] > l.allowed {
			t.Errorf("reservations %v: each more than the one before, within %d", l.reserves, l.allowed)
		}
	}
	// The units settled hold the draws' μ².
	var unit accountant.Charge
	if unit, err = (accountant.Filter{Parts: gdp.Parts[:1]}).Charge(testMemo, l.unit, m.Budget); err != nil {
		t.Fatal(err)
	}
	settled := l.settles[0]
	if float64(settled)*(*unit.Mu2) < out.Mu2 || float64(settled-1)*(*unit.Mu2) > out.Mu2*(1+1e-12) || settled > l.reserves[len(l.reserves)-1] {
		t.Errorf("settled %d units of %v for draws of mu^2 %v (reserved %v)", settled, *unit.Mu2, out.Mu2, l.reserves)
	}
	// QueryUnits is a query's units, every draw taken: the fewest whose
	// sums hold its draws' (a ledger's units left over it are the queries
	// at least that the ledger has room for).
	query, err := (accountant.Filter{Parts: gdp.Parts[:1]}).Charge(testMemo, accountant.Spend{Kind: accountant.GaussianSpend, Discrete: true, Gaussian: m.Draws(), Guarantee: accountant.Guarantee{Eps: 1, Delta: m.Budget.Delta}}, m.Budget)
	if err != nil {
		t.Fatal(err)
	}
	holds := func(n int) bool {
		return float64(n)*(*unit.Mu2) >= *query.Mu2*(1-1e-12) && float64(n)*unit.MuDelta >= query.MuDelta*(1-1e-12)
	}
	if u := out.QueryUnits; u <= 0 || !holds(u) || holds(u-1) {
		t.Errorf("QueryUnits %d: units of mu^2 %v and tail %v for a query of mu^2 %v and tail %v", u, *unit.Mu2, unit.MuDelta, *query.Mu2, query.MuDelta)
	}
	// Every draw covered when drawn: with a trace, the reservation made
	// before it holds the units of the draws up to it.
	agg, _, err := New(context.Background(), m, 60, 3, accountant.Guarantee{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := agg.(*progressive)
	l2 := &drawLedger{allowed: 1 << 30, filter: gdp}
	if err := chargeLedger(context.Background(), l2, p, p.meter, provenance.Binding{}); err != nil {
		t.Fatal(err)
	}
	p.trace = func(int, []int64) {
		n, err := p.meter.ledger.units(p.meter.spent)
		if err != nil || len(l2.reserves) == 0 || n > l2.reserves[len(l2.reserves)-1] {
			t.Fatalf("a draw of units %d, reserved %v: %v", n, l2.reserves, err)
		}
	}
	src := noise.NewSeededSource(3)
	for q := range 500 {
		if _, _, err := p.Answer(&votefile.Query{Index: q + 1, Counts: rows[q]}, src); errors.Is(err, errFilterFull) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	// Into a stream that breaks after 2,000 bytes: the labels that
	// may have left are within the filter's budget, which the error says
	// (not as many queries at the per-query guarantee, which assumes every
	// draw taken), and the units settled are those reserved for them.
	in, err := votefile.ReadRows(rows, meta)
	if err != nil {
		t.Fatal(err)
	}
	l3 := &drawLedger{allowed: 1 << 30, filter: gdp}
	wide := m
	wide.Budget.Eps = 8 // labels beyond the stream's 2,000 bytes
	_, err = Release(context.Background(), ReleaseSpec{Votes: in, Mechanism: wide, Ledger: l3, Random: noise.NewSeededSource(9),
		Sink: LabelSink{Stdout: &breakAfter{left: 2000}}, Options: ReleaseOptions{Experiment: true}})
	if want := "their privacy cost is within the release's total, (8, 1e-05)-DP by the gdp-filter budget"; !errors.Is(err, errPipe) || !strings.Contains(err.Error(), want) {
		t.Errorf("a stream that breaks: %v, want %q", err, want)
	}
	if len(l3.settles) != 1 || len(l3.reserves) == 0 || l3.settles[0] <= 0 || l3.settles[0] > l3.reserves[len(l3.reserves)-1] {
		t.Errorf("a stream that breaks: reserved %v, settled %v", l3.reserves, l3.settles)
	}
	// A ledger whose filter has no Gaussian-DP part, or says none.
	for _, f := range []*accountant.Filter{nil, {Parts: []accountant.FilterPart{{Method: accountant.ZCDPFilter, Delta: 1e-5}, {Method: accountant.Simple}}}} {
		l := &drawLedger{allowed: 1 << 20, filter: f}
		path := filepath.Join(dir, "refused.csv")
		_, err := run(l, path)
		if err == nil || !strings.Contains(err.Error(), "gdp-filter") || len(l.reserves) != 0 || len(l.settles) != 1 || l.settles[0] != 0 {
			t.Errorf("filter %v: %v; reserved %v, settled %v", f, err, l.reserves, l.settles)
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("filter %v: labels written", f)
		}
	}
}

// breakAfter is a stream that takes left bytes, then fails with errPipe.
type breakAfter struct{ left int }

func (w *breakAfter) Write(b []byte) (int, error) {
	n := min(len(b), w.left)
	w.left -= n
	if n < len(b) {
		return n, errPipe
	}
	return n, nil
}

// TestProgressiveHeader: the label file's header states the mechanism,
// its settings, the accounting and the filter's budget as the total,
// and MechanismOf reads the mechanism back with its budget; a release
// without a budget, or with a total delta, is refused naming it.
func TestProgressiveHeader(t *testing.T) {
	rows := [][]int{{9, 1, 0}, {5, 5, 0}, {0, 2, 8}}
	meta := provenance.Binding{Ensemble: "hdr", Teachers: provenance.Teachers{K: 10, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(3, votefile.LayoutCounts)
	m := ProgressiveGNMax{Levels: []float64{8, 6}, Kappa: 0.5, GiveUp: 0.25, Threshold: 3, Sigma1: 5}
	budget := &accountant.Budget{Guarantee: accountant.Guarantee{Eps: 4, Delta: 1e-6}}
	path := filepath.Join(t.TempDir(), "labels.csv")
	in, _ := votefile.ReadRows(rows, meta)
	out, err := Release(context.Background(), ReleaseSpec{Votes: in, Mechanism: m, Budget: budget, Sink: LabelSink{Path: path}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Publish.Guarantee != budget.Guarantee || out.Publish.Method != accountant.GDPFilter || !out.Publish.Filter {
		t.Errorf("publish %+v, want the budget by the gdp-filter", out.Publish)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lr, err := votefile.NewLabelReader(f, "labels.csv")
	if err != nil {
		t.Fatal(err)
	}
	h := lr.Meta()
	if h.Mechanism != "progressive-gnmax" || h.Accounting != accountant.GDPFilter.String() || h.Total == nil || h.Total.Eps != 4 || h.Total.BudgetEps != 4 || h.Total.BudgetDelta != 1e-6 || !h.ForRelease {
		t.Errorf("header %+v, total %+v", h, h.Total)
	}
	got, err := Mechanisms().FromHeader(h)
	m.Budget = budget.Guarantee
	if err != nil || !equalProgressive(got, m) || got.(ProgressiveGNMax).Budget != m.Budget {
		t.Errorf("read back %+v, %v; want %+v", got, err, m)
	}
	m.Budget = accountant.Guarantee{}
	in, _ = votefile.ReadRows(rows, meta)
	if _, err := Release(context.Background(), ReleaseSpec{Votes: in, Mechanism: m, Sink: LabelSink{Stdout: &strings.Builder{}}}); err == nil || !strings.Contains(err.Error(), "ReleaseSpec.Budget") {
		t.Errorf("no budget: %v", err)
	}
	in, _ = votefile.ReadRows(rows, meta)
	delta := 1e-6
	if _, err := Release(context.Background(), ReleaseSpec{Votes: in, Mechanism: m, Budget: budget, TotalDelta: &delta, Sink: LabelSink{Stdout: &strings.Builder{}}}); err == nil || !strings.Contains(err.Error(), "total delta") {
		t.Errorf("a total delta: %v", err)
	}
}

// TestLabelFileUnits: the label file of a release charged per draw to a
// ledger states, on each row, the units of the draws charged when it was
// written: non-decreasing, never above what the ledger had reserved when
// the row left, and the last row's exactly what the run settled (every
// honest run passes its own label file, and a settlement one unit below
// is caught: ledger.TestLabelFileWitnessesUnits). Its header says the
// column is there. Without a ledger, or charged per query, there is no
// such column.
func TestLabelFileUnits(t *testing.T) {
	budget := accountant.Guarantee{Eps: 1, Delta: 1e-5}
	confident, _ := ChargedPerDraw(ConfidentGNMax{Threshold: 40, Sigma1: 20, GNMax: GNMax{Target: Target{Delta: 1e-5}, Sigma2: 12}}, budget)
	gnmax, _ := ChargedPerDraw(GNMax{Target: Target{Delta: 1e-5}, Sigma2: 12}, budget)
	gdp := &accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.GDPFilter, Delta: 1e-5}, {Method: accountant.Simple}}}
	meta := provenance.Binding{Ensemble: "units", Teachers: provenance.Teachers{K: 60, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(3, votefile.LayoutCounts)
	rows := func(seed uint64) votefile.Reader {
		rows := make([][]int, 600)
		for i := range rows {
			top := 20 + int((uint64(i)*7+seed*13)%40)
			rows[i] = []int{top, 60 - top, 0}
		}
		in, err := votefile.ReadRows(rows, meta)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	// read returns the header and the rows' units of a label file.
	read := func(t *testing.T, r io.Reader) (*votefile.LabelMeta, []int) {
		t.Helper()
		lr, err := votefile.NewLabelReader(r, "labels")
		if err != nil {
			t.Fatal(err)
		}
		var units []int
		for lr.Next() {
			units = append(units, lr.Row().Units)
		}
		if err := lr.Err(); err != nil {
			t.Fatal(err)
		}
		return lr.Meta(), units
	}
	for _, c := range []struct {
		name string
		m    Mechanism
	}{
		{"progressive with a threshold step", ProgressiveGNMax{Levels: []float64{24, 16, 12}, Kappa: 1, GiveUp: 0.5, Threshold: 40, Sigma1: 20, Budget: budget}},
		{"progressive", ProgressiveGNMax{Levels: []float64{24, 16, 12}, Kappa: 1.5, Budget: budget}},
		{"confident-gnmax charged per draw", confident},
		{"gnmax charged per draw", gnmax},
	} {
		for seed := range uint64(3) {
			l := &drawLedger{allowed: 1 << 30, filter: gdp}
			// Each write checks the rows it carries out against the
			// ledger's reservations so far.
			var out strings.Builder
			w := writerFunc(func(p []byte) (int, error) {
				if len(l.reserves) == 0 {
					t.Fatalf("%s: labels left before any reservation", c.name)
				}
				reserved := l.reserves[len(l.reserves)-1]
				for _, line := range strings.Split(string(p), "\n") {
					f := strings.Split(line, ",")
					if n, err := strconv.Atoi(f[len(f)-1]); err == nil && len(f) == 4 && n > reserved {
						t.Fatalf("%s: row %q left with %d units reserved", c.name, line, reserved)
					}
				}
				return out.Write(p)
			})
			if _, err := Release(context.Background(), ReleaseSpec{Votes: rows(seed), Mechanism: c.m, Ledger: l, Random: noise.NewSeededSource(seed),
				Sink: LabelSink{Stdout: w}, Options: ReleaseOptions{Experiment: true}}); err != nil {
				t.Fatal(err)
			}
			h, units := read(t, strings.NewReader(out.String()))
			settled := l.settles[len(l.settles)-1]
			if !h.LedgerUnits || len(units) < 2 || units[0] <= 0 || !slices.IsSorted(units) || units[len(units)-1] != settled {
				t.Errorf("%s, seed %d: header units %v, rows' units %v..., settled %d", c.name, seed, h.LedgerUnits, units[:min(len(units), 5)], settled)
			}
			if steps := len(slices.Compact(slices.Clone(units))); steps < len(units)/2 {
				t.Errorf("%s, seed %d: the units of %d rows take %d values: not a step a query", c.name, seed, len(units), steps)
			}
		}
		// Without a ledger: no column.
		var out strings.Builder
		if _, err := Release(context.Background(), ReleaseSpec{Votes: rows(0), Mechanism: c.m, Budget: &accountant.Budget{Guarantee: budget}, Random: noise.NewSeededSource(1),
			Sink: LabelSink{Stdout: &out}, Options: ReleaseOptions{Experiment: true}}); err != nil {
			t.Fatal(err)
		}
		if h, units := read(t, strings.NewReader(out.String())); h.LedgerUnits || slices.Max(units) != 0 || strings.Contains(out.String(), "units\n") {
			t.Errorf("%s without a ledger: a units column", c.name)
		}
	}
	// Charged per query, on a ledger: no column.
	var out strings.Builder
	if _, err := Release(context.Background(), ReleaseSpec{Votes: rows(0), Mechanism: GNMax{Target: Target{Delta: 1e-5}, Sigma2: 12}, Ledger: &fakeLedger{}, Random: noise.NewSeededSource(1),
		Sink: LabelSink{Stdout: &out}, Options: ReleaseOptions{Experiment: true}}); err != nil {
		t.Fatal(err)
	}
	if h, _ := read(t, strings.NewReader(out.String())); h.LedgerUnits || h.Ledger == "" {
		t.Errorf("gnmax charged per query: header %+v", h)
	}
}

// writerFunc is an io.Writer of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestDrawMeterRefusesNoQuery: a budget whose Gaussian-DP filter cannot
// hold one query's every draw is refused before any is drawn, naming
// --budget-eps and the part that does not fit: at ε = 100 the share of δ
// for the discrete Gaussian tails (2^-20·δ/(1 + e^ε), 3.5e-55 here, under
// nine draws' 5e-56 each), at ε = 0.001 μ_B²; ε = 80 holds queries.
func TestDrawMeterRefusesNoQuery(t *testing.T) {
	m := ProgressiveGNMax{Levels: []float64{80, 71, 63, 56, 50, 44, 39, 35}, Kappa: 1.45, GiveUp: 0.5, Threshold: 200, Sigma1: 200}
	draws := m.Draws()
	steps := []drawStep{{sigma: draws[0].Sigma, coords: 1, param: "sigma1"}}
	for _, d := range draws[1:] {
		steps = append(steps, drawStep{sigma: d.Sigma, coords: d.Coords, param: "levels"})
	}
	for _, c := range []struct {
		eps  float64
		want string // "" when it holds queries
	}{{100, "tails"}, {0.001, "mu_B^2"}, {80, ""}} {
		_, err := newDrawMeter(testMemo, accountant.Guarantee{Eps: c.eps, Delta: 1e-5}, steps)
		var pe *param.Error
		switch {
		case c.want == "" && err != nil:
			t.Errorf("eps %v: %v", c.eps, err)
		case c.want != "" && (!errors.As(err, &pe) || pe.Name != "budget eps" || !strings.Contains(pe.Rule, c.want)):
			t.Errorf("eps %v: %v, want a parameter error on budget eps naming %s", c.eps, err, c.want)
		}
	}
}

// TestTailQueries: the queries a plan counts by the filter's share of δ
// for the tails are those the meter lets begin when every query takes
// every draw (at ε so large that μ_B² holds far more), scaled by the
// share of its draws' μ² an average query takes; none is a bound at
// ε = 2.
func TestTailQueries(t *testing.T) {
	for _, c := range []struct {
		levels []float64
		eps    float64
	}{{[]float64{80, 63, 50}, 100}, {[]float64{80, 70, 61, 53, 46, 40}, 97}} {
		m := ProgressiveGNMax{Levels: c.levels, Kappa: 1.45, GiveUp: 0.5, Budget: accountant.Guarantee{Eps: c.eps, Delta: 1e-5}}
		p, err := newProgressive(testMemo, m, 250, 10)
		if err != nil {
			t.Fatal(err)
		}
		meter := p.meter
		var all float64
		for _, ch := range meter.charges {
			all += *ch.Mu2
		}
		full := 0
		for ; full < 100000; full++ {
			if err := meter.begin(); errors.Is(err, errFilterFull) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			for i := range meter.charges {
				if err := meter.pay(i); err != nil {
					t.Fatal(err)
				}
			}
		}
		// The meter sums the tails a draw at a time, tailQueries a query
		// at a time: their roundings may part at the last query.
		q, err := meter.tailQueries(all)
		if err != nil {
			t.Fatal(err)
		}
		if full == 0 || math.Abs(q-float64(full)) > 1 {
			t.Errorf("levels %v at eps %v: %v queries by the tails, every draw taken; the meter began %d", c.levels, c.eps, q, full)
		}
		if half, err := meter.tailQueries(all / 2); err != nil || !(half >= 2*q-1 && half <= 2*q+1) {
			t.Errorf("levels %v at eps %v: %v queries taking every draw, %v taking half of them by mu^2 (%v)", c.levels, c.eps, q, half, err)
		}
	}
	m := ProgressiveGNMax{Levels: []float64{80, 40}, Kappa: 1, GiveUp: 0.5, Budget: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
	p, err := newProgressive(testMemo, m, 250, 10)
	if err != nil {
		t.Fatal(err)
	}
	if q, err := p.meter.tailQueries(1); err != nil || q < 1e12 {
		t.Errorf("at eps 2 the tails hold %v queries (%v): a bound that a plan would see", q, err)
	}
}

// TestProgressiveZeroBars checks that the zero value, of no levels, has no
// bars, where Bars indexed its last level.
func TestProgressiveZeroBars(t *testing.T) {
	if release, giveUp := (ProgressiveGNMax{}).Bars(); release != nil || giveUp != 0 {
		t.Errorf("ProgressiveGNMax{}.Bars() = %v, %v, want none", release, giveUp)
	}
}
