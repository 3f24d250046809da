package ensemble

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/tally"

	"github.com/darrm/darrm/accountant"
)

// This file plans progressive GNMax on proxy votes, its plan of its own
// (Planned.OnProxy): its ladder of levels, κ, give-up fraction and
// threshold step, for the labels its Gaussian-DP filter's budget buys.

// defaultMinAgreement is the least agreement with the proxy's plurality
// that a plan of progressive GNMax asks of its labels when the request
// states none: on darrm's Fashion-MNIST votes as the proxy of its MNIST
// votes it picks settings whose labels agree with the MNIST teachers'
// plurality about as often, and are right about as often as today's
// Confident-GNMax labels (docs/pate.md, "Progressive GNMax").
const defaultMinAgreement = 0.9875

// lowConsensusShare is the share of the proxy's queries, those whose
// plurality count is lowest, on which the plan guards against the
// winner's curse of many looks (ProxyPlan.LowAgreement).
const lowConsensusShare = 0.2

// lowTolerance is how far below the baseline's agreement on the
// low-consensus queries a plan's may estimate, for the Monte Carlo error
// of both estimates (where both are near 1, a difference of 10^-5 is
// noise, not a winner's curse).
const lowTolerance = 0.005

// Replicates of the noise per proxy query: to choose (selection), and,
// with fresh noise, to check the choice (verification).
const (
	selectReplicates = 3
	verifyReplicates = 12
	verifyCandidates = 400
)

// maxProxyQueries bounds the proxy queries a plan simulates its ladders
// on: a simulation holds 17 bytes per query, replicate and level (12
// replicates and up to 8 levels to check a choice: 163 MB at this bound),
// and a pass over them is what a signal waits for.
const maxProxyQueries = 100_000

// searchMemory bounds the memory of the ladders' simulations that the
// search's goroutines hold beyond the first's: on a machine of many cores,
// a proxy of many queries would otherwise hold one simulation per core.
const searchMemory = 256 << 20

// ProxyRequest asks a mechanism planned on its own (Planned.OnProxy)
// for the settings that label the most queries of votes like the proxy
// votes Counts, of K teachers over Classes classes, within Budget, the
// budget of its Gaussian-DP filter, with labels that agree with each
// query's class Truth (the proxy's plurality, or the true class) at least
// MinAgreement of the time (0: the mechanism's default, 0.9875 for
// progressive GNMax). The noise of the simulation comes from seeded
// streams derived from Seed: a plan is reproducible, and uses only the
// public proxy votes.
type ProxyRequest struct {
	K, Classes   int
	Counts       [][]int
	Truth        []int
	Budget       accountant.Guarantee
	MinAgreement float64
	Seed         uint64
}

// check refuses proxy votes that are not counts of K teachers over the
// classes, one class each: plan.Proxy's checks, for a caller that calls
// Planned.OnProxy itself.
func (r ProxyRequest) check() error {
	if len(r.Counts) == 0 || len(r.Truth) != len(r.Counts) {
		return &param.Error{Name: "votes queries", Value: len(r.Counts), Rule: fmt.Sprintf("the proxy votes must have at least one query, each with its class (%d given)", len(r.Truth))}
	}
	for i, c := range r.Counts {
		if _, err := tally.Counts(c, r.K, r.Classes); err != nil {
			return fmt.Errorf("proxy votes, query %d: %w", i+1, err)
		}
		if r.Truth[i] < 0 || r.Truth[i] >= r.Classes {
			return &param.Error{Name: "labels", Value: r.Truth[i], Rule: fmt.Sprintf("query %d: must be a class in [0, %d)", i+1, r.Classes)}
		}
	}
	return nil
}

// ProxyPlan is a plan of a mechanism on proxy votes (Planned.OnProxy):
// progressive GNMax's: the mechanism with its
// settings and budget, and what it is expected to do on votes like the
// proxy's within the budget, measured with noise that did not choose it
// (fresh seeds), and the guard that chose among the candidates.
type ProxyPlan struct {
	Mechanism ProgressiveGNMax
	// Queries is the expected number of queries a release asks before
	// its filter stops it (its μ_B² over a query's expected μ², at most
	// the queries that the filter's share of δ for the tails holds),
	// Answered the labels among them, Agreement the share of
	// those that agree with the proxy's plurality (or truth).
	Queries, Answered, Agreement float64
	// MuBudget2 is μ_B² of the filter's budget, and Cost the expected μ²
	// of one query.
	MuBudget2, Cost float64
	// The guard against the winner's curse, on the proxy's queries whose
	// plurality count is at most LowTop (the lowest-consensus fifth,
	// LowQueries of them): LowAgreement is the agreement with their
	// plurality of the plan's labels, LowBaseline that of the labels of
	// Baseline, Confident-GNMax with PATE's MNIST settings scaled to K
	// (T = 0.8K, σ1 = 0.6K, σ2 = 0.16K: 200, 150 and 40 at K = 250); the
	// plan's is at least the baseline's (but for lowTolerance).
	LowTop, LowQueries        int
	LowAgreement, LowBaseline float64
	Baseline                  ConfidentGNMax
	// Candidates counts the settings scored, Feasible those that met
	// MinAgreement and the guard in selection, Checked those checked with
	// fresh noise before one held.
	Candidates, Feasible, Checked int
	MinAgreement                  float64
	Seed                          uint64
}

// ladderShape is a ladder of the search: its first and last levels as
// fractions of K and its number of levels, geometric in between.
type ladderShape struct {
	first, last float64
	n           int
}

// Planned shapes, κ and give-up fractions.
var (
	firstLevels = []float64{0.24, 0.32, 0.4, 0.6, 0.8, 1.2}
	lastLevels  = []float64{0.12, 0.14, 0.16, 0.18, 0.2, 0.24}
	levelCounts = []int{1, 2, 3, 4, 5, 6, 8}
	giveUps     = []float64{0, 0.25, 0.5, 0.75, 1}
	// thresholdTs and thresholdSigmas are a threshold step's T and σ1 as
	// fractions of K.
	thresholdTs     = []float64{0.3, 0.4, 0.5, 0.6, 0.7, 0.8}
	thresholdSigmas = []float64{0.3, 0.45, 0.6, 0.8}
)

// kappas are the κ of the search, 0.5 to 3 by 0.05.
func kappas() []float64 {
	var out []float64
	for i := 10; i <= 60; i++ {
		out = append(out, float64(i)/20)
	}
	return out
}

// planOnProxy plans progressive GNMax on the proxy votes of r: of every ladder shape,
// κ, give-up fraction and threshold step it scores (each scaled to K), the
// settings whose expected labels within the budget are most, among those
// whose labels agree with the proxy's plurality at least r.MinAgreement of
// the time and, on the proxy's lowest-consensus fifth, at least as often
// as Confident-GNMax's (the guard: many looks let noise-inflated gaps pass
// a small κ). Each candidate is scored with continuous Gaussian noise of
// the deviations a release draws (ProgressiveGNMax.Draws) and
// the threshold step's pass probability in closed form, a query's cost
// 1/σ² per coordinate drawn; the best are checked again with fresh noise
// (verifyReplicates), in order, until one still meets both conditions,
// so that the noise that chose a candidate does not vouch for it. The
// expected labels are the budget's μ_B² (accountant.Filter.GDPBudget)
// over a query's expected cost, times the answer rate.
func (ProgressiveGNMax) planOnProxy(ctx context.Context, r ProxyRequest) (ProxyPlan, error) {
	p := r
	minAgree := r.MinAgreement
	if minAgree == 0 {
		minAgree = defaultMinAgreement
	}
	if !(minAgree > 0 && minAgree < 1) {
		return ProxyPlan{}, &param.Error{Name: "min-agreement", Value: minAgree, Rule: "must be in (0, 1)"}
	}
	if err := p.check(); err != nil {
		return ProxyPlan{}, err
	}
	if n := len(r.Counts); n > maxProxyQueries {
		return ProxyPlan{}, &param.Error{Name: "votes", Value: n, Rule: fmt.Sprintf("a plan simulates its ladders on every proxy query, %d at the most: give a sample of them (what the plan learns of them is their consensus)", maxProxyQueries)}
	}
	b := accountant.Budget{Guarantee: r.Budget}
	if err := b.Validate(); err != nil {
		return ProxyPlan{}, err
	}
	if !(r.Budget.Delta > 0) {
		return ProxyPlan{}, &param.Error{Name: "budget delta", Value: r.Budget.Delta, Rule: "must be > 0: a Gaussian-DP filter has no pure guarantee"}
	}
	filter := accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.GDPFilter, Delta: r.Budget.Delta}}}
	muB2, ok := filter.GDPBudget(r.Budget)
	if !ok || !(muB2 > 0) || math.IsInf(muB2, 0) {
		return ProxyPlan{}, &param.Error{Name: "budget eps", Value: r.Budget.Eps, Rule: "its Gaussian-DP filter must hold a finite, positive mu_B^2"}
	}
	s := newSimulator(p, r.Seed)
	out := ProxyPlan{MuBudget2: muB2, MinAgreement: minAgree, Seed: r.Seed}
	k := float64(p.K)
	base := ConfidentGNMax{Threshold: math.Round(0.8 * k), Sigma1: round(0.6 * k), GNMax: GNMax{Sigma2: round(0.16 * k)}}
	out.Baseline, out.LowTop, out.LowQueries = base, s.lowTop, s.lowCount
	baseline := func(replicates int, seed uint64) (float64, error) {
		m, err := chargedForm(base)
		if err != nil {
			return 0, err
		}
		st, err := s.run(ctx, m, replicates, seed, nil)
		if err != nil {
			return 0, err
		}
		var sc ladderScore
		var e [1]estimate
		if err := st.score(ctx, []float64{0}, 0, &sc); err != nil {
			return 0, err
		}
		sc.at(s, s.step(m.Threshold, m.Sigma1), 1, e[:]) // μ_B² does not enter the agreement
		return e[0].low, nil
	}
	low, err := baseline(selectReplicates, r.Seed)
	if err != nil {
		return out, err
	}
	// The ladders are searched on up to GOMAXPROCS goroutines, each search
	// keeping the best candidates of its ladder; their lists are then kept
	// in the order of the search, on which the ties of best.keep depend: a
	// candidate not among the best of its ladder is not among the best of
	// all (a feasible candidate answers, so its expected labels are not
	// NaN and order it), so the best of all are those of one pass, on any
	// number of goroutines.
	var ladders [][]float64
	for _, shape := range ladderShapes(k) {
		if levels := shape.levels(k); levels != nil {
			ladders = append(ladders, levels)
		}
	}
	steps, ks := s.thresholdSteps(), kappas()
	found := make([]ladderFound, len(ladders))
	var next atomic.Int64
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(ladders), 1+searchMemory/max(1, simulationBytes(len(r.Counts), selectReplicates, slices.Max(levelCounts))))
	for range workers {
		w := &ladderSearch{s: s, steps: steps, kappas: ks, muB2: muB2, minAgree: minAgree, low: low, seed: r.Seed}
		wg.Go(func() {
			// Once ctx is done, no ladder more: each would allocate its
			// simulation before it saw ctx.
			for i := int(next.Add(1) - 1); i < len(ladders) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				found[i] = w.search(ctx, ladders[i])
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return out, err
	}
	var feasible best
	for _, f := range found {
		if f.err != nil {
			return out, f.err
		}
		out.Candidates += f.candidates
		out.Feasible += f.feasible
		for _, c := range f.best {
			feasible.keep(c)
		}
	}
	if len(feasible) == 0 {
		return out, &param.SettingError{Name: "min-agreement", Value: fmt.Sprint(minAgree), Rule: "no setting of the ladders, kappas and threshold steps searched reaches it on the proxy votes (and the low-consensus guard): lower it, or give proxy votes of more consensus"}
	}
	// The check, with noise that chose nothing.
	seed := r.Seed ^ 0x9e3779b97f4a7c15
	if low, err = baseline(verifyReplicates, seed); err != nil {
		return out, err
	}
	// One ladder's simulation at a time (κ, g and the threshold step only
	// score it), its memory reused for the next: the candidates' ladders
	// are many, each simulation as large as the proxy.
	var st *runState
	var simulated []float64
	var refused error                        // the first setting a release does not build
	unbuilt, memo := 0, new(accountant.Memo) // the settings a release does not build; their certificates
	for _, c := range feasible {
		out.Checked++
		if st == nil || !slices.Equal(simulated, c.m.Levels) {
			if st, err = s.run(ctx, ProgressiveGNMax{Levels: c.m.Levels}, verifyReplicates, seed, st); err != nil {
				return out, err
			}
			simulated = c.m.Levels
		}
		var sc ladderScore
		var est [1]estimate
		if err := st.score(ctx, []float64{c.m.Kappa}, c.m.GiveUp, &sc); err != nil {
			return out, err
		}
		sc.at(s, s.step(c.m.Threshold, c.m.Sigma1), muB2, est[:])
		e := est[0]
		if e.agreement >= minAgree && e.low >= low-lowTolerance {
			c.m.Budget = r.Budget
			// The setting planned is one a release builds, else the next.
			if e.queries, e.answered, err = buildable(memo, c.m, r.K, r.Classes, e.queries, e.answered, e.cost); err != nil {
				if refused == nil {
					refused = err
				}
				unbuilt++
				continue
			}
			out.Mechanism, out.Queries, out.Answered, out.Agreement, out.Cost = c.m, e.queries, e.answered, e.agreement, e.cost
			out.LowAgreement, out.LowBaseline = e.low, low
			return out, nil
		}
	}
	if refused != nil {
		return out, unbuiltError(out.Checked, unbuilt, refused)
	}
	return out, &param.SettingError{Name: "min-agreement", Value: fmt.Sprint(minAgree), Rule: fmt.Sprintf("none of the %d best settings found reaches it again with fresh noise (and the low-consensus guard): lower it, or give proxy votes of more consensus", out.Checked)}
}

// buildable returns the expected queries and answers of progressive
// GNMax m for K teachers over C classes, a query's expected μ² cost, at
// most what its filter's share of δ for the tails holds (which a count of
// μ², as the search's, does not see; it binds only at a very large ε), or
// why a release does not build m (its filter does not hold one query's
// every draw, say).
func buildable(memo *accountant.Memo, m ProgressiveGNMax, k, classes int, queries, answered, cost float64) (float64, float64, error) {
	p, err := newProgressive(memo, m, k, classes)
	if err != nil {
		return 0, 0, err
	}
	q, err := p.meter.tailQueries(cost)
	if err != nil {
		return 0, 0, err
	}
	if q < queries {
		answered *= q / queries
		queries = q
	}
	return queries, answered, nil
}

// unbuiltError says that of the checked best settings, the unbuilt that
// reached the least agreement are none of them one a release builds,
// refused the first's refusal; a parameter's stays the parameter's.
func unbuiltError(checked, unbuilt int, refused error) error {
	why := fmt.Sprintf("of the %d best settings found, %d reach the least agreement again with fresh noise (and the low-consensus guard), and none of them is one a release builds", checked, unbuilt)
	if pe := new(param.Error); errors.As(refused, &pe) {
		return &param.Error{Name: pe.Name, Value: pe.Value, Rule: why + ": " + pe.Rule}
	}
	return fmt.Errorf("%s: %w", why, refused)
}

// candidate is a setting of the search and its expected labels.
type candidate struct {
	m        ProgressiveGNMax
	answered float64
}

// best holds the verifyCandidates feasible settings of most expected
// labels, most first, the earlier found of equals first.
type best []candidate

// keep adds c, found after every candidate before it, if it is among the
// best.
func (b *best) keep(c candidate) {
	i := sort.Search(len(*b), func(i int) bool { return (*b)[i].answered < c.answered })
	if i == verifyCandidates {
		return
	}
	*b = slices.Insert(*b, i, c)
	if len(*b) > verifyCandidates {
		*b = (*b)[:verifyCandidates]
	}
}

// ladderFound is what the search found on one ladder: how many
// candidates it scored, how many were feasible, and the best of those.
type ladderFound struct {
	candidates, feasible int
	best                 best
	err                  error
}

// ladderSearch searches one ladder after another, in memory of its own:
// every κ, give-up fraction and threshold step with it, against the least
// agreement minAgree and the baseline's low-consensus agreement low.
type ladderSearch struct {
	s                   *simulator
	steps               []thresholdStep
	kappas              []float64
	muB2, minAgree, low float64
	seed                uint64
	st                  *runState
	sc                  ladderScore
	est                 []estimate
}

// search scores the candidates of the ladder levels. Every κ of a give-up
// fraction is scored in one pass over the queries, and with each
// threshold step in one pass over the plurality counts, into
// est[(g·len(steps)+step)·len(kappas)+κ]; the candidates are then read
// in the order of the search (κ, give-up fraction, threshold step), on
// which the ties of best.keep depend.
func (w *ladderSearch) search(ctx context.Context, levels []float64) ladderFound {
	var f ladderFound
	var err error
	if w.st, err = w.s.run(ctx, ProgressiveGNMax{Levels: levels}, selectReplicates, w.seed, w.st); err != nil {
		return ladderFound{err: err}
	}
	nk, ns := len(w.kappas), len(w.steps)
	w.est = slices.Grow(w.est[:0], len(giveUps)*ns*nk)[:len(giveUps)*ns*nk]
	for gi, g := range giveUps {
		if len(levels) == 1 && g != 0 {
			continue // a one-level ladder gives up at its last level only
		}
		if err := w.st.score(ctx, w.kappas, g, &w.sc); err != nil {
			return ladderFound{err: err}
		}
		for si, th := range w.steps {
			w.sc.at(w.s, th, w.muB2, w.est[(gi*ns+si)*nk:][:nk])
		}
	}
	for ki, kappa := range w.kappas {
		for gi, g := range giveUps {
			if len(levels) == 1 && g != 0 {
				continue
			}
			for si, th := range w.steps {
				f.candidates++
				e := w.est[(gi*ns+si)*nk+ki]
				// In selection, the agreements' lower bounds (two
				// standard errors): on a small proxy, the noise that
				// ranks the candidates would otherwise pick those whose
				// estimates it inflated most.
				if !(e.agreement-2*e.agreementSE >= w.minAgree && e.low-2*e.lowSE >= w.low-lowTolerance) || e.answered <= 0 {
					continue
				}
				f.feasible++
				f.best.keep(candidate{ProgressiveGNMax{Levels: levels, Kappa: kappa, GiveUp: g, Threshold: th.t, Sigma1: th.sigma}, e.answered})
			}
		}
	}
	return f
}

// chargedForm returns Confident-GNMax c charged when drawn.
func chargedForm(c ConfidentGNMax) (ProgressiveGNMax, error) {
	m, ok := ChargedPerDraw(c, accountant.Guarantee{})
	p, is := m.(ProgressiveGNMax)
	if !ok || !is {
		return ProgressiveGNMax{}, errors.New("ensemble: Confident-GNMax has no form charged per draw")
	}
	return p, nil
}

// round rounds x to an integer from 10 on, to a tenth below.
func round(x float64) float64 {
	if x >= 10 {
		return math.Round(x)
	}
	return math.Round(10*x) / 10
}

// ladderShapes returns the shapes searched for K teachers.
func ladderShapes(k float64) []ladderShape {
	var out []ladderShape
	for _, last := range lastLevels {
		out = append(out, ladderShape{last, last, 1})
		for _, first := range firstLevels {
			for _, n := range levelCounts[1:] {
				if first > last {
					out = append(out, ladderShape{first, last, n})
				}
			}
		}
	}
	return out
}

// levels returns the ladder of the shape for K teachers, each level
// rounded (round), or nil when the rounding leaves it not decreasing or a
// level below 1.
func (sh ladderShape) levels(k float64) []float64 {
	s1, sk := sh.first*k, sh.last*k
	out := make([]float64, sh.n)
	for j := range out {
		x := sk
		if sh.n > 1 {
			x = s1 * math.Pow(sk/s1, float64(j)/float64(sh.n-1))
		}
		out[j] = round(x)
		if out[j] < 1 || j > 0 && !(out[j] < out[j-1]) {
			return nil
		}
	}
	if (ProgressiveGNMax{Levels: out}).Validate() != nil {
		return nil
	}
	return out
}
