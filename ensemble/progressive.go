package ensemble

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/tally"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// ProgressiveGNMax is GNMax that pays only for the noise a query needs,
// on vote counts of C classes, each of its draws charged to a
// Gaussian-DP filter before it is drawn (Smith and Thakurta 2022, "Fully
// adaptive composition for Gaussian differential privacy"): its
// guarantee is the filter's Budget, which stops the run when the next
// query might not fit (docs/pate.md, "Progressive GNMax").
//
// Per query: with Sigma1 > 0, a threshold step first, as
// Confident-GNMax's (the largest count plus discrete Gaussian noise of
// deviation Sigma1 must reach Threshold, else no label); then fresh noisy
// histograms down the ladder of Levels s_1 > s_2 > ... > s_k, draw j of
// deviation σ_j with 1/σ_j² = 1/s_j² - 1/s_(j-1)² (σ_1 = s_1), so that
// the inverse-variance average of draws 1..j has deviation s_j and the
// draws so far cost 2/s_j² in μ² (each histogram moves by √2 in L2 when
// one vote changes). The average's argmax is released as soon as the gap
// between its top two is at least Kappa·√2·s_j; the query gets no label
// when that fails at the last level, or, with GiveUp g > 0, at an earlier
// level where the gap is below g·Kappa·√2·s_k. Every rule reads only
// noisy outputs and these settings, fixed before the run.
//
// The noise is the discrete Gaussian (discrete.Gaussian), each draw's
// deviation rounded up to a multiple of 1/32 (so that it is drawn in
// 64-bit arithmetic); each draw is charged the μ² that the accountant
// certifies for it (a coordinate of N_Z(0, σ²) moved by 1, and the mass
// outside the window it is certified on), never 1/σ².
//
// Confident-GNMax charged when drawn is the one-level ladder of its
// σ2 with Kappa 0 and its threshold step (ChargedPerDraw).
//
// A label file's header states Levels, Kappa, GiveUp, Threshold and
// Sigma1 by their JSON keys, and the filter's budget as the total.
type ProgressiveGNMax struct {
	Levels    []float64 `json:"levels" flag:"levels" help:"the noise of the average at each level, decreasing"`
	Kappa     float64   `json:"kappa" flag:"kappa" help:"a label leaves when its gap >= kappa·√2·level"`
	GiveUp    float64   `json:"give_up,omitempty" flag:"give-up" optional:"" help:"give up below this share of the last bar (0: never)"`
	Threshold float64   `json:"threshold,omitempty" flag:"threshold" optional:"" help:"answer when the noisy top count hits it"`
	Sigma1    float64   `json:"sigma1,omitempty" flag:"sigma1" optional:"" round:"up" help:"noise of the threshold step (> 0)"`
	// Budget is the (ε, δ) of the run's Gaussian-DP filter: its total to
	// publish. Release sets it from ReleaseSpec.Budget.
	Budget accountant.Guarantee `json:"-"`
}

// Limits of a ladder: at most maxLevels levels, each at least
// minLevel; kappa at most maxKappa (beyond, a query needs a gap of
// hundreds of deviations: nothing is ever released, yet every draw is
// charged).
const (
	maxLevels = 16
	minLevel  = 1
	maxKappa  = 50
)

// drawGrid is the grid a draw's deviation is rounded up to, 1/32: a
// deviation a/32 with a < 2^16 has a square p/q with p, q < 2^32, which
// discrete.Gaussian draws in 64-bit integers (an arbitrary float64 takes
// big rationals, thirty times slower).
const drawGrid = 32

// Name returns "progressive-gnmax".
func (ProgressiveGNMax) Name() provenance.MechanismName { return "progressive-gnmax" }

// Validate checks the ladder (1 to 16 levels, decreasing, each >= 1),
// κ in [0, 50], the give-up fraction in [0, 1], the threshold step
// (σ1 >= 0 and a finite threshold, 0 without σ1) and the budget, when set
// (ε > 0, δ in (0, 1)). Whether every draw's μ is certified is New's
// check.
func (m ProgressiveGNMax) Validate() error {
	if err := m.checkSettings(); err != nil {
		return err
	}
	if m.Budget != (accountant.Guarantee{}) {
		return m.checkBudget()
	}
	return nil
}

// checkSettings is Validate but for the budget.
func (m ProgressiveGNMax) checkSettings() error {
	l := m.Levels
	if len(l) == 0 || len(l) > maxLevels {
		return &param.Error{Name: "levels", Value: len(l), Rule: fmt.Sprintf("must hold 1 to %d levels, the deviations s_1 > s_2 > ... of the average at each level", maxLevels)}
	}
	for i, s := range l {
		switch {
		case !(s >= minLevel) || math.IsInf(s, 0):
			return &param.Error{Name: "levels", Value: s, Rule: fmt.Sprintf("each level must be a finite deviation >= %d", minLevel)}
		case i > 0 && !(s < l[i-1]):
			return &param.Error{Name: "levels", Value: s, Rule: fmt.Sprintf("must decrease: level %d, %v, follows %v (each level is the deviation of the average of more draws)", i+1, s, l[i-1])}
		}
	}
	if !(m.Kappa >= 0 && m.Kappa <= maxKappa) {
		return &param.Error{Name: "kappa", Value: m.Kappa, Rule: fmt.Sprintf("must be in [0, %d]: a label leaves when the average's gap between its top two classes is at least kappa·√2 times its deviation", maxKappa)}
	}
	if !(m.GiveUp >= 0 && m.GiveUp <= 1) {
		return &param.Error{Name: "give-up", Value: m.GiveUp, Rule: "must be in [0, 1]: a query is given up before the last level when its gap is below this fraction of the last level's bar (0: never)"}
	}
	switch {
	case m.Sigma1 == 0 && m.Threshold != 0:
		return &param.Error{Name: "threshold", Value: m.Threshold, Rule: "needs sigma1 > 0 (the threshold step's noise)"}
	case m.Sigma1 != 0 && !(m.Sigma1 >= minLevel) || math.IsInf(m.Sigma1, 0):
		return &param.Error{Name: "sigma1", Value: m.Sigma1, Rule: fmt.Sprintf("must be 0 (no threshold step) or a finite deviation >= %d", minLevel)}
	case math.IsNaN(m.Threshold) || math.IsInf(m.Threshold, 0):
		return &param.Error{Name: "threshold", Value: m.Threshold, Rule: "must be a finite number"}
	}
	return nil
}

// checkBudget checks the filter's budget: ε > 0 and δ in (0, 1) (a
// Gaussian-DP filter has no pure guarantee).
func (m ProgressiveGNMax) checkBudget() error {
	if err := (accountant.Budget{Guarantee: m.Budget}).Validate(); err != nil {
		return err
	}
	if !(m.Budget.Delta > 0) {
		return &param.Error{Name: "budget delta", Value: m.Budget.Delta, Rule: "must be > 0: a Gaussian-DP filter has no pure guarantee"}
	}
	return nil
}

// confident reports whether m has the threshold step.
func (m ProgressiveGNMax) confident() bool { return m.Sigma1 != 0 }

// Votes returns the multi-class votes.
func (ProgressiveGNMax) Votes() []votefile.Input { return onManyClasses() }

// Relation returns the one-vote relation.
func (ProgressiveGNMax) Relation() accountant.Relation { return accountant.OneVote }

// Needs: the budget of its filter.
func (ProgressiveGNMax) Needs(votefile.Input) Needs { return Needs{Budget: true} }

// Words: its ladder, κ, give-up fraction and threshold step, and what
// withholds a label.
func (m ProgressiveGNMax) Words() Words {
	levels := make([]string, len(m.Levels))
	for i, x := range m.Levels {
		levels[i] = fmt.Sprint(x)
	}
	settings := fmt.Sprintf("levels %s, kappa = %g", strings.Join(levels, ","), m.Kappa)
	if m.GiveUp != 0 {
		settings += fmt.Sprintf(", give-up %g", m.GiveUp)
	}
	withheld := "(an empty label, answered 0: no level's gap reached its bar)"
	if m.Threshold != 0 {
		settings += fmt.Sprintf(", T = %g, sigma1 = %g", m.Threshold, m.Sigma1)
		withheld = "(an empty label, answered 0: the threshold step, or no level's gap reached its bar)"
	}
	return Words{Settings: settings, Noise: gaussianWords, Withheld: withheld}
}

// Missing: its ladder and its filter's budget.
func (m ProgressiveGNMax) Missing(votefile.Input) error {
	switch {
	case len(m.Levels) == 0:
		return unset("Mechanism.Levels", "%s needs its ladder of noise levels, decreasing deviations such as 100,75,56,45", m.Name())
	case m.Budget == (accountant.Guarantee{}):
		return unset("Budget", "%s is accounted by a Gaussian-DP filter, which needs its budget (eps, delta)", m.Name())
	}
	return nil
}

// FromHeader: its settings, and the budget of its filter, the header's
// total.
func (ProgressiveGNMax) FromHeader(meta *votefile.LabelMeta) (Mechanism, error) {
	if meta == nil {
		return nil, errNoLabelHeader
	}
	var m ProgressiveGNMax
	err := decode(meta, m.Name(), &m)
	if t := meta.Total; t != nil {
		m.Budget = accountant.Guarantee{Eps: t.BudgetEps, Delta: t.BudgetDelta}
	}
	return m, err
}

// Plan: its plan of its own, on proxy votes: its ladder, κ, give-up
// fraction and threshold step (planOnProxy).
func (m ProgressiveGNMax) Plan(votefile.Input) Planned { return Planned{OnProxy: m.planOnProxy} }

// chargedPerDraw: it is.
func (m ProgressiveGNMax) chargedPerDraw() (Mechanism, bool) { return m, true }

// withBudget returns m held to the filter's budget b.
func (m ProgressiveGNMax) withBudget(b accountant.Guarantee) Mechanism { m.Budget = b; return m }

// budget returns the filter's budget, zero when not set.
func (m ProgressiveGNMax) budget() accountant.Guarantee { return m.Budget }

// ChargedPerDraw returns the mechanism that releases the labels of m with
// each draw charged to a Gaussian-DP filter before it is drawn, and
// whether m has one: progressive GNMax itself, and Confident-GNMax and
// GNMax on class counts charged when drawn, progressive GNMax of the one
// level σ2 with κ = 0 (the average of one draw is the draw, its argmax
// released whatever its gap) and Confident-GNMax's threshold step, whose
// GNMax step is then drawn, and charged, only when the threshold step
// answered. The form returned is held to the budget b of its filter
// when b is not zero.
func ChargedPerDraw(m Mechanism, b accountant.Guarantee) (Mechanism, bool) {
	c, ok := m.(interface{ chargedPerDraw() (Mechanism, bool) })
	if !ok {
		return nil, false
	}
	d, ok := c.chargedPerDraw()
	if f, filter := d.(filtered); ok && filter && b != (accountant.Guarantee{}) {
		d = f.withBudget(b)
	}
	return d, ok
}

// Labeler builds progressive GNMax for K teachers over C classes: its
// draws' samplers and charges under the budget.
func (m ProgressiveGNMax) Labeler(_ context.Context, _ votefile.Input, k, classes int, _ accountant.Guarantee, opts Options) (Labeler, string, error) {
	agg, err := newProgressive(opts.Memo, m, k, classes)
	if err != nil {
		return nil, "", err
	}
	words := fmt.Sprintf("progressive GNMax: discrete Gaussian noise on the %d class counts down the ladder %v (kappa = %g", classes, m.Levels, m.Kappa)
	if m.GiveUp > 0 {
		words += fmt.Sprintf(", given up below %g of the last bar", m.GiveUp)
	}
	words += ")"
	if m.confident() {
		words = fmt.Sprintf("%s after a threshold step (sigma1 = %g, T = %g)", words, m.Sigma1, m.Threshold)
	}
	return agg, words + fmt.Sprintf(", each draw charged before it is drawn to a Gaussian-DP filter of %v", m.Budget), nil
}

// progressive is ProgressiveGNMax's labeler for K teachers and C classes.
type progressive struct {
	mech              ProgressiveGNMax
	teachers, classes int
	// threshold is ceil(T): v + Z >= T with v and Z integers is
	// v + Z >= ceil(T); s0 samples the threshold step's noise (nil without
	// one), draws each level's.
	threshold float64
	s0        *discrete.Gaussian
	draws     []*discrete.Gaussian
	// weights are 1/σ_j² of the deviations drawn; release[j] and giveUp[j]
	// are the bars of the weighted sum Σ_{i<=j} y_i/σ_i², whose gap
	// between its top two is the average's gap times Σ_{i<=j} 1/σ_i².
	weights, release, giveUp []float64
	meter                    *drawMeter
	privacy                  Privacy
	sum                      []float64
	ties                     []int
	// trace, set by tests only, sees each draw after it is drawn: its
	// step (Draws' index) and the noisy values (the largest count plus
	// noise, or every count plus noise), to compute the privacy loss of
	// the whole transcript.
	trace func(step int, noisy []int64)
	noisy []int64
}

// newProgressive returns progressive GNMax m for K teachers and C
// classes: its settings and budget checked, each draw's deviation
// (Levels' increments, rounded up to 1/32), its sampler and its charge
// to the filter, which the accountant must certify.
func newProgressive(memo *accountant.Memo, m ProgressiveGNMax, teachers, classes int) (*progressive, error) {
	if err := m.checkSettings(); err != nil {
		return nil, err
	}
	if err := m.checkBudget(); err != nil {
		return nil, err
	}
	if err := checkClasses(teachers, classes); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name(), err)
	}
	if err := (noisymax.Steps{Threshold: m.Threshold, Sigma1: m.Sigma1}).CheckThreshold(teachers); err != nil {
		return nil, err
	}
	p := &progressive{mech: m, teachers: teachers, classes: classes, threshold: math.Ceil(m.Threshold), sum: make([]float64, classes), ties: make([]int, 0, classes)}
	var steps []drawStep
	draws := m.Draws()
	if m.confident() {
		g, err := discrete.NewGaussian(draws[0].Sigma)
		if err != nil {
			return nil, &param.Error{Name: "sigma1", Value: m.Sigma1, Rule: fmt.Sprintf("the threshold step draws discrete Gaussian noise of deviation %v: %v", draws[0].Sigma, err)}
		}
		p.s0 = g
		steps = append(steps, drawStep{sigma: draws[0].Sigma, coords: 1, name: fmt.Sprintf("the threshold step (sigma1 = %g)", m.Sigma1), param: "sigma1"})
		draws = draws[1:]
	}
	for j, d := range draws {
		g, err := discrete.NewGaussian(d.Sigma)
		if err != nil {
			return nil, &param.Error{Name: "levels", Value: m.Levels[j], Rule: fmt.Sprintf("level %d of the ladder draws discrete Gaussian noise of deviation %v: %v", j+1, d.Sigma, err)}
		}
		p.draws = append(p.draws, g)
		steps = append(steps, drawStep{sigma: d.Sigma, coords: d.Coords, name: fmt.Sprintf("level %d (%v) of the ladder", j+1, m.Levels[j]), param: "levels"})
	}
	// The bars of the weighted sums: the average's gap times its
	// precision Σ_{i<=j} 1/σ_i², of the deviations drawn.
	release, giveUp := m.Bars()
	var precision float64
	for j, d := range draws {
		w := 1 / (d.Sigma * d.Sigma)
		precision += w
		p.weights = append(p.weights, w)
		p.release = append(p.release, release[j]*precision)
		p.giveUp = append(p.giveUp, giveUp*precision)
	}
	var err error
	if p.meter, err = newDrawMeter(memo, m.Budget, steps); err != nil {
		return nil, err
	}
	p.privacy = Privacy{
		Source: fmt.Sprintf("each draw charged before it is drawn to a Gaussian-DP filter of %v (Smith and Thakurta 2022: draws whose mu is fixed by earlier outputs, held to sum mu^2 <= mu_B^2, are mu_B-GDP), its mu the accountant's certified mu of discrete Gaussian noise and its tail in delta; "+
			"the labels, the queries given up and the stop are post-processing of the noisy draws; the per-query guarantee is a query's at most, every draw taken; assumes a record changes at most one teacher's vote", m.Budget),
		Relation: accountant.OneVote,
		Spend:    p.meter.query,
	}
	return p, nil
}

// Draws returns the draws a query may take, in order, each as it is
// drawn: with Sigma1, the threshold step's noise on one coordinate (the
// largest count); then each level's on two (a changed vote moves two
// counts), of deviation σ_j, 1/σ_j² = 1/s_j² - 1/s_(j-1)², each rounded
// up to a multiple of 1/32. The settings must be valid (Validate).
func (m ProgressiveGNMax) Draws() []accountant.GaussianPart {
	var out []accountant.GaussianPart
	if m.confident() {
		out = append(out, accountant.GaussianPart{Sigma: drawnSigma(m.Sigma1), Coords: 1})
	}
	for j, s := range m.Levels {
		v := 1 / (s * s)
		if j > 0 {
			v -= 1 / (m.Levels[j-1] * m.Levels[j-1])
		}
		out = append(out, accountant.GaussianPart{Sigma: drawnSigma(1 / math.Sqrt(v)), Coords: 2})
	}
	return out
}

// Bars returns the bar each level's average must clear to be released,
// κ·√2·S_j, and the bar below which a query is given up before the
// last level, g·κ·√2·S_k, with S_j the deviation of the average of the
// draws up to level j as drawn (Draws: 1/S_j² = Σ_{i<=j} 1/σ_i², s_j but
// for the rounding of the σ_i up).
func (m ProgressiveGNMax) Bars() (release []float64, giveUp float64) {
	var precision float64
	for _, d := range m.Draws() {
		if d.Coords != 2 {
			continue
		}
		precision += 1 / (d.Sigma * d.Sigma)
		release = append(release, m.Kappa*math.Sqrt2/math.Sqrt(precision))
	}
	if len(release) == 0 {
		return nil, 0 // no levels (the zero value): no bars
	}
	return release, m.GiveUp * release[len(release)-1]
}

// drawnSigma returns the deviation a draw of nominal deviation s takes:
// s rounded up to a multiple of 1/drawGrid (more noise, never less).
func drawnSigma(s float64) float64 {
	d := math.Ceil(s*drawGrid) / drawGrid
	if d < s {
		d += 1.0 / drawGrid
	}
	return d
}

// Name returns "progressive-gnmax".
func (p *progressive) Name() provenance.MechanismName { return ProgressiveGNMax{}.Name() }

// K returns the number of teachers.
func (p *progressive) K() int { return p.teachers }

// Classes returns C.
func (p *progressive) Classes() int { return p.classes }

// Privacy returns the per-query guarantee of a query that takes every
// draw, at the budget's δ, and the argument of the run's.
func (p *progressive) Privacy() Privacy { return p.privacy }

// Mechanism returns progressive GNMax with its settings and budget.
func (p *progressive) Mechanism() Mechanism { return p.mech }

// drawMeter returns the filter that charges the draws.
func (p *progressive) drawMeter() *drawMeter { return p.meter }

// Answer returns the label of query q from its C vote counts, which sum
// to at most K, and whether it was answered: each draw is charged to the
// filter before it is drawn, and a query is begun only when every draw it
// might take fits (errFilterFull when not: nothing is drawn for it, and
// the run ends). Counts of the wrong length or sum are an error that
// says why.
func (p *progressive) Answer(q *votefile.Query, src *noise.Source) (int, bool, error) {
	counts := q.Counts
	top, err := tally.Counts(counts, p.teachers, p.classes)
	if err != nil {
		return -1, false, err
	}
	if err := p.meter.begin(); err != nil {
		return -1, false, err
	}
	step := 0
	if p.s0 != nil {
		if err := p.meter.pay(step); err != nil {
			return -1, false, err
		}
		v := int64(counts[top]) + p.s0.Sample(src)
		if p.trace != nil {
			p.trace(step, []int64{v})
		}
		step++
		if float64(v) < p.threshold {
			return -1, false, nil
		}
	}
	clear(p.sum)
	last := len(p.draws) - 1
	for j, g := range p.draws {
		if err := p.meter.pay(step + j); err != nil {
			return -1, false, err
		}
		w := p.weights[j]
		p.noisy = p.noisy[:0]
		for c, n := range counts {
			y := int64(n) + g.Sample(src)
			p.sum[c] += w * float64(y)
			if p.trace != nil {
				p.noisy = append(p.noisy, y)
			}
		}
		if p.trace != nil {
			p.trace(step+j, p.noisy)
		}
		best, gap := p.top()
		switch {
		case gap >= p.release[j]:
			return best(src), true, nil
		case j < last && gap < p.giveUp[j]:
			return -1, false, nil
		}
	}
	return -1, false, nil
}

// top returns the argmax of the weighted sums, ties broken uniformly at
// random when it is drawn, and the gap between the top two.
func (p *progressive) top() (func(*noise.Source) int, float64) {
	t := p.ties[:0]
	first, second := math.Inf(-1), math.Inf(-1)
	for c, v := range p.sum {
		switch {
		case v > first:
			second, first = first, v
			t = append(t[:0], c)
		case v == first:
			second = v
			t = append(t, c)
		case v > second:
			second = v
		}
	}
	p.ties = t
	return func(src *noise.Source) int {
		if len(t) == 1 {
			return t[0]
		}
		return t[src.IntN(len(t))]
	}, first - second
}
