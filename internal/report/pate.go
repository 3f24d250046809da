package report

import (
	"io"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/cliout"
)

// AccountPATE is the document of darrm account pate.
type AccountPATE struct {
	// Mechanism is gnmax, confident-gnmax (Mech) or lnmax (LNMax).
	Mechanism  string
	Mech       accountant.ConfidentGNMax
	LNMax      *accountant.LNMaxResult
	Scale      float64
	Teachers   int
	Classes    int
	Conversion accountant.Conversion
	Delta      float64
	// Result is the GNMax family's account; Realised says it is of a
	// release's labels (--labels).
	Result   accountant.PATEResult
	Realised bool
	// Smooth sensitivity at SSOrder: nil fields when it was not computed
	// (SSError says why). Margin is added to SS for the evaluation's
	// rounding; Deviation is the noise's; Released is the noisy
	// data-dependent Renyi DP drawn on the lattice, GNSS the release's own
	// cost, EpsReleased their sum converted at SSOrder.
	SSOrder            float64
	Beta, SS, Margin   *float64
	SigmaSS, Deviation *float64
	GNSS, Released     *float64
	EpsReleased        *float64
	SSFixed            bool
	SSError            string
	Seed               *uint64
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
	if d.Mech.Confident() && !d.Realised {
		out = append(out, "expected_answered")
	}
	if !d.SSFixed {
		out = append(out, "ss_order", "beta", "sigma_ss", "gnss_rdp", "rdp_released", "eps_released")
	}
	return out
}

// Write prints the document in format f.
func (d AccountPATE) Write(w io.Writer, f cliout.Format) error {
	if d.LNMax != nil {
		r := d.LNMax
		var order any = r.RDP.Order
		bound := "Renyi composition"
		if r.Pure {
			order, bound = nil, "pure composition Q·2/b"
		}
		rec := cliout.Record{
			field("mechanism", d.Mechanism), field("noise", "discrete Laplace"), field("laplace_scale", d.Scale),
			field("teachers", d.Teachers), field("classes", d.Classes),
			field("queries", r.Queries), field("expected_answered", float64(r.Queries)),
			field("delta", d.Delta), field("conversion", d.Conversion.String()),
			field("eps_per_query", r.PerQuery.Eps),
			field("eps_data_independent", r.Eps), field("order_data_independent", order), field("bound", bound),
			field("eps_data_dependent", nil), field("eps_released", nil),
			field("data_dependent", "not offered for lnmax: darrm gives its data-independent guarantee only (each query (2/b, 0)-DP; the total the smaller of Q·2/b and the Renyi composition of min(2/b, lambda·2/b²))"),
			field("not_for_publication", d.NotForPublication()),
			field("reference", "Papernot et al. 2017 (LNMax, Sec. 2.1); Bun and Steinke 2016 (Prop. 3.3); "+d.Conversion.Reference()),
		}
		return cliout.WriteRecord(w, f, rec)
	}
	r := d.Result
	var answered any
	if r.Answered >= 0 {
		answered = r.Answered
	}
	var t1, s1 any
	if d.Mech.Confident() {
		t1, s1 = d.Mech.Threshold, d.Mech.Sigma1
	}
	params := "chosen from the votes (not private: eps_released is then not for publication; fix --ss-order, --beta and --sigma-ss to publish it)"
	if d.SSFixed {
		params = "fixed by the flags"
	}
	rec := cliout.Record{
		field("mechanism", d.Mechanism), field("noise", d.Mech.Noise.String()),
		field("threshold", t1), field("sigma1", s1), field("sigma2", d.Mech.Sigma2),
		field("teachers", r.Teachers), field("classes", r.Classes),
		field("queries", r.Queries), field("answered", answered), field("expected_answered", r.ExpectedAnswered),
		field("delta", d.Delta), field("conversion", d.Conversion.String()),
		field("eps_data_independent", r.Independent.Eps), field("order_data_independent", r.Independent.Order),
		field("eps_data_dependent", r.Dependent.Eps), field("order", r.Dependent.Order),
		field("ss_order", d.SSOrder), field("beta", d.Beta), field("smooth_sensitivity", d.SS), field("ss_margin", d.Margin),
		field("sigma_ss", d.SigmaSS), field("noise_deviation", d.Deviation), field("gnss_rdp", d.GNSS),
		field("rdp_released", d.Released), field("eps_released", d.EpsReleased), field("ss_parameters", params),
		field("ss_noise", "discrete Gaussian on the lattice 2^-40·Z centred at the data-dependent Renyi DP, sampled exactly (its cost includes the lattice's excess over continuous noise, below one ulp)"),
	}
	if d.SSError != "" {
		rec = append(rec, field("smooth_sensitivity_error", d.SSError))
	}
	rec = append(rec, field("not_for_publication", d.NotForPublication()),
		field("reference", "Papernot et al. 2018 (Theorem 6, Proposition 7, smooth sensitivity and GNSS); "+d.Conversion.Reference()))
	if d.Seed != nil {
		rec = append(rec, field("seed", *d.Seed), field("warning", NotForRelease))
	}
	return cliout.WriteRecord(w, f, rec)
}
