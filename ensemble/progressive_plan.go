package ensemble

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

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
	// its filter stops it, Answered the labels among them, Agreement the
	// share of those that agree with the proxy's plurality (or truth).
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
		st, err := s.run(ctx, m, replicates, seed)
		if err != nil {
			return 0, err
		}
		var sc ladderScore
		st.score(0, 0, &sc)
		a, _ := sc.lowAgreement(s, s.step(m.Threshold, m.Sigma1).pass)
		return a, nil
	}
	low, err := baseline(selectReplicates, r.Seed)
	if err != nil {
		return out, err
	}
	type candidate struct {
		m        ProgressiveGNMax
		answered float64
	}
	// The best verifyCandidates feasible settings, most labels first, the
	// earlier of equals.
	var feasible []candidate
	keep := func(c candidate) {
		i := sort.Search(len(feasible), func(i int) bool { return feasible[i].answered < c.answered })
		if i == verifyCandidates {
			return
		}
		feasible = slices.Insert(feasible, i, c)
		if len(feasible) > verifyCandidates {
			feasible = feasible[:verifyCandidates]
		}
	}
	steps := s.thresholdSteps()
	for _, shape := range ladderShapes(k) {
		levels := shape.levels(k)
		if levels == nil {
			continue
		}
		st, err := s.run(ctx, ProgressiveGNMax{Levels: levels}, selectReplicates, r.Seed)
		if err != nil {
			return out, err
		}
		for _, kappa := range kappas() {
			for _, g := range giveUps {
				if len(levels) == 1 && g != 0 {
					continue // a one-level ladder gives up at its last level only
				}
				var sc ladderScore
				st.score(kappa, g, &sc)
				for _, th := range steps {
					out.Candidates++
					e := sc.at(s, th, muB2)
					// In selection, the agreements' lower bounds (two
					// standard errors): on a small proxy, the noise that
					// ranks the candidates would otherwise pick those
					// whose estimates it inflated most.
					if !(e.agreement-2*e.agreementSE >= minAgree && e.low-2*e.lowSE >= low-lowTolerance) || e.answered <= 0 {
						continue
					}
					out.Feasible++
					keep(candidate{ProgressiveGNMax{Levels: levels, Kappa: kappa, GiveUp: g, Threshold: th.t, Sigma1: th.sigma}, e.answered})
				}
			}
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
	checked := map[string]*runState{} // by ladder: κ, g and the threshold step only score it
	for _, c := range feasible {
		out.Checked++
		key := fmt.Sprint(c.m.Levels)
		st := checked[key]
		if st == nil {
			if st, err = s.run(ctx, ProgressiveGNMax{Levels: c.m.Levels}, verifyReplicates, seed); err != nil {
				return out, err
			}
			checked[key] = st
		}
		var sc ladderScore
		st.score(c.m.Kappa, c.m.GiveUp, &sc)
		e := sc.at(s, s.step(c.m.Threshold, c.m.Sigma1), muB2)
		if e.agreement >= minAgree && e.low >= low-lowTolerance {
			c.m.Budget = r.Budget
			out.Mechanism, out.Queries, out.Answered, out.Agreement, out.Cost = c.m, e.queries, e.answered, e.agreement, e.cost
			out.LowAgreement, out.LowBaseline = e.low, low
			return out, nil
		}
	}
	return out, &param.SettingError{Name: "min-agreement", Value: fmt.Sprint(minAgree), Rule: fmt.Sprintf("none of the %d best settings found reaches it again with fresh noise (and the low-consensus guard): lower it, or give proxy votes of more consensus", out.Checked)}
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

// thresholdStep is a threshold step of the search: T and σ1, none when
// σ1 is 0; with, once made (s.step), the probability that each plurality
// count passes it and the μ² of its draw.
type thresholdStep struct {
	t, sigma float64
	pass     []float64
	cost     float64
}

// thresholdSteps returns none and the threshold steps searched for K
// teachers, made.
func (s *simulator) thresholdSteps() []thresholdStep {
	k := float64(s.p.K)
	out := []thresholdStep{s.step(0, 0)}
	for _, t := range thresholdTs {
		for _, x := range thresholdSigmas {
			if sigma := round(x * k); sigma >= 1 {
				out = append(out, s.step(math.Round(t*k), sigma))
			}
		}
	}
	return out
}

// step returns the threshold step of T and σ1 (none when σ1 is 0) with
// its pass probability at each plurality count, of the deviation a
// release draws (ProgressiveGNMax.Draws), and its cost 1/σ1².
func (s *simulator) step(t, sigma float64) thresholdStep {
	th := thresholdStep{t: t, sigma: sigma, pass: make([]float64, s.p.K+1)}
	if sigma == 0 {
		for i := range th.pass {
			th.pass[i] = 1
		}
		return th
	}
	drawn := ProgressiveGNMax{Levels: []float64{1}, Threshold: t, Sigma1: sigma}.Draws()[0].Sigma
	pass := s.thresholdPass(t, drawn)
	for i := range th.pass {
		th.pass[i] = pass(i)
	}
	th.cost = 1 / (drawn * drawn)
	return th
}

// simulator holds the proxy queries, grouped by their plurality count,
// and the lowest-consensus share of them.
type simulator struct {
	p    ProxyRequest
	seed uint64
	// top is each query's plurality count, truth its plurality (or true
	// class), tops the plurality counts that occur, in order; lowTop the
	// plurality count at or below which a query is of low consensus,
	// lowCount how many are.
	top, truth, tops []int
	lowTop, lowCount int
}

func newSimulator(p ProxyRequest, seed uint64) *simulator {
	s := &simulator{p: p, seed: seed, top: make([]int, len(p.Counts)), truth: make([]int, len(p.Counts))}
	for i, c := range p.Counts {
		s.top[i] = slices.Max(c)
		s.truth[i] = p.Truth[i]
	}
	sorted := slices.Sorted(slices.Values(s.top))
	s.tops = slices.Compact(slices.Clone(sorted))
	s.lowTop = sorted[max(0, int(math.Ceil(lowConsensusShare*float64(len(sorted))))-1)]
	for _, t := range s.top {
		if t <= s.lowTop {
			s.lowCount++
		}
	}
	return s
}

// runState is the simulated ladder of a mechanism on every proxy query:
// for each query, replicate and level, the average's gap in units of
// √2·S_j (S_j its deviation), whether its argmax is the plurality, and
// each level's cost.
type runState struct {
	s      *simulator
	levels int
	reps   int
	z      []float64 // [query][rep][level]
	ok     []bool
	dev    []float64 // S_j
	cost   []float64 // μ² of the draws up to level j, in all
}

// run simulates the ladder of m (its draws as a release draws them:
// Draws, continuous noise of those deviations) on every query, replicates
// times, from streams of seed.
func (s *simulator) run(ctx context.Context, m ProgressiveGNMax, replicates int, seed uint64) (*runState, error) {
	var sig []float64
	for _, d := range m.Draws() {
		if d.Coords == 2 {
			sig = append(sig, d.Sigma)
		}
	}
	n, c := len(s.p.Counts), s.p.Classes
	st := &runState{s: s, levels: len(sig), reps: replicates, z: make([]float64, n*replicates*len(sig)), ok: make([]bool, n*replicates*len(sig))}
	var precision, cost float64
	for _, x := range sig {
		precision += 1 / (x * x)
		cost += 2 / (x * x)
		st.dev = append(st.dev, 1/math.Sqrt(precision))
		st.cost = append(st.cost, cost)
	}
	sum := make([]float64, c)
	for q, counts := range s.p.Counts {
		if q%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rng := rand.New(rand.NewPCG(seed, uint64(q)))
		for rep := range replicates {
			clear(sum)
			w := 0.0
			for j, x := range sig {
				wj := 1 / (x * x)
				w += wj
				for i, v := range counts {
					sum[i] += wj * (float64(v) + x*rng.NormFloat64())
				}
				first, second, arg := math.Inf(-1), math.Inf(-1), 0
				for i, v := range sum {
					switch {
					case v > first:
						second, first, arg = first, v, i
					case v > second:
						second = v
					}
				}
				at := (q*replicates+rep)*len(sig) + j
				st.z[at] = (first - second) / w / (math.Sqrt2 * st.dev[j])
				st.ok[at] = arg == s.truth[q]
			}
		}
	}
	return st, nil
}

// ladderScore is a candidate's expected cost of the ladder, answers and agreeing
// answers per query, summed by plurality count (the threshold step's pass
// probability depends on it alone), over every query and over the
// low-consensus ones.
type ladderScore struct {
	cost, answer, agree []float64
	lowAnswer, lowAgree []float64
	reps                int
}

// score sums, for κ and give-up fraction g, each query's expected ladder
// cost, answer and agreement by its plurality count into sc.
func (st *runState) score(kappa, g float64, sc *ladderScore) {
	k := st.s.p.K
	*sc = ladderScore{cost: make([]float64, k+1), answer: make([]float64, k+1), agree: make([]float64, k+1), lowAnswer: make([]float64, k+1), lowAgree: make([]float64, k+1), reps: st.reps}
	last := len(st.dev) - 1
	giveUp := g * kappa * st.dev[last]
	r := float64(st.reps)
	for q := range st.s.p.Counts {
		var c, a, ag float64
		for rep := range st.reps {
			base := (q*st.reps + rep) * st.levels
			for j := range st.levels {
				z := st.z[base+j]
				if z >= kappa {
					c += st.cost[j]
					a++
					if st.ok[base+j] {
						ag++
					}
					break
				}
				if j == last || z*st.dev[j] < giveUp {
					c += st.cost[j]
					break
				}
			}
		}
		t := st.s.top[q]
		sc.cost[t] += c / r
		sc.answer[t] += a / r
		sc.agree[t] += ag / r
		if t <= st.s.lowTop {
			sc.lowAnswer[t] += a / r
			sc.lowAgree[t] += ag / r
		}
	}
}

// estimate is a candidate's expectations with a threshold step, and
// the standard error of its agreement as a proportion of the simulated
// answers (sampled is their number).
type estimate struct {
	queries, answered, agreement, low, cost float64
	sampled, agreementSE, lowSE             float64
}

// at returns the expectations of sc with threshold step th under μ_B².
func (sc *ladderScore) at(s *simulator, th thresholdStep, muB2 float64) estimate {
	n := float64(len(s.p.Counts))
	var cost, answer, agree float64
	for _, t := range s.tops {
		p := th.pass[t]
		cost += p * sc.cost[t]
		answer += p * sc.answer[t]
		agree += p * sc.agree[t]
	}
	var e estimate
	e.cost = th.cost + cost/n
	e.queries = muB2 / e.cost
	e.answered = e.queries * answer / n
	if answer > 0 {
		e.agreement = agree / answer
		e.sampled = answer * float64(sc.reps)
		e.agreementSE = math.Sqrt(math.Max(e.agreement*(1-e.agreement), 1/e.sampled) / e.sampled)
	}
	var lowSampled float64
	e.low, lowSampled = sc.lowAgreement(s, th.pass)
	if lowSampled > 0 {
		e.lowSE = math.Sqrt(math.Max(e.low*(1-e.low), 1/lowSampled) / lowSampled)
	}
	return e
}

// lowAgreement is the agreement of the answers on the low-consensus
// queries with the threshold step's pass probability pass at each
// plurality count, 1 when none is answered (no label, none wrong), and
// the number of simulated answers it is a proportion of.
func (sc *ladderScore) lowAgreement(s *simulator, pass []float64) (float64, float64) {
	var a, g float64
	for _, t := range s.tops {
		if t > s.lowTop {
			break
		}
		a += pass[t] * sc.lowAnswer[t]
		g += pass[t] * sc.lowAgree[t]
	}
	if !(a > 0) {
		return 1, 0
	}
	return g / a, a * float64(sc.reps)
}

// thresholdPass returns the probability that a plurality count t plus
// noise of deviation sigma reaches the threshold T, the discrete noise
// taken as continuous with a continuity correction: Pr[t + Z >= ceil(T)]
// ≈ Φ((t - ceil(T) + 1/2)/σ).
func (s *simulator) thresholdPass(threshold, sigma float64) func(int) float64 {
	c := math.Ceil(threshold) - 0.5
	return func(t int) float64 { return 0.5 * math.Erfc(-(float64(t)-c)/(sigma*math.Sqrt2)) }
}
