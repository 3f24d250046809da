package figure

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/darrm/darrm/accountant"
)

// WriteGNMax draws the thesis' Figure B.8 into path: for each per-query
// target, GNMax's noise σ² against the Rényi order λ over the grid of
// App. B.4.1's search (a log axis), with the grid's minimum and the exact
// minimum marked, and a dashed line at each order of marks (say, a
// published λ to compare with), which the legend calls markLabel. An empty
// title says what the figure shows.
func WriteGNMax(path, title string, targets []accountant.Guarantee, marks []float64, markLabel string) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	if len(targets) == 0 {
		return fmt.Errorf("GNMax figure: no target")
	}
	curveSty := draw.LineStyle{Color: color.RGBA{R: 31, G: 119, B: 180, A: 255}, Width: vg.Points(1.3)}
	gridSty := draw.GlyphStyle{Color: color.RGBA{R: 214, G: 39, B: 40, A: 255}, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
	exactSty := draw.GlyphStyle{Color: color.Black, Radius: vg.Points(4.5), Shape: draw.RingGlyph{}}
	markSty := draw.LineStyle{Color: color.Gray{Y: 100}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(2.5)}}
	var panels []*plot.Plot
	for _, t := range targets {
		grid, err := accountant.GNMaxLambdaGrid(t)
		if err != nil {
			return err
		}
		sigma, lambda, err := accountant.GNMaxSigmaGrid(t)
		if err != nil {
			return err
		}
		exactSigma, exactLambda, err := accountant.GNMaxSigma(t, accountant.PaperConversion)
		if err != nil {
			return err
		}
		var curve plotter.XYs
		for _, l := range grid {
			s2, err := accountant.GNMaxSigma2(t, l)
			if err != nil {
				return err
			}
			if !math.IsInf(s2, 1) {
				curve = append(curve, plotter.XY{X: l, Y: s2})
			}
		}
		if len(curve) == 0 {
			return fmt.Errorf("GNMax figure: target %v: no finite point on the grid", t)
		}
		p := NewPlot()
		LogY(p)
		p.Title.Text = fmt.Sprintf("per query ε = %s, δ = %s\ngrid: σ_{min} = %.4g at λ = %.4g; exact: σ = %.4g at λ = %.4g",
			Num(t.Eps), Num(t.Delta), sigma, lambda, exactSigma, exactLambda)
		p.X.Label.Text = "Rényi order λ"
		p.Y.Label.Text = "noise variance σ^{2}"
		p.X.Min, p.X.Max = math.Floor(curve[0].X/10)*10, 500
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, xy := range curve {
			lo, hi = math.Min(lo, xy.Y), math.Max(hi, xy.Y)
		}
		p.Y.Min, p.Y.Max = lo/1.15, hi
		l, err := plotter.NewLine(curve)
		if err != nil {
			return err
		}
		l.LineStyle = curveSty
		p.Add(l)
		for _, m := range marks {
			if m <= p.X.Min || m >= p.X.Max {
				continue
			}
			v := &plotter.Line{XYs: plotter.XYs{{X: m, Y: p.Y.Min}, {X: m, Y: p.Y.Max}}, LineStyle: markSty}
			p.Add(v)
		}
		g, _ := plotter.NewScatter(plotter.XYs{{X: lambda, Y: sigma * sigma}})
		g.GlyphStyle = gridSty
		e, _ := plotter.NewScatter(plotter.XYs{{X: exactLambda, Y: exactSigma * exactSigma}})
		e.GlyphStyle = exactSty
		p.Add(g, e)
		panels = append(panels, p)
	}
	legend := []Entry{
		{Label: "σ^{2} = λ/(ε − log(1/δ)/(λ − 1)) on the search grid λ_{min} + 0.5j ≤ 500", Thumbs: []plot.Thumbnailer{&plotter.Line{LineStyle: curveSty}}},
		{Label: "grid minimum", Thumbs: []plot.Thumbnailer{&plotter.Scatter{GlyphStyle: gridSty}}},
		{Label: "exact minimum", Thumbs: []plot.Thumbnailer{&plotter.Scatter{GlyphStyle: exactSty}}},
	}
	if len(marks) > 0 {
		if markLabel == "" {
			markLabel = "λ given by --mark-lambda"
		}
		legend = append(legend, Entry{Label: markLabel, Thumbs: []plot.Thumbnailer{&plotter.Line{LineStyle: markSty}}})
	}
	if title == "" {
		title = "GNMax: the noise variance σ^{2} against the Rényi order λ of its calibration (App. B.4.1)"
	}
	f := Figure{Title: title, Legend: legend, Panels: panels, PanelWidth: 4 * vg.Inch, PanelHeight: 3 * vg.Inch}
	return f.Save(path)
}
