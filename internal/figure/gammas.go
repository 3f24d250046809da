package figure

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/darrm/darrm/gamma"
)

// NamedGamma is one noise function of a gamma figure.
type NamedGamma struct {
	Name  string // "opt", "sub", "dsub", "rr", ...: the legend says γ_Name
	Gamma gamma.Gamma
}

var gammaColors = map[string]color.Color{
	"opt":  color.RGBA{R: 214, G: 39, B: 40, A: 255},
	"sub":  color.RGBA{R: 31, G: 119, B: 180, A: 255},
	"dsub": color.RGBA{R: 23, G: 190, B: 207, A: 255},
	"rr":   color.RGBA{R: 44, G: 160, B: 44, A: 255},
}

// WriteGammas draws the thesis' Figure 3.2 for one setting into path: the
// shape of each γ over l (top) and its error E(DaRRM_γ) when every teacher
// votes 1 with the same probability p, over p in [0, 1] (bottom). title
// states the setting.
func WriteGammas(path, title string, gs []NamedGamma) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	shape := plot.New()
	shape.Title.Text = title
	shape.X.Label.Text = "l (teachers voting 1)"
	shape.Y.Label.Text = "γ(l)"
	shape.Y.Min, shape.Y.Max = 0, 1.05
	errp := plot.New()
	errp.Title.Text = "error E(DaRRM_γ), all p_i = p"
	errp.X.Label.Text = "p"
	errp.Y.Label.Text = "error"
	for _, g := range gs {
		pts := make(plotter.XYs, len(g.Gamma))
		for l, v := range g.Gamma {
			pts[l] = plotter.XY{X: float64(l), Y: v}
		}
		line, dots, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		c := gammaColors[g.Name]
		line.Color, dots.Color = c, c
		dots.Shape = draw.CircleGlyph{}
		shape.Add(line, dots)
		shape.Legend.Add("γ_"+g.Name, line, dots)

		const n = 201
		curve := make(plotter.XYs, n)
		probs := make([]float64, g.Gamma.K())
		for i := range curve {
			p := float64(i) / (n - 1)
			for j := range probs {
				probs[j] = p
			}
			e, err := gamma.TVError(g.Gamma, probs)
			if err != nil {
				return err
			}
			curve[i] = plotter.XY{X: p, Y: e}
		}
		el, err := plotter.NewLine(curve)
		if err != nil {
			return err
		}
		el.Color = c
		el.Width = vg.Points(1.5)
		errp.Add(el)
		errp.Legend.Add("γ_"+g.Name, el)
	}
	// Free corners: gamma is near 1 at the ends, errors vanish at p = 0.
	shape.Legend.Left = true
	errp.Legend.Top, errp.Legend.Left = true, true
	shape.Add(plotter.NewGrid())
	errp.Add(plotter.NewGrid())
	return SaveGrid(path, 16*vg.Centimeter, 20*vg.Centimeter, 2, 1, []*plot.Plot{shape, errp})
}
