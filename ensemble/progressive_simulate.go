package ensemble

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/darrm/darrm/internal/ctxio"
)

// This file simulates progressive GNMax on proxy votes for its plan
// (planOnProxy): each ladder's walks on every query, and every candidate's
// expectations from them.

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
	// class), tops the plurality counts that occur, in order, and row
	// each query's place in tops; lowTop the plurality count at or below
	// which a query is of low consensus, lowCount how many are, lowRows
	// how many of tops are.
	top, truth, tops, row     []int
	lowTop, lowCount, lowRows int
}

func newSimulator(p ProxyRequest, seed uint64) *simulator {
	s := &simulator{p: p, seed: seed, top: make([]int, len(p.Counts)), truth: make([]int, len(p.Counts)), row: make([]int, len(p.Counts))}
	for i, c := range p.Counts {
		s.top[i] = slices.Max(c)
		s.truth[i] = p.Truth[i]
	}
	sorted := slices.Sorted(slices.Values(s.top))
	s.tops = slices.Compact(slices.Clone(sorted))
	s.lowTop = sorted[max(0, int(math.Ceil(lowConsensusShare*float64(len(sorted))))-1)]
	for i, t := range s.top {
		s.row[i], _ = slices.BinarySearch(s.tops, t)
		if t <= s.lowTop {
			s.lowCount++
		}
	}
	s.lowRows, _ = slices.BinarySearch(s.tops, s.lowTop+1)
	return s
}

// runState is the simulated ladder of a mechanism on every proxy query:
// for each query, replicate and level, the average's gap in units of
// √2·S_j (S_j its deviation), that gap times S_j (the give-up test's
// side, kept as that test computes it), whether its argmax is the
// plurality, and each level's cost.
type runState struct {
	s      *simulator
	levels int
	reps   int
	z, zs  []float64 // [query][rep][level]
	ok     []bool
	dev    []float64 // S_j
	cost   []float64 // μ² of the draws up to level j, in all
}

// simulationBytes is the memory of a runState of n queries, replicates
// and levels: z and z·S_j, 8 bytes each, and ok, 1.
func simulationBytes(n, replicates, levels int) int {
	return n * replicates * levels * (8 + 8 + 1)
}

// run simulates the ladder of m (its draws as a release draws them:
// Draws, continuous noise of those deviations) on every query, replicates
// times, from streams of seed; in the memory of into unless it is nil (a
// search simulates one ladder after another).
func (s *simulator) run(ctx context.Context, m ProgressiveGNMax, replicates int, seed uint64, into *runState) (*runState, error) {
	var sig []float64
	for _, d := range m.Draws() {
		if d.Coords == 2 {
			sig = append(sig, d.Sigma)
		}
	}
	n, c := len(s.p.Counts), s.p.Classes
	size := n * replicates * len(sig)
	st := into
	if st == nil {
		st = new(runState)
	}
	*st = runState{s: s, levels: len(sig), reps: replicates, z: slices.Grow(st.z[:0], size)[:size], zs: slices.Grow(st.zs[:0], size)[:size], ok: slices.Grow(st.ok[:0], size)[:size], dev: st.dev[:0], cost: st.cost[:0]}
	var precision, cost float64
	for _, x := range sig {
		precision += 1 / (x * x)
		cost += 2 / (x * x)
		st.dev = append(st.dev, 1/math.Sqrt(precision))
		st.cost = append(st.cost, cost)
	}
	sum := make([]float64, c)
	// One generator reseeded per query: the stream of NewPCG(seed, q)
	// without a generator's allocation per query.
	var pcg rand.PCG
	rng := rand.New(&pcg)
	// A query's replicates draw noise for each of its classes: checked
	// every 256 queries, or once 2^16 class counts were drawn for since.
	check := ctxio.Every{Ctx: ctx, Items: 256, Units: 1 << 16}
	for q, counts := range s.p.Counts {
		if err := check.Step(len(counts)); err != nil {
			return nil, err
		}
		pcg.Seed(seed, uint64(q))
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
				st.zs[at] = st.z[at] * st.dev[j]
				st.ok[at] = arg == s.truth[q]
			}
		}
	}
	return st, nil
}

// ladderScore is, for a ladder, a give-up fraction and each κ of an
// ascending list, the candidate's expected cost of the ladder, answers
// and agreeing answers per query, summed by plurality count (the
// threshold step's pass probability depends on it alone); those of the
// low-consensus queries are the sums of the lowest plurality counts. The
// sums of κ_i at the plurality count tops[u] are at u·stride+i, stride
// len(kappas) rounded up to a multiple of 4 (addWeighted): a query adds to
// those of every κ at once, and a threshold step reads them in order.
// Each sum adds its queries in their order, as a score of that κ alone
// would.
type ladderScore struct {
	stride              int
	cost, answer, agree []float64
	reps                int
	// Scratch: the give-up test's side for each κ; a/reps for a answers;
	// each replicate's outcomes of one query (walkOutcomes) and the next
	// of each to add; the sums of a threshold step and its pass
	// probability at each plurality count (at).
	giveUp, share []float64
	outcomes      [][]outcome
	next          []int
	sums          [5][]float64
	weights       []float64
}

// outcome is where the walks of a replicate stop for the κ below end, from
// the end of the outcome before it: the cost of the levels walked, and
// whether they answer and the answer agrees.
type outcome struct {
	end            int
	cost           float64
	answer, agrees bool
}

// reset empties sc for the κ of kappas, reusing its memory.
func (sc *ladderScore) reset(s *simulator, kappas []float64, reps int) {
	nk := len(kappas)
	grow := func(x []float64, n int) []float64 {
		if cap(x) < n {
			return make([]float64, n)
		}
		x = x[:n]
		clear(x)
		return x
	}
	sc.reps, sc.stride = reps, (nk+3)&^3
	size := len(s.tops) * sc.stride
	sc.cost, sc.answer, sc.agree = grow(sc.cost, size), grow(sc.answer, size), grow(sc.agree, size)
	sc.giveUp, sc.share = grow(sc.giveUp, nk), grow(sc.share, reps+1)
	for i := range sc.sums {
		sc.sums[i] = grow(sc.sums[i], sc.stride)
	}
	for len(sc.outcomes) < reps {
		sc.outcomes = append(sc.outcomes, nil)
	}
	sc.next = slices.Grow(sc.next[:0], reps)[:reps]
}

// score sums, for give-up fraction g >= 0 and each κ of the ascending
// kappas, each query's expected ladder cost, answer and agreement by its
// plurality count into sc; it ends with ctx's error once ctx is done (a
// pass over a large proxy takes a while).
func (st *runState) score(ctx context.Context, kappas []float64, g float64, sc *ladderScore) error {
	sc.reset(st.s, kappas, st.reps)
	nk := len(kappas)
	for i, kappa := range kappas {
		sc.giveUp[i] = g * kappa * st.dev[st.levels-1]
	}
	// share[a] is a/reps, as a query's a answers over reps divide.
	r := float64(st.reps)
	for a := range sc.share {
		sc.share[a] = float64(a) / r
	}
	for q := range st.s.p.Counts {
		if q%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		for rep := range st.reps {
			sc.outcomes[rep] = st.walkOutcomes(q, rep, kappas, sc.giveUp, sc.outcomes[rep])
		}
		u := st.s.row[q]
		// The κ between two ends of the replicates' outcomes share the
		// query's cost, answers and agreeing answers; the cost adds in
		// the replicates' order, as a walk of one κ adds it.
		next := sc.next
		clear(next)
		for start := 0; start < nk; {
			end := nk
			for rep, i := range next {
				end = min(end, sc.outcomes[rep][i].end)
			}
			var c float64
			var a, ag int
			for rep, i := range next {
				o := sc.outcomes[rep][i]
				c += o.cost
				if o.answer {
					a++
					if o.agrees {
						ag++
					}
				}
				if o.end == end {
					next[rep]++
				}
			}
			at, n := u*sc.stride+start, end-start
			addTo(sc.cost[at:][:n], c/r)
			addTo(sc.answer[at:][:n], sc.share[a])
			addTo(sc.agree[at:][:n], sc.share[ag])
			start = end
		}
	}
	return nil
}

// addTo adds v to each of sum.
func addTo(sum []float64, v float64) {
	for i := range sum {
		sum[i] += v
	}
}

// walkOutcomes returns where the walks of replicate rep of query q stop,
// for each κ of the ascending kappas, with giveUp[i] = g·κ_i·S_last, in
// the order of κ, in the memory of out.
//
// A walk of one κ stops at the first level j where z_j >= κ (an answer)
// or z_j·S_j < g·κ·S_last (giving up), or at the last. Along ascending κ
// the first test holds on a prefix and the second on a suffix (both sides
// are monotone in κ, rounding included, as g >= 0), so the κ still walking
// after a level are an interval, and each level settles the κ at both of
// its ends: those that answer there are the next outcome from below, those
// that give up the next from above.
func (st *runState) walkOutcomes(q, rep int, kappas, giveUp []float64, out []outcome) []outcome {
	// Each level settles at most one outcome from each side: those from
	// below fill out from its start, those from above from its end.
	out = slices.Grow(out[:0], 2*st.levels)[:2*st.levels]
	below, above := 0, len(out)
	base := (q*st.reps + rep) * st.levels
	lo, hi := 0, len(kappas) // the κ still walking
	for j := range st.levels {
		if z := st.z[base+j]; z >= kappas[lo] {
			// The κ in [lo, answered) answer at level j.
			answered := hi
			if z < kappas[hi-1] {
				answered = countAtMost(kappas, z)
			}
			out[below] = outcome{end: answered, cost: st.cost[j], answer: true, agrees: st.ok[base+j]}
			below++
			if lo = answered; lo == hi {
				break
			}
		}
		// The κ in [stay, hi) give up at level j.
		stay := lo
		if zs := st.zs[base+j]; j < st.levels-1 && !(zs < giveUp[lo]) {
			stay = hi
			if zs < giveUp[hi-1] {
				stay = countAtMost(giveUp, zs)
			}
		}
		if stay < hi {
			above--
			out[above] = outcome{end: hi, cost: st.cost[j]}
			if hi = stay; lo == hi {
				break
			}
		}
	}
	return out[:below+copy(out[below:], out[above:])]
}

// countAtMost returns how many of the ascending xs (none NaN) are at most
// x: the i with !(x < xs[i]), all of them when x is NaN. It guesses the
// place of x by interpolation between the ends, as κ and the give-up test's
// sides are about evenly spaced, and steps from there to the exact one.
func countAtMost(xs []float64, x float64) int {
	n := len(xs)
	switch {
	case x < xs[0]:
		return 0
	case !(x < xs[n-1]):
		return n
	}
	// xs[0] <= x < xs[n-1]: the last i with xs[i] <= x is below n-1.
	i := 0
	if f := float64(n-1) * ((x - xs[0]) / (xs[n-1] - xs[0])); f >= 1 {
		i = int(min(f, float64(n-2)))
	}
	for i > 0 && x < xs[i] {
		i--
	}
	for !(x < xs[i+1]) {
		i++
	}
	return i + 1
}

// estimate is a candidate's expectations with a threshold step, and
// the standard error of its agreement as a proportion of the simulated
// answers (sampled is their number).
type estimate struct {
	queries, answered, agreement, low, cost float64
	sampled, agreementSE, lowSE             float64
}

// at sets e[i] to the expectations of κ_i's scores in sc with threshold
// step th under μ_B².
func (sc *ladderScore) at(s *simulator, th thresholdStep, muB2 float64, e []estimate) {
	cost, answer, agree, lowAnswer, lowAgree := sc.sums[0], sc.sums[1], sc.sums[2], sc.sums[3], sc.sums[4]
	for _, x := range sc.sums {
		clear(x)
	}
	w := sc.weights[:0]
	for _, t := range s.tops {
		w = append(w, th.pass[t])
	}
	sc.weights = w
	// The sums of the low-consensus queries are those of every query
	// when the lowest plurality counts are added.
	low := s.lowRows * sc.stride
	addWeighted(cost, w, sc.cost)
	addWeighted(answer, w[:s.lowRows], sc.answer[:low])
	addWeighted(agree, w[:s.lowRows], sc.agree[:low])
	copy(lowAnswer, answer)
	copy(lowAgree, agree)
	addWeighted(answer, w[s.lowRows:], sc.answer[low:])
	addWeighted(agree, w[s.lowRows:], sc.agree[low:])
	n := float64(len(s.p.Counts))
	for i := range e {
		e[i] = estimate{cost: th.cost + cost[i]/n}
		e[i].queries = muB2 / e[i].cost
		e[i].answered = e[i].queries * answer[i] / n
		if answer[i] > 0 {
			e[i].agreement = agree[i] / answer[i]
			e[i].sampled = answer[i] * float64(sc.reps)
			e[i].agreementSE = math.Sqrt(math.Max(e[i].agreement*(1-e[i].agreement), 1/e[i].sampled) / e[i].sampled)
		}
		// The agreement of the answers on the low-consensus queries, 1
		// when none is answered (no label, none wrong).
		e[i].low = 1
		if a := lowAnswer[i]; a > 0 {
			e[i].low = lowAgree[i] / a
			lowSampled := a * float64(sc.reps)
			e[i].lowSE = math.Sqrt(math.Max(e[i].low*(1-e[i].low), 1/lowSampled) / lowSampled)
		}
	}
}

// addWeighted adds Σ_u w[u]·x[u·len(sum)+i] to sum[i], for each i,
// adding in the order of u; len(sum) is a multiple of 4. Each sum is held
// in a register as it adds, as the straightforward loop over u holds it,
// and each w[u] multiplies several: where the compiler fuses a
// multiplication and an addition (FMA: GOAMD64=v3, arm64), a fused step
// rounds once, and it fuses these as it fuses that loop's, not as it
// would a sum in memory or a multiplier used once. Four sums at a time,
// so that none waits on its own last addition.
func addWeighted(sum, w, x []float64) {
	nk := len(sum)
	for i := 0; i+4 <= nk; i += 4 {
		a0, a1, a2, a3 := sum[i], sum[i+1], sum[i+2], sum[i+3]
		for u, p := range w {
			r := x[u*nk+i:][:4]
			a0 += p * r[0]
			a1 += p * r[1]
			a2 += p * r[2]
			a3 += p * r[3]
		}
		sum[i], sum[i+1], sum[i+2], sum[i+3] = a0, a1, a2, a3
	}
}

// thresholdPass returns the probability that a plurality count t plus
// noise of deviation sigma reaches the threshold T, the discrete noise
// taken as continuous with a continuity correction: Pr[t + Z >= ceil(T)]
// ≈ Φ((t - ceil(T) + 1/2)/σ).
func (s *simulator) thresholdPass(threshold, sigma float64) func(int) float64 {
	c := math.Ceil(threshold) - 0.5
	return func(t int) float64 { return 0.5 * math.Erfc(-(float64(t)-c)/(sigma*math.Sqrt2)) }
}
