// Package curveplot draws training curves in the style of the thesis'
// Figure 4.2: one line per algorithm for the mean over runs and a shaded
// band of one standard deviation around it, one panel per experiment, in
// package figure's style (one legend above the panels, axes that meet at
// the corners, 300 dpi PNG or SVG). A curve far above the others is drawn
// on a broken axis rather than cut; a line under a panel's title can list
// one value per curve in the curves' colours (the learning rates a search
// chose). It takes plain data, and turns DP-ShuffleG's reports
// (ShufflegFigure) into it; the command turns transfer's results into it.
package curveplot

import (
	"cmp"
	"context"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/darrm/darrm/cmd/darrm/internal/figure"
)

// Series is one algorithm's curve: the mean and standard deviation of a
// quantity at x = X[k], or at x = 0, 1, ..., len(Mean)−1 (epochs) when X
// is nil.
type Series struct {
	Label     string
	X         []float64
	Mean, Std []float64
	Color     color.Color // nil: the palette's colour for the series' index
	// Glyph marks the curve every few points, at other points for each
	// series, so that a curve that runs on another (an algorithm whose
	// loss ends at Public Only's) still shows; nil: Glyph(index).
	Glyph draw.GlyphDrawer
	// Key is the series' value in the panel's key (a learning rate), if
	// the panel has one.
	Key string
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
	// Reference are curves to compare with (the same algorithms in
	// another setting), drawn thin and dashed, without bands, under the
	// series.
	Reference []Series
	// KeyTitle, if set, starts a line under the panel's title that lists
	// each series' Key in the series' colour.
	KeyTitle string
}

// Figure is a grid of panels under a title, with one legend.
type Figure struct {
	Title  string
	Panels []*Panel // row-major; nil leaves a cell empty
	Cols   int      // panels per row (0: all in one row)
	// RowTitles, if set, head each row of panels.
	RowTitles []string
	// ShareY gives the panels of each row one y range (and one break,
	// where a row has curves far above the others).
	ShareY bool
	// Notes are lines under the legend: what the bands and the key are.
	Notes []string
}

// outlierSpan: on a linear axis, a series whose highest point is more
// than outlierSpan times as far above the lowest point of the panel as
// every other series' highest is drawn above a break of the axis, so that
// one curve (a private phase that blows up before the public one
// recovers) does not flatten the others into lines.
const outlierSpan = 2.5

// The broken axis: the part above the break, and the break, as fractions
// of the axis' height.
const (
	upperPart = 0.2
	breakPart = 0.05
)

var palette = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255},
	color.RGBA{R: 255, G: 127, B: 14, A: 255},
	color.RGBA{R: 148, G: 103, B: 189, A: 255},
	color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255},
	color.RGBA{R: 140, G: 86, B: 75, A: 255},
}

// Colour returns the palette's i-th colour: the thesis' blue, orange,
// purple, red and green, then brown.
func Colour(i int) color.Color { return palette[i%len(palette)] }

// glyphs are the markers that go with the palette's colours, shapes that
// grey-scale prints and colour-blind readers tell apart too.
var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}, draw.PlusGlyph{}}

// Glyph returns the marker that goes with Colour(i).
func Glyph(i int) draw.GlyphDrawer { return glyphs[i%len(glyphs)] }

// marks is how many points of a long curve carry its marker.
const marks = 6

// Write draws the figure into path, whose extension (.png or .svg) picks
// the format; one legend above the panels lists every series label once.
// The file is written atomically, in ctx (figure.Figure.Save).
func (f Figure) Write(ctx context.Context, path string) error {
	if err := figure.CheckPath(path); err != nil {
		return err
	}
	if len(f.Panels) == 0 || !slices.ContainsFunc(f.Panels, func(p *Panel) bool { return p != nil }) {
		return fmt.Errorf("curve figure: no panel")
	}
	cols := f.Cols
	if cols <= 0 {
		cols = len(f.Panels)
	}
	axes := make([]axis, len(f.Panels))
	for i, p := range f.Panels {
		if p == nil {
			continue
		}
		var err error
		if axes[i], err = p.axis(); err != nil {
			return err
		}
	}
	if f.ShareY {
		share(axes, f.Panels, cols)
	}
	plots := make([]*figure.Panel, len(f.Panels))
	var legend []figure.Entry
	seen := map[string]bool{}
	for i, p := range f.Panels {
		if p == nil {
			continue
		}
		plots[i] = p.plot(axes[i])
		for j, s := range p.Series {
			if !seen[s.Label] {
				seen[s.Label] = true
				legend = append(legend, figure.Entry{Label: s.Label, Thumbs: []plot.Thumbnailer{line(s.color(j)), &plotter.Scatter{GlyphStyle: s.glyphStyle(j)}}})
			}
		}
	}
	for _, n := range f.Notes {
		legend = append(legend, figure.Entry{Label: n})
	}
	fig := figure.Figure{Title: f.Title, Legend: legend, Cols: cols, Panels: plots, RowTitles: f.RowTitles, ShareY: f.ShareY, Aspect: 0.68}
	return fig.Save(ctx, path)
}

func (s Series) color(i int) color.Color {
	if s.Color != nil {
		return s.Color
	}
	return Colour(i)
}

// glyphStyle is the marker of the series of index i.
func (s Series) glyphStyle(i int) draw.GlyphStyle {
	g := s.Glyph
	if g == nil {
		g = Glyph(i)
	}
	return draw.GlyphStyle{Color: s.color(i), Radius: vg.Points(1.9), Shape: g}
}

// markAt returns the points of series j of ns, of n points, that carry
// its marker: all of a short curve's (a few measurements, which must not
// read as a continuous one); of a long one, marks of them evenly spaced,
// each series' shifted by its share of the spacing, so that curves that
// coincide show each its own markers.
func markAt(n, j, ns int) []int {
	if n <= 12 {
		out := make([]int, n)
		for k := range out {
			out[k] = k
		}
		return out
	}
	step := float64(n-1) / marks
	var out []int
	for m := range marks {
		if k := int(math.Round((float64(m) + (float64(j)+0.5)/float64(ns)) * step)); k < n {
			out = append(out, k)
		}
	}
	return out
}

func line(c color.Color) *plotter.Line {
	return &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1.1)}}
}

// axis is a panel's y range: [lo, top] for every series, and above a
// break [breakLo, hi] for the series far above the others (outliers); and
// the panel's curves: per series its points' abscissae, means and the
// lower and upper edges of its band.
type axis struct {
	lo, top     float64
	breakLo, hi float64
	broken      bool
	outliers    []int
	x0, x1      float64
	xs          [][]float64
	mid         [][]float64
	low, high   [][]float64
}

// axis checks the panel's series and finds its y range.
func (p *Panel) axis() (axis, error) {
	var a axis
	if len(p.Series) == 0 {
		return a, fmt.Errorf("curve figure: panel %q has no series", p.Title)
	}
	a.lo = math.Inf(1)
	a.x0, a.x1 = math.Inf(1), math.Inf(-1)
	his := make([]float64, len(p.Series))
	for i, s := range p.Series {
		if len(s.Mean) == 0 || len(s.Std) != len(s.Mean) || s.X != nil && len(s.X) != len(s.Mean) {
			return a, fmt.Errorf("plot series %q: %d means, %d stds and %d abscissae: must be equal and non-zero", s.Label, len(s.Mean), len(s.Std), len(s.X))
		}
		n := len(s.Mean)
		xs, mid, low, high := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		his[i] = math.Inf(-1)
		for k, m := range s.Mean {
			l := m - s.Std[k]
			if p.Lower != nil && l < *p.Lower {
				l = min(*p.Lower, m)
			}
			xs[k], mid[k], low[k], high[k] = s.x(k), p.cut(m), p.cut(l), p.cut(m+s.Std[k])
			for _, v := range []float64{mid[k], low[k], high[k]} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return a, fmt.Errorf("plot series %q: non-finite value %v at epoch %v", s.Label, v, xs[k])
				}
			}
			a.lo, his[i] = math.Min(a.lo, low[k]), math.Max(his[i], high[k])
			a.x0, a.x1 = math.Min(a.x0, xs[k]), math.Max(a.x1, xs[k])
		}
		a.xs, a.mid, a.low, a.high = append(a.xs, xs), append(a.mid, mid), append(a.low, low), append(a.high, high)
	}
	a.top = slices.Max(his)
	var refs []float64 // the reference curves' points, kept in the range
	for _, s := range p.Reference {
		for k, m := range s.Mean {
			v := p.cut(m)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return a, fmt.Errorf("plot reference %q: non-finite value %v at epoch %v", s.Label, v, s.x(k))
			}
			refs = append(refs, v)
		}
	}
	if !p.LogY {
		a.outliers = outliers(a.lo, his)
	}
	if len(a.outliers) == 0 {
		for _, v := range refs {
			a.lo, a.top = math.Min(a.lo, v), math.Max(a.top, v)
		}
		return a, nil
	}
	// The lower part holds every point of the other series; the upper part
	// the outliers' means above it.
	a.top = math.Inf(-1)
	for i, h := range his {
		if !slices.Contains(a.outliers, i) {
			a.top = math.Max(a.top, h)
		}
	}
	a.breakLo, a.hi = math.Inf(1), math.Inf(-1)
	for _, i := range a.outliers {
		for _, m := range a.mid[i] {
			if m > a.top {
				a.breakLo, a.hi = math.Min(a.breakLo, m), math.Max(a.hi, m)
			}
		}
	}
	for _, v := range refs {
		if v > a.top {
			a.breakLo, a.hi = math.Min(a.breakLo, v), math.Max(a.hi, v)
		} else {
			a.lo = math.Min(a.lo, v)
		}
	}
	// Only a band above the others and no mean: no break, the band is
	// cut at the top.
	a.broken = !math.IsInf(a.breakLo, 1)
	return a, nil
}

// share gives the panels of each row one lower range, and the broken ones
// one upper range.
func share(axes []axis, panels []*Panel, cols int) {
	for r := 0; r*cols < len(panels); r++ {
		lo, top, blo, hi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		for i := r * cols; i < min((r+1)*cols, len(panels)); i++ {
			if panels[i] == nil {
				continue
			}
			a := axes[i]
			lo, top = math.Min(lo, a.lo), math.Max(top, a.top)
			if a.broken {
				blo, hi = math.Min(blo, a.breakLo), math.Max(hi, a.hi)
			}
		}
		for i := r * cols; i < min((r+1)*cols, len(panels)); i++ {
			if panels[i] == nil {
				continue
			}
			a := &axes[i]
			a.lo, a.top = lo, top
			if a.broken {
				a.breakLo, a.hi = blo, hi
				// another panel of the row reaches the outliers: no
				// break, one linear range for the row's panels
				if !(a.breakLo > a.top) {
					a.broken, a.top = false, math.Max(a.top, a.hi)
				}
			}
		}
	}
}

// plot builds the panel's plot: bands first, then the reference lines,
// then the lines, and the key under the title.
func (p *Panel) plot(a axis) *figure.Panel {
	pl := figure.NewPanel()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.X.Tick.Marker = figure.Ticks{Integer: true, Most: 6}
	pl.X.Min, pl.X.Max = a.x0, a.x1
	switch {
	case p.LogY:
		figure.LogY(pl)
		pl.Y.Label.Text += " (log scale)"
		pl.Y.Min, pl.Y.Max = a.lo, a.top
	case a.broken:
		// room above the highest point of each part, and below the
		// lowest of the upper part, as long as it stays above the lower
		top := a.top + 0.04*(a.top-a.lo)
		span := a.hi - a.breakLo + 1e-9*math.Abs(a.hi)
		blo, hi := math.Max(a.breakLo-0.08*span, top+1e-9*math.Abs(top)), a.hi+0.15*span
		s := figure.BrokenScale{Lo: top, Hi: blo, Upper: upperPart, Cut: breakPart}
		pl.Y.Scale, pl.Y.Tick.Marker = s, s
		pl.Y.Min, pl.Y.Max = a.lo-0.03*(a.top-a.lo), hi
	default:
		// room below the lowest point and above the highest, so that no
		// curve, reference or band runs along (and under) the frame
		pl.Y.Min, pl.Y.Max = a.lo-0.03*(a.top-a.lo), a.top+0.04*(a.top-a.lo)
	}
	for i, s := range p.Reference {
		ref := make(plotter.XYs, len(s.Mean))
		for k, m := range s.Mean {
			ref[k] = plotter.XY{X: s.x(k), Y: p.cut(m)}
		}
		pl.Add(&plotter.Line{XYs: ref, LineStyle: draw.LineStyle{Color: s.color(i), Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(2.5), vg.Points(1.5)}}})
	}
	// Bands, then every line's white halo (which keeps it readable over
	// the bands, not over another line), then the lines, the first series
	// on top (a baseline listed last, Public Only, at the bottom, so that
	// a curve that ends on it is drawn over it), then the markers: a line
	// that runs on another hides it, but not its markers.
	var halos, lines, markers []plot.Plotter
	for i, s := range p.Series {
		c := s.color(i)
		r, g, b, _ := c.RGBA()
		fill := color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 34}
		for _, band := range a.bands(i, pl.Y.Scale) {
			poly, _ := plotter.NewPolygon(band)
			poly.Color, poly.LineStyle.Width = fill, 0
			pl.Add(poly)
		}
		mid := make(plotter.XYs, len(a.mid[i]))
		for k := range mid {
			mid[k] = plotter.XY{X: a.xs[i][k], Y: a.mid[i][k]}
		}
		halos = append(halos, &plotter.Line{XYs: mid, LineStyle: draw.LineStyle{Color: color.White, Width: vg.Points(2.6)}})
		l := line(c)
		l.XYs = mid
		lines = append(lines, l)
		var at plotter.XYs
		for _, k := range markAt(len(mid), i, len(p.Series)) {
			at = append(at, mid[k])
		}
		markers = append(markers, &plotter.Scatter{XYs: at, GlyphStyle: s.glyphStyle(i)})
	}
	slices.Reverse(lines)
	pl.Add(halos...)
	pl.Add(lines...)
	pl.Add(markers...)
	if p.KeyTitle != "" {
		pl.Subtitle = []figure.Run{{Text: p.KeyTitle, Color: color.Black}}
		for i, s := range p.Series {
			if s.Key != "" {
				pl.Subtitle = append(pl.Subtitle, figure.Run{Text: "  " + s.Key, Color: s.color(i)})
			}
		}
	}
	return pl
}

// bands returns the band polygons of series i: one over all its points;
// for a curve above the break of a broken axis, one per run of points on
// either side of the break, each kept to its side (one standard deviation
// of runs that diverge would otherwise stripe the lower part).
func (a axis) bands(i int, scale plot.Normalizer) []plotter.XYs {
	s, broken := scale.(figure.BrokenScale)
	if !broken || !slices.Contains(a.outliers, i) {
		return []plotter.XYs{band(a.xs[i], a.low[i], a.high[i], 0, len(a.xs[i]))}
	}
	var out []plotter.XYs
	n := len(a.mid[i])
	for k := 0; k < n; {
		above := a.mid[i][k] >= s.Hi
		below := a.mid[i][k] <= s.Lo
		if !above && !below {
			k++
			continue
		}
		e := k
		for e < n && (a.mid[i][e] >= s.Hi) == above && (a.mid[i][e] <= s.Lo) == below {
			e++
		}
		low, high := slices.Clone(a.low[i]), slices.Clone(a.high[i])
		for j := k; j < e; j++ {
			if above {
				low[j] = math.Max(low[j], s.Hi)
			} else {
				high[j] = math.Min(high[j], s.Lo)
			}
		}
		out = append(out, band(a.xs[i], low, high, k, e))
		k = e
	}
	return out
}

// band is the polygon between low and high over points k to e-1.
func band(xs, low, high []float64, k, e int) plotter.XYs {
	out := make(plotter.XYs, 0, 2*(e-k))
	for j := k; j < e; j++ {
		out = append(out, plotter.XY{X: xs[j], Y: low[j]})
	}
	for j := e - 1; j >= k; j-- {
		out = append(out, plotter.XY{X: xs[j], Y: high[j]})
	}
	return out
}

// outliers returns the series whose highest points his are far above the
// rest, highest first (outlierSpan), with lo the panel's lowest point. At
// least one series stays below.
func outliers(lo float64, his []float64) []int {
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
	return out
}

// cut returns v, or Floor on a log axis when v is below it.
func (p *Panel) cut(v float64) float64 {
	if p.LogY && !(v >= p.Floor) {
		return p.Floor
	}
	return v
}
