// Package curveplot draws training curves in the style of the thesis'
// Figure 4.2: one line per algorithm for the mean over runs and a shaded
// band of one standard deviation around it, one panel per experiment, in
// package figure's style (one legend above the panels, labelled ticks,
// 300 dpi PNG or SVG).
package curveplot

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/internal/figure"
	"github.com/darrm/darrm/shuffleg"
	"github.com/darrm/darrm/transfer"
)

// Series is one algorithm's curve: the mean and standard deviation of a
// quantity at x = X[k], or at x = 0, 1, ..., len(Mean)−1 (epochs) when X
// is nil.
type Series struct {
	Label     string
	X         []float64
	Mean, Std []float64
	Color     color.Color // nil: the palette's colour for the series' index
}

// x returns the k-th abscissa.
func (s Series) x(k int) float64 {
	if s.X == nil {
		return float64(k)
	}
	return s.X[k]
}

// Panel is one figure panel.
type Panel struct {
	Title, XLabel, YLabel string // Text markup (figure.Text)
	// LogY draws the y axis on a log scale; values and the lower edge of
	// a band are then cut at Floor, since mean − std can be <= 0.
	LogY  bool
	Floor float64
	// Lower, if set, is a value no run goes below (a loss's optimum): the
	// lower edge of a band, mean − std, is cut there rather than show
	// values that cannot occur.
	Lower  *float64
	Series []Series
}

// outlierSpan: on a linear axis, a series whose highest point is more
// than outlierSpan times as far above the lowest point of the panel as
// every other series' highest is drawn cut at the top of the others'
// range, and the title says where it runs above the axis, so that one
// curve (a private phase that blows up before the public one recovers)
// does not flatten the others into lines; its band is not drawn.
const outlierSpan = 2.5

var palette = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255},
	color.RGBA{R: 255, G: 127, B: 14, A: 255},
	color.RGBA{R: 148, G: 103, B: 189, A: 255},
	color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255},
	color.RGBA{R: 140, G: 86, B: 75, A: 255},
}

// algorithmColors gives each algorithm one colour across panels, with the
// thesis' blue DP-ShuffleG, green Public Only and red Interleaved.
var algorithmColors = map[string]color.Color{
	shuffleg.DPShuffleG.String():  palette[0],
	shuffleg.PrivPub.String():     palette[1],
	shuffleg.PubPriv.String():     palette[2],
	shuffleg.Interleaved.String(): palette[3],
	shuffleg.PublicOnly.String():  palette[4],
}

// Write draws the panels, cols to a row, under title into path, whose
// extension (.png or .svg) picks the format; one legend above the panels
// lists every series label once. The file is written atomically.
func Write(path, title string, panels []Panel, cols int) error {
	if err := figure.CheckPath(path); err != nil {
		return err
	}
	if len(panels) == 0 {
		return fmt.Errorf("curve figure: no panel")
	}
	var plots []*plot.Plot
	var legend []figure.Entry
	seen := map[string]bool{}
	for _, p := range panels {
		pl, err := p.plot()
		if err != nil {
			return err
		}
		plots = append(plots, pl)
		for i, s := range p.Series {
			if !seen[s.Label] {
				seen[s.Label] = true
				legend = append(legend, figure.Entry{Label: s.Label, Thumbs: []plot.Thumbnailer{line(s.color(i))}})
			}
		}
	}
	f := figure.Figure{Title: title, Legend: legend, Cols: cols, Panels: plots}
	return f.Save(path)
}

func (s Series) color(i int) color.Color {
	if s.Color != nil {
		return s.Color
	}
	return palette[i%len(palette)]
}

func line(c color.Color) *plotter.Line {
	return &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1.4)}}
}

// plot builds the panel's plot: bands first, then the lines over them.
func (p Panel) plot() (*plot.Plot, error) {
	pl := figure.NewPlot()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.X.Tick.Marker = figure.Ticks{Integer: true}
	if p.LogY {
		figure.LogY(pl)
	}
	var lines, bands []plot.Plotter
	lo := math.Inf(1)
	his := make([]float64, len(p.Series))
	for i, s := range p.Series {
		if len(s.Mean) == 0 || len(s.Std) != len(s.Mean) || s.X != nil && len(s.X) != len(s.Mean) {
			return nil, fmt.Errorf("plot series %q: %d means, %d stds and %d abscissae: must be equal and non-zero", s.Label, len(s.Mean), len(s.Std), len(s.X))
		}
		c := s.color(i)
		band, mid := make(plotter.XYs, 0, 2*len(s.Mean)), make(plotter.XYs, len(s.Mean))
		for k, m := range s.Mean {
			mid[k] = plotter.XY{X: s.x(k), Y: p.cut(m)}
			low := m - s.Std[k]
			if p.Lower != nil && low < *p.Lower {
				low = min(*p.Lower, m)
			}
			band = append(band, plotter.XY{X: s.x(k), Y: p.cut(low)})
		}
		for k := len(s.Mean) - 1; k >= 0; k-- {
			band = append(band, plotter.XY{X: s.x(k), Y: p.cut(s.Mean[k] + s.Std[k])})
		}
		if err := finite(s.Label, band); err != nil {
			return nil, err
		}
		his[i] = math.Inf(-1)
		for _, xy := range band {
			lo, his[i] = math.Min(lo, xy.Y), math.Max(his[i], xy.Y)
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return nil, fmt.Errorf("plot series %q: %w", s.Label, err)
		}
		r, g, b, _ := c.RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 60}
		poly.LineStyle.Width = 0
		bands = append(bands, poly)
		l := line(c)
		l.XYs = mid
		lines = append(lines, l)
	}
	s0 := p.Series[0]
	pl.X.Min, pl.X.Max = s0.x(0), s0.x(len(s0.Mean)-1)
	hi, outliers := slices.Max(his), []int(nil)
	if !p.LogY {
		hi, outliers = axisTop(lo, his)
	}
	// The band of a series cut at the top is not drawn: one standard
	// deviation of runs that blow up spans the whole axis and says little.
	for i, b := range bands {
		if !slices.Contains(outliers, i) {
			pl.Add(b)
		}
	}
	pl.Add(lines...)
	if hi > lo {
		pl.Y.Min, pl.Y.Max = lo, hi
	}
	for _, i := range outliers {
		pl.Title.Text += "\n" + p.Series[i].above(hi)
	}
	return pl, nil
}

// axisTop returns the top of a linear axis whose lowest point is lo for
// series whose highest points are his, and the series drawn cut at it
// (outlierSpan), highest first. At least one series stays whole.
func axisTop(lo float64, his []float64) (float64, []int) {
	order := make([]int, len(his))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(his[b], his[a]) })
	var out []int
	for len(out)+1 < len(order) {
		top, next := his[order[len(out)]], his[order[len(out)+1]]
		if !(top-lo > outlierSpan*(next-lo)) {
			break
		}
		out = append(out, order[len(out)])
	}
	// A little room above the highest band kept, so that it does not
	// look cut by the frame; more where a series is cut.
	if len(out) == 0 {
		return his[order[0]] + 0.03*(his[order[0]]-lo), nil
	}
	next := his[order[len(out)]]
	return next + 0.05*(next-lo), out
}

// above says where s runs above an axis that ends at top: the epochs (or
// abscissae) where its mean is above, and how high; or that only its band
// is.
func (s Series) above(top float64) string {
	first, last, peak := -1, -1, math.Inf(-1)
	for k, m := range s.Mean {
		if m > top {
			if first < 0 {
				first = k
			}
			last, peak = k, math.Max(peak, m)
		}
	}
	switch {
	case first < 0:
		return fmt.Sprintf("%s: band above the axis, not drawn", s.Label)
	case first == last:
		return fmt.Sprintf("%s above the axis at epoch %g\n(%s; its band not drawn)", s.Label, s.x(first), figure.Num(peak))
	}
	return fmt.Sprintf("%s above the axis in epochs %g-%g\n(up to %s; its band not drawn)", s.Label, s.x(first), s.x(last), figure.Num(peak))
}

// cut returns v, or Floor on a log axis when v is below it.
func (p Panel) cut(v float64) float64 {
	if p.LogY && !(v >= p.Floor) {
		return p.Floor
	}
	return v
}

func finite(label string, xys plotter.XYs) error {
	for _, xy := range xys {
		if math.IsNaN(xy.Y) || math.IsInf(xy.Y, 0) {
			return fmt.Errorf("plot series %q: non-finite value %v at epoch %v", label, xy.Y, xy.X)
		}
	}
	return nil
}

// Metric is the quantity a DP-ShuffleG panel shows.
type Metric int

const (
	// Loss is the objective G(x; D) on the private data, linear axis.
	Loss Metric = iota
	// Excess is G(x; D) − G(x*; D), log axis.
	Excess
)

// ParseMetric parses "loss" or "excess".
func ParseMetric(s string) (Metric, error) {
	switch s {
	case "loss":
		return Loss, nil
	case "excess":
		return Excess, nil
	}
	return 0, fmt.Errorf("metric %q: must be loss or excess", s)
}

// String returns "loss" or "excess", as ParseMetric reads it.
func (m Metric) String() string {
	if m == Excess {
		return "excess"
	}
	return "loss"
}

// MarshalText returns the name of m, so that a Metric reads and prints as
// text (a flag, a JSON or config value).
func (m Metric) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText sets m from its name (ParseMetric).
func (m *Metric) UnmarshalText(b []byte) error {
	x, err := ParseMetric(string(b))
	if err == nil {
		*m = x
	}
	return err
}

var taskNames = map[string]string{"mean": "mean estimation", "ridge": "ridge regression", "lasso-logistic": "lasso logistic regression"}

// ReportPanel is the panel of a DP-ShuffleG experiment's report (Figure
// 4.2): each algorithm's curve of metric at its chosen learning rate, under
// a title that states the dataset by its catalog title (marked
// "substitute" unless it is the
// thesis' own), the task, ε, δ, p and the number of epochs.
func ReportPanel(r *shuffleg.Report, metric Metric) Panel {
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
	p := Panel{
		Title:  fmt.Sprintf("%s, %s\nε = %s, δ = %s, p = %g, %d epochs", data, task, figure.Num(r.Eps), figure.Num(r.Delta), r.Fraction, r.Epochs),
		XLabel: "epoch",
		YLabel: "loss G(x; D)",
	}
	if metric == Excess {
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
	if metric == Loss {
		lower = r.Optimum.Value
	}
	p.Lower = &lower
	for _, a := range r.Results {
		s := Series{Label: a.Label, Mean: a.LossMean, Std: a.LossStd, Color: algorithmColors[a.Algo]}
		if metric == Excess {
			s.Mean, s.Std = a.ExcessMean, a.ExcessStd
		}
		p.Series = append(p.Series, s)
	}
	return p
}

// mechanismLabels name transfer's mechanisms as the thesis' tables do.
var mechanismLabels = map[string]string{"gnmax": "GNMax", "gnmax-tight": "GNMax, tight σ", "darrm-sub": "DaRRM, γ_{Sub}", "darrm-opt": "DaRRM, γ_{opt}",
	"rr": "RR, γ_{const}", "majority": "majority, no noise"}

// TransferPanel is the panel of a transfer experiment on dataset with k
// teachers: each mechanism's label accuracy, mean and one standard
// deviation over the redraws, against the number of queries Q, under a
// title that says the privacy of each label (the majority's is the
// teachers' K-fold composition).
func TransferPanel(dataset string, k int, results []transfer.Result) Panel {
	p := Panel{Title: dataset, XLabel: "queries Q", YLabel: "label accuracy"}
	if len(results) > 0 {
		r := results[0]
		p.Title = fmt.Sprintf("%s, K = %d, m = %g: each noisy label (%.4g, %.2g)-DP", dataset, k, r.M, r.QueryEps, r.QueryDelta)
	}
	for _, name := range transfer.Mechanisms {
		s := Series{Label: mechanismLabels[name]}
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
