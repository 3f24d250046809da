package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/pate"
)

// AccountPATE is the document of darrm account pate: the account
// (pate.Account) with the draws it covers (Draw: pate.AccountResult.
// ReleaseOnce, nil for lnmax), the seed of a reproducible draw, and the
// ledger given, if any (LedgerPath, as given), with its state after any
// charge: the total to publish when it covers everything the account does
// (PublishLedger: pate.AccountResult.LedgerCovers).
type AccountPATE struct {
	*pate.AccountResult
	Seed          *uint64
	Draw          *pate.DrawState
	Ledger        *ledger.Balance
	LedgerPath    string
	PublishLedger bool
}

// A value may be published when it is a function of the release's outputs
// and of parameters fixed before the votes were seen; the documents of
// account pate and darrm pate mark every other value where they print it
// (not_for_publication) and say in one line what may be published.
const notForPublication = "not for publication"

// NotForPublication lists the fields of AccountPATE that are functions of
// the votes: every data-dependent quantity, the expected number of
// answers, the record of draws (named by a hash of the votes), and the
// parameters of the smooth-sensitivity release, with what it released,
// when they were chosen from the votes.
func (d AccountPATE) NotForPublication() []string {
	if d.LNMax != nil || d.Filter != nil {
		return []string{}
	}
	out := []string{"eps_data_dependent", "order", "smooth_sensitivity", "noise_deviation"}
	if d.Options.GNMax().Confident() && !d.Realised {
		out = append(out, "expected_answered")
	}
	if d.Draw != nil && d.Draw.Draws > 0 {
		out = append(out, "draw_record")
	}
	switch {
	case d.Smooth.FromVotes:
		out = append(out, "ss_order", "beta", "sigma_ss", "ss_margin", "gnss_rdp", "rdp_released", "eps_released", "smooth_sensitivity_error")
	case d.seededDraw():
		// The draw's noise is the seed's: anyone who knows the seed
		// takes it off rdp_released, and has the data-dependent cost.
		out = append(out, "rdp_released", "eps_released")
	}
	return out
}

// seededDraw reports whether the smooth-sensitivity draw shown was drawn
// from a seeded generator (--seed): its noise is reproducible, so what it
// released is the votes' data-dependent cost to whoever knows the seed.
func (d AccountPATE) seededDraw() bool { return d.Draw != nil && d.Draw.Experiment }

// Cost says what the account's data-independent and data-dependent costs
// charge: "expected" over the threshold noise (Confident-GNMax without a
// release's labels), "realised" (the steps a release's labels show were
// taken), or "any release" (GNMax and LNMax without labels, whose every
// release answers every query). The first two are analysis: the total to
// publish charges every query in full.
func (d AccountPATE) Cost() string {
	switch {
	case d.Filter != nil:
		return "filter"
	case d.Realised:
		return "realised"
	case d.LNMax == nil && d.Options.GNMax().Confident():
		return "expected"
	}
	return "any release"
}

// realisedNote says what a release's realised costs are.
const realisedNote = "eps_data_independent, eps_data_dependent and eps_released are the release's realised cost: the GNMax step charged only where its labels show an answer, " +
	"a sum of the steps that happened to be taken, computed after the fact (an odometer's reading without its correction: Rogers, Roth, Ullman and Vadhan 2016; " +
	"Lecuyer 2021; Whitehouse, Ramdas, Rogers and Wu 2023), so analysis, not a guarantee"

// costNote says in words what Cost means.
var costNote = map[string]string{
	"expected": "eps_data_independent bounds any release of these queries; eps_data_dependent and eps_released are expected costs over the threshold noise " +
		"(Pr[answer] times the GNMax step's cost), no run's guarantee",
	"realised":    realisedNote + "; eps_guarantee charges every query both steps, the composition of every step the mechanism could take",
	"any release": "every release of these queries answers each of them: the costs are any release's",
	"filter": "eps_guarantee is the budget of the Gaussian-DP filter that charged every draw of the release before it was drawn (its labels' header states it; the account recomputes it from the header's settings); " +
		"eps_per_query is what a query taking every draw would cost alone, analysis",
}

// Write prints the document in format f.
func (d AccountPATE) Write(w io.Writer, f cliout.Format) error {
	o := d.Options
	var rec cliout.Record
	if d.LNMax != nil {
		r := d.LNMax
		var order any = r.RDP.Order
		bound := "Renyi composition"
		switch {
		case r.Pure:
			order, bound = nil, "pure composition Q·2/b"
		case r.Exact:
			order, bound = nil, "exact composition (2Q randomized responses of 1/b)"
		}
		rec = cliout.Record{
			field("mechanism", o.Mechanism.Name()), field("noise", "discrete Laplace"), field("laplace_scale", valueOf(settingsOf(o.Mechanism).Scale)),
			field("teachers", d.Teachers), field("classes", d.Classes), field("abstain", d.Abstain), field("neighbours", neighbours(d.Abstain)),
			field("queries", r.Queries), field("expected_answered", float64(r.Queries)),
			field("delta", o.Delta), field("conversion", o.Conversion.String()), field("cost", d.Cost()),
			field("eps_per_query", r.PerQuery.Eps),
			field("eps_data_independent", r.Eps), field("order_data_independent", order), field("bound", bound),
			field("eps_data_dependent", nil), field("eps_released", nil),
			field("data_dependent", "not offered for lnmax: darrm gives its data-independent guarantee only (each query (2/b, 0)-DP; the total the smallest of Q·2/b, the Renyi composition of min(2/b, lambda·2/b²) and the exact composition of its noise)"),
		}
	} else if r := d.Filter; r != nil {
		m := r.Mechanism
		var t1, s1 any
		if m.Sigma1 != 0 {
			t1, s1 = m.Threshold, m.Sigma1
		}
		var unlabelled any
		if d.Unlabelled > 0 {
			unlabelled = d.Unlabelled
		}
		rec = cliout.Record{
			field("mechanism", o.Mechanism.Name()), field("noise", "discrete Gaussian"), field("levels", []float64(m.Levels)), field("kappa", m.Kappa), field("give_up", m.GiveUp),
			field("threshold", t1), field("sigma1", s1),
			field("teachers", d.Teachers), field("classes", d.Classes), field("abstain", d.Abstain), field("neighbours", neighbours(d.Abstain)),
			field("queries", r.Queries), field("answered", r.Answered), field("withheld", r.Withheld), field("unlabelled", unlabelled),
			field("accounting", accountant.GDPFilter.String()), field("budget_eps", m.Budget.Eps), field("budget_delta", m.Budget.Delta),
			field("eps_per_query", r.PerQuery.Eps), field("delta_per_query", r.PerQuery.Delta),
			field("eps_data_dependent", nil), field("eps_released", nil),
			field("data_dependent", "not offered: every draw was charged to the filter before it was drawn, so its budget is the guarantee, and no data-dependent bound is computed"),
		}
	} else {
		rec = d.analysisRecord()
	}
	g, err := d.guarantee()
	if err != nil {
		return err
	}
	rec = append(rec, g...)
	rec = append(rec, d.publication(rec)...)
	switch {
	case d.LNMax != nil:
		rec = append(rec, field("reference", "Papernot et al. 2017 (LNMax, Sec. 2.1); Bun and Steinke 2016 (Prop. 3.3); "+o.Conversion.Reference()))
	case d.Filter != nil:
		rec = append(rec, field("reference", "Smith and Thakurta 2022 (fully adaptive composition for Gaussian DP); Dong, Roth and Su 2022 (Gaussian DP); Canonne, Kamath and Steinke 2020 (the discrete Gaussian)"))
	default:
		rec = append(rec, field("reference", "Papernot et al. 2018 (Theorem 6, Proposition 7, smooth sensitivity and GNSS); "+o.Conversion.Reference()))
	}
	var warnings []string
	if d.seededLabels() {
		warnings = append(warnings, seededLabels)
	}
	if l := d.Options.Labels; l != nil && l.Meta() == nil {
		warnings = append(warnings, unstatedLabels)
	}
	if d.Seed != nil {
		rec = append(rec, field("seed", *d.Seed))
		warnings = append(warnings, NotForRelease)
	}
	if len(warnings) > 0 {
		rec = append(rec, field("warning", strings.Join(warnings, "; ")))
	}
	if f == cliout.Table && d.seededLabels() {
		// First, as a seeded release's summary says it.
		t := cliout.NewText(w)
		t.Line("*** NOT FOR RELEASE: the labels were drawn from a seeded generator: publish nothing of them ***")
		if err := t.Close(); err != nil {
			return err
		}
	}
	return writeMarked(w, f, rec, d.marks(), d.tags())
}

// seededLabels is what account pate says of labels drawn from a seeded
// generator: nothing of them may be published.
const seededLabels = "NOT FOR RELEASE: the labels were drawn from a seeded generator (their header's for_release is false), " +
	"so anyone who knows the seed can remove their noise: publish nothing of them, no total either; " +
	"eps_guarantee is what the release would guarantee with its noise from crypto/rand (analysis)"

// unstatedLabels is what account pate says of labels whose file has no
// metadata header: it cannot tell labels of a seeded run from others.
const unstatedLabels = "the labels' file has no metadata header (a NumPy label file has none), so nothing in it says that their noise was secret: " +
	"eps_guarantee holds for labels drawn from crypto/rand, not for those of a seeded run (aggregate --seed), which are not for release"

// seededLabels reports whether the labels accounted for (--labels) say
// that they were drawn from a seeded generator (votefile.LabelMeta.ForRelease).
func (d AccountPATE) seededLabels() bool {
	l := d.Options.Labels
	return l != nil && l.Meta() != nil && !l.Meta().ForRelease
}

// analysisRecord returns the fields of the data-dependent analysis of the
// GNMax family and of its smooth-sensitivity release, with where the
// release shown comes from.
func (d AccountPATE) analysisRecord() cliout.Record {
	o, r := d.Options, d.Result
	var answered any
	if r.Answered >= 0 {
		answered = r.Answered
	}
	var unlabelled any
	if d.Unlabelled > 0 {
		unlabelled = d.Unlabelled
	}
	m, ss := o.GNMax(), d.Smooth
	var t1, s1 any
	if m.Confident() {
		t1, s1 = m.Threshold, m.Sigma1
	}
	params := "data-free"
	if o.Smooth.FromVotes {
		params = "from-votes"
	}
	// The smooth-sensitivity values, null when the release was not
	// prepared, or not drawn.
	prepared := func(v any) any {
		if ss.Error != "" {
			return nil
		}
		return v
	}
	drawn := func(v any) any {
		if !ss.Drawn {
			return nil
		}
		return v
	}
	var order any = ss.Order
	if ss.Order == 0 {
		order = nil
	}
	rec := cliout.Record{
		field("mechanism", o.Mechanism.Name()), field("noise", m.Noise.String()),
		field("threshold", t1), field("sigma1", s1), field("sigma2", m.Sigma2),
		field("teachers", r.Teachers), field("classes", r.Classes), field("abstain", d.Abstain), field("neighbours", neighbours(d.Abstain)),
		field("queries", r.Queries), field("answered", answered), field("expected_answered", r.ExpectedAnswered), field("unlabelled", unlabelled),
		field("delta", o.Delta), field("conversion", o.Conversion.String()), field("directions", r.Directions.String()), field("cost", d.Cost()),
		field("eps_data_independent", r.Independent.Eps), field("order_data_independent", r.Independent.Order),
		field("eps_data_dependent", r.Dependent.Eps), field("order", r.Dependent.Order),
		field("ss_parameters", params), field("ss_order", order), field("beta", prepared(ss.Beta)), field("sigma_ss", prepared(ss.Sigma)),
		field("smooth_sensitivity", prepared(ss.SS)), field("ss_margin", prepared(ss.Margin)),
		field("noise_deviation", prepared(ss.Deviation)), field("gnss_rdp", prepared(ss.GNSS)),
		field("rdp_released", drawn(ss.Released)), field("eps_released", drawn(ss.Eps)),
		field("eps_released_is", drawn(epsReleasedIs)),
		field("ss_noise", "discrete Gaussian on the lattice 2^-40·Z centred at the data-dependent Renyi DP, sampled exactly (its cost includes the lattice's excess over continuous noise, below one ulp)"),
	}
	if ss.Error != "" {
		rec = append(rec, field("smooth_sensitivity_error", ss.Error))
	}
	return append(rec, d.draw()...)
}

// neighbours says which vote matrices the account's bounds take for
// neighbours: the relation of the release, abstentions allowed or not
// (pate.AccountResult.Abstain).
func neighbours(abstain bool) string {
	if abstain {
		return "one changed teacher, whose vote on each query is a class or none (teachers may abstain): " +
			"a vote added, removed or moved between classes, so the votes cast range over 0..K (docs/pate.md, \"Abstaining teachers\")"
	}
	return "one changed teacher, every teacher voting on every query: a vote moved between classes"
}

// epsReleasedIs says what eps_released is wherever it is printed.
const epsReleasedIs = "an estimate of the data-dependent cost, not a bound: the cost plus the smooth-sensitivity noise (Papernot et al. 2018, Section 4), " +
	"below the cost it estimates about half of the time; publish it, if at all, as an estimate beside the guarantee (eps_guarantee), never as the guarantee"

// publish returns the one total to publish, chosen as for every release
// (accountant.Account.Publish, aggregate's choice) among the account's totals
// (pate.AccountResult.Totals: those of a release of its queries, the
// totals aggregate reports for the same labels, or their composition with
// the draws), or the ledger's when it covers everything they do.
func (d AccountPATE) publish() (Publish, error) {
	p := Publish{None: !d.PublishLedger && d.Queries() == 0}
	if d.PublishLedger {
		p.Total = d.Ledger.Publish
	} else {
		var err error
		if p.Total, err = d.Publish(); err != nil {
			return Publish{}, err
		}
	}
	if !p.known() {
		var why string
		if p.Err != nil {
			why = p.Err.Error()
		}
		return p, fmt.Errorf("account pate: no total to publish: %s", why)
	}
	return p, nil
}

// covers says in words what the account's total covers.
func (d AccountPATE) covers() string {
	n := d.Queries()
	what := "any release of the " + plural.Of(n, "query", "queries") + " (every query charged in full, answered or not)"
	switch {
	case d.Filter != nil:
		what = fmt.Sprintf("the release of the %s (%d answered), each draw charged before it was drawn to a Gaussian-DP filter of the budget its labels' header states, which stopped the run when the next query's draws might not fit",
			plural.Of(n, "labelled query", "labelled queries"), d.Filter.Answered)
		if d.Unlabelled > 0 {
			what += "; the " + plural.Of(d.Unlabelled, "query", "queries") + " after the last label were not released"
		}
	case d.PTR != nil:
		t := d.Options.Labels.Meta().Total
		what = fmt.Sprintf("the release of the %s as a whole, its test included (a release by generalized PTR within the budget %v its labels' header states; its plan: order %.4g, proposal %.4g, the test's own %v, false pass <= %.2g)",
			plural.Of(n, "labelled query", "labelled queries"), accountant.Guarantee{Eps: t.BudgetEps, Delta: t.BudgetDelta}, d.PTR.Order, d.PTR.Proposal, d.PTR.Test, d.PTR.FalsePass)
		if d.Unlabelled > 0 {
			what += "; the " + plural.Of(d.Unlabelled, "query", "queries") + " after the last label were not released"
		}
	case d.Realised:
		what = "the release of the " + plural.Of(n, "labelled query", "labelled queries") + " (every query charged in full, answered or not: which were answered is no parameter fixed before the run"
		if d.Unlabelled > 0 {
			what += "; the " + plural.Of(d.Unlabelled, "query", "queries") + " after the last label were not released"
		}
		what += ")"
	}
	if k := len(d.Draws); k > 0 {
		what += " and " + plural.Of(k, "smooth-sensitivity draw", "smooth-sensitivity draws") + " on these votes (every draw recorded on them, with any settings"
		if d.Draw != nil && k > d.Draw.Draws {
			what += ", and this seeded experiment's"
		}
		what += ")"
	}
	return what
}

// guarantee returns the fields of the total to publish (publish): its ε
// and δ, what it covers and by which theorem, the key that names it, and
// what the ledger has spent beside it, labelled as spent (analysis), when
// the ledger's total does not cover everything.
func (d AccountPATE) guarantee() (cliout.Record, error) {
	p, err := d.publish()
	if err != nil {
		return nil, err
	}
	theorem := p.Name() + " (" + p.Reference() + ")"
	switch {
	case p.source() == "ledger":
		theorem = fmt.Sprintf("the total of ledger %s, every release charged to it (these among them), by %s", d.LedgerPath, theorem)
	case len(d.Draws) > 0:
		theorem = "the queries' data-independent Renyi DP (Papernot et al. 2018, Proposition 8; the discrete Gaussian's, Canonne, Kamath and Steinke 2020) and each draw's (GNSS, " +
			"the Renyi divergence of its two Gaussians at the worst pair of neighbours a beta-smooth sensitivity allows; docs/pate.md), added at each order up to the least draw's (Mironov 2017, Proposition 1), converted by Canonne-Kamath-Steinke 2020 Prop. 12, the least over the orders"
	}
	rec := cliout.Record{field("eps_guarantee", p.Guarantee.Eps), field("delta_guarantee", p.Guarantee.Delta), field("guarantee_method", p.Name()),
		field("guarantee", "a bound at delta_guarantee on "+d.covers()+": "+theorem)}
	if p.Inexact != "" {
		rec = append(rec, field("guarantee_note", p.Inexact+"; the total is a looser bound that holds"))
	}
	if l := d.Ledger; l != nil && !d.PublishLedger {
		why := "the labels' header is not vouched for by the ledger (no --labels, or labels without a header)"
		if d.Options.Recorded != nil && d.Options.Labels != nil && d.Options.Labels.Meta() != nil {
			why = "a smooth-sensitivity draw on these votes was not charged to it"
		}
		rec = append(rec, field("ledger_spent_eps", l.Total.Eps), field("ledger_spent_delta", l.Total.Delta),
			field("ledger_spent", "what every release charged to the ledger "+d.LedgerPath+" has spent, by "+l.Composition.String()+
				" (a realised cost, analysis); the ledger's total is not the one to publish here: "+why))
	}
	switch {
	case d.seededLabels():
		return append(rec, field("publish", nil)), nil // nothing: not for release
	case d.ledgerLabels() != "":
		return append(rec, field("publish", "ledger")), nil
	}
	return append(rec, field("publish", "eps_guarantee")), nil
}

// draw returns the fields that say which smooth-sensitivity draw is shown
// and how many are counted: drawn now and recorded, a recorded draw shown
// again, a seeded experiment, or none.
func (d AccountPATE) draw() cliout.Record {
	st := d.Draw
	if st == nil {
		return nil
	}
	charged := "charged nowhere (no --ledger)"
	if st.Charged != nil {
		charged = fmt.Sprintf("its cost (%s, %s) charged to the ledger %s", cliout.Float(st.Charged.Eps), cliout.Float(st.Charged.Delta), st.Ledger)
	}
	var rec cliout.Record
	switch {
	case st.Experiment:
		return cliout.Record{field("draw", "seeded"), field("draws_recorded", st.Draws),
			field("draw_note", "a reproducible experiment (--seed, see warning): drawn from the seed, neither recorded nor charged; eps_guarantee counts it as a release, with the draws recorded on these votes")}
	case st.Shown && st.Recorded:
		rec = cliout.Record{field("draw", "recorded"), field("drawn_at", st.Time.Format(time.RFC3339)), field("draws_recorded", st.Draws),
			field("draw_note", "the recorded draw of "+st.Time.Format(time.RFC3339)+" with these settings, shown again (no new release): "+charged+"; eps_guarantee covers every draw recorded on these votes")}
	case st.Shown:
		rec = cliout.Record{field("draw", "new"), field("drawn_at", st.Time.Format(time.RFC3339)), field("draws_recorded", st.Draws),
			field("draw_note", "drawn now (--release-estimate), a release of the votes, and recorded: a run without --release-estimate shows it again; another draw on these votes needs --ledger, which is charged; "+
				charged+"; "+drawRecordLimits)}
	case st.Draws > 0:
		rec = cliout.Record{field("draw", "none with these settings"), field("draws_recorded", st.Draws),
			field("draw_note", plural.Of(st.Draws, "draw on these votes is", "draws on these votes are")+" recorded with other settings: not shown, and covered by eps_guarantee; --release-estimate with --ledger draws one with these settings, charged")}
	default:
		return cliout.Record{field("draw", "none"),
			field("draw_note", "nothing drawn: the analysis is computed, not released; --release-estimate draws the smooth-sensitivity estimate, a release of the votes that eps_guarantee then covers")}
	}
	if st.Charged != nil {
		rec = append(rec, field("draw_charged_eps", st.Charged.Eps), field("draw_charged_delta", st.Charged.Delta), field("draw_ledger", st.Ledger))
	}
	return append(rec, field("draw_record", st.Record))
}

// drawRecordLimits says what the record of draws recognises, and so what
// it protects against, wherever a draw is made.
const drawRecordLimits = "the record knows these exact rows (in any order, file or format): it stops a second uncharged draw on them, not one on votes " +
	"with a row dropped, repeated or changed, which are other votes to it; only a ledger (--ledger, charged for each draw) counts every draw"

// marks returns how a table marks each key: the one to publish, the
// totals that are analysis, the values not for publication.
func (d AccountPATE) marks() map[string]string {
	m := map[string]string{}
	for _, k := range d.analysis() {
		m[k] = "analysis"
	}
	if d.Realised {
		m["eps_data_independent"] = "analysis: realised, no guarantee"
	}
	m["eps_released"] = "analysis: an estimate, not a bound"
	for _, k := range d.NotForPublication() {
		m[k] = notForPublication
	}
	m["eps_guarantee"] = "PUBLISH: the guarantee"
	switch {
	case d.seededLabels():
		m["eps_guarantee"] = "NOT FOR RELEASE: publish nothing"
	case d.ledgerLabels() != "":
		m["eps_guarantee"] = "these labels alone: publish the ledger's"
	}
	return m
}

// ledgerLabels returns the id of the ledger that the labels' header says
// they were charged to (votefile.LabelMeta.Ledger) when the account does
// not publish that ledger's total (no --ledger): "" otherwise. The total
// to publish of such labels is the ledger's, for every release charged to
// it; eps_guarantee bounds these labels alone.
func (d AccountPATE) ledgerLabels() string {
	if d.PublishLedger || d.Options.Labels == nil || d.Options.Labels.Meta() == nil {
		return ""
	}
	return d.Options.Labels.Meta().Ledger
}

// analysis lists the totals printed beside the one to publish: each a
// part, an estimate or another composition of it, none the guarantee.
func (d AccountPATE) analysis() []string {
	keys := []string{"eps_data_independent", "eps_per_query", "ledger_spent_eps"}
	if d.Smooth.Drawn && !d.Smooth.FromVotes && !d.seededDraw() {
		keys = append(keys, "eps_released")
	}
	return keys
}

// publication returns the fields that say what of rec may be published:
// the keys of the other totals (analysis), the keys that may not
// (not_for_publication), and the plain line that names the one total to
// publish and what else may be (publication).
func (d AccountPATE) publication(rec cliout.Record) cliout.Record {
	nfp := d.NotForPublication()
	var analysis []string
	for _, k := range d.analysis() {
		for _, f := range rec {
			if f.Key == k && f.Val != nil {
				analysis = append(analysis, k)
			}
		}
	}
	line := "publish eps_guarantee at delta_guarantee as the guarantee (a bound; its theorem in guarantee)"
	if d.seededLabels() {
		line = seededLabels
	} else if id := d.ledgerLabels(); id != "" {
		line = "these labels were charged to the ledger of id " + id + ": publish that ledger's total, for every release charged to it " +
			"(darrm ledger show LEDGER; here with --ledger LEDGER); eps_guarantee at delta_guarantee bounds these labels alone, as one run, and is analysis"
	}
	if len(analysis) > 0 {
		line += "; " + strings.Join(analysis, ", ") + plural.Word(len(analysis), " is", " are") + " analysis, not the guarantee"
	}
	if slices.Contains(analysis, "eps_released") {
		line += " (eps_released an estimate of the data-dependent cost, not a bound, which may be published only as such)"
	}
	note := costNote[d.Cost()]
	if d.PTR != nil {
		note = realisedNote + "; eps_guarantee is the total the release published by generalized PTR, its test included, recomputed from its budget, its settings and the queries labelled"
	}
	line += "; the settings and counts not marked may be published; the values marked not for publication are computed from the private votes; " + note
	if d.Result.Directions == pate.OneSided && d.LNMax == nil {
		line += "; the data-dependent values, released ones too, bound one direction of the Renyi divergence only (the PATE paper's Theorem 6 as stated), which is no differential-privacy guarantee"
	}
	switch {
	case d.LNMax == nil && d.Smooth.FromVotes:
		line += "; the smooth-sensitivity parameters were chosen from the votes (--ss-parameters from-votes), so eps_released is not for publication"
	case d.seededDraw():
		line += "; the smooth-sensitivity draw is a seeded experiment (--seed), whose noise anyone who knows the seed can remove, so eps_released and rdp_released are not for publication"
	}
	return cliout.Record{field("analysis", analysis), field("not_for_publication", nfp), field("publication", line)}
}

// tags returns the names a table gives the account's costs: an expected
// or realised cost and a one-sided bound say so, and the released eps
// that it is an estimate.
func (d AccountPATE) tags() map[string]string {
	var tags []string
	if c := d.Cost(); c == "expected" || c == "realised" {
		tags = append(tags, c)
	}
	if d.Result.Directions == pate.OneSided {
		tags = append(tags, "one-sided")
	}
	out := map[string]string{}
	for _, k := range []string{"eps_data_independent", "eps_data_dependent", "rdp_released", "eps_released"} {
		t := tags
		if k == "eps_data_independent" {
			t = slices.DeleteFunc(slices.Clone(tags), func(s string) bool { return s != "realised" })
		}
		if k == "eps_released" {
			t = append([]string{"estimate"}, t...)
		}
		if len(t) > 0 {
			out[k] = k + " (" + strings.Join(t, ", ") + ")"
		}
	}
	return out
}

// isTotal reports whether key names a privacy total (an ε or its δ),
// which a table rounds up.
func isTotal(key string) bool {
	return strings.HasPrefix(key, "eps_") || key == "delta_guarantee" || strings.HasPrefix(key, "ledger_spent_")
}

// markedCell is the widest text a table of writeMarked prints in its
// value column (beside the key and its mark); a wider one is a numbered
// note under the table.
const markedCell = 30

// writeMarked prints rec in format f: JSON and CSV as they are; a table of
// the values, each marked as marks says and named as names says (its key
// otherwise), with the empty ones left out and each text wider than a
// cell (markedCell) a numbered note under it.
func writeMarked(w io.Writer, f cliout.Format, rec cliout.Record, marks map[string]string, names map[string]string) error {
	if f != cliout.Table {
		return cliout.WriteRecord(w, f, rec)
	}
	t := cliout.NewText(w)
	var rows [][]string
	for _, fl := range rec {
		value := cliout.Record{fl}.Values(false)[0]
		switch v := fl.Val.(type) {
		case nil:
			continue
		case string:
			if utf8.RuneCountInString(v) > markedCell {
				value = t.Note(v)
			}
		case []string:
			continue // the lists say what the marks say
		case float64:
			if isTotal(fl.Key) {
				value = decimal.FormatBound(v) // never read smaller than it is, as aggregate prints it
			}
		}
		name := fl.Key
		if n, ok := names[fl.Key]; ok {
			name = n
		}
		rows = append(rows, []string{name, value, marks[fl.Key]})
	}
	t.Table([]string{"quantity", "value", "publication"}, rows)
	return t.Close()
}
