package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/pate"
)

// AccountPATE is the document of darrm account pate: the account
// (pate.Account), the seed of a reproducible smooth-sensitivity release or
// else where its draw comes from (Draw: drawn now, or recorded before),
// and, when the draw was charged to a ledger, the ledger's total after it.
type AccountPATE struct {
	*pate.AccountResult
	Seed        *uint64
	Draw        *pate.DrawState
	LedgerTotal *LedgerTotal
}

// LedgerTotal is a ledger's total spent, by its composition.
type LedgerTotal struct {
	accountant.Guarantee
	Composition string
}

// A value may be published when it is a function of the release's outputs
// and of parameters fixed before the votes were seen; the documents of
// account pate and darrm pate mark every other value where they print it
// (not_for_publication) and say in one line what may be published.
const notForPublication = "not for publication"

// NotForPublication lists the fields of AccountPATE that are functions of
// the votes: every data-dependent quantity, the expected number of
// answers, and the parameters of the smooth-sensitivity release, with
// what it released, when they were chosen from the votes.
func (d AccountPATE) NotForPublication() []string {
	if d.LNMax != nil {
		return []string{}
	}
	out := []string{"eps_data_dependent", "order", "smooth_sensitivity", "noise_deviation"}
	if d.Options.GNMax.Confident() && !d.Realised {
		out = append(out, "expected_answered")
	}
	if d.Draw != nil {
		out = append(out, "draw_record") // named by a hash of the votes
	}
	if d.Smooth.FromVotes {
		out = append(out, "ss_order", "beta", "sigma_ss", "ss_margin", "gnss_rdp", "rdp_released", "eps_released", "smooth_sensitivity_error")
	}
	return out
}

// Cost says what the account charges: "expected" over the threshold
// noise (Confident-GNMax without a release's labels: no run's cost),
// "realised" (a release's answers), or "any release" (GNMax and LNMax
// without labels, whose every release answers every query).
func (d AccountPATE) Cost() string {
	switch {
	case d.Realised:
		return "realised"
	case d.LNMax == nil && d.Options.GNMax.Confident():
		return "expected"
	}
	return "any release"
}

// costNote says in words what Cost means.
var costNote = map[string]string{
	"expected": "eps_data_independent bounds any release of these queries; eps_data_dependent and eps_released are expected costs over the threshold noise " +
		"(Pr[answer] times the GNMax step's cost), no actual run's guarantee: account a release's labels (--labels) for its realised cost",
	"realised":    "every eps is the release's realised cost, its labels as answered and withheld",
	"any release": "every release of these queries answers each of them: the costs are any release's",
}

// Write prints the document in format f.
func (d AccountPATE) Write(w io.Writer, f cliout.Format) error {
	o := d.Options
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
		rec := cliout.Record{
			field("mechanism", o.Mechanism), field("noise", "discrete Laplace"), field("laplace_scale", o.LNMax.Scale),
			field("teachers", d.Teachers), field("classes", d.Classes),
			field("queries", r.Queries), field("expected_answered", float64(r.Queries)),
			field("delta", o.Delta), field("conversion", o.Conversion.String()), field("cost", d.Cost()),
			field("eps_per_query", r.PerQuery.Eps),
			field("eps_data_independent", r.Eps), field("order_data_independent", order), field("bound", bound),
			field("eps_data_dependent", nil), field("eps_released", nil),
			field("data_dependent", "not offered for lnmax: darrm gives its data-independent guarantee only (each query (2/b, 0)-DP; the total the smallest of Q·2/b, the Renyi composition of min(2/b, lambda·2/b²) and the exact composition of its noise)"),
		}
		g, err := d.guarantee()
		if err != nil {
			return err
		}
		rec = append(rec, g...)
		rec = append(rec, d.publication(rec)...)
		rec = append(rec, field("reference", "Papernot et al. 2017 (LNMax, Sec. 2.1); Bun and Steinke 2016 (Prop. 3.3); "+o.Conversion.Reference()))
		return writeMarked(w, f, rec, d.marks(), nil)
	}
	r := d.Result
	var answered any
	if r.Answered >= 0 {
		answered = r.Answered
	}
	m, ss := o.GNMax, d.Smooth
	var t1, s1 any
	if m.Confident() {
		t1, s1 = m.Threshold, m.Sigma1
	}
	params := "data-free"
	if o.Smooth.FromVotes {
		params = "from-votes"
	}
	// The smooth-sensitivity values, null when the release was not drawn.
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
		field("mechanism", o.Mechanism), field("noise", m.Noise.String()),
		field("threshold", t1), field("sigma1", s1), field("sigma2", m.Sigma2),
		field("teachers", r.Teachers), field("classes", r.Classes),
		field("queries", r.Queries), field("answered", answered), field("expected_answered", r.ExpectedAnswered),
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
	rec = append(rec, d.draw()...)
	g, err := d.guarantee()
	if err != nil {
		return err
	}
	rec = append(rec, g...)
	rec = append(rec, d.publication(rec)...)
	rec = append(rec, field("reference", "Papernot et al. 2018 (Theorem 6, Proposition 7, smooth sensitivity and GNSS); "+o.Conversion.Reference()))
	if d.Seed != nil {
		rec = append(rec, field("seed", *d.Seed), field("warning", NotForRelease))
	}
	return writeMarked(w, f, rec, d.marks(), d.tags())
}

// epsReleasedIs says what eps_released is wherever it is printed.
const epsReleasedIs = "an estimate of the data-dependent cost, not a bound: the cost plus the smooth-sensitivity noise (Papernot et al. 2018, Section 4), " +
	"below the cost it estimates about half of the time; publish it, if at all, as an estimate beside the guarantee (eps_guarantee), never as the guarantee"

// publishKey is the key of the one total to publish: the ledger's when
// this run charged one, else the run's guarantee; the run's when the
// ledger's is below it, since that ledger cannot hold every release the
// run's covers (the labels were not charged to it).
func (d AccountPATE) publishKey() string {
	if l := d.LedgerTotal; l != nil {
		if eps, _, err := d.Guarantee(); err == nil && l.Eps >= eps {
			return "ledger_total_eps"
		}
	}
	return "eps_guarantee"
}

// guarantee returns the fields of the bound to publish
// (pate.AccountResult.Guarantee), with its theorem, and of the ledger's
// total when this run charged one.
func (d AccountPATE) guarantee() (cliout.Record, error) {
	eps, covers, err := d.Guarantee()
	if err != nil {
		return nil, err
	}
	o := d.Options
	theorem := "Renyi DP of the Gaussian mechanism on the counts (Papernot et al. 2018, Proposition 8; the discrete Gaussian's, Canonne, Kamath and Steinke 2020), composed over the queries"
	converted := true
	switch {
	case d.LNMax != nil && d.LNMax.Pure:
		theorem, converted = "pure composition of the queries' (2/b, 0)-DP (Papernot et al. 2017; Dwork and Roth 2014, Thm 3.16)", false
	case d.LNMax != nil && d.LNMax.Exact:
		theorem, converted = "exact composition of the noise: each of the two counts a vote moves is, under discrete Laplace noise, randomized response with eps 1/b, and the 2Q of them compose by Kairouz-Oh-Viswanath 2015 Thm 3.3 (accountant.ComposeRun)", false
	case d.LNMax != nil:
		theorem = "Renyi composition of the queries' min(2/b, lambda·2/b²) (Bun and Steinke 2016, Prop. 3.3)"
	case d.Smooth.Drawn && !d.Smooth.FromVotes:
		theorem += ", and the smooth-sensitivity release's Renyi DP (Papernot et al. 2018, Theorem 23) added at its order (Mironov 2017, Proposition 1)"
	case d.Result.Run.Method == accountant.Exact:
		theorem, converted = "every query charged, its noise composed exactly: "+accountant.Exact.Reference()+" (accountant.ComposeRun)", false
	}
	if converted {
		theorem += "; converted to (eps, delta) by " + o.Conversion.Reference()
	}
	rec := cliout.Record{field("eps_guarantee", eps), field("guarantee", "a bound at delta "+cliout.Float(o.Delta)+" on "+covers+": "+theorem)}
	if l := d.LedgerTotal; l != nil {
		what := "a bound on every release charged to the ledger, this run's draw included, by " + l.Composition + " composition"
		if d.publishKey() != "ledger_total_eps" {
			what += "; below eps_guarantee, so the ledger does not hold every release that covers (were the labels charged to it?)"
		}
		rec = append(rec, field("ledger_total_eps", l.Eps), field("ledger_total_delta", l.Delta), field("ledger_total", what))
	}
	return append(rec, field("publish", d.publishKey())), nil
}

// draw returns the fields that say where the smooth-sensitivity release
// comes from: drawn now and recorded, a recorded draw shown again, or a
// seeded experiment.
func (d AccountPATE) draw() cliout.Record {
	st := d.Draw
	switch {
	case d.Seed != nil && d.Smooth.Drawn:
		return cliout.Record{field("draw", "seeded"), field("draw_note", "a reproducible experiment (--seed, see warning): drawn from the seed, neither recorded nor charged")}
	case st == nil:
		return nil
	}
	charged := "charged nowhere (no --ledger)"
	if st.Charged != nil {
		charged = fmt.Sprintf("its cost (%s, %s) charged to the ledger %s", cliout.Float(st.Charged.Eps), cliout.Float(st.Charged.Delta), st.Ledger)
	}
	kind, note := "new", "drawn now and recorded: a rerun on the same votes and settings shows this value again; --new-draw with --ledger draws again and charges it; "+charged
	if st.Recorded {
		kind, note = "recorded", "the recorded draw of "+st.Time.Format(time.RFC3339)+", shown again (no new release): "+charged+"; --new-draw with --ledger draws again and charges it"
	}
	rec := cliout.Record{field("draw", kind), field("drawn_at", st.Time.Format(time.RFC3339)), field("draws_recorded", st.Draws)}
	if st.Charged != nil {
		rec = append(rec, field("draw_charged_eps", st.Charged.Eps), field("draw_charged_delta", st.Charged.Delta), field("draw_ledger", st.Ledger))
	}
	return append(rec, field("draw_record", st.Record), field("draw_note", note))
}

// marks returns how a table marks each key: the one to publish, the
// totals that are analysis, the values not for publication.
func (d AccountPATE) marks() map[string]string {
	m := map[string]string{}
	for _, k := range d.analysis() {
		m[k] = "analysis"
	}
	m["eps_released"] = "analysis: an estimate, not a bound"
	for _, k := range d.NotForPublication() {
		m[k] = notForPublication
	}
	m[d.publishKey()] = "PUBLISH: the guarantee"
	return m
}

// analysis lists the totals printed beside the one to publish: each a
// part, an estimate or another composition of it, none the guarantee.
func (d AccountPATE) analysis() []string {
	keys := []string{"eps_data_independent", "eps_per_query", "eps_guarantee", "ledger_total_eps"}
	keys = slices.DeleteFunc(keys, func(k string) bool { return k == d.publishKey() })
	if d.Smooth.Drawn && !d.Smooth.FromVotes {
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
	line := "publish " + d.publishKey() + " as the guarantee (a bound; its theorem in " + map[string]string{"eps_guarantee": "guarantee", "ledger_total_eps": "ledger_total"}[d.publishKey()] + ")"
	if len(analysis) > 0 {
		line += "; " + strings.Join(analysis, ", ") + " are analysis, not the guarantee"
	}
	if slices.Contains(analysis, "eps_released") {
		line += " (eps_released an estimate of the data-dependent cost, not a bound, which may be published only as such)"
	}
	line += "; the settings and counts not marked may be published; the values marked not for publication are computed from the private votes; " + costNote[d.Cost()]
	if d.Result.Directions == noisymax.OneSided && d.LNMax == nil {
		line += "; the data-dependent values, released ones too, bound one direction of the Renyi divergence only (the PATE paper's Theorem 6 as stated), which is no differential-privacy guarantee"
	}
	if d.LNMax == nil && d.Smooth.FromVotes {
		line += "; the smooth-sensitivity parameters were chosen from the votes (--ss-parameters from-votes), so eps_released is not for publication"
	}
	return cliout.Record{field("analysis", analysis), field("not_for_publication", nfp), field("publication", line)}
}

// tags returns the names a table gives the data-dependent values: the
// released eps says it is an estimate, and an expected cost and a
// one-sided bound say so.
func (d AccountPATE) tags() map[string]string {
	var tags []string
	if d.Cost() == "expected" {
		tags = append(tags, "expected")
	}
	if d.Result.Directions == noisymax.OneSided {
		tags = append(tags, "one-sided")
	}
	out := map[string]string{}
	for _, k := range []string{"eps_data_dependent", "rdp_released", "eps_released"} {
		t := tags
		if k == "eps_released" {
			t = append([]string{"estimate"}, tags...)
		}
		if len(t) > 0 {
			out[k] = k + " (" + strings.Join(t, ", ") + ")"
		}
	}
	return out
}

// writeMarked prints rec in format f: JSON and CSV as they are; a table of
// the values, each marked as marks says and named as names says (its key
// otherwise), with the empty ones left out and the texts (strings longer
// than a cell) below it, one a line.
func writeMarked(w io.Writer, f cliout.Format, rec cliout.Record, marks map[string]string, names map[string]string) error {
	if f != cliout.Table {
		return cliout.WriteRecord(w, f, rec)
	}
	var rows [][]string
	var texts []string
	for _, fl := range rec {
		switch v := fl.Val.(type) {
		case nil:
			continue
		case string:
			if len(v) > 30 {
				texts = append(texts, fl.Key+": "+v)
				continue
			}
		case []string:
			continue // the lists say what the marks say
		}
		mark := marks[fl.Key]
		name := fl.Key
		if n, ok := names[fl.Key]; ok {
			name = n
		}
		rows = append(rows, []string{name, cliout.Record{fl}.Values(false)[0], mark})
	}
	if err := cliout.WriteTable(w, []string{"quantity", "value", "publication"}, rows); err != nil {
		return err
	}
	for _, s := range texts {
		if _, err := fmt.Fprintln(w, s); err != nil {
			return err
		}
	}
	return nil
}
