package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/pate"
)

// AccountPATE is the document of darrm account pate: the account
// (pate.Account) and the seed of a reproducible smooth-sensitivity
// release.
type AccountPATE struct {
	*pate.Accounting
	Seed *uint64
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
		if r.Pure {
			order, bound = nil, "pure composition Q·2/b"
		}
		rec := cliout.Record{
			field("mechanism", o.Mechanism), field("noise", "discrete Laplace"), field("laplace_scale", o.LNMax.Scale),
			field("teachers", d.Teachers), field("classes", d.Classes),
			field("queries", r.Queries), field("expected_answered", float64(r.Queries)),
			field("delta", o.Delta), field("conversion", o.Conversion.String()), field("cost", d.Cost()),
			field("eps_per_query", r.PerQuery.Eps),
			field("eps_data_independent", r.Eps), field("order_data_independent", order), field("bound", bound),
			field("eps_data_dependent", nil), field("eps_released", nil),
			field("data_dependent", "not offered for lnmax: darrm gives its data-independent guarantee only (each query (2/b, 0)-DP; the total the smaller of Q·2/b and the Renyi composition of min(2/b, lambda·2/b²))"),
		}
		rec = append(rec, d.publication(rec)...)
		rec = append(rec, field("reference", "Papernot et al. 2017 (LNMax, Sec. 2.1); Bun and Steinke 2016 (Prop. 3.3); "+o.Conversion.Reference()))
		return writeMarked(w, f, rec, d.NotForPublication(), nil)
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
	drawn := func(v float64) any {
		if ss.Error != "" {
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
		field("ss_parameters", params), field("ss_order", order), field("beta", drawn(ss.Beta)), field("sigma_ss", drawn(ss.Sigma)),
		field("smooth_sensitivity", drawn(ss.SS)), field("ss_margin", drawn(ss.Margin)),
		field("noise_deviation", drawn(ss.Deviation)), field("gnss_rdp", drawn(ss.GNSS)),
		field("rdp_released", drawn(ss.Released)), field("eps_released", drawn(ss.Eps)),
		field("ss_noise", "discrete Gaussian on the lattice 2^-40·Z centred at the data-dependent Renyi DP, sampled exactly (its cost includes the lattice's excess over continuous noise, below one ulp)"),
	}
	if ss.Error != "" {
		rec = append(rec, field("smooth_sensitivity_error", ss.Error))
	}
	rec = append(rec, d.publication(rec)...)
	rec = append(rec, field("reference", "Papernot et al. 2018 (Theorem 6, Proposition 7, smooth sensitivity and GNSS); "+o.Conversion.Reference()))
	if d.Seed != nil {
		rec = append(rec, field("seed", *d.Seed), field("warning", NotForRelease))
	}
	return writeMarked(w, f, rec, d.NotForPublication(), d.tags())
}

// publication returns the fields that say what of rec may be published:
// the keys that may not (not_for_publication), and the plain line that
// names what may (publication).
func (d AccountPATE) publication(rec cliout.Record) cliout.Record {
	nfp := d.NotForPublication()
	line := "publish only " + publishable(rec, nfp) + "; the values marked not for publication are computed from the private votes; " + costNote[d.Cost()]
	if d.Result.Directions == accountant.OneSided && d.LNMax == nil {
		line += "; the data-dependent values, released ones too, bound one direction of the Renyi divergence only (the PATE paper's Theorem 6 as stated), which is no differential-privacy guarantee"
	}
	if d.LNMax == nil && d.Smooth.FromVotes {
		line += "; the smooth-sensitivity parameters were chosen from the votes (--ss-parameters from-votes), so eps_released is not for publication"
	}
	return cliout.Record{field("not_for_publication", nfp), field("publication", line)}
}

// tags returns the names a table gives the data-dependent values: an
// expected cost and a one-sided bound say so.
func (d AccountPATE) tags() map[string]string {
	var tags []string
	if d.Cost() == "expected" {
		tags = append(tags, "expected")
	}
	if d.Result.Directions == accountant.OneSided {
		tags = append(tags, "one-sided")
	}
	if len(tags) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, k := range []string{"eps_data_dependent", "rdp_released", "eps_released"} {
		out[k] = k + " (" + strings.Join(tags, ", ") + ")"
	}
	return out
}

// publishable names the privacy values of rec that may be published.
func publishable(rec cliout.Record, nfp []string) string {
	var names []string
	for _, f := range rec {
		if strings.HasPrefix(f.Key, "eps_") && f.Key != "eps_per_query" && f.Val != nil && !slices.Contains(nfp, f.Key) {
			names = append(names, f.Key)
		}
	}
	return strings.Join(names, " and ") + " (with the settings and counts that are not marked)"
}

// writeMarked prints rec in format f: JSON and CSV as they are; a table of
// the values, each marked when its key is in nfp and named as names says
// (its key otherwise), with the empty ones left out and the texts
// (strings longer than a cell) below it, one a line.
func writeMarked(w io.Writer, f cliout.Format, rec cliout.Record, nfp []string, names map[string]string) error {
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
		mark := ""
		if slices.Contains(nfp, fl.Key) {
			mark = notForPublication
		}
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
