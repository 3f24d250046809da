package ensemble

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/roots"
	"github.com/darrm/darrm/provenance"
)

// A mechanism charged per draw (ProgressiveGNMax) pays each draw of noise
// to a Gaussian-DP filter before it is drawn. Smith and Thakurta 2022
// ("Fully adaptive composition for Gaussian differential privacy") prove
// that mechanisms each μ_i-Gaussian DP given the outputs before them, μ_i
// chosen from those outputs, stopped by a rule that reads only them, are
// μ_B-Gaussian DP as long as Σμ_i² never exceeds μ_B²: the filter sums
// the squares. The accountant holds the filter (accountant.Filter with a
// GDPFilter part): it charges each draw the μ² it certifies for discrete
// Gaussian noise, and sets aside, in δ, the mass outside the window that
// μ is certified on. Its budget (ε_B, δ_B) is the run's total to publish.

// errFilterFull is what Answer returns when the next query's draws might
// not all fit the filter: nothing is drawn for it, and the run ends.
var errFilterFull = errors.New("the Gaussian-DP filter has no room for the next query's draws")

// drawStep is one draw a query may take: discrete Gaussian noise of
// deviation sigma on coords coordinates, each moved by at most 1 when one
// vote changes; name says which, param the setting that makes it.
type drawStep struct {
	sigma  float64
	coords int
	name   string
	param  string
}

// drawMeter is the run's filter: the charge of each draw a query may
// take, the sums of the draws charged, and the ledger that a release
// charges too (nil without one).
type drawMeter struct {
	// memo keeps the accountant's certificates of the draws' μ.
	memo    *accountant.Memo
	filter  accountant.Filter
	budget  accountant.Guarantee
	charges []accountant.Charge
	// query describes a query that takes every draw: the per-query
	// guarantee a label file's header states.
	query  accountant.Spend
	spent  accountant.Sequence
	draws  int
	ledger *unitLedger
}

// newDrawMeter returns the filter of budget for queries that take steps,
// in order, each charged as the accountant certifies it; a step no part
// holds (a deviation whose μ is not certified) is a *ParamError on the
// setting that makes it.
func newDrawMeter(memo *accountant.Memo, budget accountant.Guarantee, steps []drawStep) (*drawMeter, error) {
	m := &drawMeter{memo: memo, filter: accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.GDPFilter, Delta: budget.Delta}}}, budget: budget}
	all := accountant.Spend{Kind: accountant.GaussianSpend, Discrete: true}
	for _, s := range steps {
		part := accountant.GaussianPart{Sigma: s.sigma, Coords: s.coords}
		c, err := m.charge([]accountant.GaussianPart{part})
		if err != nil {
			return nil, &param.Error{Name: s.param, Value: s.sigma, Rule: fmt.Sprintf("%s draws discrete Gaussian noise of deviation %v, whose Gaussian-DP mu the accountant does not certify: %v", s.name, s.sigma, err)}
		}
		m.charges = append(m.charges, c)
		all.Gaussian = append(all.Gaussian, part)
	}
	one, err := m.add(accountant.Sequence{}, m.charges...)
	if err != nil {
		return nil, err
	}
	var fits bool
	if all.Guarantee, fits, err = m.filter.Total(one, budget); err != nil {
		return nil, err
	}
	if !fits {
		// No query could begin (begin): say why, not that a budget
		// nothing was charged to is spent.
		why := fmt.Sprintf("its mu_B^2: one query's draws are %v by the filter (a larger eps or delta holds more)", all.Guarantee)
		if all.Guarantee.Eps <= budget.Eps {
			why = "its share of delta for the discrete Gaussian noise's tails, 2^-20 of delta over 1 + e^eps, which shrinks as eps grows: a smaller eps, or a larger delta, holds more"
		}
		return nil, &param.Error{Name: "budget eps", Value: budget.Eps, Rule: fmt.Sprintf("the Gaussian-DP filter of %v must hold one query's draws, every one taken; they exceed %s", budget, why)}
	}
	m.query = all
	return m, nil
}

// charge returns what the filter charges a draw of the discrete Gaussian
// parts, with its guarantee at the budget's δ (what one such draw alone
// is, as the filter bounds it).
func (m *drawMeter) charge(parts []accountant.GaussianPart) (accountant.Charge, error) {
	// A guarantee to describe the draw by until its own is known: the
	// filter's part charges its μ², not this.
	s := accountant.Spend{Kind: accountant.GaussianSpend, Discrete: true, Gaussian: parts, Guarantee: accountant.Guarantee{Eps: 1, Delta: m.budget.Delta}}
	c, err := m.filter.Charge(m.memo, s, m.budget)
	if err != nil {
		return c, err
	}
	one, err := m.filter.Add(accountant.Sequence{}, c, 1)
	if err != nil {
		return c, err
	}
	c.Guarantee, _, err = m.filter.Total(one, m.budget)
	return c, err
}

// add returns seq with one draw of each charge after it.
func (m *drawMeter) add(seq accountant.Sequence, charges ...accountant.Charge) (accountant.Sequence, error) {
	for _, c := range charges {
		var err error
		if seq, err = m.filter.Add(seq, c, 1); err != nil {
			return seq, err
		}
	}
	return seq, nil
}

// begin reports whether the next query may begin: errFilterFull unless
// every draw it might take fits the filter after those charged (its
// halting rule, checked against the most the query can cost, so that no
// draw of it can cross the budget), and, with a ledger, the ledger allows
// them and has them reserved, on disk, before the first is drawn.
func (m *drawMeter) begin() error {
	next, err := m.add(m.spent, m.charges...)
	if err != nil {
		return err
	}
	_, fits, err := m.filter.Total(next, m.budget)
	switch {
	case err != nil:
		return err
	case !fits:
		return errFilterFull
	case m.ledger != nil:
		return m.ledger.cover(next, m.spent)
	}
	return nil
}

// pay charges draw i of the query begun (its step), before it is drawn.
func (m *drawMeter) pay(i int) error {
	next, err := m.filter.Add(m.spent, m.charges[i], 1)
	if err != nil {
		return err
	}
	m.spent = next
	m.draws++
	return nil
}

// used returns the draws charged, the Gaussian-DP μ² they sum to (the
// filter's sum, rounded up) and the budget's μ_B²: what the run used of
// its budget, which is analysis (the total to publish is the budget).
func (m *drawMeter) used() (draws int, mu2, muB2 float64) {
	muB2, _ = m.filter.GDPBudget(m.budget)
	return m.draws, m.spent.Mu2, muB2
}

// tailQueries returns how many queries the filter's share of δ for the
// discrete Gaussian noise's tails holds alone (+Inf when the draws have
// none), a query's tails taken as its every draw's scaled by mu2, a
// query's expected μ², over their μ² (the share of its draws an average
// query takes, by μ²): a bound that a count of μ² alone must meet, which
// binds only at a very large ε (the share is 2^-20·δ over 1 + e^ε).
func (m *drawMeter) tailQueries(mu2 float64) (float64, error) {
	var t, all float64
	for _, c := range m.charges {
		t, all = outward.AddUp(t, c.MuDelta), outward.AddUp(all, *c.Mu2)
	}
	if t == 0 {
		return math.Inf(1), nil
	}
	t = outward.MulUp(t, math.Min(1, mu2/all))
	// One query's tails alone, as a step the filter adds (a step states
	// a guarantee: the first draw's, which the Gaussian-DP part ignores).
	var zero float64
	tails := accountant.Charge{Guarantee: m.charges[0].Guarantee, Mu2: &zero, MuDelta: t}
	k, err := roots.Last(0, 1<<52, func(k int) (bool, error) {
		seq, err := m.filter.Add(accountant.Sequence{}, tails, k)
		if err != nil {
			return false, err
		}
		_, ok, err := m.filter.Total(seq, m.budget)
		return ok, err
	})
	switch {
	case errors.Is(err, roots.ErrLimitFits):
		return math.Inf(1), nil
	case err != nil:
		return 0, err
	}
	return float64(k), nil
}

// unitSigma is the deviation of the unit a ledger is charged in: a run
// charged per draw reserves and settles units of the μ² (and tail) of
// one coordinate of discrete Gaussian noise of this deviation, about
// 10^-6, so that a run of hundreds of queries takes hundreds of
// thousands of them, and rounding a run's draws up to whole units costs
// it at most one.
const unitSigma = 1024

// chunkQueries is how many queries' worth of units, at the most a query
// can cost, a ledger is reserved ahead at least (and a sixteenth of what
// it allows); each reservation after reserves ahead at least as much as
// all before it, so that a run writes a few lines (a write and an fsync
// each; log2 of its queries over chunkQueries at most), not one per draw.
// The run holds the ledger for its whole length (no other run charges it
// meanwhile), and its last line settles what its draws used: what it
// reserved beyond stays charged only if it never settles (a crash).
const chunkQueries = 64

// unitLedger is a ledger charged for a run per draw: in units of one
// step of unit (Ledger.Begin's step), each of μ² mu2 and tail tail under
// the ledger's Gaussian-DP filter, whose sums of units then hold the
// draws' sums. allowed is the units the ledger allows the run, reserved
// those reserved on it; perQuery the units of one query's draws at most
// (every draw taken).
type unitLedger struct {
	// reserve reserves units on the ledger for the run, within the
	// release's context (Ledger.Reserve).
	reserve           func(units int) error
	unit              accountant.Spend
	mu2, tail         float64
	allowed, reserved int
	perQuery          int
}

// newUnitLedger returns the ledger l, whose run is not yet begun, to be
// charged the draws metered by m in units; the units of a query at most
// are chunked by chunkQueries.
func newUnitLedger(m *drawMeter) (*unitLedger, error) {
	part := accountant.GaussianPart{Sigma: unitSigma, Coords: 1}
	c, err := m.charge([]accountant.GaussianPart{part})
	if err != nil {
		return nil, err
	}
	if c.Mu2 == nil || !(*c.Mu2 > 0) || !(c.MuDelta > 0) {
		return nil, fmt.Errorf("the unit of a ledger's charge has no certified Gaussian-DP mu")
	}
	u := &unitLedger{unit: accountant.Spend{Kind: accountant.GaussianSpend, Discrete: true, Gaussian: []accountant.GaussianPart{part}, Guarantee: c.Guarantee}, mu2: *c.Mu2, tail: c.MuDelta}
	one, err := m.add(accountant.Sequence{}, m.charges...)
	if err != nil {
		return nil, err
	}
	if u.perQuery, err = u.units(one); err != nil {
		return nil, err
	}
	return u, nil
}

// units returns the fewest units whose sums hold seq's: n with
// n·μ²_unit >= Σμ² and n·tail_unit >= Σ tails, as exact products.
func (u *unitLedger) units(seq accountant.Sequence) (int, error) {
	need := func(sum, unit float64) (int, error) {
		if sum == 0 {
			return 0, nil
		}
		n := math.Ceil(sum / unit)
		for outward.MulDown(n, unit) < sum {
			n++
		}
		if !(n <= accountant.CountLimit) {
			return 0, fmt.Errorf("%g units of a ledger's charge: more than %d", n, accountant.CountLimit)
		}
		return int(n), nil
	}
	a, err := need(seq.Mu2, u.mu2)
	if err != nil {
		return 0, err
	}
	b, err := need(seq.MuDelta, u.tail)
	return max(a, b), err
}

// cover makes sure that the units of next, the sums of the draws charged
// and those of the next query at most, are reserved on the ledger, in
// chunks: errFilterFull when the ledger does not allow them.
func (u *unitLedger) cover(next, spent accountant.Sequence) error {
	n, err := u.units(next)
	switch {
	case err != nil:
		return err
	case n > u.allowed:
		return errFilterFull
	case n <= u.reserved:
		return nil
	}
	r := min(u.allowed, n+max(u.perQuery*chunkQueries, u.reserved, u.allowed/16))
	if err := u.reserve(r); err != nil {
		return err
	}
	u.reserved = r
	return nil
}

// drawsLedger is the ledger of a release charged per draw as its label
// sink sees it: the draws were reserved before they were drawn
// (unitLedger.cover), so the labels reserve nothing more, and a run that
// released labels settles the units of every draw charged (a run that
// released none, its file removed unread, settles none). Each row of
// the label file states the units of the draws charged when it was
// written (units, the label file's units column), all reserved before
// that row's label was drawn: a settlement of the run below the last
// row's was lowered after that label left (ledger.ReadWitness).
type drawsLedger struct {
	Ledger
	m *drawMeter
}

func (drawsLedger) Reserve(context.Context, int) error { return nil }

// units returns the units of the draws charged so far, as Settle would
// settle them.
func (d drawsLedger) units() (int, error) { return d.m.ledger.units(d.m.spent) }

func (d drawsLedger) Settle(ctx context.Context, labels int) error {
	if labels == 0 {
		return d.Ledger.Settle(ctx, 0)
	}
	n, err := d.units()
	if err != nil {
		return err
	}
	return d.Ledger.Settle(ctx, n)
}

// filterOf is a ledger that says the filter its run is charged by
// (ledger.Ledger.RunFilter): nil for a declared use or a filter of one
// method of an earlier format.
type filterOf interface {
	RunFilter() *accountant.Filter
}

// chargeLedger begins the run of the release of labels of agg, charged
// per draw, on the ledger l for the ensemble b: the ledger's filter must
// have a Gaussian-DP part, which holds its units; the meter then reserves
// the draws on it before they are drawn.
func chargeLedger(ctx context.Context, l Ledger, agg Labeler, m *drawMeter, b provenance.Binding) error {
	u, err := newUnitLedger(m)
	if err != nil {
		return err
	}
	u.reserve = func(units int) error { return l.Reserve(ctx, units) }
	if u.allowed, err = l.Begin(ctx, agg.Name(), b, u.unit, -1); err != nil {
		return err
	}
	f, ok := l.(filterOf)
	var rf *accountant.Filter
	if ok {
		rf = f.RunFilter()
	}
	if rf == nil || !gdpHolds(*rf) {
		what := "its filter is not said"
		if rf != nil {
			what = fmt.Sprintf("its filter is %v", *rf)
		} else if ok {
			what = "its use is declared, or its filter is of one method"
		}
		return errors.Join(fmt.Errorf("%s is charged per draw by a Gaussian-DP filter, and the ledger has none (%s): charge it to a ledger open to any use whose filter is gdp-filter (ledger init --filter gdp-filter)", agg.Name(), what), l.Settle(ctx, 0))
	}
	m.ledger = u
	return nil
}

// gdpHolds reports whether the Gaussian-DP part of f holds the units of
// a run charged per draw whatever the other parts say: f has one, and
// every other part is simple composition at δ = 0, which holds only pure
// steps (a filter of several parts holds a transcript to the first part
// within its share: accountant.Filter).
func gdpHolds(f accountant.Filter) bool {
	gdp := false
	for _, p := range f.Parts {
		switch {
		case p.Method == accountant.GDPFilter:
			gdp = true
		case p.Method != accountant.Simple || p.Delta != 0:
			return false
		}
	}
	return gdp
}
