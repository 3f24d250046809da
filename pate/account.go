package pate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/ctxio"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// AccountOptions are what an account of GNMax, Confident-GNMax or LNMax
// needs besides the votes.
type AccountOptions struct {
	// Mechanism is the mechanism accounted, with its settings:
	// ensemble.GNMax or ensemble.ConfidentGNMax on class counts (with the
	// noise the release drew, a zero Noise noisymax.DiscreteNoise, which
	// releases draw), or ensemble.LNMax. Its per-query δ is not read: it
	// is the labels' header's, else Delta.
	Mechanism ensemble.Mechanism
	// Delta is the δ of the (ε, δ) reported, Orders the Rényi orders (nil:
	// defaultOrders), Conversion the conversion of Rényi DP
	// to (ε, δ).
	Delta      float64
	Orders     []float64
	Conversion accountant.Conversion
	// Directions says which divergences the data-dependent bound covers:
	// both (the zero value, a guarantee) or one-sided (the PATE paper's).
	Directions Directions
	// Labels, if set, are the release's labels: the account is then of
	// its queries as answered and withheld. Their rows must be the
	// votes', in order.
	Labels *votefile.LabelReader
	// Smooth sets the smooth-sensitivity release of the data-dependent
	// cost.
	Smooth SmoothParams
	// Recorded, if set, are the releases a privacy ledger charged: the
	// reference for the header of Labels, which must be of the ledger's
	// ensemble and state the mechanism and per-label (ε, δ) of one of
	// them, with at most the labels it charged.
	Recorded *Recorded
	// Memo keeps what the account computes for the calls that ask again
	// (accountant.Memo): the curves and terms of its bounds, the plan of
	// a PTR release, and its total (AccountResult.Publish). nil keeps
	// nothing from one call to the next.
	Memo *accountant.Memo
	// Header is the votes' metadata header, checked where they were
	// opened (provenance.CheckHeader of the votes' Meta), which the
	// account compares with and does not check again; nil: Account
	// checks it, once.
	Header *provenance.CheckedHeader
}

// Recorded are the releases that the privacy ledger Ledger, of id ID and
// bound to Ensemble, has charged, as the caller read them from the ledger
// it opened (ledger.Ledger.Runs: a run's mechanism, its per-query
// (ε, δ) and its queries).
type Recorded struct {
	Ledger, ID, Ensemble string
	Releases             []RecordedRelease
}

// RecordedRelease is one release a ledger charged: its mechanism, the
// guarantee of each label and how many labels it charged.
type RecordedRelease struct {
	Mechanism provenance.MechanismName
	PerQuery  accountant.Guarantee
	Labels    int
}

// charged returns the most labels that a release recorded in r with the
// mechanism and per-label guarantee of the header m charged, and whether
// there is one.
func (r *Recorded) charged(m *votefile.LabelMeta) (int, bool) {
	most, found := 0, false
	for _, x := range r.Releases {
		if x.Mechanism == provenance.MechanismName(m.Mechanism) && x.PerQuery == chargedStep(m) {
			most, found = max(most, x.Labels), true
		}
	}
	return most, found
}

// AccountResult is PATE's account of the queries of a vote file: for lnmax
// its data-independent guarantee (LNMax), for the GNMax family the
// data-independent and data-dependent bounds (Result) with the
// smooth-sensitivity release of the latter (Smooth); and, for every
// mechanism, the accounting of a release of the queries as aggregate
// accounts one (Release), which gives the totals to publish (Totals).
type AccountResult struct {
	Options  AccountOptions
	Teachers int
	Classes  int
	// Abstain says that the votes were read with abstaining teachers
	// allowed (votefile.Reader.MayAbstain: class labels, of which -1 is a teacher
	// that did not vote, or counts under a stated K), or that the labels'
	// header says the release read them so: the account is then over
	// neighbours that differ by one vote added, removed or moved, not
	// only moved (rdpOptions.Abstain; docs/pate.md, "Abstaining
	// teachers"), as the release's relation is.
	Abstain bool
	LNMax   *lnmaxResult
	Result  bounds
	Smooth  smooth
	// Realised says that the account is of a release's labels: its
	// data-independent and data-dependent costs charge the GNMax step
	// only where it answered, which is analysis (an odometer's reading
	// after the fact), not a guarantee.
	Realised bool
	// PTR is the plan of the release of the labels when their header
	// says it was accounted as a whole by generalized PTR (labelsPTR),
	// nil otherwise: its total, not a composition of the labels, is the
	// one to publish.
	PTR *PTRResult
	// Filter is the account of the labels of a release charged per draw
	// to a Gaussian-DP filter (progressive GNMax), nil otherwise: the
	// filter's budget is the one total; Result and Smooth are then zero
	// (no data-dependent analysis is offered for it), and Release is the
	// filter's account: the per-draw step, the filter and its budget.
	Filter *FilterAccount
	// Release is the account of a release of the queries accounted (of
	// the labels, with labels) by the library path of every release
	// (ensemble.Privacy.Account of the mechanism's per-query privacy, its
	// total at the account's δ), Steps the queries: every query charged in
	// full, as aggregate and its ledger charge it.
	Release accountant.Account
	// Unlabelled counts the queries of the votes after the last label (a
	// release its budget stopped): read and keyed, not accounted.
	Unlabelled int
	// Votes is the key of the private votes (in hex): a hash of the
	// multiset of their rows of counts, every row of the file, the same
	// whatever the rows' order, the file's name, format, header or id
	// column, the labels and the settings: the key of the record of
	// draws (AccountResult.ReleaseOnce).
	Votes string
	// Binding is what the votes' header states of their ensemble, which
	// a ledger charged for a release must be bound to.
	Binding provenance.Binding
	// Draws are the smooth-sensitivity draws on the votes that the totals
	// cover (ReleaseOnce: every draw recorded on them, with any settings,
	// and a new one).
	Draws []draw

	// legacy is the key darrm recorded draws under before Votes
	// (legacyHash); answers hashes which queries a release's labels
	// answered (Settings).
	legacy, answers string
}

// Account accounts for the queries of in (any vote file, read as counts,
// with teachers that abstained where the file allows them: Abstain) under
// opts, and prepares the smooth-sensitivity release of the
// data-dependent cost (prepareSmooth) without drawing it: a draw is a
// release of the votes, which only ReleaseOnce makes. The votes must be
// in the one-vote relation, the relation of every mechanism here
// (provenance.Check); labels with a metadata header must be of this
// mechanism and its settings (else an error naming both values), K and C,
// and of the votes' ensemble; every label row must name its query, in
// order. Labels that end before the votes (a release its budget
// stopped) account the queries labelled; the rest are read and keyed
// (Votes, Unlabelled).
func Account(ctx context.Context, in votefile.Reader, opts AccountOptions) (*AccountResult, error) {
	if err := param.GuaranteeDelta("delta", opts.Delta); err != nil {
		return nil, err
	}
	if err := opts.checkMechanism(); err != nil {
		return nil, err
	}
	h := opts.Header
	switch {
	case h == nil:
		var err error
		if h, err = provenance.CheckHeader(in.Meta()); err != nil {
			return nil, err
		}
	case h.Meta() != in.Meta():
		return nil, errors.New("AccountOptions.Header is the check of another header than the one of the votes (their Meta)")
	}
	oneVote := accountant.OneVote
	b, err := h.Check(provenance.Stated{By: "the " + string(opts.Mechanism.Name()) + " mechanism", Relation: &oneVote})
	if err != nil {
		return nil, err
	}
	out := &AccountResult{Options: opts, Teachers: in.K(), Classes: in.Classes(), Realised: opts.Labels != nil, Binding: b,
		Abstain: in.MayAbstain() || (opts.Labels != nil && opts.Labels.Meta() != nil && opts.Labels.Meta().Abstain)}
	if perDraw(opts.Mechanism) {
		return accountPerDraw(ctx, in, opts, out)
	}
	if err := checkLabels(in, opts); err != nil {
		return nil, err
	}
	if l, ok := opts.Mechanism.(ensemble.LNMax); ok {
		n, err := count(ctx, in)
		if err != nil {
			return nil, err
		}
		res, err := lnmaxAccount(l.Scale, n, opts.Delta, opts.Orders, opts.Conversion)
		out.LNMax = &res
		if err != nil {
			return out, err
		}
		out.Release, err = releaseAccounting(opts, in.K(), in.Classes(), b)
		out.Release.Steps = res.Queries
		return out, err
	}
	mo := memoIn(opts.Memo)
	acct, err := newRDPAccount(opts.GNMax(), in.K(), in.Classes(), rdpOptions{Orders: opts.Orders, Directions: opts.Directions, Abstain: out.Abstain, memo: mo})
	if err != nil {
		return nil, err
	}
	queries, labelled := 0, true
	// A query's data-dependent bound at every order takes up to a tenth
	// of a millisecond at K = 250, and time in proportion to its classes:
	// a tenth of a second at 500,000, where 256 queries took 25 s that a
	// signal waited for; so also once 2^16 counts were added since.
	check := ctxio.Every{Ctx: ctx, Items: 1 << 8, Units: 1 << 16}
	var key votesKey
	legacy, answers := newLegacyHash(in.K(), in.Classes(), out.Realised), sha256.New()
	for n := 1; in.Next(); n++ {
		q := in.Query()
		key.add(q.Counts)
		if n%(1<<16) == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !labelled {
			out.Unlabelled++
			continue
		}
		a := answerUnknown
		if lr := opts.Labels; lr != nil {
			var ended bool
			if a, ended, err = labelOf(lr, q, n); err != nil {
				return nil, err
			}
			if ended {
				labelled = false
				out.Unlabelled++
				continue
			}
		}
		queries = n
		if err := acct.add(q.Counts, a); err != nil {
			return nil, fmt.Errorf("query %d: %w", n, err)
		}
		legacy.add(q.Counts, a == answerGiven)
		answers.Write([]byte{byte(a)})
		if err := check.Step(len(q.Counts)); err != nil {
			return nil, err
		}
	}
	if err := in.Err(); err != nil {
		return nil, err
	}
	if lr := opts.Labels; lr != nil {
		if err := labelsEnd(lr, labelled); err != nil {
			return nil, err
		}
	}
	if out.PTR, err = labelsPTR(mo, opts, in.Classes(), queries); err != nil {
		return nil, err
	}
	if r, lr := opts.Recorded, opts.Labels; r != nil && lr != nil && lr.Meta() != nil && out.PTR == nil {
		if most, _ := r.charged(lr.Meta()); queries > most {
			return nil, lr.HeaderErrorf("the file holds %d labels, but the releases of %s at %v per label that ledger %s records charged at most %d: the labels are not all charged", queries, lr.Meta().Mechanism, perQuery(lr.Meta()), r.Ledger, most)
		}
	}
	out.Votes, out.legacy, out.answers = key.sum(), legacy.sum(), hex.EncodeToString(answers.Sum(nil))
	if out.Result, err = acct.result(opts.Delta, opts.Conversion); err != nil {
		return nil, err
	}
	if out.Release, err = releaseAccounting(opts, in.K(), in.Classes(), b); err != nil {
		return nil, err
	}
	out.Release.Steps = out.Result.Queries
	out.Smooth, err = prepareSmooth(ctx, acct, out.Result, opts.Smooth, opts.Delta, opts.Conversion)
	return out, err
}

// releaseAccounting returns the account of a release under opts from
// the K teachers over C classes of binding b, as aggregate accounts it
// (ensemble.Privacy.Account): the mechanism's per-query privacy (at the
// per-label δ the labels' header states, else at opts.Delta), its totals
// at opts.Delta (δ' of the per-query compositions too).
func releaseAccounting(opts AccountOptions, k, classes int, b provenance.Binding) (accountant.Account, error) {
	var priv ensemble.Privacy
	if l, ok := opts.Mechanism.(ensemble.LNMax); ok {
		agg, err := build(l, k, classes)
		if err != nil {
			return accountant.Account{}, err
		}
		priv = agg.Privacy()
	} else {
		delta := opts.Delta
		if lr := opts.Labels; lr != nil && lr.Meta() != nil && lr.Meta().Delta > 0 {
			delta = lr.Meta().Delta
		}
		g := opts.GNMax()
		if _, err := g.RunSlope(1, 1); err != nil {
			return accountant.Account{}, err
		}
		spend, _, err := g.Spend(delta)
		if err != nil {
			return accountant.Account{}, fmt.Errorf("%s: %w", opts.Mechanism.Name(), err)
		}
		priv = ensemble.Privacy{Spend: spend, Relation: accountant.OneVote}
	}
	deltaPrime := opts.Delta
	if deltaPrime == 0 {
		deltaPrime = accountant.DefaultDeltaPrime // a pure total is at δ = 0 among the totals
	}
	acc, _, err := priv.Account(b, deltaPrime)
	acc.Delta = &opts.Delta
	return acc, err
}

// checkLabels checks that the header of opts.Labels, if any, is of the
// account's mechanism and of the votes of in.
func checkLabels(in votefile.Reader, opts AccountOptions) error {
	if opts.Labels == nil {
		return nil
	}
	lr, m := opts.Labels, opts.Labels.Meta()
	_, lnmax := opts.Mechanism.(ensemble.LNMax)
	switch {
	case lnmax:
		return lr.Errorf("lnmax is accounted data-independently only, which needs no release")
	case m == nil:
		return nil
	case provenance.MechanismName(m.Mechanism) != opts.Mechanism.Name():
		return lr.Errorf("made by %s, but the account is of %s", m.Mechanism, opts.Mechanism.Name())
	case m.K != in.K() || m.Classes != in.Classes():
		return lr.Errorf("labels of K = %d teachers over %d classes, but the votes have K = %d over %d", m.K, m.Classes, in.K(), in.Classes())
	case m.Ensemble != "" && in.Meta() != nil && m.Ensemble != in.Meta().Ensemble:
		return lr.Errorf("labels of ensemble %s, but the votes are of ensemble %s", m.Ensemble, in.Meta().Ensemble)
	}
	g := opts.GNMax()
	stated, err := ensemble.Mechanisms().FromHeader(m)
	if err != nil {
		return lr.HeaderErrorf("%v", err)
	}
	if err := agree(g, stated); err != nil {
		return err
	}
	if err := checkStated(lr, m, g); err != nil {
		return err
	}
	if r := opts.Recorded; r != nil {
		// A header that names the ledger it was charged to names one
		// ledger: another ledger's records, even of a release with the
		// same settings, do not vouch for it.
		if m.Ledger != "" && m.Ledger != r.ID {
			return lr.HeaderErrorf("labels charged to the ledger of id %s, but ledger %s has id %s: it did not charge them, and its total does not cover them", m.Ledger, r.Ledger, r.ID)
		}
		if m.Ensemble != r.Ensemble {
			return lr.HeaderErrorf("labels of ensemble %q, but ledger %s is bound to ensemble %q", m.Ensemble, r.Ledger, r.Ensemble)
		}
		if _, ok := r.charged(m); !ok {
			what := "per label"
			if m.Total != nil {
				what = "as the total of the release, charged as one step"
			}
			return lr.HeaderErrorf("it states %s at %v %s, but ledger %s records no release of that mechanism at that guarantee: the header does not describe a release the ledger charged", m.Mechanism, chargedStep(m), what, r.Ledger)
		}
	}
	return nil
}

// perQuery returns the guarantee of each label that the label file's
// header m states.
func perQuery(m *votefile.LabelMeta) accountant.Guarantee {
	return accountant.Guarantee{Eps: m.Eps, Delta: m.Delta}
}

// chargedStep returns the guarantee of the step a ledger charged for the
// labels of the header m: each label's, or a release accounted as a
// whole's total, which the ledger charges as one step (ensemble.Accounted).
func chargedStep(m *votefile.LabelMeta) accountant.Guarantee {
	if m.Total != nil {
		return accountant.Guarantee{Eps: m.Total.Eps, Delta: m.Total.Delta}
	}
	return perQuery(m)
}

// checkStated checks that the settings g of the header m of a multi-class
// release's labels give the per-label (ε, δ) the header states, as the
// release computed it (built as a release builds it, at the stated δ): a header
// that contradicts itself is damaged, and its settings cannot be trusted
// for an account (a σ2 edited from 40 to 400 would report a tenth of the
// cost). The threshold plays no part in the per-label guarantee, so an
// edited threshold is not found here. Two-class GNMax labels (continuous
// noise, σ calibrated to the target) are not rebuilt.
func checkStated(lr *votefile.LabelReader, m *votefile.LabelMeta, g noisymax.Steps) error {
	if m.Classes == 2 && g.Noise == noisymax.ContinuousNoise {
		return nil
	}
	agg, err := build(classMechanism(provenance.MechanismName(m.Mechanism), g, m.Delta), m.K, m.Classes)
	if err != nil {
		return lr.HeaderErrorf("its settings are not those of a release: %v", err)
	}
	if got := agg.Privacy().Guarantee; got != perQuery(m) {
		settings := fmt.Sprintf("sigma2 = %v", g.Sigma2)
		if g.Confident() {
			settings = fmt.Sprintf("sigma1 = %v, %s", g.Sigma1, settings)
		}
		return lr.HeaderErrorf("it states eps = %v per label at delta = %v, but its settings (%s, noise %v) give eps = %v: the header contradicts itself (damaged or edited), so its settings cannot be accounted",
			m.Eps, m.Delta, settings, g.Noise, got.Eps)
	}
	return nil
}

// build returns the multi-class aggregator m for k teachers over classes
// classes, as a release builds it (ensemble.New): an account recomputes
// what a release used by the same path.
func build(m ensemble.Mechanism, k, classes int) (ensemble.Labeler, error) {
	l, _, err := ensemble.New(context.Background(), m, k, classes, accountant.Guarantee{}, ensemble.Options{})
	return l, err
}

// classMechanism returns the mechanism name of the GNMax family on class
// counts with the parameters g, its guarantee at delta.
func classMechanism(name provenance.MechanismName, g noisymax.Steps, delta float64) ensemble.Mechanism {
	// Its Sigma2 says that it labels counts, whatever their classes.
	gnmax := ensemble.GNMax{Target: ensemble.Target{Delta: delta}, Sigma2: g.Sigma2, Noise: g.Noise}
	if name == (ensemble.ConfidentGNMax{}).Name() {
		return ensemble.ConfidentGNMax{Threshold: g.Threshold, Sigma1: g.Sigma1, GNMax: gnmax}
	}
	return gnmax
}

// agree returns an error naming both values of the first setting of g,
// the account's, that contradicts stated, the mechanism a label file's
// header states (ensemble.Registry.FromHeader), or that it does not have.
func agree(g noisymax.Steps, stated ensemble.Mechanism) error {
	h, _ := ensemble.Steps(stated, countsOnly)
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	noise := func(n noisymax.Noise) string {
		if n == noisymax.UnsetNoise {
			return ""
		}
		return n.String()
	}
	type setting struct{ name, given, stated string }
	var settings []setting
	if g.Confident() {
		s := setting{"threshold", num(g.Threshold), ""}
		t := setting{"sigma1", num(g.Sigma1), ""}
		if h.Confident() {
			s.stated, t.stated = num(h.Threshold), num(h.Sigma1)
		}
		settings = append(settings, s, t)
	}
	s2 := setting{"sigma2", num(g.Sigma2), ""}
	if h.Sigma2 != 0 {
		s2.stated = num(h.Sigma2)
	}
	settings = append(settings, s2, setting{"noise", noise(g.Noise), noise(h.Noise)})
	for _, s := range settings {
		if s.given == s.stated || s.given == "" {
			continue
		}
		if s.stated == "" {
			return fmt.Errorf("%s = %s given, but the labels were made by %s, which has no %s (its settings come from the label file's header)", s.name, s.given, stated.Name(), s.name)
		}
		return fmt.Errorf("%s = %s given, but the label file's header states %s = %s: the labels were made with %s = %s (leave it out to use it)", s.name, s.given, s.name, s.stated, s.name, s.stated)
	}
	return nil
}

// checkMechanism refuses an account of a mechanism other than GNMax,
// Confident-GNMax or LNMax, or none.
func (o AccountOptions) checkMechanism() error {
	var names []provenance.MechanismName
	for _, m := range ensemble.Mechanisms().On(votefile.ManyClasses) {
		names = append(names, m.Name())
	}
	switch {
	case o.Mechanism == nil:
		return fmt.Errorf("pate: AccountOptions.Mechanism is not set: %s", provenance.JoinMechanisms(names, ", "))
	case !slices.Contains(names, o.Mechanism.Name()):
		// A caller's choice, as its flag is a command's: bad input.
		return fmt.Errorf("pate: %w", &param.SettingError{Name: "AccountOptions.Mechanism", Value: o.Mechanism.Name().String(), Rule: "pate accounts " + provenance.JoinMechanisms(names, ", ")})
	}
	return nil
}

// GNMax returns the settings of the account's mechanism of the GNMax
// family, with the noise the release drew (a zero noise the discrete
// noise releases draw); the zero value for LNMax.
func (o AccountOptions) GNMax() noisymax.Steps {
	if _, ok := o.Mechanism.(ensemble.LNMax); ok {
		return noisymax.Steps{}
	}
	g, _ := ensemble.Steps(o.Mechanism, countsOnly)
	return g.Drawn()
}

// countsOnly says to ensemble.Steps that an account's votes are
// counts, whatever their classes.
const countsOnly = 0

// count reads every query of in, checking it, and returns how many
// there are.
func count(ctx context.Context, in votefile.Reader) (int, error) {
	n := 0
	for in.Next() {
		if n++; n%(1<<16) == 0 && ctx.Err() != nil {
			return n, ctx.Err()
		}
	}
	return n, in.Err()
}

// Queries returns the number of queries accounted: the labelled ones,
// with labels.
func (a *AccountResult) Queries() int {
	switch {
	case a.LNMax != nil:
		return a.LNMax.Queries
	case a.Filter != nil:
		return a.Filter.Queries
	}
	return a.Result.Queries
}

// Publish returns the total to publish at the account's δ of everything
// it covers: without a draw, that of a release of its queries, chosen as
// for every release (accountant.Account.Publish, the total aggregate
// publishes for the same labels); with draws, their Rényi composition
// with the queries (rdpTotal).
func (a *AccountResult) Publish() (accountant.Total, error) {
	switch {
	case a.Filter != nil:
		return a.Filter.Total, nil
	case a.PTR != nil:
		return a.ptrTotal()
	}
	if len(a.Draws) == 0 {
		acc := a.Release
		acc.Steps = a.Queries()
		return acc.Publish(a.Options.Memo)
	}
	return a.drawsTotal()
}

// drawsTotal is the Rényi composition of the queries' data-independent
// curve and every draw (rdpTotal).
func (a *AccountResult) drawsTotal() (accountant.Total, error) {
	rho, err := a.Options.GNMax().RunSlope(a.Result.Queries, a.Result.Queries)
	if err != nil {
		return accountant.Total{}, err
	}
	return rdpTotal(rho, a.Draws, a.Options.Orders, a.Options.Delta)
}

// rdpTotal returns the total at delta of queries whose data-independent
// Rényi DP is rho·λ at every order λ (noisymax.Steps.RunSlope:
// Papernot et al. 2018, Proposition 8, and the discrete Gaussian's curve,
// Canonne, Kamath and Steinke 2020) and of the smooth-sensitivity draws
// draws, each (λ, GNSS)-RDP (gnssLatticeRDP at its β and σ_ss; not the
// PATE paper's Theorem 23, which is below it near λ = 1/(2β)) for every λ
// up to its own order: their sum at each λ of orders (nil: defaultOrders) up to
// the least draw's order, and at that order (Rényi composition, Mironov
// 2017, Proposition 1), converted to (ε, delta) by the improved
// conversion (Canonne, Kamath and Steinke 2020, Proposition 12), the
// least over the orders. Without draws it is the queries' Rényi bound on
// the grid.
func rdpTotal(rho float64, draws []draw, orders []float64, delta float64) (accountant.Total, error) {
	if orders == nil {
		orders = defaultOrders()
	}
	top := math.Inf(1)
	for _, d := range draws {
		top = min(top, d.Order)
	}
	try := slices.DeleteFunc(slices.Clone(orders), func(o float64) bool { return o > top })
	if !math.IsInf(top, 1) {
		try = append(try, top)
	}
	best := accountant.Total{Method: accountant.Renyi, Guarantee: accountant.Guarantee{Eps: math.Inf(1), Delta: delta}, DeltaFrom: accountant.StatedDelta}
	for _, o := range try {
		r := outward.MulUp(rho, o)
		for _, d := range draws {
			g, err := gnssLatticeRDP(d.Beta, d.Sigma, o)
			if err != nil {
				return best, fmt.Errorf("smooth-sensitivity draw at order %v, beta %v, sigma_ss %v: %w", d.Order, d.Beta, d.Sigma, err)
			}
			r = outward.AddUp(r, g)
		}
		eps, err := accountant.ImprovedConversion.ConvertRDP(r, o, delta)
		if err != nil {
			return best, err
		}
		best.Guarantee.Eps = min(best.Guarantee.Eps, eps)
	}
	if math.IsInf(best.Guarantee.Eps, 1) {
		return best, fmt.Errorf("no Renyi order at most %v to compose the draws at", top)
	}
	return best, nil
}
