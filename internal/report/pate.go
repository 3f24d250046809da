package report

import (
	"io"

	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/pate"
)

// AccountPATE is the document of darrm account pate: the account
// (pate.Account) and the seed of a reproducible smooth-sensitivity
// release.
type AccountPATE struct {
	*pate.Accounting
	Seed *uint64
}

// NotForPublication lists the fields of AccountPATE that are functions of
// the votes: every data-dependent quantity, the expected number of
// answers, and the parameters of the smooth-sensitivity release, with
// what it released, unless they were fixed in advance.
func (d AccountPATE) NotForPublication() []string {
	if d.LNMax != nil {
		return []string{}
	}
	out := []string{"eps_data_dependent", "order", "smooth_sensitivity", "noise_deviation"}
	if d.Options.GNMax.Confident() && !d.Realised {
		out = append(out, "expected_answered")
	}
	if !d.Smooth.Fixed {
		out = append(out, "ss_order", "beta", "sigma_ss", "gnss_rdp", "rdp_released", "eps_released")
	}
	return out
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
			field("delta", o.Delta), field("conversion", o.Conversion.String()),
			field("eps_per_query", r.PerQuery.Eps),
			field("eps_data_independent", r.Eps), field("order_data_independent", order), field("bound", bound),
			field("eps_data_dependent", nil), field("eps_released", nil),
			field("data_dependent", "not offered for lnmax: darrm gives its data-independent guarantee only (each query (2/b, 0)-DP; the total the smaller of Q·2/b and the Renyi composition of min(2/b, lambda·2/b²))"),
			field("not_for_publication", d.NotForPublication()),
			field("reference", "Papernot et al. 2017 (LNMax, Sec. 2.1); Bun and Steinke 2016 (Prop. 3.3); "+o.Conversion.Reference()),
		}
		return cliout.WriteRecord(w, f, rec)
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
	params := "chosen from the votes (not private: eps_released is then not for publication; fix --ss-order, --beta and --sigma-ss to publish it)"
	if ss.Fixed {
		params = "fixed by the flags"
	}
	// The smooth-sensitivity values, null when the release was not drawn.
	drawn := func(v float64) any {
		if ss.Error != "" {
			return nil
		}
		return v
	}
	rec := cliout.Record{
		field("mechanism", o.Mechanism), field("noise", m.Noise.String()),
		field("threshold", t1), field("sigma1", s1), field("sigma2", m.Sigma2),
		field("teachers", r.Teachers), field("classes", r.Classes),
		field("queries", r.Queries), field("answered", answered), field("expected_answered", r.ExpectedAnswered),
		field("delta", o.Delta), field("conversion", o.Conversion.String()),
		field("eps_data_independent", r.Independent.Eps), field("order_data_independent", r.Independent.Order),
		field("eps_data_dependent", r.Dependent.Eps), field("order", r.Dependent.Order),
		field("ss_order", ss.Order), field("beta", drawn(ss.Beta)), field("smooth_sensitivity", drawn(ss.SS)), field("ss_margin", drawn(ss.Margin)),
		field("sigma_ss", drawn(ss.Sigma)), field("noise_deviation", drawn(ss.Deviation)), field("gnss_rdp", drawn(ss.GNSS)),
		field("rdp_released", drawn(ss.Released)), field("eps_released", drawn(ss.Eps)), field("ss_parameters", params),
		field("ss_noise", "discrete Gaussian on the lattice 2^-40·Z centred at the data-dependent Renyi DP, sampled exactly (its cost includes the lattice's excess over continuous noise, below one ulp)"),
	}
	if ss.Error != "" {
		rec = append(rec, field("smooth_sensitivity_error", ss.Error))
	}
	rec = append(rec, field("not_for_publication", d.NotForPublication()),
		field("reference", "Papernot et al. 2018 (Theorem 6, Proposition 7, smooth sensitivity and GNSS); "+o.Conversion.Reference()))
	if d.Seed != nil {
		rec = append(rec, field("seed", *d.Seed), field("warning", NotForRelease))
	}
	return cliout.WriteRecord(w, f, rec)
}
