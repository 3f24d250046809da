package plan

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
)

// Request is a release to plan, as darrm aggregate's flags give it: its
// spec (the mechanism with its settings, the teachers' guarantee, the
// budget, the slack δ' and the certificate's options; the votes, the
// ledger, the sink and the randomness play no part), for K teachers
// voting among Classes classes, and how a plan holds it to its budget.
type Request struct {
	ensemble.ReleaseSpec
	// K is the number of teachers, Classes the number of classes (2 for
	// two-class votes).
	K, Classes int
	// Filter is the ledger's filter for a run charged to a new ledger of
	// this budget: accountant.ZCDPFilter or accountant.Simple; nil: the
	// one that allows the most of the mechanism's labels, which darrm
	// ledger init fixes when they are declared (ledger.ChooseFilter).
	Filter *accountant.Method
	// For is what a plan of parameters fits the queries to: one run
	// (ForRun, the zero value) or a new ledger (ForLedger).
	For Target
	// Share is the fraction in (0, 1] of a new ledger given to the
	// analyst the plan is for (ledger.Header.Shares); 0: the whole
	// ledger. With a share, what a new ledger releases (Count.Ledger,
	// and a plan for a ledger) is what the share allows the analyst, as
	// a release holds it (ledger.Header.ShareAllows): of a declared use,
	// floor(Share·N) of its N labels. A share is an allocation inside the
	// ledger's one budget, not a guarantee: the total to publish is the
	// ledger's.
	Share float64
	// Queries is the number of queries a plan of parameters fits to the
	// budget (Make, Compare); 0 has Make count what the budget buys at
	// the mechanism's settings instead.
	Queries int
	// Proxy is votes on public or already released data on which a plan
	// of the GNMax family on class counts is scored, and Confident-GNMax's
	// parameters chosen (Compare and Confident-GNMax need them); nil:
	// none.
	Proxy *Proxy
	// MinPrecision, in [0, 1), is the least expected fraction of answered
	// labels that are correct, on Proxy, of a Confident-GNMax plan and of
	// Compare's best; 0 leaves Confident-GNMax's threshold free, and then
	// the lowest threshold scores best, since every query is charged
	// whether answered or not (Utility.Thresholds shows what higher ones
	// cost).
	MinPrecision float64
	// Kind and Partition are the teachers', as a vote file's metadata
	// header states them. Fixed private teachers are bounded by their cap
	// alone (provenance.Binding.Cap, accountant.Cap): every query fits a
	// budget the cap meets, and none fits one it does not. KindUnstated,
	// as for votes without a header, has no cap: the teachers are
	// accounted as a fresh mechanism per query. Teachers whose
	// partition breaks the mechanism's relation (the one-vote relation on
	// shared data or file-position shares), of any kind, are refused, as
	// their releases are (provenance.Teachers.Holds).
	Kind      provenance.Kind
	Partition provenance.Partition

	// ratios are the σ1/σ2 a Confident-GNMax plan tries, for each the
	// least σ2 that fits and every integer threshold; nil: defaultRatios.
	// Tests narrow them to keep a search short.
	ratios []float64
}

// withMemo returns r with a memo (ensemble.Options.Memo): r's own, or,
// when it has none, a new one, so that the one call that takes r keeps
// what its search computes for itself alone (its probes and its checks
// build and count the same mechanisms again).
func (r Request) withMemo() Request {
	if r.Certificate.Memo == nil {
		r.Certificate.Memo = new(accountant.Memo)
	}
	return r
}

// Count is what a budget buys for a mechanism and its parameters.
type Count struct {
	// Run is the number of queries one run held to the budget releases
	// (darrm aggregate --budget-eps), Total their total to publish, which
	// names the result by which they fit (accountant.Account.Publish).
	Run   int
	Total accountant.Total
	// Ledger is the number a run charged to a new ledger with the budget
	// releases, by Filter (Request.Filter, else the filter that allows
	// the most), to the analyst of Request.Share when it is set, and
	// LedgerAll the number the whole ledger allows; LedgerTotal is what
	// they spend by it (against the share: ledger.Header.Spent), a
	// realised cost (of a plan's queries, Plan.Queries, when it plans for
	// a ledger).
	// LedgerPublish is what that ledger publishes after them, as ledger
	// show and a release on it print it: the budget its filter holds
	// every release to. Fixed private teachers (Request.Kind) have their
	// cap alone: Run and Ledger are then accountant.Unlimited, Total and
	// LedgerPublish the cap at the budget's δ, LedgerTotal the cap at the
	// ledger's slack (what ledger show says it spent), or the count is an
	// error that says why none fits.
	Ledger        int
	LedgerAll     int
	LedgerTotal   accountant.Guarantee
	LedgerPublish accountant.Total
	Filter        accountant.Method
	// LedgerNote says why a ledger of Filter cannot hold the run, if so.
	LedgerNote string
	// PerQuery is the per-query guarantee, Label says what the mechanism
	// is in words.
	PerQuery accountant.Guarantee
	Label    string

	// header is the new ledger's, step the labels' description: what
	// a number of labels spends on it (ledger.Header.Spent).
	header ledger.Header
	step   accountant.Spend
}

// built is the aggregator of a request with its account under the
// request's budget and the queries the budget allows (accountant.Account.Allowed),
// with their total to publish.
type built struct {
	agg        ensemble.Labeler
	label      string
	binding    provenance.Binding
	acc        accountant.Account
	maxQueries int
	allows     accountant.Total
	memo       *accountant.Memo // the request's (ensemble.Options.Memo)
}

// Aggregator returns the aggregator of r's mechanism and parameters, built
// as darrm aggregate builds it (ensemble.New), and says what it is in
// words.
func (r Request) Aggregator(ctx context.Context) (ensemble.Labeler, string, error) {
	if r.Mechanism == nil {
		return nil, "", errNoMechanism
	}
	var teachers accountant.Guarantee
	if r.Teachers != nil {
		teachers = *r.Teachers
	}
	return ensemble.New(ctx, r.Mechanism, r.K, r.Classes, teachers, r.Certificate)
}

// build builds the aggregator of r (aggregator) and its account under
// r.Budget (ensemble.Privacy.Account and accountant.Account.Allowed, the functions
// that limit a budgeted release), with the teachers' cap of r's kind and
// partition (provenance.Binding.Cap).
func build(ctx context.Context, r Request) (built, error) {
	agg, label, err := r.Aggregator(ctx)
	if err != nil {
		return built{}, err
	}
	b := built{agg: agg, label: label, binding: bindingOf(agg, r), memo: r.Certificate.Memo}
	// The release refuses a relation that the teachers' partition breaks
	// (provenance.Check); a plan of it would count labels that no release
	// gives.
	if err := holds(b.binding.Teachers); err != nil {
		return built{}, err
	}
	deltaPrime := r.DeltaPrime
	if deltaPrime == 0 {
		deltaPrime = accountant.DefaultDeltaPrime
	}
	if b.acc, _, err = agg.Privacy().Account(b.binding, deltaPrime); err != nil {
		return built{}, err
	}
	b.acc.Budget = r.Budget
	if b.maxQueries, b.allows, err = b.acc.Allowed(ctx, b.memo); err != nil {
		return built{}, err
	}
	return b, nil
}

// holds refuses teachers whose partition breaks their relation, as every
// release from them is refused (provenance.Teachers.Holds): fixed
// teachers, whose cap needs their partition, and any others whose
// partition is stated, whatever their kind (a vote file's header may
// state per-query teachers, and votes without one a partition alone).
func holds(t provenance.Teachers) error {
	// A kind of no name (Kind(99)) is Holds' to refuse, as a partition of
	// none is: it was planned as per-query teachers.
	if (t.Kind == provenance.PerQuery || t.Kind == provenance.KindUnstated) && t.Partition == provenance.PartitionUnstated {
		return nil
	}
	return t.Holds()
}

// bindingOf returns what a plan, which knows no votes, binds agg to: its
// K, relation and teachers, and r's kind and partition.
func bindingOf(agg ensemble.Labeler, r Request) provenance.Binding {
	priv := agg.Privacy()
	return provenance.Binding{Teachers: provenance.Teachers{K: agg.K(), Relation: priv.Relation, Each: priv.Teachers, Kind: r.Kind, Partition: r.Partition}}
}

// fits reports whether queries queries of r's mechanism fit r.Budget in
// r's target: on a new ledger, by its filter (ledgerCount); in one run,
// by the predicate on which the release's count searches
// (accountant.Account.Fits).
func fits(ctx context.Context, r Request, queries int) (bool, error) {
	// Every search of a plan asks this, up to a few hundred times.
	if err := ctx.Err(); err != nil {
		return false, err
	}
	agg, _, err := r.Aggregator(ctx)
	if errors.Is(err, gamma.ErrNotCertified) {
		// A parameter whose mechanism is not certified releases nothing
		// (randomized response at m = K: p_const = 1, exactly tight).
		return false, nil
	}
	if err != nil {
		return false, err
	}
	priv := agg.Privacy()
	if r.For == ForLedger {
		_, n, _, err := ledgerCount(ctx, bindingOf(agg, r), r, priv)
		if unheld := (*unheldError)(nil); errors.As(err, &unheld) {
			return false, err
		}
		return err == nil && n >= queries, nil
	}
	return accountant.Account{Step: priv.Spend, Profile: priv.Profile, Steps: queries, Budget: r.Budget}.Fits(r.Certificate.Memo)
}

// runQueries returns the number of queries a run of b releases.
func (b built) runQueries() int { return b.maxQueries }

// queriesFor returns the number of queries b, built from r, releases in
// r's target: in one run, or on a new ledger (none when no filter can
// hold its labels).
func (b built) queriesFor(ctx context.Context, r Request) int {
	if r.For == ForLedger {
		_, n, _, err := ledgerCount(ctx, b.binding, r, b.agg.Privacy())
		if err != nil {
			return 0
		}
		return n
	}
	return b.runQueries()
}

// of returns the queries c counts for target t: in one run, or on a new
// ledger.
func (c Count) of(t Target) int {
	if t == ForLedger {
		return c.Ledger
	}
	return c.Run
}

// count returns what r's budget buys: the queries one budgeted run
// releases, by the function that limits it (accountant.Account.Allowed), and
// those a run charged to a new ledger of the budget releases, by the
// filter ledger init fixes for these labels declared (ledger.ChooseFilter)
// or Request.Filter (accountant.Filter.MaxSteps). A budget that fits no
// query is an error that says the smallest one that fits one; one within
// which more than accountant.CountLimit fit allows that many, as it does
// a release (accountant.Account.Allowed) and a ledger.
func count(ctx context.Context, r Request) (Count, error) {
	if err := r.validate(); err != nil {
		return Count{}, err
	}
	b, err := build(ctx, r)
	if err != nil {
		return Count{}, err
	}
	c := Count{Run: b.runQueries(), PerQuery: b.agg.Privacy().Guarantee, Label: b.label}
	if c.Run == 0 {
		return c, noFit(b, *r.Budget, 1)
	}
	c.Total = b.allows
	priv := b.agg.Privacy()
	h, n, all, err := ledgerCount(ctx, b.binding, r, priv)
	if c.Filter, c.Ledger, c.LedgerAll = h.Filter, n, all; err != nil {
		c.LedgerNote = err.Error()
		return c, nil
	}
	if c.Ledger == accountant.Unlimited {
		// Fixed teachers: a ledger spends their cap at its slack once a
		// label is released, and publishes their cap at its budget's δ,
		// as ledger show says (ledger.Balance).
		cp, _, err := b.binding.Cap(accountant.DefaultDeltaPrime)
		if err != nil {
			return c, err
		}
		c.LedgerTotal, c.LedgerPublish = cp.Guarantee, c.Total
	}
	if c.Ledger > 0 {
		// What the ledger publishes, as ledger show and a release on it
		// print it (ledger.Header.Publish).
		if c.LedgerPublish, err = h.Publish(r.Certificate.Memo); err != nil {
			return c, err
		}
		c.header, c.step = h, priv.Spend
		if c.LedgerTotal, err = h.Spent(r.Certificate.Memo, priv.Spend, c.Ledger, r.share()); err != nil {
			return c, err
		}
	}
	return c, nil
}

// ShareAllows returns the labels that a share f of the new ledger the
// count is of allows (ledger.Header.ShareAllows), so that whoever plans a
// ledger's shares can check that each of them allows a label, as ledger
// init does. A count with no ledger (Ledger 0) allows none.
func (c Count) ShareAllows(m *accountant.Memo, f float64) (int, error) {
	if !(f > 0 && f <= 1) {
		// As the ledger's header checks it: a count of no ledger took
		// NaN for a share.
		return 0, &param.Error{Name: "share", Value: f, Rule: "an analyst's share of a ledger is a fraction in (0, 1]"}
	}
	if c.Ledger == 0 {
		return 0, nil
	}
	return c.header.ShareAllows(m, c.step, f)
}

// noFit returns the error for a budget in which not even k queries of b
// fit: a parameter error on the budget's ε that names the smallest ε, at the
// budget's δ, of k queries' total to publish, and its result; on the
// budget's δ where no ε fits at it.
func noFit(b built, budget accountant.Budget, k int) error {
	acc := b.acc
	acc.Steps = k
	t, err := acc.Publish(b.memo)
	rule := fmt.Sprintf("not even %s (per query %v)", fitWords(k), b.agg.Privacy().Guarantee)
	if acc.Cap != nil {
		// Fixed teachers: the cap, which no parameter moves, says why.
		return budgetNoFit(*acc.Cap, budget, rule+": "+acc.Cap.Refusal(budget).Error())
	}
	if err != nil || t.Err != nil {
		// The budget's δ is what fails: no ε would fit at it.
		return &deltaNoFitError{&param.Error{Name: "budget-delta", Value: budget.Delta,
			Rule: rule + fmt.Sprintf(": no total of theirs has a delta within budget-delta %g, whatever budget-eps", budget.Delta)}}
	}
	rule += fmt.Sprintf(": the smallest budget that fits %d at budget-delta %g is budget-eps %s, by %s", k, budget.Delta, decimal.FormatBound(t.Guarantee.Eps), t.Name())
	return &param.Error{Name: "budget-eps", Value: budget.Eps, Rule: rule}
}

// budgetNoFit is the refusal, for rule, of a budget that fixed teachers'
// cap c does not fit: of its δ where no ε would fit at it, else of its ε.
func budgetNoFit(c accountant.Cap, budget accountant.Budget, rule string) error {
	if !c.Fits(accountant.Guarantee{Eps: math.MaxFloat64, Delta: budget.Delta}) {
		return &deltaNoFitError{&param.Error{Name: "budget-delta", Value: budget.Delta, Rule: rule}}
	}
	return &param.Error{Name: "budget-eps", Value: budget.Eps, Rule: rule}
}

// deltaNoFitError is noFit's error where the budget's δ is what fails: a
// parameter error on it, which a comparison shows as a mechanism that does
// not fit (fitsNot), as it shows one on the budget's ε.
type deltaNoFitError struct{ err *param.Error }

func (e *deltaNoFitError) Error() string { return e.err.Error() }

func (e *deltaNoFitError) Unwrap() error { return e.err }

// fitsNot reports whether err says that the budget fits none of the
// queries planned (noFit and the other refusals of the budget's ε), which a
// comparison shows beside the mechanisms that fit, not as a failure.
func fitsNot(err error) bool {
	var pe *param.Error
	return errors.As(err, new(*deltaNoFitError)) || errors.As(err, &pe) && pe.Name == "budget-eps"
}

// fitWords says that k queries fit, for an error.
func fitWords(k int) string {
	if k == 1 {
		return "1 query fits"
	}
	return fmt.Sprintf("%d queries fit", k)
}

// errNoMechanism is the error of a request without a mechanism.
var errNoMechanism = errors.New("plan: Request.Mechanism is not set")

// validate checks r's budget and slack: the rules of every budget
// (accountant.Budget.Validate) and of every δ' (param.DeltaPrime),
// before a plan builds anything.
func (r Request) validate() error {
	if r.Budget == nil {
		return errors.New("plan: Request.Budget is not set: a plan holds a release to a budget")
	}
	if err := r.Budget.Validate(); err != nil {
		return err
	}
	if !targetNames.Named(r.For) {
		return &param.SettingError{Name: "For", Value: r.For.String(), Rule: "must be ForRun or ForLedger"}
	}
	if r.Share != 0 && !(r.Share > 0 && r.Share <= 1) {
		return &param.Error{Name: "share", Value: r.Share, Rule: "an analyst's share of a ledger is a fraction in (0, 1]"}
	}
	if r.DeltaPrime != 0 {
		return param.DeltaPrime(r.DeltaPrime)
	}
	return nil
}
