package ensemble

import (
	"context"
	"errors"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// ReleaseSpec is everything one release needs (Release): the votes, the
// mechanism with its settings, the teachers' guarantee, the budget, the
// ledger, the sink and the randomness.
//
// A field left at its zero value takes the default its comment names,
// here or in the type it holds; where there is none (Votes, Mechanism, a
// setting a mechanism needs, Sink.Stdout without a Sink.Path) Release
// refuses it with an error that names the field.
type ReleaseSpec struct {
	// Votes are the queries to label, read and checked as they are
	// labelled (votefile.Open, votefile.ReadRows).
	Votes votefile.Reader
	// Header is the votes' metadata header, checked where they were
	// opened (provenance.CheckHeader of Votes.Meta), which the release
	// compares with and does not check again; nil: Release checks it,
	// once.
	Header *provenance.CheckedHeader
	// Mechanism is the mechanism with its settings (DaRRM, GNMax, ...),
	// for the votes' kind (Votes.Input): GNMax labels either.
	Mechanism Mechanism
	// Teachers is the (ε, Δ) of each teacher that a mechanism for private
	// teachers (and two-class GNMax, calibrated to their ε) is held to
	// m·ε of; nil: the votes' metadata header's
	// (provenance.CheckedHeader.ReleaseTeachers). The
	// other mechanisms do not use it.
	Teachers *accountant.Guarantee
	// Budget, if not nil, limits the queries released
	// (accountant.Account.Allowed), and the total to publish is stated at
	// its δ. The slack DeltaPrime (0:
	// accountant.DefaultDeltaPrime) gives the analysis totals, the
	// teachers' cap and the total δ of a release without a budget,
	// unless TotalDelta gives it (a release with a budget takes none):
	// the total to publish is the least of every valid composition
	// (accountant.Account.Publish).
	Budget     *accountant.Budget
	DeltaPrime float64
	TotalDelta *float64
	// MaxQueries, if not 0, is the number of queries to release, the
	// first ones (a share of a file of queries); the later ones are read
	// and checked, and counted as not requested (ReleaseResult.NotRequested).
	// A budget or a ledger may stop the release before them.
	MaxQueries int
	// Ledger, if not nil, is the ledger charged for the release, opened
	// for a run by the caller, who closes it after (ledger.Open; a
	// file or postgres://...?ledger=NAME): Release begins the run bound to
	// the votes (Ledger.Begin) and charges it per query before the labels
	// leave; what it allows may lower the number of queries released.
	Ledger Ledger
	// Sink is where the labels go; Release sets its Ledger.
	Sink LabelSink
	// Accounted, if not nil, accounts the release as a whole, by an
	// argument no composition of its per-query steps makes: it takes no
	// Budget and no TotalDelta, charges Ledger one step of its total.
	Accounted *Accounted
	// Random is the randomness of the labels; nil means crypto/rand
	// (noise.NewSource).
	Random *noise.Source
	// Certificate tunes the certificate of the aggregator, and its Memo
	// keeps what the release computes (its count, its total, its ledger's
	// charges) for the calls that ask again; Options tunes the release
	// (ReleaseTo).
	Certificate Options
	Options     ReleaseOptions
}

// Accounted is a release its caller accounts for as a whole (pate's
// generalized PTR): a test, drawn after the ledger is charged and before
// any label, decides whether the first Queries queries are labelled, or,
// if it fails, the first Fallback (none when 0; the later ones are read
// and checked, and counted as stopped by the budget), and Total is the
// total to publish, whether it passes or not.
type Accounted struct {
	// Accounting names the accounting, as the label file's header states
	// it (votefile.LabelMeta.Accounting).
	Accounting string
	Queries    int
	Fallback   int
	// Total is the total to publish, its argument named
	// (accountant.Total.Argument); Budget the budget it was planned
	// within, which the label file's header states so that an account
	// can recompute the total (votefile.LabelTotal).
	Total  accountant.Total
	Budget accountant.Guarantee
	Test   func(context.Context) (bool, error)
	// failed says that the test failed and the labels are the fallback's.
	failed bool
}

// ErrTestFailed is a release accounted as a whole whose test failed: no
// label was released, and its total to publish still holds.
var ErrTestFailed = errors.New("the release's test failed: no label released")

// Released is what a release did: the aggregator and its description,
// its binding to the votes, the account of what it released and what its
// budget allowed, the queries released and the total to publish.
type Released struct {
	Aggregator Labeler
	Label      string
	Binding    provenance.Binding
	// Account is the account of the labels released (Privacy.Account,
	// Steps = Result.Released): the per-query step, the teachers' cap,
	// the budget or the total δ; CapNote says why there is no cap.
	Account accountant.Account
	CapNote string
	// MaxQueries is the number of queries the budget allows and Allows
	// their total to publish (accountant.Account.Allowed), with a budget.
	MaxQueries int
	Allows     accountant.Total
	Result     ReleaseResult
	// Draws and Mu2, of a release charged per draw (ProgressiveGNMax),
	// count the draws charged and the Gaussian-DP μ² they sum to: what
	// the run used of its filter's μ_B², MuB2, analysis (its total to
	// publish is the filter's budget).
	Draws int
	Mu2   float64
	MuB2  float64
	// Charged is the step the release's run on its ledger is charged by
	// (Ledger.Begin: a label's, a unit of a release charged per draw, or
	// an accounted release's total), nil when no run began on one.
	Charged *accountant.Spend
	// QueryUnits, of a release charged per draw to a ledger, is the most
	// units (Charged) that one query's draws take, every draw taken: a
	// count of units the ledger allows is room for at least that count
	// over QueryUnits more queries.
	QueryUnits int
	// Publish is the total to publish (accountant.Account.Publish): the
	// ledger's (Ledger.Publish) when the release was charged to one, else
	// the run's, of its Result.Released rows; when no label was
	// released, a total that says only where its δ would come from
	// (Total.DeltaFrom).
	Publish accountant.Total
}

// Step is a step of a release, which a *ReleaseError names: StepGamma
// (loading the gamma), StepBuild (building and certifying the
// aggregator), StepBinding (the votes' header, provenance.Check),
// StepAccounting (Privacy.Account, accountant.Account.Allowed),
// StepLedger (Ledger.Begin, Ledger.Publish) or StepLabels (ReleaseTo).
type Step int

// The steps of a release, in their order.
const (
	StepGamma Step = iota
	StepBuild
	StepBinding
	StepAccounting
	StepLedger
	StepLabels
)

var stepNames = enum.Names[Step]{What: "step", List: []string{
	StepGamma: "gamma", StepBuild: "build", StepBinding: "binding", StepAccounting: "accounting", StepLedger: "ledger", StepLabels: "labels",
}}

// String returns the step's name: "gamma", "build", "binding",
// "accounting", "ledger" or "labels".
func (s Step) String() string { return stepNames.String(s) }

// A ReleaseError is a release that failed at Step, for the reason Err,
// whose message it keeps. Step says where: StepGamma (loading the
// gamma), StepBuild (building and certifying the aggregator), StepBinding
// (the votes' header, provenance.Check), StepAccounting (Privacy.Account,
// accountant.Account.Allowed), StepLedger (Ledger.Begin, Ledger.Publish)
// or StepLabels (ReleaseTo).
type ReleaseError struct {
	Step Step
	Err  error
}

// Error returns Err's message.
func (e *ReleaseError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *ReleaseError) Unwrap() error { return e.Err }

// Release labels the queries of s.Votes with the mechanism of s, in one
// call: Prepare (it loads its gamma if it samples one and builds and
// certifies the aggregator, binds it to the votes and accounts for it
// under the budget), then Label with s.Ledger (it begins the run on the
// ledger, bound to the same binding and charged at the same per-query
// step, and writes the labels to the sink). A caller that solves a gamma
// and holds a ledger calls the two itself, opening the ledger between.
//
// A release that its budget or its ledger (or an analyst's share of it)
// stopped before the last query is no error: its labels are written, and
// Released.Result counts the queries released and those stopped
// (StoppedByBudget), as it counts those after s.MaxQueries
// (NotRequested); an accounted release whose total the ledger has no room
// for releases none, writes nothing and counts its Queries as stopped.
// An error is a *ReleaseError naming the step that failed, or
// ErrTestFailed (an accounted release whose test failed, with no
// fallback: no label). Released holds what was done before an error.
//
// A ledgered release of votes with their metadata header (a NumPy file
// and its sidecar, votes.npy.meta.json), onto a new ledger of a budget
// (2, 1e-5), as ExampleRelease_ledger runs it:
//
//	votes, err := votefile.Open("votes.npy", votefile.Options{})
//	h, err := ledger.VotesHeader(votes.Meta(), 2, 1e-5)
//	_, err = ledger.Create(ctx, "pate.ledger", h, ledger.Options{})
//	l, err := ledger.Open(ctx, "pate.ledger", ledger.Options{}) // l.Close() after
//	out, err := ensemble.Release(ctx, ensemble.ReleaseSpec{
//		Votes:     votes,
//		Mechanism: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40},
//		Ledger:    l,
//		Sink:      ensemble.LabelSink{Path: "labels.csv"},
//	})
//	// err == nil: out.Result.Released labels in labels.csv, out.Result.StoppedByBudget
//	// stopped by the ledger's budget, out.Publish the total to publish.
func Release(ctx context.Context, s ReleaseSpec) (Released, error) {
	p, err := Prepare(ctx, s)
	if err != nil {
		return p.Released, err
	}
	return p.Label(ctx, s.Ledger)
}

// Prepared is a release built, bound and accounted for (Prepare), whose
// labels Label writes, charged to the ledger its caller opened then.
type Prepared struct {
	// Released is what the release has done so far: its aggregator and
	// description, its binding, its account and what its budget allows.
	Released
	s ReleaseSpec
	// requested is the number of queries the caller asks for (-1: every
	// one), limit the number the release may label.
	requested, limit int
	meter            *drawMeter
	perDraw          bool
	stated           *Accounted
}

// Prepare does what a release does before it charges a ledger: it loads
// its gamma if it samples one and builds and certifies the aggregator
// (New: the gamma is certified once, as it is sampled), binds it to the
// votes (provenance.Check: the one check of the votes against what the
// mechanism states), and accounts for it under the budget
// (Privacy.Account, accountant.Account.Allowed). s.Ledger is not read: the
// caller opens the ledger after, so that no lock is held while a gamma is
// solved, and hands it to Label. An error is a *ReleaseError naming the
// step that failed; the Prepared holds what was done before it.
func Prepare(ctx context.Context, s ReleaseSpec) (*Prepared, error) {
	p := &Prepared{}
	out := &p.Released
	fail := func(step Step, err error) (*Prepared, error) { return p, &ReleaseError{Step: step, Err: err} }
	s, teachers, err := s.withDefaults()
	if err != nil {
		return fail(StepBuild, err)
	}
	if s.Certificate.Memo == nil {
		// The release's count, its total and its ledger's charges compose
		// the same labels: a memo of this call's own.
		s.Certificate.Memo = new(accountant.Memo)
	}
	in := s.Votes
	if out.Aggregator, out.Label, err = newLabeler(ctx, s.Mechanism, in.Input(), in.K(), in.Classes(), teachers, s.Certificate); err != nil {
		var re *ReleaseError
		if errors.As(err, &re) {
			re.Err = specField(s.Mechanism, re.Err)
		}
		return p, err
	}
	if out.Binding, err = releaseBinding(in, out.Aggregator, s.Options.Partition, s.Header); err != nil {
		return fail(StepBinding, err)
	}
	priv := out.Aggregator.Privacy()
	if out.Account, out.CapNote, err = priv.Account(out.Binding, s.DeltaPrime); err != nil {
		return fail(StepAccounting, err)
	}
	p.requested = -1
	if s.MaxQueries < 0 {
		return fail(StepAccounting, &param.Error{Name: "ReleaseSpec.MaxQueries", Value: s.MaxQueries, Rule: "must be >= 1, or 0 for every query"})
	}
	if s.MaxQueries > 0 {
		p.requested = s.MaxQueries
	}
	if w := s.Accounted; w != nil {
		if err := w.check(s); err != nil {
			return fail(StepAccounting, err)
		}
		p.requested = w.Queries
	}
	p.limit = p.requested
	p.meter, p.perDraw = drawsOf(out.Aggregator)
	if p.perDraw {
		// No count is fixed in advance: the filter stops the run.
		if p.stated, err = filterAccount(s, &out.Account); err != nil {
			return fail(StepAccounting, err)
		}
	} else if s.Budget != nil {
		out.Account.Budget = s.Budget
		if out.MaxQueries, out.Allows, err = out.Account.Allowed(ctx, s.Certificate.Memo); err != nil {
			return fail(StepAccounting, err)
		}
		if out.MaxQueries != accountant.Unlimited && (p.limit < 0 || out.MaxQueries < p.limit) {
			p.limit = out.MaxQueries
		}
	}
	if s.TotalDelta != nil {
		if err := checkTotalDelta(*s.TotalDelta, s.Budget); err != nil {
			return fail(StepAccounting, err)
		}
		out.Account.Delta = s.TotalDelta
	}
	p.s = s
	return p, nil
}

// Label writes the labels of the prepared release to its sink, charged to
// the ledger l, if not nil, which the caller opened for the run
// (ledger.Open) and closes after: it begins the run on l, bound to the
// votes and charged at the release's per-query step (or per draw, or its
// total as one step: Accounted), which may lower the number of queries
// released; reserves before each batch of labels leaves and settles after
// (ReleaseTo); and reads the total to publish. An error is a
// *ReleaseError naming the step that failed, or ErrTestFailed (an
// accounted release whose test failed, with no fallback: no label).
// Released holds what was done before an error.
func (p *Prepared) Label(ctx context.Context, l Ledger) (Released, error) {
	s, out := p.s, p.Released
	fail := func(step Step, err error) (Released, error) { return out, &ReleaseError{Step: step, Err: err} }
	limit, sink, priv := p.limit, s.Sink, out.Aggregator.Privacy()
	var err error
	switch {
	case l != nil && p.perDraw:
		if err := chargeLedger(ctx, l, out.Aggregator, p.meter, out.Binding); err != nil {
			return fail(StepLedger, err)
		}
		out.Charged, out.QueryUnits = &p.meter.ledger.unit, p.meter.ledger.perQuery
		sink.Ledger = drawsLedger{l, p.meter}
	case l != nil && s.Accounted != nil:
		room, err := s.Accounted.charge(ctx, l, s.Mechanism.Name(), out.Binding)
		if err != nil {
			return fail(StepLedger, err)
		}
		step := accountant.ApproxStep(s.Accounted.Total.Guarantee)
		out.Charged = &step
		if !room {
			// Nothing drawn, nothing charged: a stop at the budget.
			out.Result.StoppedByBudget = s.Accounted.Queries
			if out.Publish, err = l.Publish(); err != nil {
				return fail(StepLedger, err)
			}
			return out, nil
		}
		sink.Ledger = charged{l}
	case l != nil:
		if limit, err = l.Begin(ctx, s.Mechanism.Name(), out.Binding, priv.Spend, limit); err != nil {
			return fail(StepLedger, err)
		}
		out.Charged = &priv.Spend
		sink.Ledger = l
	}
	src := s.Random
	if src == nil {
		src = noise.NewSource()
	}
	stated := p.stated
	if w := s.Accounted; w != nil {
		out.Publish = w.Total
		pass, err := w.Test(ctx)
		if err != nil {
			return fail(StepAccounting, err)
		}
		if !pass && w.Fallback == 0 {
			if l != nil {
				if out.Publish, err = l.Publish(); err != nil {
					return fail(StepLedger, err)
				}
			}
			return out, ErrTestFailed
		}
		if !pass {
			// The fallback's labels: their header states the queries
			// proposed, from which an account recomputes the total.
			fb := *w
			fb.failed = true
			s.Accounted, limit = &fb, w.Fallback
		}
	}
	if stated == nil {
		stated = s.Accounted
	}
	if out.Result, err = releaseTo(ctx, s.Votes, out.Aggregator, out.Binding, src, sink, limit, s.Options, stated); err != nil {
		var sp *spentError
		if _, seeded := src.Seeded(); errors.As(err, &sp) && l == nil && stated == nil && ctx.Err() == nil && !seeded {
			// Labels left before the stream failed, and no ledger records
			// them: the error says their total to publish, as a release's
			// summary would (an interrupted run says only their count:
			// it must end; seeded labels have none, and their error
			// says so).
			a := out.Account
			a.Steps = sp.Labels
			if t, terr := a.Publish(s.Certificate.Memo); terr == nil && t.Err == nil {
				sp.Err = fmt.Errorf("%w; their total to publish: %v by %s", sp.Err, t.Guarantee, t.Name())
			}
		}
		return fail(StepLabels, err)
	}
	if read := out.Result.Released + out.Result.StoppedByBudget; p.requested >= 0 && read > p.requested {
		out.Result.NotRequested = read - p.requested
		out.Result.StoppedByBudget -= out.Result.NotRequested
	}
	out.Account.Steps = out.Result.Released
	if p.perDraw {
		out.Draws, out.Mu2, out.MuB2 = p.meter.used()
	}
	switch {
	case p.perDraw && l == nil:
		out.Publish = stated.Total
	case s.Accounted != nil && l == nil:
	case l != nil:
		if out.Publish, err = l.Publish(); err != nil {
			return fail(StepLedger, err)
		}
	case out.Result.Released > 0:
		if out.Publish, err = out.Account.Publish(s.Certificate.Memo); err != nil {
			return fail(StepLabels, err)
		}
	default:
		_, out.Publish.DeltaFrom = out.Account.TotalDelta()
	}
	return out, nil
}

// drawsOf returns the filter of agg when it is charged per draw
// (ProgressiveGNMax's labeler), and whether it is.
func drawsOf(agg Labeler) (*drawMeter, bool) {
	d, ok := agg.(interface{ drawMeter() *drawMeter })
	if !ok {
		return nil, false
	}
	return d.drawMeter(), true
}

// filterAccount makes acc, the account of a release of s charged per
// draw, the account of its Gaussian-DP filter, whose budget is its total
// to publish (accountant.Account.Publish of the filter), and returns what
// its label file's header states of it: the accounting and the total.
// Such a release takes no other accounting and no total δ: the
// budget's is the one.
func filterAccount(s ReleaseSpec, acc *accountant.Account) (*Accounted, error) {
	switch {
	case s.Accounted != nil:
		return nil, errors.New("ReleaseSpec.Accounted goes without a mechanism charged per draw, which its Gaussian-DP filter accounts")
	case s.TotalDelta != nil:
		return nil, &param.Error{Name: "total delta", Value: *s.TotalDelta, Rule: "must not be given to a release charged per draw: its total is its filter's budget, at the budget's delta"}
	}
	gdp := accountant.GDPFilter
	acc.Filter, acc.Budget = &gdp, s.Budget
	t, err := acc.Publish(s.Certificate.Memo)
	if err != nil {
		return nil, err
	}
	t.DeltaFrom = accountant.BudgetDelta
	return &Accounted{Accounting: accountant.GDPFilter.String(), Total: t, Budget: s.Budget.Guarantee}, nil
}

// check refuses an accounted release of s with a budget, a total δ (its
// total is its argument's) or MaxQueries (its proposal is its own), no
// test, or no query.
func (w *Accounted) check(s ReleaseSpec) error {
	switch {
	case s.Budget != nil || s.TotalDelta != nil:
		return errors.New("ReleaseSpec.Accounted goes without Budget and TotalDelta: the total of a release accounted as a whole is its argument's")
	case s.MaxQueries != 0:
		return errors.New("ReleaseSpec.Accounted goes without MaxQueries: the queries of a release accounted as a whole are its Queries, the proposal its total holds for")
	case w.Test == nil:
		return errors.New("ReleaseSpec.Accounted.Test is not set: a release accounted as a whole needs its test")
	case w.Queries < 1:
		return &param.Error{Name: "queries", Value: w.Queries, Rule: "must be >= 1"}
	}
	return nil
}

// charge charges the ledger l one step of the release's total, before
// its test is drawn, as account pate charges a smooth-sensitivity draw:
// the test and the labels leave under that one guarantee, never per
// query. It reports whether the ledger had room for it: without, nothing
// is charged.
func (w *Accounted) charge(ctx context.Context, l Ledger, mechanism provenance.MechanismName, b provenance.Binding) (bool, error) {
	allowed, err := l.Begin(ctx, mechanism, b, accountant.ApproxStep(w.Total.Guarantee), 1)
	if err != nil || allowed < 1 {
		return false, err
	}
	if err := l.Reserve(ctx, 1); err != nil {
		return false, err
	}
	return true, l.Settle(ctx, 1)
}

// charged is a ledger charged for a release as a whole (Accounted.charge):
// its labels are not charged again; the label file's header states where
// the ledger was.
type charged struct{ Ledger }

func (charged) Reserve(context.Context, int) error { return nil }
func (charged) Settle(context.Context, int) error  { return nil }

// checkTotalDelta checks the total δ a release states its total at: in
// [0, 1), and only without a budget, whose δ is the one.
func checkTotalDelta(delta float64, budget *accountant.Budget) error {
	if budget != nil {
		return &param.Error{Name: "total delta", Value: delta, Rule: "must not be given with a budget: the total is stated at the budget's delta"}
	}
	return param.GuaranteeDelta("total delta", delta)
}
