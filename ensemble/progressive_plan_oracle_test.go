package ensemble

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/darrm/darrm/internal/param"

	"github.com/darrm/darrm/accountant"
)

// This file keeps the plan search of progressive GNMax in its
// straightforward form, one candidate at a time, as the oracle the faster
// search must match bit for bit (TestPlanSearchMatchesOracle) and the
// baseline of its benchmark. It is a copy on purpose: the search it checks
// is free to change shape, the oracle is not.

// oraclePlan is planOnProxy as first written: every κ and give-up
// fraction of every ladder scored by its own walk over the queries, and
// every threshold step by its own walk over the plurality counts.
func oraclePlan(ctx context.Context, r ProxyRequest) (ProxyPlan, error) {
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
		st, err := oracleRun(ctx, s, m, replicates, seed)
		if err != nil {
			return 0, err
		}
		var sc oracleScore
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
		st, err := oracleRun(ctx, s, ProgressiveGNMax{Levels: levels}, selectReplicates, r.Seed)
		if err != nil {
			return out, err
		}
		for _, kappa := range kappas() {
			for _, g := range giveUps {
				if len(levels) == 1 && g != 0 {
					continue
				}
				var sc oracleScore
				st.score(kappa, g, &sc)
				for _, th := range steps {
					out.Candidates++
					e := sc.at(s, th, muB2)
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
	seed := r.Seed ^ 0x9e3779b97f4a7c15
	if low, err = baseline(verifyReplicates, seed); err != nil {
		return out, err
	}
	checked := map[string]*oracleState{}
	var refused error
	unbuilt, memo := 0, new(accountant.Memo)
	for _, c := range feasible {
		out.Checked++
		key := fmt.Sprint(c.m.Levels)
		st := checked[key]
		if st == nil {
			if st, err = oracleRun(ctx, s, ProgressiveGNMax{Levels: c.m.Levels}, verifyReplicates, seed); err != nil {
				return out, err
			}
			checked[key] = st
		}
		var sc oracleScore
		st.score(c.m.Kappa, c.m.GiveUp, &sc)
		e := sc.at(s, s.step(c.m.Threshold, c.m.Sigma1), muB2)
		if e.agreement >= minAgree && e.low >= low-lowTolerance {
			c.m.Budget = r.Budget
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

// oracleState is the simulated ladder of the oracle: for each query,
// replicate and level, the gap in units of √2·S_j and whether the argmax
// is the plurality; each level's S_j and cost.
type oracleState struct {
	s      *simulator
	levels int
	reps   int
	z      []float64
	ok     []bool
	dev    []float64
	cost   []float64
}

func oracleRun(ctx context.Context, s *simulator, m ProgressiveGNMax, replicates int, seed uint64) (*oracleState, error) {
	var sig []float64
	for _, d := range m.Draws() {
		if d.Coords == 2 {
			sig = append(sig, d.Sigma)
		}
	}
	n, c := len(s.p.Counts), s.p.Classes
	st := &oracleState{s: s, levels: len(sig), reps: replicates, z: make([]float64, n*replicates*len(sig)), ok: make([]bool, n*replicates*len(sig))}
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

// oracleScore is a candidate's expected ladder cost, answers and
// agreeing answers per query, summed by plurality count.
type oracleScore struct {
	cost, answer, agree []float64
	lowAnswer, lowAgree []float64
	reps                int
}

func (st *oracleState) score(kappa, g float64, sc *oracleScore) {
	k := st.s.p.K
	*sc = oracleScore{cost: make([]float64, k+1), answer: make([]float64, k+1), agree: make([]float64, k+1), lowAnswer: make([]float64, k+1), lowAgree: make([]float64, k+1), reps: st.reps}
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

func (sc *oracleScore) at(s *simulator, th thresholdStep, muB2 float64) estimate {
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

func (sc *oracleScore) lowAgreement(s *simulator, pass []float64) (float64, float64) {
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
