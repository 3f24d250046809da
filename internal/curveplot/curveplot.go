// Package curveplot draws training curves in the style of the thesis'
// Figure 4.2: one line per algorithm for the mean over runs and a shaded
// band of one standard deviation around it.
package curveplot

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/darrm/darrm/internal/figure"
)

// Series is one algorithm's curve: the mean and standard deviation of a
// quantity at x = 0, 1, ..., len(Mean)−1 (epochs).
type Series struct {
	Label     string
	Mean, Std []float64
	Color     color.Color // nil: the next colour of the palette
}

// Panel is one figure panel.
type Panel struct {
	Title, XLabel, YLabel string
	// LogY draws the y axis on a log scale; the lower edge of a band is
	// then cut at Floor, since mean − std can be <= 0.
	LogY   bool
	Floor  float64
	Series []Series
}

// palette follows the thesis' colours where it names them: DP-ShuffleG
// blue, Public Only green, Interleaved red.
var palette = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255},
	color.RGBA{R: 255, G: 127, B: 14, A: 255},
	color.RGBA{R: 148, G: 103, B: 189, A: 255},
	color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255},
	color.RGBA{R: 140, G: 86, B: 75, A: 255},
}

// Write draws the panel into path, whose extension (.png or .svg, see
// figure.CheckPath) picks the format. The file is written atomically.
func Write(path string, p Panel) error {
	if err := figure.CheckPath(path); err != nil {
		return err
	}
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	if p.LogY {
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	pl.Legend.Top = true
	pl.X.Tick.Marker = epochTicks{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range p.Series {
		if len(s.Mean) == 0 || len(s.Std) != len(s.Mean) {
			return fmt.Errorf("plot series %q: %d means and %d stds: must be equal and non-zero", s.Label, len(s.Mean), len(s.Std))
		}
		c := s.Color
		if c == nil {
			c = palette[i%len(palette)]
		}
		band, line := make(plotter.XYs, 0, 2*len(s.Mean)), make(plotter.XYs, len(s.Mean))
		for k, m := range s.Mean {
			line[k] = plotter.XY{X: float64(k), Y: m}
			band = append(band, plotter.XY{X: float64(k), Y: lower(m, s.Std[k], p)})
		}
		for k := len(s.Mean) - 1; k >= 0; k-- {
			band = append(band, plotter.XY{X: float64(k), Y: s.Mean[k] + s.Std[k]})
		}
		if err := finite(s.Label, band); err != nil {
			return err
		}
		for _, xy := range band {
			lo, hi = math.Min(lo, xy.Y), math.Max(hi, xy.Y)
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return fmt.Errorf("plot series %q: %w", s.Label, err)
		}
		r, g, b, _ := c.RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 60}
		poly.LineStyle.Width = 0
		l, err := plotter.NewLine(line)
		if err != nil {
			return fmt.Errorf("plot series %q: %w", s.Label, err)
		}
		l.Color = c
		l.Width = vg.Points(1.5)
		pl.Add(poly, l)
		pl.Legend.Add(s.Label, l)
	}
	// Leave the top third of the panel to the legend.
	if hi > lo {
		if p.LogY && lo > 0 {
			pl.Y.Min, pl.Y.Max = lo, hi*math.Pow(hi/lo, 0.5)
		} else if !p.LogY {
			pl.Y.Min, pl.Y.Max = lo, hi+0.5*(hi-lo)
		}
	}
	return figure.SaveGrid(path, 6*vg.Inch, 4*vg.Inch, 1, 1, []*plot.Plot{pl})
}

func lower(mean, std float64, p Panel) float64 {
	v := mean - std
	if p.LogY && v < p.Floor {
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

// epochTicks labels the x axis with whole epochs, about five of them.
type epochTicks struct{}

// Ticks returns integer ticks between min and max.
func (epochTicks) Ticks(min, max float64) []plot.Tick {
	step := math.Max(1, math.Ceil((max-min)/5))
	if step > 5 {
		step = math.Ceil(step/5) * 5
	}
	var ticks []plot.Tick
	for x := math.Ceil(min/step) * step; x <= max; x += step {
		ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', 0, 64)})
	}
	return ticks
}
