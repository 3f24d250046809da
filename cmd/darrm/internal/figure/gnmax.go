package figure

import (
	"context"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// GNMaxTarget is one per-query target of the GNMax figure: the objective
// of App. B.4.1's search, σ²(λ) = λ/(ε − log(1/δ)/(λ − 1)), on its grid
// λ_min + 0.5j <= 500, and its minima.
type GNMaxTarget struct {
	Eps, Delta float64
	// LambdaMin is log(1/δ)/ε + 1, where σ² has its pole.
	LambdaMin float64
	// Lambda and Sigma2 are the grid and σ² on it (finite values only).
	Lambda, Sigma2 []float64
	// Grid and Exact are the minima: of the grid search, and exact.
	Grid, Exact GNMaxMinimum
	// FineLambda and FineSigma2 are σ² at a fine spacing around the
	// minima, drawn as the curve of the zoom (the grid's points are too
	// far apart to show where the exact minimum lies between them).
	FineLambda, FineSigma2 []float64
}

// GNMaxMinimum is a minimum of σ² over λ.
type GNMaxMinimum struct{ Lambda, Sigma float64 }

// WriteGNMax draws the thesis' Figure B.8 into path: for each per-query
// target a column of two panels, σ² against λ over the whole grid on log
// axes (the pole at λ_min dotted, and a dashed line at each order of marks,
// say a published λ, which the legend calls markLabel: with as many marks
// as targets, the i-th in the i-th target's panel only, as a table prints
// one λ per target; otherwise each in every panel), and below it a
// zoom on the minimum, on linear axes, where the grid's points, its
// minimum and the exact minimum are told apart; the zoom's window is
// shaded in the panel above. An empty title says what the figure shows.
// It is written as Figure.Save writes, in ctx.
func WriteGNMax(ctx context.Context, path, title string, targets []GNMaxTarget, marks []float64, markLabel string) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	if len(targets) == 0 {
		return fmt.Errorf("GNMax figure: no target")
	}
	curveSty := draw.LineStyle{Color: blue, Width: vg.Points(1.2)}
	gridSty := draw.GlyphStyle{Color: blue, Radius: vg.Points(1.1), Shape: draw.CircleGlyph{}}
	gridMinSty := draw.GlyphStyle{Color: vermillion, Radius: vg.Points(2.4), Shape: draw.CircleGlyph{}}
	exactSty := draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3.6), Shape: draw.RingGlyph{}}
	// the marks in a colour of their own, told from the grey pole beside them
	markSty := draw.LineStyle{Color: green, Width: vg.Points(1.1), Dashes: []vg.Length{vg.Points(3.5), vg.Points(2)}}
	poleSty := draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(0.9), Dashes: []vg.Length{vg.Points(1), vg.Points(1.6)}}
	window := color.Gray{Y: 215}
	cols := len(targets)
	panels := make([]*Panel, 2*cols)
	for i, t := range targets {
		if len(t.Lambda) == 0 || len(t.Lambda) != len(t.Sigma2) {
			return fmt.Errorf("GNMax figure: target (%v, %v): %d orders and %d values of σ²", t.Eps, t.Delta, len(t.Lambda), len(t.Sigma2))
		}
		curve := make(plotter.XYs, len(t.Lambda))
		for j := range curve {
			curve[j] = plotter.XY{X: t.Lambda[j], Y: t.Sigma2[j]}
		}
		lo, hi := curve[0].Y, curve[0].Y
		for _, xy := range curve {
			lo, hi = math.Min(lo, xy.Y), math.Max(hi, xy.Y)
		}
		// the zoom: the grid points around both minima, about four on
		// each side, and the minima a tenth of the window apart at least
		c := (t.Grid.Lambda + t.Exact.Lambda) / 2
		half := math.Max(2, 5*math.Abs(t.Grid.Lambda-t.Exact.Lambda))
		zlo, zhi := c-half, c+half
		var zoom, fine plotter.XYs
		zyLo, zyHi := math.Inf(1), math.Inf(-1)
		for _, xy := range curve {
			if xy.X >= zlo && xy.X <= zhi {
				zoom = append(zoom, xy)
				zyLo, zyHi = math.Min(zyLo, xy.Y), math.Max(zyHi, xy.Y)
			}
		}
		for j, l := range t.FineLambda {
			if l >= zlo-0.3 && l <= zhi+0.3 {
				fine = append(fine, plotter.XY{X: l, Y: t.FineSigma2[j]})
				zyHi = math.Max(zyHi, t.FineSigma2[j])
			}
		}
		if len(fine) == 0 {
			fine = zoom
		}
		zyLo = math.Min(zyLo, t.Exact.Sigma*t.Exact.Sigma)

		full := NewPanel()
		full.X.Scale, full.X.Tick.Marker = plot.LogScale{}, LogTicks{}
		LogY(full)
		full.Title.Text = fmt.Sprintf("per query ε = %s, δ = %s", Num(t.Eps), Num(t.Delta))
		full.X.Label.Text = "Rényi order λ (log scale)"
		full.Y.Label.Text = "σ^{2} (log scale)"
		// room left of the pole, so that it and a mark beside it stand apart from the frame
		full.X.Min, full.X.Max = t.LambdaMin*0.85, curve[len(curve)-1].X*1.03
		full.Y.Min, full.Y.Max = lo/1.25, hi*1.25
		shade, err := plotter.NewPolygon(plotter.XYs{{X: zlo, Y: full.Y.Min}, {X: zhi, Y: full.Y.Min}, {X: zhi, Y: full.Y.Max}, {X: zlo, Y: full.Y.Max}})
		if err != nil {
			return err
		}
		shade.Color, shade.LineStyle.Width = window, 0
		full.Add(shade)
		full.Add(&plotter.Line{XYs: plotter.XYs{{X: t.LambdaMin, Y: full.Y.Min}, {X: t.LambdaMin, Y: full.Y.Max}}, LineStyle: poleSty})
		for _, m := range panelMarks(marks, i, cols) {
			if m > full.X.Min && m < full.X.Max {
				full.Add(&plotter.Line{XYs: plotter.XYs{{X: m, Y: full.Y.Min}, {X: m, Y: full.Y.Max}}, LineStyle: markSty})
			}
		}
		full.Add(&plotter.Line{XYs: curve, LineStyle: curveSty})

		z := NewPanel()
		z.Title.Text = fmt.Sprintf("near the minimum\ngrid: λ = %.2f, σ = %.6f\nexact: λ = %.2f, σ = %.6f", t.Grid.Lambda, t.Grid.Sigma, t.Exact.Lambda, t.Exact.Sigma)
		z.X.Label.Text = "Rényi order λ"
		z.Y.Label.Text = "σ^{2}"
		z.X.Min, z.X.Max = zlo-0.3, zhi+0.3
		z.Y.Min, z.Y.Max = Pad(zyLo, zyHi, 0.08)
		z.Add(&plotter.Line{XYs: fine, LineStyle: curveSty})
		z.Add(&plotter.Scatter{XYs: zoom, GlyphStyle: gridSty})
		z.Add(&plotter.Scatter{XYs: plotter.XYs{{X: t.Grid.Lambda, Y: t.Grid.Sigma * t.Grid.Sigma}}, GlyphStyle: gridMinSty})
		z.Add(&plotter.Scatter{XYs: plotter.XYs{{X: t.Exact.Lambda, Y: t.Exact.Sigma * t.Exact.Sigma}}, GlyphStyle: exactSty})
		panels[i], panels[cols+i] = full, z
	}
	legend := []Entry{
		{Label: "σ^{2} = λ/(ε − log(1/δ)/(λ − 1)), and its values on the grid λ_{min} + 0.5j ≤ 500", Thumbs: []plot.Thumbnailer{&plotter.Line{LineStyle: curveSty}, &plotter.Scatter{GlyphStyle: gridSty}}},
		{Label: "grid minimum", Thumbs: []plot.Thumbnailer{&plotter.Scatter{GlyphStyle: gridMinSty}}},
		{Label: "exact minimum", Thumbs: []plot.Thumbnailer{&plotter.Scatter{GlyphStyle: exactSty}}},
		{Label: "λ_{min} = log(1/δ)/ε + 1, where σ^{2} → ∞", Thumbs: []plot.Thumbnailer{&plotter.Line{LineStyle: poleSty}}},
		{Label: "window of the zoom below", Thumbs: []plot.Thumbnailer{&swatch{window}}},
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
	f := Figure{Title: title, Legend: legend, Cols: cols, Panels: panels, Aspect: 0.72}
	return f.Save(ctx, path)
}

// panelMarks returns the marks of the panel of target i of n: the i-th
// when there is one mark per target, else all of them.
func panelMarks(marks []float64, i, n int) []float64 {
	if len(marks) == n {
		return marks[i : i+1]
	}
	return marks
}

// swatch is a legend thumbnail of a filled area.
type swatch struct{ c color.Color }

func (s *swatch) Thumbnail(c *draw.Canvas) {
	c.SetColor(s.c)
	var p vg.Path
	p.Move(c.Min)
	p.Line(vg.Point{X: c.Max.X, Y: c.Min.Y})
	p.Line(c.Max)
	p.Line(vg.Point{X: c.Min.X, Y: c.Max.Y})
	p.Close()
	c.Fill(p)
}
