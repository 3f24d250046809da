package report

import (
	"io"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/experiments/shuffleexp"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noisymax"
)

// The documents of darrm account's subcommands. Each is one record, or
// rows that share their common fields, printed by cliout.WriteRecord or
// WriteRecords: the keys, in their order, are stable. The columns rdp
// (the RDP ε at the order used, ρ·α or λ/σ²) and ratio (of two σ) are the
// accountant's results put side by side, not new privacy quantities.

// AccountCompose is the document of darrm account compose: Steps
// composed Step-DP steps, by Method with slack DeltaPrime, are Total-DP.
type AccountCompose struct {
	Method      accountant.Method
	DeltaPrime  float64
	Steps       int
	Step, Total accountant.Guarantee
}

// Write prints the document in format f.
func (d AccountCompose) Write(w io.Writer, f cliout.Format) error {
	r := composed(d.Method, d.DeltaPrime, field("steps", d.Steps), field("step_eps", d.Step.Eps), field("step_delta", d.Step.Delta))
	return cliout.WriteRecord(w, f, append(r, totalFields(f, d.Total.Eps, d.Total.Delta)...))
}

// AccountQueries is the document of darrm account queries: at most
// Queries Step-DP queries, composed by Method with slack DeltaPrime, stay
// within Budget; together they are Total-DP (when Queries > 0).
type AccountQueries struct {
	Method       accountant.Method
	DeltaPrime   float64
	Step, Budget accountant.Guarantee
	Queries      int
	Total        accountant.Guarantee
}

// Write prints the document in format f.
func (d AccountQueries) Write(w io.Writer, f cliout.Format) error {
	r := composed(d.Method, d.DeltaPrime, field("step_eps", d.Step.Eps), field("step_delta", d.Step.Delta),
		field("budget_eps", d.Budget.Eps), field("budget_delta", d.Budget.Delta))
	r = append(r, field("queries", d.Queries))
	switch {
	case d.Queries > 0:
		r = append(r, totalFields(f, d.Total.Eps, d.Total.Delta)...)
	case f == cliout.CSV:
		// No query fits, so there is no total: empty cells, as ledger
		// show writes a value it lacks, so that every run of a sweep of
		// budgets has the same columns.
		r = append(r, field("eps", ""), field("delta", ""))
	}
	return cliout.WriteRecord(w, f, r)
}

// AccountStepEps is the document of darrm account step-eps: Step is the
// largest per-step ε whose Steps-fold composition, with per-step δ
// StepDelta, by Method with slack DeltaPrime, has ε at most BudgetEps;
// that composition is Total-DP.
type AccountStepEps struct {
	Method               accountant.Method
	DeltaPrime           float64
	Steps                int
	BudgetEps, StepDelta float64
	Step                 float64
	Total                accountant.Guarantee
}

// Write prints the document in format f.
func (d AccountStepEps) Write(w io.Writer, f cliout.Format) error {
	r := composed(d.Method, d.DeltaPrime, field("steps", d.Steps), field("budget_eps", d.BudgetEps), field("step_delta", d.StepDelta))
	return cliout.WriteRecord(w, f, append(append(r, field("step_eps", SettingIn(f, d.Step, false))), totalFields(f, d.Total.Eps, d.Total.Delta)...))
}

// totalFields are the fields eps and delta of a total: rounded up in a
// table (BoundIn), so that it never reads below the JSON's, as ledger show
// and plan print theirs.
func totalFields(f cliout.Format, eps, delta float64) []cliout.Field {
	return []cliout.Field{field("eps", BoundIn(f, eps)), field("delta", BoundIn(f, delta))}
}

// composed starts the record of a composition: the method and its
// reference, fields, and delta' for the methods that use it.
func composed(m accountant.Method, deltaPrime float64, fields ...cliout.Field) cliout.Record {
	r := append(cliout.Record{field("method", m.String()), field("reference", m.Reference())}, fields...)
	if m.Slack() {
		r = append(r, field("delta_prime", deltaPrime))
	}
	return r
}

// AccountGaussian is the document of darrm account gaussian: Run, whose
// RDP curve has slope Rho, is (Eps, Delta)-DP by Conversion at order
// Alpha.
type AccountGaussian struct {
	Run               accountant.Gaussian
	Rho               float64
	Conversion        accountant.Conversion
	Alpha, Eps, Delta float64
}

// Write prints the document in format f.
func (d AccountGaussian) Write(w io.Writer, f cliout.Format) error {
	return cliout.WriteRecord(w, f, cliout.Record{
		field("sensitivity", d.Run.Sensitivity), field("sigma", d.Run.Sigma), field("steps", d.Run.Steps), field("rho", d.Rho),
		field("conversion", d.Conversion.String()), field("reference", d.Conversion.Reference()),
		field("alpha", d.Alpha), field("rdp", d.Rho*d.Alpha), field("eps", BoundIn(f, d.Eps)), field("delta", BoundIn(f, d.Delta)),
	})
}

// AccountDPSGD is the document of darrm account dpsgd: the sampled
// Gaussian mechanism Run is (Eps, Delta)-DP by Conversion at order Alpha.
type AccountDPSGD struct {
	Run        accountant.SGM
	Conversion accountant.Conversion
	Alpha      int
	Eps, Delta float64
}

// Write prints the document in format f.
func (d AccountDPSGD) Write(w io.Writer, f cliout.Format) error {
	return cliout.WriteRecord(w, f, cliout.Record{
		field("sigma", d.Run.Sigma), field("sampling_rate", d.Run.Q), field("steps", d.Run.Steps),
		field("conversion", d.Conversion.String()), field("reference", "Mironov, Talwar and Zhang 2019 (sampled Gaussian RDP); "+d.Conversion.Reference()),
		field("alpha", d.Alpha), field("eps", BoundIn(f, d.Eps)), field("delta", BoundIn(f, d.Delta)),
	})
}

// AccountGNMax is the document of darrm account gnmax: GNMax's noise for
// each target (ε, Delta), by Search with Conversion, or, for the tight
// search, on the exact curve of the bit that K teachers' votes release.
type AccountGNMax struct {
	Search     noisymax.GNMaxSearch
	Conversion accountant.Conversion
	K          int // the tight search's number of teachers
	Delta      float64
	Rows       []GNMaxNoise
}

// GNMaxNoise is GNMax's noise Sigma, at order Lambda, for a target ε.
type GNMaxNoise struct {
	Eps, Sigma, Lambda float64
}

// tightReference says what the tight search computes.
const tightReference = "exact privacy curve of the released bit of two-class GNMax over K votes, a record changing at most one vote (noisymax.GNMaxSigmaTight)"

// Write prints the document in format f: one record for one target,
// else rows. The tight search has no order, RDP or conversion.
func (d AccountGNMax) Write(w io.Writer, f cliout.Format) error {
	ref := field("reference", d.Conversion.Reference())
	common := cliout.Record{field("search", d.Search.String()), field("conversion", d.Conversion.String()), field("delta", d.Delta)}
	tight := d.Search == noisymax.GNMaxTight
	if tight {
		ref = field("reference", tightReference)
		common = cliout.Record{field("search", d.Search.String()), field("K", d.K), field("delta", d.Delta)}
	}
	rows := make([]cliout.Record, len(d.Rows))
	for i, n := range d.Rows {
		rows[i] = cliout.Record{field("eps", n.Eps), field("sigma", SettingIn(f, n.Sigma, true))}
		if !tight {
			rows[i] = append(rows[i], field("lambda", n.Lambda), field("rdp", n.Lambda/(n.Sigma*n.Sigma)))
		}
	}
	if len(rows) == 1 {
		return cliout.WriteRecord(w, f, append(slices.Insert(common, 2, ref), rows[0]...))
	}
	for i := range rows {
		rows[i] = append(rows[i], ref)
	}
	return cliout.WriteRecords(w, f, common, rows)
}

// AccountShuffleg is the document of darrm account shuffleg: for each
// private algorithm, the ε of a given σ under each conversion
// (shuffleexp.EpsVariants), or its noise calibrated to each target ε in
// the three ways of shuffleexp.NoiseRequest.
type AccountShuffleg struct {
	Delta, G float64
	Epochs   int
	// S, N and ND are the algorithms' parameters as stated (nil: not
	// given); n and n_d are shown when either is.
	S, N, ND *int
	Rows     []shuffleexp.Noise
}

// Write prints the document in format f. The ratio of a calibration is
// its σ over that of the paper's conversion at the exact order.
func (d AccountShuffleg) Write(w io.Writer, f cliout.Format) error {
	common := cliout.Record{field("delta", d.Delta), field("G", d.G), field("epochs", d.Epochs)}
	if d.S != nil {
		common = append(common, field("S", *d.S))
	}
	if d.N != nil || d.ND != nil {
		common = append(common, field("n", valueOf(d.N)), field("n_d", valueOf(d.ND)))
	}
	var rows []cliout.Record
	for _, n := range d.Rows {
		for _, c := range n.Calibrations {
			r := cliout.Record{field("algorithm", n.Plan.Algorithm.String()), field("private_epochs", n.Plan.PrivEpochs)}
			if n.Target == 0 {
				r = append(r, field("sigma", c.Sigma), field("conversion", c.Conversion.String()), field("alpha", c.Alpha), field("eps", BoundIn(f, c.Eps)))
			} else {
				r = append(r, field("eps", n.Target), field("conversion", c.Conversion.String()), field("alpha_rule", c.AlphaRule.String()),
					field("alpha", c.Alpha), field("sigma", SettingIn(f, c.Sigma, true)), field("ratio", c.Sigma/n.Calibrations[1].Sigma))
			}
			rows = append(rows, append(r, field("reference", c.Reference+"; "+c.Conversion.Reference())))
		}
	}
	return cliout.WriteRecords(w, f, common, rows)
}

// AccountRR is the document of darrm account rr: randomized response's
// p_const for Problem, the teachers' majority being (tau·eps, lambda)-DP
// by Method with slack DeltaPrime.
type AccountRR struct {
	Problem    constraints.Problem
	Method     accountant.Method
	DeltaPrime float64
	RR         gamma.RRConst
}

// Write prints the document in format f.
func (d AccountRR) Write(w io.Writer, f cliout.Format) error {
	p := d.Problem
	r := cliout.Record{field("K", p.K), field("eps", p.Eps), field("Delta", p.Delta), field("m", p.M), field("delta", p.TargetDelta), field("method", d.Method.String())}
	if d.Method.Slack() {
		r = append(r, field("delta_prime", d.DeltaPrime))
	}
	return cliout.WriteRecord(w, f, append(r, field("reference", "Lemma B.1.1; tau, lambda by "+d.Method.Reference()),
		field("tau", d.RR.Tau), field("lambda", d.RR.Lambda), field("p_const", d.RR.PConst)))
}

// field is a record's field.
func field(key string, val any) cliout.Field { return cliout.Field{Key: key, Val: val} }
