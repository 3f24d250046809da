package report

import (
	"io"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/experiments/shuffleexp"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/plural"
)

// Shuffleg is the document darrm shuffleg prints: the experiment's report
// (its JSON, with no timing) and, in the table, the time the run took.
type Shuffleg struct {
	*shuffleexp.Report
	Seconds float64
}

// Write renders the document in format f: the report as JSON, its curves
// as CSV, or a table of each algorithm's final values.
func (out Shuffleg) Write(w io.Writer, f cliout.Format) error {
	r := out.Report
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, r)
	case cliout.CSV:
		return r.WriteCurves(w)
	}
	t := cliout.NewText(w)
	t.Line("DP-ShuffleG: task %s (%s) on %s: n = %d private, %d public samples, d = %d", r.Task, r.Objective, r.Dataset, r.N, r.NPublic, r.D)
	t.Line("order %s, %s, p = %g, clip %g, %s per learning rate (%s)", r.Order, plural.Of(r.Epochs, "epoch", "epochs"), r.Fraction, r.Clip, plural.Of(r.Runs, "run", "runs"), r.LRSearch)
	t.Line("non-private optimum G(x*) = %.10g (%s)", r.Optimum.Value, r.Optimum.Method)
	header := []string{"algorithm", "lr", "sigma", "eps", "final excess", "std", "final loss", "std"}
	var rows [][]string
	for _, a := range r.Results {
		lr := cliout.FloatN(a.LR, 3)
		if !a.Contractive {
			lr += " (!)"
		}
		sigma, eps := "-", "0"
		if a.Sigma > 0 {
			// eps, the calibration's bound, rounded up as every table
			// prints one (decimal.FormatBound): never below the JSON's.
			sigma, eps = cliout.FloatN(a.Sigma, 4), decimal.FormatBound(a.Eps)
		}
		rows = append(rows, []string{a.Label, lr, sigma, eps,
			cliout.FloatN(a.FinalExcessMean, 4), cliout.FloatN(a.FinalExcessStd, 3),
			cliout.FloatN(a.FinalLossMean, 6), cliout.FloatN(a.FinalLossStd, 3)})
	}
	t.Table(header, rows)
	for _, n := range r.Notes {
		t.Line("note: %s", n)
	}
	t.Line("%.1f s", out.Seconds)
	return t.Close()
}

// Rows are the final values of each algorithm of the report, as a figure
// draws them.
func (out Shuffleg) Rows() []cliout.Record {
	r := out.Report
	var rows []cliout.Record
	for _, a := range r.Results {
		rows = append(rows, cliout.Record{{Key: "dataset", Val: r.Dataset}, {Key: "thesis_dataset", Val: r.ThesisDataset},
			{Key: "task", Val: r.Task}, {Key: "eps", Val: r.Eps}, {Key: "p", Val: r.Fraction}, {Key: "order", Val: r.Order},
			{Key: "alpha_rule", Val: r.AlphaRule}, {Key: "optimum", Val: r.Optimum.Value}, {Key: "algorithm", Val: a.Label},
			{Key: "lr", Val: a.LR}, {Key: "sigma", Val: a.Sigma}, {Key: "final_loss_mean", Val: a.FinalLossMean}, {Key: "final_loss_std", Val: a.FinalLossStd}})
	}
	return rows
}
