package report

import (
	"io"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/cliout"
)

// AccountPATE is the document of darrm account pate.
type AccountPATE struct {
	Mechanism  string
	Mech       accountant.ConfidentGNMax
	Conversion accountant.Conversion
	Delta      float64
	Result     accountant.PATEResult
	// Smooth sensitivity at Order: nil fields when it was not computed
	// (SSError says why).
	SSOrder                 float64
	Beta, SS, SigmaSS, GNSS *float64
	EpsReleased             *float64
	SSFixed                 bool
	SSError                 string
	Seed                    *uint64
}

// NotForPublication lists the fields of AccountPATE that are functions of
// the votes and must not be published.
func (d AccountPATE) NotForPublication() []string {
	out := []string{"eps_data_dependent", "order", "smooth_sensitivity"}
	if !d.SSFixed {
		out = append(out, "beta", "sigma_ss", "gnss_rdp")
	}
	return out
}

// Write prints the document in format f.
func (d AccountPATE) Write(w io.Writer, f cliout.Format) error {
	r := d.Result
	var answered any
	if r.Answered >= 0 {
		answered = r.Answered
	}
	var t1, s1 any
	if d.Mech.Confident() {
		t1, s1 = d.Mech.Threshold, d.Mech.Sigma1
	}
	params := "chosen from the votes (not private)"
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
		field("ss_order", d.SSOrder), field("beta", d.Beta), field("smooth_sensitivity", d.SS), field("sigma_ss", d.SigmaSS),
		field("gnss_rdp", d.GNSS), field("eps_released", d.EpsReleased), field("ss_parameters", params),
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
