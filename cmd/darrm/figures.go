package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/curveplot"
	"github.com/darrm/darrm/cmd/darrm/internal/figure"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/shuffleg"
	"github.com/darrm/darrm/transfer"
)

// This file turns darrm's results into the plain data of the figures
// (packages figure and curveplot).

// errorPoints is the resolution of the error curves over p.
const errorPoints = 201

// gammaSetting is the column of a gamma figure of a darrm solve document:
// its problem, and gamma_opt and the baselines with their certificates'
// status, error curves and expected errors.
func gammaSetting(out report.Solve) (figure.Setting, error) {
	s := figure.Setting{K: out.K, M: out.M, Eps: out.Eps, Delta: out.Delta, TargetDelta: out.TargetDelta, OneVote: out.Relation == accountant.OneVote}
	for _, m := range out.Mechanisms() {
		fm := figure.Mechanism{Name: m.Name, Prior: out.Prior, Gamma: m.Gamma, Status: figureStatus(m.Certificate.Status)}
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

func figureStatus(s gamma.Status) figure.Status {
	switch s {
	case gamma.Certified:
		return figure.Certified
	case gamma.Tight:
		return figure.Tight
	}
	return figure.Violated
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
		if curve[i], err = gamma.TVError(g, probs); err != nil {
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

// gnmaxTarget is the GNMax figure's data of a per-query target: the
// objective of App. B.4.1's search on its grid, and the grid's and the
// exact minimum.
func gnmaxTarget(t accountant.Guarantee) (figure.GNMaxTarget, error) {
	ft := figure.GNMaxTarget{Eps: t.Eps, Delta: t.Delta, LambdaMin: math.Log(1/t.Delta)/t.Eps + 1}
	grid, err := accountant.GNMaxLambdaGrid(t)
	if err != nil {
		return ft, err
	}
	for _, l := range grid {
		s2, err := accountant.GNMaxSigma2(t, l)
		if err != nil {
			return ft, err
		}
		if !math.IsInf(s2, 1) {
			ft.Lambda, ft.Sigma2 = append(ft.Lambda, l), append(ft.Sigma2, s2)
		}
	}
	if len(ft.Lambda) == 0 {
		return ft, fmt.Errorf("GNMax figure: target (%v, %v): no finite point on the grid", t.Eps, t.Delta)
	}
	if ft.Grid.Sigma, ft.Grid.Lambda, err = accountant.GNMaxSigmaGrid(t); err != nil {
		return ft, err
	}
	if ft.Exact.Sigma, ft.Exact.Lambda, err = accountant.GNMaxSigma(t, accountant.PaperConversion); err != nil {
		return ft, err
	}
	// σ² every 0.01 around both minima, for the figure's zoom
	lo := math.Max(math.Min(ft.Grid.Lambda, ft.Exact.Lambda)-6, ft.LambdaMin+0.01)
	for i := 0; lo+0.01*float64(i) <= math.Max(ft.Grid.Lambda, ft.Exact.Lambda)+6; i++ {
		l := lo + 0.01*float64(i)
		s2, err := accountant.GNMaxSigma2(t, l)
		if err != nil {
			return ft, err
		}
		if !math.IsInf(s2, 1) {
			ft.FineLambda, ft.FineSigma2 = append(ft.FineLambda, l), append(ft.FineSigma2, s2)
		}
	}
	return ft, nil
}

// metric is the quantity a DP-ShuffleG panel shows.
type metric int

const (
	// lossMetric is the objective G(x; D) on the private data, linear axis.
	lossMetric metric = iota
	// excessMetric is G(x; D) − G(x*; D), log axis.
	excessMetric
)

func (m metric) String() string {
	if m == excessMetric {
		return "excess"
	}
	return "loss"
}

// MarshalText returns the name of m, as --plot-metric takes it.
func (m metric) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText sets m from its name: loss or excess.
func (m *metric) UnmarshalText(b []byte) error {
	switch string(b) {
	case "loss":
		*m = lossMetric
	case "excess":
		*m = excessMetric
	default:
		return fmt.Errorf("metric %q: must be loss or excess", b)
	}
	return nil
}

// algorithmColours gives each DP-ShuffleG algorithm one colour across
// panels, with the thesis' blue DP-ShuffleG, green Public Only and red
// Interleaved.
var algorithmColours = map[string]int{
	shuffleg.DPShuffleG.String():  0,
	shuffleg.PrivPub.String():     1,
	shuffleg.PubPriv.String():     2,
	shuffleg.Interleaved.String(): 3,
	shuffleg.PublicOnly.String():  4,
}

var taskNames = map[string]string{"mean": "mean estimation", "ridge": "ridge regression", "lasso-logistic": "lasso logistic regression"}

// shufflegData names a report's dataset by its catalog title, marked as a
// substitute unless it is the thesis' own, and its task.
func shufflegData(r *shuffleg.Report) string {
	data := r.Dataset
	if info, err := datasets.Lookup(r.Dataset); err == nil {
		data = info.Title
	}
	if !r.ThesisDataset {
		data += " (substitute)"
	}
	task, ok := taskNames[r.Task]
	if !ok {
		task = r.Task
	}
	return data + ", " + task
}

// shufflegPanel is the panel of a DP-ShuffleG experiment's report (Figure
// 4.2): each algorithm's curve of m at the learning rate its search chose,
// which the panel's key lists, under title.
func shufflegPanel(r *shuffleg.Report, m metric, title string) curveplot.Panel {
	p := curveplot.Panel{Title: title, XLabel: "epoch", YLabel: "loss G(x; D)", KeyTitle: "η ="}
	if m == excessMetric {
		p.YLabel, p.LogY = "excess risk G(x; D) − G(x*; D)", true
		// An excess can round to <= 0 at the optimum: floor the axis a
		// decade below the smallest positive mean.
		p.Floor = math.Inf(1)
		for _, a := range r.Results {
			for _, v := range a.ExcessMean {
				if v > 0 {
					p.Floor = math.Min(p.Floor, v/10)
				}
			}
		}
		if math.IsInf(p.Floor, 1) {
			p.Floor = 1e-12
		}
	}
	// No run's loss is below the optimum, nor its excess below 0.
	lower := 0.0
	if m == lossMetric {
		lower = r.Optimum.Value
	}
	p.Lower = &lower
	for _, a := range r.Results {
		s := curveplot.Series{Label: a.Label, Mean: a.LossMean, Std: a.LossStd, Key: figure.Num(a.LR)}
		if c, ok := algorithmColours[a.Algo]; ok {
			s.Color, s.Glyph = curveplot.Colour(c), curveplot.Glyph(c)
		}
		if m == excessMetric {
			s.Mean, s.Std = a.ExcessMean, a.ExcessStd
		}
		p.Series = append(p.Series, s)
	}
	return p
}

// shufflegFigure lays out the reports' panels: with cols > 0, in the order
// given, cols to a row, each panel's title stating its setting; otherwise
// one row per setting other than ε (dataset and task, order, p, ...), in
// order of first appearance, headed by what sets it apart, its panels in
// increasing ε from the left, each titled with its ε, and what every
// report shares stated once under the title. Rows whose ε differ (1 and 5
// for ridge, 5 and 10 otherwise, as Figure 4.2 has them) are not spread
// over a column per ε, which would leave cells empty. Each
// reference is drawn thin and dashed in the panel of the report of the same
// dataset, task, ε, δ, p and epochs; a reference that matches no panel is
// an error.
func shufflegFigure(reports, refs []shuffleg.Report, m metric, title string, cols int) (curveplot.Figure, error) {
	f := curveplot.Figure{Title: title, Notes: shufflegNotes(reports)}
	if len(refs) > 0 {
		f.Notes = append(f.Notes, "Thin dashed: the same algorithms with "+referenceOrders(refs)+", for comparison.")
	}
	byReport := make([]*curveplot.Panel, len(reports))
	common, differs := shufflegCommon(reports)
	if common != "" {
		f.Title = strings.TrimSpace(f.Title + "\n" + common)
	}
	if cols > 0 || len(reports) == 1 {
		for i := range reports {
			r := &reports[i]
			t := shufflegData(r) + "\n" + shufflegSetting(r, differs, true)
			p := shufflegPanel(r, m, strings.TrimRight(t, "\n"))
			f.Panels, byReport[i] = append(f.Panels, &p), &p
		}
		f.Cols = max(cols, 1)
		return f, addReferences(byReport, reports, refs, m)
	}
	var rows []string
	members := map[string][]int{} // a row's reports
	for i := range reports {
		row := shufflegRow(&reports[i], differs)
		if !slices.Contains(rows, row) {
			rows = append(rows, row)
		}
		members[row] = append(members[row], i)
		f.Cols = max(f.Cols, len(members[row]))
	}
	f.RowTitles, f.ShareY = rows, true
	f.Panels = make([]*curveplot.Panel, len(rows)*f.Cols)
	for ri, row := range rows {
		in := members[row]
		slices.SortStableFunc(in, func(a, b int) int { return cmp.Compare(reports[a].Eps, reports[b].Eps) })
		for c, i := range in {
			p := shufflegPanel(&reports[i], m, "ε = "+figure.Num(reports[i].Eps))
			f.Panels[ri*f.Cols+c], byReport[i] = &p, &p
		}
	}
	return f, addReferences(byReport, reports, refs, m)
}

// addReferences puts each reference's curves into the panel of its
// report, panels[j] being report j's.
func addReferences(panels []*curveplot.Panel, reports, refs []shuffleg.Report, m metric) error {
	for i := range refs {
		ref := &refs[i]
		j := slices.IndexFunc(reports, func(r shuffleg.Report) bool {
			return r.Dataset == ref.Dataset && r.Task == ref.Task && r.Eps == ref.Eps && r.Delta == ref.Delta && r.Fraction == ref.Fraction && r.Epochs == ref.Epochs
		})
		if j < 0 {
			return fmt.Errorf("reference %d (%s, %s, ε = %g, p = %g): no report of the same dataset, task, ε, δ, p and epochs to compare it with", i+1, ref.Dataset, ref.Task, ref.Eps, ref.Fraction)
		}
		panels[j].Reference = append(panels[j].Reference, shufflegPanel(ref, m, "").Series...)
	}
	return nil
}

// referenceOrders names the orders of the references: "the RR order".
func referenceOrders(refs []shuffleg.Report) string {
	var orders []string
	for _, r := range refs {
		if o := strings.ToUpper(r.Order); !slices.Contains(orders, o) {
			orders = append(orders, o)
		}
	}
	return "the " + strings.Join(orders, " or ") + " order"
}

// shufflegRow is the heading of a report's row in the grid: its dataset and
// task, and the settings other than ε in which the reports differ.
func shufflegRow(r *shuffleg.Report, differs shufflegDiffers) string {
	s := shufflegSetting(r, differs, false)
	if s == "" {
		return shufflegData(r)
	}
	return shufflegData(r) + "; " + s
}

// shufflegDiffers says which settings of the reports differ.
type shufflegDiffers struct{ eps, delta, order, p, epochs, runs bool }

// shufflegSetting states r's settings that differ across the reports (ε
// only if withEps).
func shufflegSetting(r *shuffleg.Report, d shufflegDiffers, withEps bool) string {
	var parts []string
	if withEps && d.eps {
		parts = append(parts, "ε = "+figure.Num(r.Eps))
	}
	if d.delta {
		parts = append(parts, "δ = "+figure.Num(r.Delta))
	}
	if d.order {
		parts = append(parts, strings.ToUpper(r.Order)+" order")
	}
	if d.p {
		parts = append(parts, fmt.Sprintf("p = %g", r.Fraction))
	}
	if d.epochs {
		parts = append(parts, fmt.Sprintf("%d epochs", r.Epochs))
	}
	if d.runs {
		parts = append(parts, fmt.Sprintf("%d runs", r.Runs))
	}
	return strings.Join(parts, ", ")
}

// shufflegCommon states what every report shares, and says what differs.
func shufflegCommon(reports []shuffleg.Report) (string, shufflegDiffers) {
	r0 := &reports[0]
	var d shufflegDiffers
	for i := range reports[1:] {
		r := &reports[i+1]
		d.eps = d.eps || r.Eps != r0.Eps
		d.delta = d.delta || r.Delta != r0.Delta
		d.order = d.order || r.Order != r0.Order
		d.p = d.p || r.Fraction != r0.Fraction
		d.epochs = d.epochs || r.Epochs != r0.Epochs
		d.runs = d.runs || r.Runs != r0.Runs
	}
	if len(reports) == 1 {
		d = shufflegDiffers{eps: true, delta: true, order: true, p: true, epochs: true, runs: true}
		return "", d
	}
	var parts []string
	if !d.eps {
		parts = append(parts, "ε = "+figure.Num(r0.Eps))
	}
	if !d.delta {
		parts = append(parts, "δ = "+figure.Num(r0.Delta))
	}
	if !d.order {
		parts = append(parts, strings.ToUpper(r0.Order)+" order")
	}
	if !d.p {
		parts = append(parts, fmt.Sprintf("p = %g", r0.Fraction))
	}
	if !d.epochs {
		parts = append(parts, fmt.Sprintf("%d epochs", r0.Epochs))
	}
	if !d.runs {
		parts = append(parts, fmt.Sprintf("%d runs", r0.Runs))
	}
	return strings.Join(parts, ", "), d
}

// shufflegNotes are the lines under the legend of a DP-ShuffleG figure:
// what p, the bands and the key are.
func shufflegNotes(reports []shuffleg.Report) []string {
	runs := slices.MaxFunc(reports, func(a, b shuffleg.Report) int { return cmp.Compare(a.Runs, b.Runs) }).Runs
	lr := "Learning rate η (above each panel, in the algorithm's colour): as given."
	searched := slices.ContainsFunc(reports, func(r shuffleg.Report) bool {
		return slices.ContainsFunc(r.Results, func(a shuffleg.ReportResult) bool { return len(a.Grid) > 1 })
	})
	if searched {
		grid := "its grid"
		if strings.HasPrefix(reports[0].LRSearch, "thesis grid") {
			grid = "the thesis' grid {0.5, 0.1, 0.05, ..., 10^{-9}}"
		}
		lr = "Learning rate η (above each panel, in the algorithm's colour): the rate of " + grid + " with the lowest mean final loss, per algorithm."
	}
	return []string{
		fmt.Sprintf("Lines: mean over %d runs; shaded: ± one standard deviation. p: the fraction of the steps on private samples (Priv-Pub, Pub-Priv: of the epochs, the private ones first or last; Interleaved: of each epoch).", runs),
		lr,
	}
}

// mechanismLabels name transfer's mechanisms as the thesis' tables do.
var mechanismLabels = map[string]string{"gnmax": "GNMax", "gnmax-tight": "GNMax, tight σ", "darrm-sub": "DaRRM, γ_{Sub}", "darrm-opt": "DaRRM, γ_{opt}",
	"rr": "RR, γ_{const}", "majority": "majority, no noise"}

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
