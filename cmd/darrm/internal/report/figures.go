package report

import (
	"context"
	"fmt"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/curveplot"
	"github.com/darrm/darrm/cmd/darrm/internal/figure"
	"github.com/darrm/darrm/experiments/transfer"
	"github.com/darrm/darrm/gamma"
)

// This file turns the documents of solve, transfer and account gnmax into
// the plain data of their figures: the figure packages take plain data and
// know none of the documents.

// errorPoints is the resolution of the error curves over p.
const errorPoints = 201

// WriteFigure writes the gamma figure of the document (its Setting) to
// path.
func (out Solve) WriteFigure(ctx context.Context, path string) error {
	s, err := out.Setting()
	if err != nil {
		return err
	}
	return figure.GammaFigure{Settings: []figure.Setting{s}}.Write(ctx, path)
}

// Setting is the column of a gamma figure of the document: its problem,
// and gamma_opt and the baselines with their certificates' status, error
// curves and expected errors.
func (out Solve) Setting() (figure.Setting, error) {
	s := figure.Setting{Problem: out.Params()}
	for _, m := range out.Mechanisms() {
		fm := figure.Curve{Name: m.Name, Prior: out.Prior, Gamma: m.Gamma, Status: m.Certificate.Status}
		var err error
		if fm.Error, err = errorCurve(m.Gamma); err != nil {
			return s, fmt.Errorf("%s: %w", m.Name, err)
		}
		for _, e := range m.Errors {
			fm.Expected = append(fm.Expected, figure.Expected{Actual: e.Actual, Mean: e.Mean})
		}
		if m.Name == "sub" {
			s.SubSize = subSize(m.Gamma, out.M)
		}
		s.Mechanisms = append(s.Mechanisms, fm)
	}
	return s, nil
}

// errorCurve is E(DaRRM_γ) when every teacher votes 1 with probability p,
// at errorPoints values of p from 0 to 1.
func errorCurve(g gamma.Gamma) ([]float64, error) {
	curve := make([]float64, errorPoints)
	probs := make([]float64, g.K())
	for i := range curve {
		for j := range probs {
			probs[j] = float64(i) / (errorPoints - 1)
		}
		var err error
		if curve[i], err = g.TVError(probs); err != nil {
			return nil, err
		}
	}
	return curve, nil
}

// subSize returns the number of teachers gamma_Sub g subsamples when it is
// not floor(m) (App. B.4's M, darrm solve --sub-size), read from its
// values: the size whose Lemma 3.4.1 noise function g is; else 0.
func subSize(g gamma.Gamma, m float64) int {
	for s := 1; s <= g.K(); s++ {
		if sub, err := gamma.Sub(g.K(), s); err == nil && slices.Equal(sub, g) {
			if s == gamma.SubSize(m) {
				return 0
			}
			return s
		}
	}
	return 0
}

// mechanismLabels name transfer's mechanisms as the thesis' tables do.
var mechanismLabels = map[string]string{"gnmax": "GNMax", "gnmax-tight": "GNMax, tight σ", "darrm-sub": "DaRRM, γ_{Sub}", "darrm-opt": "DaRRM, γ_{opt}",
	"rr": "RR, γ_{const}", "majority": "majority, no noise"}

// WriteFigure writes the figure of the experiment's results (transferPanel)
// to path.
func (out Transfer) WriteFigure(ctx context.Context, path string) error {
	p := transferPanel(out.Dataset, out.K, out.Results)
	fig := curveplot.Figure{Panels: []*curveplot.Panel{&p}, Notes: []string{"Lines: mean accuracy over the redraws of the queries; shaded: ± one standard deviation."}}
	return fig.Write(ctx, path)
}

// transferPanel is the panel of a transfer experiment on dataset with k
// teachers: each mechanism's label accuracy, mean and one standard
// deviation over the redraws, against the number of queries Q, under a
// title that says the privacy of each label (the majority's is the
// teachers' K-fold composition).
func transferPanel(dataset string, k int, results []transfer.Result) curveplot.Panel {
	p := curveplot.Panel{Title: dataset, XLabel: "queries Q", YLabel: "label accuracy"}
	if len(results) > 0 {
		r := results[0]
		p.Title = fmt.Sprintf("%s, K = %d, m = %g: each noisy label (%.4g, %.2g)-DP", dataset, k, r.M, r.QueryEps, r.QueryDelta)
	}
	for _, name := range transfer.Mechanisms {
		s := curveplot.Series{Label: mechanismLabels[name]}
		for _, r := range results {
			if r.Mechanism == name {
				s.X = append(s.X, float64(r.Queries))
				s.Mean = append(s.Mean, r.AccuracyMean)
				s.Std = append(s.Std, r.AccuracyStd)
			}
		}
		if len(s.Mean) > 0 {
			p.Series = append(p.Series, s)
		}
	}
	return p
}

// WriteFigure draws the RDP search of GNMax's noise for each target of
// the document (figure.GNMaxTargetOf, figure.WriteGNMax) into path, under
// title, with the orders marks marked as markLabel.
func (d AccountGNMax) WriteFigure(ctx context.Context, path, title string, marks []float64, markLabel string) error {
	var targets []figure.GNMaxTarget
	for _, r := range d.Rows {
		t, err := figure.GNMaxTargetOf(accountant.Guarantee{Eps: r.Eps, Delta: d.Delta})
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	return figure.WriteGNMax(ctx, path, title, targets, marks, markLabel)
}
