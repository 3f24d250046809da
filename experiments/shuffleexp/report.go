package shuffleexp

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"

	"github.com/darrm/darrm/experiments/datasets"
)

// Report is an experiment and its results as darrm shuffleg prints them in
// JSON: the problem, the settings, the non-private optimum, and for each
// algorithm its calibration, chosen learning rate, curves and grid. The
// JSON names are stable. A report holds no timing, so a seeded
// experiment's report is the same bytes on every run and machine.
type Report struct {
	Task          string         `json:"task"`
	Objective     string         `json:"objective"`
	Dataset       string         `json:"dataset"`
	ThesisDataset bool           `json:"thesis_dataset"`
	N             int            `json:"n"`
	NPublic       int            `json:"n_public"`
	D             int            `json:"d"`
	Eps           float64        `json:"eps"`
	Delta         float64        `json:"delta"`
	Conversion    string         `json:"conversion"`
	AlphaRule     string         `json:"alpha_rule"`
	Order         string         `json:"order"`
	Epochs        int            `json:"epochs"`
	Fraction      float64        `json:"p"`
	Clip          float64        `json:"clip"`
	Runs          int            `json:"runs"`
	LRSearch      string         `json:"lr_search"`
	Seeded        bool           `json:"seeded"`
	Seed          *uint64        `json:"seed,omitempty"`
	Optimum       ReportOptimum  `json:"optimum"`
	Results       []ReportResult `json:"results"`
	Notes         []string       `json:"notes"`
	Split         string         `json:"split"`
}

// ReportOptimum is the non-private optimum G(x*; D) of a report.
type ReportOptimum struct {
	Value    float64 `json:"value"`
	Method   string  `json:"method"`
	Residual float64 `json:"residual"`
}

// ReportResult is one algorithm of a report.
type ReportResult struct {
	Algo            string       `json:"algo"`
	Label           string       `json:"label"`
	FinalLossMean   float64      `json:"final_loss_mean"`
	FinalLossStd    float64      `json:"final_loss_std"`
	FinalExcessMean float64      `json:"final_excess_mean"`
	FinalExcessStd  float64      `json:"final_excess_std"`
	Sigma           float64      `json:"sigma"`
	Eps             float64      `json:"eps"`
	Delta           float64      `json:"delta"`
	Alpha           float64      `json:"alpha,omitempty"`
	Privacy         string       `json:"privacy"`
	LR              float64      `json:"lr"`
	LRBound         *float64     `json:"lr_bound,omitempty"`
	Contractive     bool         `json:"contractive"`
	PrivateEpochs   int          `json:"private_epochs"`
	PrivateSteps    int          `json:"private_steps_per_epoch"`
	LossMean        []float64    `json:"loss_mean"`
	LossStd         []float64    `json:"loss_std"`
	ExcessMean      []float64    `json:"excess_mean"`
	ExcessStd       []float64    `json:"excess_std"`
	Grid            []ReportGrid `json:"grid"`
}

// ReportGrid is one learning rate of an algorithm's grid search.
type ReportGrid struct {
	LR            float64  `json:"lr"`
	Status        string   `json:"status"`
	FinalLossMean *float64 `json:"final_loss_mean,omitempty"`
	FinalLossStd  *float64 `json:"final_loss_std,omitempty"`
}

// NewReport describes experiment e and its results: task names the task
// (e.g. "mean"), data is the catalog entry of the dataset, and lrSearch
// says how the learning rates were chosen.
func NewReport(e *Experiment, results []Result, task string, data datasets.Info, lrSearch string) Report {
	prob := e.Problem
	opt := prob.Optimum()
	r := Report{
		Task: task, Objective: prob.Task.String(), Dataset: data.Name, ThesisDataset: data.Thesis,
		N: prob.N(), NPublic: prob.Public.Len(), D: prob.Dim(),
		Eps: e.Eps, Delta: e.Delta, Conversion: e.Conversion.String(), AlphaRule: e.AlphaRule.String(), Order: e.Order.String(),
		Epochs: e.Epochs, Fraction: e.Fraction, Clip: e.Clip, Runs: e.Runs, LRSearch: lrSearch,
		Seeded: e.Seed != nil, Seed: e.Seed,
		Optimum: ReportOptimum{Value: opt.Value, Method: opt.Method, Residual: opt.Residual},
		Notes:   e.Notes(results),
		Split:   data.Split,
	}
	for _, res := range results {
		lm, ls := res.FinalLoss()
		em, es := res.FinalExcess()
		a := ReportResult{
			Algo: res.Algorithm.String(), Label: res.Label, FinalLossMean: lm, FinalLossStd: ls, FinalExcessMean: em, FinalExcessStd: es,
			Sigma: res.Calibration.Sigma, Eps: res.Calibration.Eps, Delta: res.Calibration.Delta, Alpha: res.Calibration.Alpha,
			Privacy: res.Algorithm.Reference(), LR: res.LR, Contractive: res.Contractive,
			PrivateEpochs: res.Plan.PrivEpochs, PrivateSteps: res.Plan.ND,
			LossMean: res.LossMean, LossStd: res.LossStd, ExcessMean: res.ExcessMean, ExcessStd: res.ExcessStd,
		}
		if !math.IsInf(res.Bound, 1) {
			b := res.Bound
			a.LRBound = &b
		}
		for _, g := range res.Grid {
			gp := ReportGrid{LR: g.LR, Status: string(g.Status)}
			if g.Status == GridOK {
				m, s := g.FinalLossMean, g.FinalLossStd
				gp.FinalLossMean, gp.FinalLossStd = &m, &s
				if !g.Contractive {
					gp.Status = "ok (non-contractive: privacy analysis does not hold)"
				}
			}
			a.Grid = append(a.Grid, gp)
		}
		r.Results = append(r.Results, a)
	}
	return r
}

// WriteCurves writes every algorithm's per-epoch curves as CSV: algo,
// label, epoch, loss_mean, loss_std, excess_mean, excess_std, lr, sigma,
// with floats in their shortest exact form.
func (r *Report) WriteCurves(w io.Writer) error {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"algo", "label", "epoch", "loss_mean", "loss_std", "excess_mean", "excess_std", "lr", "sigma"}); err != nil {
		return err
	}
	for _, a := range r.Results {
		for k := range a.LossMean {
			if err := cw.Write([]string{a.Algo, a.Label, strconv.Itoa(k), f(a.LossMean[k]), f(a.LossStd[k]),
				f(a.ExcessMean[k]), f(a.ExcessStd[k]), f(a.LR), f(a.Sigma)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
