package plan

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/roots"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// generosity is how much more generous the neighbour a plan checks is
// than the parameter it returns: that neighbour must not fit.
const generosity = 1.05

// searchRel is the relative precision of a parameter search: well below
// generosity, so that the neighbour lies beyond the boundary.
const searchRel = 1e-3

// Plan is the parameters with which a number of queries fits a budget,
// the most generous that fit.
type Plan struct {
	// Request is the request with the planned parameters set.
	Request Request
	// Queries is the number of queries planned for.
	Queries int
	// Parameter is the setting chosen, by its name: "m", "target eps",
	// "sigma2" (with sigma1 and the threshold of a threshold step) or
	// "Laplace scale"; Flag the flag that sets it; Value is its value.
	Parameter string
	Flag      string
	Value     float64
	// Count is what the budget buys at the plan's parameters: Count.Run
	// >= Queries.
	Count Count
	// Neighbour is the value generosity times more generous (m and
	// target-eps larger, a noise scale smaller), and NeighbourRun the
	// queries it releases in the plan's target (a budgeted run, or a new
	// ledger), fewer than Queries; AtLimit says that Value is the most
	// generous value allowed (m = K), which has no neighbour.
	Neighbour    float64
	NeighbourRun int
	AtLimit      bool
	// Utility is the expected utility of the plan on the proxy votes,
	// when it was computed (nil otherwise).
	Utility *Utility

	knob knob    // the parameter searched
	x    float64 // its value in units of generosity
	// threshold and sigma1 are the threshold step a plan on proxy votes
	// chose (ratioPlan.at), of a mechanism that has one.
	threshold, sigma1 float64
}

// knob is the parameter a plan chooses for a mechanism, in units of
// generosity x (larger is more generous): m and target-eps are x, a noise
// scale is 1/x.
type knob struct {
	setting  string
	flag     string // the flag that sets it
	set      func(r *Request, x float64)
	value    func(x float64) float64
	min, max float64 // the least and most generous x the mechanism allows (0, +Inf: none known)
	guess    float64 // a first x to try
	grow     float64 // the factor of the bracket's steps from it (0: 2)
}

// The settings a plan chooses, by their names.
const (
	settingM            = "m"
	settingTargetEps    = "target eps"
	settingSigma2       = "sigma2"
	settingLaplaceScale = "Laplace scale"
)

// noiseMin is the least generous x of a noise scale 1/x: the largest
// scale darrm's exact samplers draw.
const noiseMin = 1 / discrete.MaxScale

// noiseMax returns the most generous x of the Gaussian noise σ = 1/x of
// r's mechanism: the least σ of discrete noise, for the GNMax family
// drawn discrete; none known otherwise.
func noiseMax(r Request) float64 {
	if g, ok := stepsOf(r); ok && (g.Noise == noisymax.DiscreteNoise || g.Noise == noisymax.UnsetNoise) {
		return 1 / noisymax.MinDiscreteSigma
	}
	return math.Inf(1)
}

// stepsOf returns the steps of r's mechanism when it is of the GNMax
// family on class counts (ensemble.Steps), and whether it is.
func stepsOf(r Request) (noisymax.Steps, bool) {
	return ensemble.Steps(r.Mechanism, r.Classes)
}

// votes returns the kind of votes r's mechanism labels for r's classes
// (ensemble.VotesOf).
func (r Request) votes() votefile.Input { return ensemble.VotesOf(r.Mechanism, r.Classes) }

// planned returns what a plan chooses of r's mechanism on its votes
// (ensemble.Mechanism.Plan).
func (r Request) planned() ensemble.Planned { return r.Mechanism.Plan(r.votes()) }

// withStep returns r with the threshold step of threshold t and deviation
// sigma1 set on its mechanism, which has one (ensemble.Planned.Threshold).
func withStep(r Request, t, sigma1 float64) Request {
	r.Mechanism = r.planned().Threshold(t, sigma1)
	return r
}

// knobOf returns the parameter r's mechanism is planned by
// (ensemble.Planned), with Confident-GNMax's σ1 at ratio times σ2.
func knobOf(r Request, queries int, ratio float64) (knob, error) {
	if r.Mechanism == nil {
		return knob{}, errNoMechanism
	}
	id := func(x float64) float64 { return x }
	inv := func(x float64) float64 { return 1 / x }
	// The budget sets only the guesses; Chosen asks for the flags of a
	// request that may have none.
	var budget accountant.Guarantee
	if r.Budget != nil {
		budget = r.Budget.Guarantee
	}
	// A zCDP guess for a Gaussian scale: the slope the budget allows,
	// shared by the queries.
	rho := zcdpBudget(budget)
	pl := r.planned()
	setting, confident := pl.Setting, pl.Threshold != nil
	var k knob
	switch setting {
	case settingTargetEps:
		k = knob{value: id, max: param.MaxMEps, guess: budget.Eps / float64(queries)}
	case settingSigma2:
		k = knob{value: inv, min: noiseMin, max: noiseMax(r), guess: math.Sqrt(rho / float64(queries)), grow: zcdpGrow}
		if confident {
			// ρ per query = 1/σ2² + 1/(2σ1²) = (1 + 1/(2 ratio²))/σ2².
			k.min, k.max, k.guess = noiseMin*math.Max(1, ratio), noiseMax(r)*math.Min(1, ratio), math.Sqrt(rho/float64(queries)/(1+1/(2*ratio*ratio)))
		}
	case settingM:
		k = knob{value: id, min: 1, max: float64(r.K), guess: 1}
	case settingLaplaceScale:
		k = knob{value: inv, min: noiseMin, max: noisymax.MaxLNMaxEps / 2, guess: budget.Eps / (2 * float64(queries))}
	default:
		return knob{}, fmt.Errorf("plan: no parameter to plan for mechanism %s", r.Mechanism.Name())
	}
	k.setting, k.flag = setting, pl.Flag
	// A threshold step's σ1 is ratio·σ2, at a threshold valid for any σ1
	// (K): the threshold plays no part in what a budget buys, and a plan
	// chooses it after (ratioPlan.at).
	k.set = func(r *Request, x float64) {
		r.Mechanism = r.planned().With(k.value(x))
		if confident {
			*r = withStep(*r, float64(r.K), ratio*k.value(x))
		}
	}
	return k, nil
}

// Chosen returns the flags of the settings that a plan of r's mechanism
// chooses (Make), which a request to plan must leave open: the one its
// Plan names (target-eps, m, sigma2 or laplace-scale, say) and, with a
// threshold step, sigma1 and threshold; none for a mechanism not planned.
func (r Request) Chosen() []string {
	k, err := knobOf(r, 1, 1)
	if err != nil {
		return nil
	}
	if r.planned().Threshold != nil {
		return []string{k.flag, "sigma1", "threshold"}
	}
	return []string{k.flag}
}

// zcdpGrow is the bracket's step from a zCDP guess of a Gaussian scale:
// the exact composition lets the scale be smaller than zCDP's by a few
// percent (Confident-GNMax 150/40: 194 queries against 167, a σ 8%
// smaller), so the boundary is usually within one step.
const zcdpGrow = 1.25

// zcdpBudget returns a zCDP slope ρ whose improved conversion is about
// the budget: ε = ρ + 2√(ρ log(1/δ)) solved for ρ (a starting point only).
func zcdpBudget(b accountant.Guarantee) float64 {
	if b.Delta <= 0 {
		return b.Eps * b.Eps / 2
	}
	l := -outward.Ln(b.Delta) // not of 1/δ, which overflows for a subnormal δ
	s := math.Sqrt(l+b.Eps) - math.Sqrt(l)
	return s * s
}

// Make plans r. With r.Queries 0 it counts what r's budget buys at the
// settings of r's mechanism (Plan.Count; nothing is chosen). Else it
// chooses the most generous value of the parameter r's mechanism is
// planned by with which r.Queries queries fit r.Budget in r.For's target
// (parameters), and with r.Proxy scores the plan on those votes (GNMax
// on class counts) or chooses it on them (Confident-GNMax, which needs
// them: onProxy). A mechanism charged per draw alone (progressive GNMax)
// has no count a budget buys: its own plan plans it (OnProxy).
func Make(ctx context.Context, r Request) (Plan, error) {
	r = r.withMemo()
	if r.Mechanism != nil && r.Mechanism.Needs(r.votes()).Budget {
		return Plan{}, &param.SettingError{Name: "mechanism", Value: string(r.Mechanism.Name()),
			Rule: "is charged per draw to a Gaussian-DP filter, which fixes no count of queries: plan it on proxy votes (its own plan, ensemble.Planned.OnProxy)"}
	}
	if r.Queries == 0 {
		c, err := count(ctx, r)
		return Plan{Request: r, Count: c}, err
	}
	if err := r.validate(); err != nil {
		return Plan{}, err
	}
	if r.Mechanism == nil {
		return Plan{}, errNoMechanism
	}
	if err := fixedTeachers(ctx, r); err != nil {
		return Plan{}, err
	}
	if r.planned().Threshold != nil || r.Proxy != nil {
		if r.Proxy == nil {
			return Plan{}, &param.SettingError{Name: "votes", Value: "none", Rule: fmt.Sprintf("%s is planned on proxy votes (Request.Proxy)", r.Mechanism.Name())}
		}
		return onProxy(ctx, r, r.Queries, *r.Proxy)
	}
	return parameters(ctx, r, r.Queries)
}

// fixedTeachers returns why no parameter is to be planned for r's
// teachers when they are fixed private teachers, whose cap is their only
// bound (accountant.Cap): a budget the cap meets releases every query
// whatever the parameters, one it does not releases none; nil for other
// teachers.
func fixedTeachers(ctx context.Context, r Request) error {
	if r.Kind != provenance.Fixed || r.Budget == nil {
		return nil
	}
	agg, _, err := r.Aggregator(ctx)
	if err != nil {
		return err
	}
	c, _, err := bindingOf(agg, r).Cap(accountant.DefaultDeltaPrime)
	switch {
	case err != nil || c == nil:
		return err
	case c.Fits(r.Budget.Guarantee):
		return &param.Error{Name: "queries", Value: r.Queries, Rule: fmt.Sprintf(
			"no parameter to plan: the teachers are fixed models whose cap %v, their only bound, is within the budget: every query is released whatever the parameters (count them instead)", c.Guarantee)}
	}
	return budgetNoFit(*c, *r.Budget, "no parameter lets a query fit: "+c.Refusal(*r.Budget).Error())
}

// parameters returns the most generous value of the parameter r's
// mechanism is planned by (knobOf: m, target-eps, sigma2 or
// laplace-scale) with which a run held to r.Budget releases queries
// queries: searched on the predicate the release's count searches on
// (accountant.Account.Fits), the last value that fits, then checked by the
// release's own count (accountant.Account.Allowed), which must reach
// queries, and against its neighbour generosity times more generous,
// which must not. Confident-GNMax needs proxy
// votes (onProxy).
func parameters(ctx context.Context, r Request, queries int) (Plan, error) {
	if r.planned().Threshold != nil {
		return Plan{}, &param.SettingError{Name: "votes", Value: "none", Rule: fmt.Sprintf("%s is planned on proxy votes (Request.Proxy)", r.Mechanism.Name())}
	}
	pl, err := search(ctx, r, queries, 0)
	if err != nil {
		return Plan{}, err
	}
	return pl, verify(ctx, &pl)
}

// search returns the most generous value of parameters, with
// confident-gnmax's σ1/σ2 ratio, unverified (verify).
func search(ctx context.Context, r Request, queries int, ratio float64) (Plan, error) {
	if err := r.validate(); err != nil {
		return Plan{}, err
	}
	if r.Share != 0 && r.For != ForLedger {
		return Plan{}, &param.Error{Name: "share", Value: r.Share, Rule: "an analyst's share is of a ledger: plan for a new ledger (For ForLedger)"}
	}
	if queries < 1 || queries > accountant.CountLimit {
		return Plan{}, &param.Error{Name: "queries", Value: queries, Rule: fmt.Sprintf("must be in [1, %d], the counts the accountant counts exactly", accountant.CountLimit)}
	}
	k, err := knobOf(r, queries, ratio)
	if err != nil {
		return Plan{}, err
	}
	at := func(x float64) Request {
		q := r
		k.set(&q, x)
		return q
	}
	fitsAt := func(x float64) (bool, error) { return fits(ctx, at(x), queries) }
	lo, hi, err := bracket(ctx, k, fitsAt)
	if err != nil {
		var nf *roots.NoneFitError
		if errors.As(err, &nf) {
			least := at(nf.Least)
			if r.For == ForLedger {
				return Plan{}, &noneFitError{noLedgerFit(ctx, least, queries, k, nf.Least)}
			}
			b, berr := build(ctx, least)
			if outOfRange(berr) {
				return Plan{}, &noneFitError{&param.Error{Name: "queries", Value: queries,
					Rule: fmt.Sprintf("too many to plan: the %s they leave each query, %v, is beyond the mechanism's range (%v)", k.setting, k.value(nf.Least), berr)}}
			}
			if berr != nil {
				return Plan{}, berr
			}
			return Plan{}, &noneFitError{noFit(b, *r.Budget, queries)}
		}
		if unheld := (*unheldError)(nil); errors.As(err, &unheld) {
			return Plan{}, &noneFitError{&param.Error{Name: "filter", Value: r.Filter.String(),
				Rule: fmt.Sprintf("holds no %s searched, up to the most generous, %v: %v", k.setting, k.value(k.max), unheld.err)}}
		}
		return Plan{}, err
	}
	x := lo
	atLimit := hi == 0
	if !atLimit {
		// A value the mechanism refuses releases nothing: past the
		// most generous value it allows, nothing fits.
		inRange := func(x float64) (bool, error) {
			ok, err := fitsAt(x)
			if outOfRange(err) {
				return false, nil
			}
			return ok, err
		}
		if x, err = roots.MostGenerous(lo, hi, searchRel, inRange, guess(ctx, at, queries)); err != nil {
			return Plan{}, err
		}
	}
	return Plan{Request: at(x), Queries: queries, Parameter: k.setting, Flag: k.flag, Value: k.value(x), AtLimit: atLimit, knob: k, x: x}, nil
}

// noneFitError says that no value of the parameter lets the queries fit
// (search): a Confident-GNMax plan tries its other σ1/σ2 ratios.
type noneFitError struct{ err error }

func (e *noneFitError) Error() string { return e.err.Error() }

func (e *noneFitError) Unwrap() error { return e.err }

// guess returns a cheap estimate of whether queries queries fit at x for
// a run of discrete Gaussian noise (GNMax, Confident-GNMax): whether they
// fit with continuous noise of the same σ, whose exact composition is in
// closed form where the discrete one sums over a window of the noise
// (roots.MostGenerous confirms its last bracket exactly); nil
// for any other mechanism or target.
func guess(ctx context.Context, at func(float64) Request, queries int) func(float64) bool {
	r := at(1)
	if _, counts := stepsOf(r); r.For != ForRun || !counts {
		return nil
	}
	if agg, _, err := r.Aggregator(ctx); err != nil || agg.Privacy().Spend.Kind != accountant.GaussianSpend || !agg.Privacy().Spend.Discrete {
		return nil
	}
	return func(x float64) bool {
		q := at(x)
		agg, _, err := q.Aggregator(ctx)
		if err != nil {
			return false
		}
		s := agg.Privacy().Spend
		s.Discrete = false
		ok, err := accountant.Account{Step: s, Steps: queries, Budget: q.Budget}.Fits(q.Certificate.Memo)
		return err == nil && ok
	}
}

// verify completes a plan that search returned: what the budget buys at
// its parameters, by the release's own count (count), which must reach
// the planned queries, and the count of the neighbour generosity times
// more generous, which must not.
func verify(ctx context.Context, pl *Plan) error {
	var err error
	if pl.Count, err = count(ctx, pl.Request); err != nil {
		return err
	}
	k := pl.knob
	if n := pl.Count.of(pl.Request.For); n < pl.Queries {
		return fmt.Errorf("plan: %s = %v releases %d of %d queries (%v): the search returned a value that does not fit", k.setting, pl.Value, n, pl.Queries, pl.Request.For)
	}
	if pl.Request.For == ForLedger {
		// What the planned queries spend, as ledger show prints it once
		// they are released, not all the ledger allows.
		if pl.Count.LedgerTotal, err = pl.Count.header.Spent(pl.Request.Certificate.Memo, pl.Count.step, pl.Queries, pl.Request.share()); err != nil {
			return err
		}
	}
	if pl.AtLimit {
		return nil
	}
	// The neighbour stays within the knob's range (randomized response
	// whose m = K is not certified stops just below K).
	nx := math.Min(pl.x*generosity, k.max)
	pl.Neighbour = k.value(nx)
	next := pl.Request
	k.set(&next, nx)
	b, err := build(ctx, next)
	if errors.Is(err, gamma.ErrNotCertified) || outOfRange(err) {
		return nil // the neighbour releases nothing
	}
	if err != nil {
		return fmt.Errorf("plan: the neighbour %s = %v: %w", k.setting, pl.Neighbour, err)
	}
	if pl.NeighbourRun = b.queriesFor(ctx, next); pl.NeighbourRun >= pl.Queries {
		return fmt.Errorf("plan: %s = %v, %v times more generous than %v, still releases %d >= %d queries: the search stopped short", k.setting, pl.Neighbour, generosity, pl.Value, pl.NeighbourRun, pl.Queries)
	}
	return nil
}

// outOfRange reports whether err says that a value of the knob is
// beyond the mechanism's range (a noise scale, an eps): a parameter
// error, not a failure or an interruption.
func outOfRange(err error) bool {
	var pe interface{ Param() (string, any, string) }
	var unheld *unheldError
	return err != nil && (errors.As(err, &pe) || errors.As(err, &unheld)) && !errors.Is(err, context.Canceled)
}

// bracket returns lo that fits and hi > lo that does not, or hi = 0 when
// the most generous value allowed fits (roots.Bracket): from the knob's
// guess, within its range, in steps of its factor (2 unless it names
// one). A guess beyond the mechanism's range where the knob names no
// bound (a target eps too small to certify) moves to more generous values
// until one is within it; a step up beyond it is a value that does not
// fit, a step down beyond it ends the search with a *roots.NoneFitError.
func bracket(ctx context.Context, k knob, fits func(float64) (bool, error)) (lo, hi float64, err error) {
	grow := k.grow
	if grow == 0 {
		grow = 2
	}
	lo, hi, err = roots.Bracket(ctx, k.guess, k.min, k.max, grow, fits, outOfRange)
	if all := (*roots.AllFitError)(nil); errors.As(err, &all) {
		return 0, 0, fmt.Errorf("plan: %s: every value fits up to %v", k.setting, k.value(all.Last))
	}
	return lo, hi, err
}
