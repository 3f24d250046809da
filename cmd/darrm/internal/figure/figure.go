// Package figure draws darrm's figures with gonum/plot in one style fit for
// a paper.
//
// They are sized to be printed as they are (at most a page's text width, 6.5
// in, with 7-9 pt text): axes framed on four sides that meet at the corners,
// ticks outside the frame with labels in one format per axis (Ticks,
// LogTicks), panels of a grid aligned on their data areas and, on request,
// one y scale per row, a broken y axis for a curve far above the others
// (BrokenScale), one legend above the panels where it covers no curve, Greek
// symbols and sub- and superscripts in every text (Text), PNG at 300 dpi or
// SVG by the file's extension, written atomically so that a failed command
// leaves no half-written image behind.
//
// The figures take plain data: the gamma figures of darrm solve and plot
// (GammaFigure, whose columns the command makes of its solve documents),
// GNMax's calibration (WriteGNMax, of GNMaxTargetOf's targets); package
// curveplot draws curves with bands on top of it.
package figure

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/darrm/darrm/internal/atomicfile"
)

// DPI is the resolution of PNG figures: print quality. The file records it
// (a pHYs chunk), so that LaTeX and image viewers give the figure its size
// in inches rather than 72 pixels per inch.
const DPI = 300

// Font sizes in points, at the size the figure is printed.
const (
	titleSize  = 9
	panelSize  = 8
	labelSize  = 8
	tickSize   = 7
	legendSize = 7.5
)

// The frame, ticks and gaps, in points (matplotlib's proportions for these
// fonts).
const (
	spineWidth = 0.6
	majorTick  = 3
	minorTick  = 1.7
	tickPad    = 2 // between a tick and its label
	labelPad   = 3 // between the tick labels and the axis label
	titlePad   = 4 // between a panel's title and its frame
	margin     = 4 // around the figure
	hgap       = 10
	vgap       = 8
)

// The default width of a figure is PanelWidth per column, at least a
// paper's column width, MinWidth, and at most a page's text width,
// MaxWidth.
const (
	MinWidth   = 3.4 * vg.Inch
	MaxWidth   = 6.5 * vg.Inch
	PanelWidth = 2.6 * vg.Inch
)

var handler = Text{Fonts: font.DefaultCache}

// CheckPath validates a figure file name before any work is done.
func CheckPath(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".svg":
		return nil
	}
	return fmt.Errorf("figure %q: the file name must end in .png or .svg", path)
}

// CheckCols checks a number of panels per row that a caller states
// (Figure.Cols, whose 0 is the default: all in one row).
func CheckCols(n int) error {
	if n < 1 {
		return fmt.Errorf("cols = %d: must be >= 1", n)
	}
	return nil
}

// style returns a text style of the figures at size points.
func style(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: handler}
}

// Panel is one plot of a figure: its title, its axes (ranges, scales, tick
// markers, labels) in the embedded gonum Plot, and what it draws. Figure
// draws the axes itself (gonum's would not meet at the corners nor line up
// across panels), so the plotters are kept here.
type Panel struct {
	*plot.Plot
	Items []plot.Plotter
	// Subtitle is a line under the title in runs of their own colours
	// (values that belong to the curves of those colours).
	Subtitle []Run
}

// Run is a stretch of text (Text markup) in one colour.
type Run struct {
	Text  string
	Color color.Color
}

// Add adds plotters, drawn in order over the data area.
func (p *Panel) Add(ps ...plot.Plotter) { p.Items = append(p.Items, ps...) }

// NewPanel returns an empty panel in the figures' style: the Text handler
// for every label, Ticks on both axes and a light grid at the labelled
// ticks.
func NewPanel() *Panel {
	p := &Panel{Plot: plot.New()}
	set := func(s *text.Style, size vg.Length) {
		s.Handler = handler
		s.Font.Size = size
	}
	set(&p.Title.TextStyle, panelSize)
	set(&p.X.Label.TextStyle, labelSize)
	set(&p.Y.Label.TextStyle, labelSize)
	set(&p.X.Tick.Label, tickSize)
	set(&p.Y.Tick.Label, tickSize)
	p.X.Tick.Marker = Ticks{}
	p.Y.Tick.Marker = Ticks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 232}
	grid.Horizontal.Color = color.Gray{Y: 232}
	grid.Vertical.Width = vg.Points(0.4)
	grid.Horizontal.Width = vg.Points(0.4)
	p.Add(grid)
	return p
}

// LogY puts p's y axis on a log scale with LogTicks.
func LogY(p *Panel) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = LogTicks{}
}

// Pad widens [lo, hi] by frac of its span on each side, as matplotlib's
// axes margins do, so that a line at either end is not drawn on the frame.
func Pad(lo, hi, frac float64) (float64, float64) {
	d := (hi - lo) * frac
	return lo - d, hi + d
}

// Entry is one item of a figure's legend: a label (Text markup) and the
// thumbnails of the styles it stands for; an entry without thumbnails is
// a line of text of its own under the others.
type Entry struct {
	Label  string
	Thumbs []plot.Thumbnailer
}

// Figure is a grid of panels under a title and one legend that spans the
// figure, so that the legend covers no curve.
type Figure struct {
	Title  string
	Legend []Entry
	Cols   int      // panels per row (0: all in one row)
	Panels []*Panel // row-major; nil leaves a cell empty
	// RowTitles, if set, head each row of panels across the figure.
	RowTitles []string
	// ShareY gives the panels of each row that have the same y scale the
	// y range of their union, labelled on the leftmost of them only.
	ShareY bool
	// Width is the figure's width (0: PanelWidth per column, at most
	// MaxWidth); Aspect the height of each data area over its width (0:
	// 0.7).
	Width  vg.Length
	Aspect float64
}

// legend layout: thumbnail width, gap between a thumbnail and its label,
// between entries.
const (
	thumbWidth = 18
	thumbGap   = 3
	entryGap   = 10
)

// legendLines breaks the legend into lines no wider than width: the
// entries with thumbnails first, then each text entry on a line of its own.
func (f *Figure) legendLines(width vg.Length) [][]Entry {
	sty := style(legendSize)
	var lines [][]Entry
	var x vg.Length
	for _, e := range f.Legend {
		if len(e.Thumbs) == 0 {
			continue
		}
		w := thumbWidth + thumbGap + sty.Width(e.Label)
		if len(lines) == 0 || x+entryGap+w > width {
			lines = append(lines, nil)
			x = -entryGap
		}
		lines[len(lines)-1] = append(lines[len(lines)-1], e)
		x += entryGap + w
	}
	for _, e := range f.Legend {
		if len(e.Thumbs) == 0 {
			for _, l := range wrapAt(sty, e.Label, width, false) {
				lines = append(lines, []Entry{{Label: l}})
			}
		}
	}
	return lines
}

// wrapLines wraps each line of a title, txt, to width: at the end of a
// clause ("; ", then ", ") where one ends on the line, so that a title
// breaks between the things it states, not inside one (wrapAt).
func wrapLines(sty text.Style, txt string, width vg.Length) string {
	var out []string
	for _, l := range strings.Split(txt, "\n") {
		out = append(out, wrapAt(sty, l, width, true)...)
	}
	return strings.Join(out, "\n")
}

// operators are the words that a line must not end or start with: "m·ε
// =" on one line and "0.3" on the next reads as two things.
var operators = map[string]bool{"=": true, "+": true, "-": true, "−": true, "·": true, "×": true, "<": true, ">": true, "≤": true, "≥": true, "≈": true}

// numbered are the words that name what the number after them numbers:
// "Lemma" at a line's end and "3.4.1" on the next read as two things.
var numbered = map[string]bool{"Lemma": true, "Theorem": true, "Figure": true, "Table": true, "Section": true, "Algorithm": true, "Appendix": true}

// breakRank ranks the break between the words a and b: 0 never (beside an
// operator, or after a word that names a number), 1 a space, and for
// clauses 3 after a ";" or ":", 2 after a ",".
func breakRank(a, b string, clauses bool) int {
	switch {
	case operators[a] || operators[b] || numbered[strings.TrimLeft(a, "(")]:
		return 0
	case clauses && (strings.HasSuffix(a, ";") || strings.HasSuffix(a, ":")):
		return 3
	case clauses && strings.HasSuffix(a, ","):
		return 2
	}
	return 1
}

// wrapAt breaks txt into lines no wider than width in sty: each line ends
// at the best-ranked break (breakRank) among those that keep it within
// width, the last of them; a line with no allowed break is cut at its
// last space, and a word wider than width stands alone.
func wrapAt(sty text.Style, txt string, width vg.Length, clauses bool) []string {
	words := strings.Fields(txt)
	var lines []string
	for len(words) > 0 {
		n := 1 // words on this line
		for n < len(words) && sty.Width(strings.Join(words[:n+1], " ")) <= width {
			n++
		}
		if n < len(words) {
			best, rank := n, 0
			for i := n; i >= 1; i-- { // the break before words[i]
				if r := breakRank(words[i-1], words[i], clauses); r > rank {
					best, rank = i, r
				}
			}
			n = best
		}
		lines = append(lines, strings.Join(words[:n], " "))
		words = words[n:]
	}
	if len(lines) == 0 {
		return []string{""}
	}
	return lines
}

// cell is a panel's place in the grid and the room its axes need around
// its data area.
type cell struct {
	p                        *Panel
	row, col                 int
	left, right, top, bottom vg.Length
	yLabels                  bool // draw the y tick labels and axis label
}

// Save draws the figure and writes it to path: PNG at DPI dots per inch or
// SVG, by the extension. It wraps the panels' titles to their width and,
// with ShareY, sets their shared y ranges. Once ctx is done, an open or a
// write that blocks (a FIFO with no reader) returns ctx's error.
func (f *Figure) Save(ctx context.Context, path string) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	cols := f.Cols
	if cols <= 0 {
		cols = len(f.Panels)
	}
	rows := (len(f.Panels) + cols - 1) / cols
	width := f.Width
	if width == 0 {
		width = max(MinWidth, min(vg.Length(cols)*PanelWidth, MaxWidth))
	}
	// Titles wider than the figure or their panel wrap.
	title := wrapLines(style(titleSize), f.Title, width-2*margin)
	for _, p := range f.Panels {
		if p != nil && p.Title.Text != "" {
			p.Title.Text = wrapLines(p.Title.TextStyle, p.Title.Text, (width-2*margin)/vg.Length(cols)-hgap)
		}
	}
	aspect := f.Aspect
	if aspect == 0 {
		aspect = 0.7
	}
	if f.ShareY {
		shareY(f.Panels, cols)
	}

	cells := make([]*cell, len(f.Panels))
	colLeft, colRight := make([]vg.Length, cols), make([]vg.Length, cols)
	rowTop, rowBottom := make([]vg.Length, rows), make([]vg.Length, rows)
	for i, p := range f.Panels {
		if p == nil {
			continue
		}
		c := &cell{p: p, row: i / cols, col: i % cols, yLabels: !f.ShareY || i%cols == 0 || f.Panels[i-1] == nil || f.Panels[i-1].Y.Scale != p.Y.Scale}
		c.measure()
		cells[i] = c
		colLeft[c.col] = max(colLeft[c.col], c.left)
		colRight[c.col] = max(colRight[c.col], c.right)
		rowTop[c.row] = max(rowTop[c.row], c.top)
		rowBottom[c.row] = max(rowBottom[c.row], c.bottom)
	}
	rowTitleSty := style(panelSize + 0.5)
	rowTitleH := make([]vg.Length, rows)
	rowTitles := make([]string, rows)
	for r := range rows {
		if r < len(f.RowTitles) && f.RowTitles[r] != "" {
			rowTitles[r] = wrapLines(rowTitleSty, f.RowTitles[r], width-2*margin)
			rowTitleH[r] = textHeight(rowTitleSty, rowTitles[r]) + titlePad
		}
	}
	fixed := 2*margin + vg.Length(cols-1)*hgap
	for c := range cols {
		fixed += colLeft[c] + colRight[c]
	}
	dataW := (width - fixed) / vg.Length(cols)
	if dataW < 40 {
		return fmt.Errorf("figure %s: %d columns do not fit in %.1f in", path, cols, float64(width/vg.Inch))
	}
	dataH := dataW * vg.Length(aspect)

	titleSty, legendSty := style(titleSize), style(legendSize)
	var titleH vg.Length
	if title != "" {
		titleH = textHeight(titleSty, title) + margin
	}
	lines := f.legendLines(width - 2*margin)
	// A legend line holds the tallest script (γ_{opt}, 10^{-6}) and a gap.
	lineH := textHeight(legendSty, "A_{p}^{2}g") * 1.2
	var legendH vg.Length
	for _, l := range lines {
		legendH += legendLineHeight(l, lineH)
	}
	if legendH > 0 {
		legendH += margin
	}
	height := 2*margin + titleH + legendH
	for r := range rows {
		height += rowTitleH[r] + rowTop[r] + dataH + rowBottom[r]
	}
	height += vg.Length(rows-1) * vgap

	var canvas vg.CanvasWriterTo
	png := !strings.EqualFold(filepath.Ext(path), ".svg")
	if png {
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(DPI))}
	} else {
		canvas = vgsvg.New(width, height)
	}
	dc := draw.New(canvas)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	top := height - margin
	if title != "" {
		titleSty.XAlign, titleSty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(titleSty, vg.Point{X: width / 2, Y: top}, title)
		top -= titleH
	}
	f.drawLegend(dc, lines, width, top, lineH)
	top -= legendH

	colX := make([]vg.Length, cols) // left edge of each column's data area
	x := vg.Length(margin)
	for c := range cols {
		x += colLeft[c]
		colX[c] = x
		x += dataW + colRight[c] + hgap
	}
	for r := range rows {
		if rowTitleH[r] > 0 {
			sty := rowTitleSty
			sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
			dc.FillText(sty, vg.Point{X: width / 2, Y: top}, rowTitles[r])
			top -= rowTitleH[r]
		}
		dataTop := top - rowTop[r]
		for c := range cols {
			i := r*cols + c
			if i >= len(cells) || cells[i] == nil {
				continue
			}
			area := vg.Rectangle{Min: vg.Point{X: colX[c], Y: dataTop - dataH}, Max: vg.Point{X: colX[c] + dataW, Y: dataTop}}
			cells[i].draw(dc, area, top)
		}
		top = dataTop - dataH - rowBottom[r] - vgap
	}

	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return fmt.Errorf("figure %s: %w", path, err)
	}
	out := buf.Bytes()
	if png {
		var err error
		if out, err = withDPI(out, DPI); err != nil {
			return fmt.Errorf("figure %s: %w", path, err)
		}
	}
	return atomicfile.WriteOutput(ctx, path, 0o644, func(w io.Writer) error {
		_, err := w.Write(out)
		return err
	})
}

// legendLineHeight is the height of a legend line: lineH for entries,
// less for a line of text, which needs no room for thumbnails.
func legendLineHeight(line []Entry, lineH vg.Length) vg.Length {
	if len(line) == 1 && len(line[0].Thumbs) == 0 {
		return lineH * 0.85
	}
	return lineH
}

// drawLegend draws the legend's lines, each centred, from top down.
func (f *Figure) drawLegend(dc draw.Canvas, lines [][]Entry, width, top, lineH vg.Length) {
	sty := style(legendSize)
	sty.YAlign = draw.YCenter
	for _, line := range lines {
		var lw vg.Length
		for i, e := range line {
			if i > 0 {
				lw += entryGap
			}
			if len(e.Thumbs) > 0 {
				lw += thumbWidth + thumbGap
			}
			lw += sty.Width(e.Label)
		}
		h := legendLineHeight(line, lineH)
		x, mid := (width-lw)/2, top-h/2
		for _, e := range line {
			if len(e.Thumbs) > 0 {
				icon := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
					Min: vg.Point{X: x, Y: mid - lineH/3}, Max: vg.Point{X: x + thumbWidth, Y: mid + lineH/3}}}
				for _, t := range e.Thumbs {
					t.Thumbnail(&icon)
				}
				x += thumbWidth + thumbGap
			}
			dc.FillText(sty, vg.Point{X: x, Y: mid}, e.Label)
			x += sty.Width(e.Label) + entryGap
		}
		top -= h
	}
}

// shareY gives the panels of each row that have the same y scale the
// union of their y ranges.
func shareY(panels []*Panel, cols int) {
	for r := 0; r*cols < len(panels); r++ {
		row := panels[r*cols : min((r+1)*cols, len(panels))]
		for _, p := range row {
			if p == nil {
				continue
			}
			lo, hi := p.Y.Min, p.Y.Max
			for _, q := range row {
				if q != nil && q.Y.Scale == p.Y.Scale {
					lo, hi = math.Min(lo, q.Y.Min), math.Max(hi, q.Y.Max)
				}
			}
			p.Y.Min, p.Y.Max = lo, hi
		}
	}
}

// measure computes the room the cell's axes, labels and title need
// around its data area.
func (c *cell) measure() {
	p := c.p
	xt := p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max)
	yt := p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max)
	c.bottom = majorTick + tickPad + labelsSize(p.X.Tick.Label, xt, textHeight)
	if p.X.Label.Text != "" {
		c.bottom += labelPad + textHeight(p.X.Label.TextStyle, p.X.Label.Text)
	}
	c.left = majorTick
	if c.yLabels {
		c.left += tickPad + labelsSize(p.Y.Tick.Label, yt, text.Style.Width)
		if p.Y.Label.Text != "" {
			c.left += labelPad + textHeight(p.Y.Label.TextStyle, p.Y.Label.Text)
		}
	}
	// The top tick label sticks out above the frame by half its height,
	// the last x tick label to the right by half its width.
	c.top = p.Y.Tick.Label.Height("0") / 2
	if p.Title.Text != "" {
		c.top = textHeight(p.Title.TextStyle, p.Title.Text) + titlePad
	}
	if len(p.Subtitle) > 0 {
		c.top += textHeight(style(tickSize), "10^{-6}_{p}") + 1
	}
	c.right = 2
	for _, t := range xt {
		if t.Label != "" && p.X.Norm(t.Value) > 0.999 {
			c.right = max(c.right, p.X.Tick.Label.Width(t.Label)/2)
		}
	}
}

// labelsSize is the largest size of the ticks' labels in sty, measured
// by size: textHeight, or text.Style.Width.
func labelsSize(sty text.Style, ticks []plot.Tick, size func(text.Style, string) vg.Length) vg.Length {
	var n vg.Length
	for _, t := range ticks {
		if t.Label != "" {
			n = max(n, size(sty, t.Label))
		}
	}
	return n
}

// Breaker is a y scale with a gap (BrokenScale): Figure draws break marks
// on the frame across it.
type Breaker interface {
	// Gap returns the normalised positions, in [0, 1], of the ends of the
	// gap.
	Gap(min, max float64) (lo, hi float64)
}

// draw draws the cell's panel with its data in area and its title's top at
// rowTop: the plotters, the frame, the ticks and their labels, the axis
// labels and the title.
func (c *cell) draw(dc draw.Canvas, area vg.Rectangle, rowTop vg.Length) {
	p := c.p
	data := draw.Canvas{Canvas: dc.Canvas, Rectangle: area}
	for _, pl := range p.Items {
		pl.Plot(data, p.Plot)
	}
	frame := draw.LineStyle{Color: color.Black, Width: vg.Points(spineWidth)}
	dc.StrokeLines(frame, []vg.Point{area.Min, {X: area.Max.X, Y: area.Min.Y}, area.Max, {X: area.Min.X, Y: area.Max.Y}, area.Min})
	if b, ok := p.Y.Scale.(Breaker); ok {
		lo, hi := b.Gap(p.Y.Min, p.Y.Max)
		drawBreak(dc, area, lo, hi)
	}

	// x ticks, below the frame; y ticks, left of it
	sty := p.X.Tick.Label
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	xt := eachTick(p.X, func(n vg.Length, l vg.Length, label string) {
		x := area.Min.X + n*area.Size().X
		dc.StrokeLine2(frame, x, area.Min.Y, x, area.Min.Y-l)
		if label != "" {
			dc.FillText(sty, vg.Point{X: x, Y: area.Min.Y - majorTick - tickPad}, label)
		}
	})
	if p.X.Label.Text != "" {
		ls := p.X.Label.TextStyle
		ls.XAlign, ls.YAlign = draw.XCenter, draw.YTop
		y := area.Min.Y - majorTick - tickPad - labelsSize(p.X.Tick.Label, xt, textHeight) - labelPad
		dc.FillText(ls, vg.Point{X: (area.Min.X + area.Max.X) / 2, Y: y}, p.X.Label.Text)
	}
	ysty := p.Y.Tick.Label
	ysty.XAlign, ysty.YAlign = draw.XRight, draw.YCenter
	yt := eachTick(p.Y, func(n vg.Length, l vg.Length, label string) {
		y := area.Min.Y + n*area.Size().Y
		dc.StrokeLine2(frame, area.Min.X, y, area.Min.X-l, y)
		if label != "" && c.yLabels {
			dc.FillText(ysty, vg.Point{X: area.Min.X - majorTick - tickPad, Y: y}, label)
		}
	})
	if p.Y.Label.Text != "" && c.yLabels {
		ls := p.Y.Label.TextStyle
		ls.XAlign, ls.YAlign = draw.XCenter, draw.YBottom
		ls.Rotation = math.Pi / 2
		x := area.Min.X - majorTick - tickPad - labelsSize(p.Y.Tick.Label, yt, text.Style.Width) - labelPad
		dc.FillText(ls, vg.Point{X: x, Y: (area.Min.Y + area.Max.Y) / 2}, p.Y.Label.Text)
	}

	if p.Title.Text != "" {
		ts := p.Title.TextStyle
		ts.XAlign, ts.YAlign = draw.XCenter, draw.YTop
		dc.FillText(ts, vg.Point{X: (area.Min.X + area.Max.X) / 2, Y: rowTop}, p.Title.Text)
	}
	if len(p.Subtitle) > 0 {
		ss := style(tickSize)
		ss.YAlign = draw.YBottom
		var w vg.Length
		for _, r := range p.Subtitle {
			w += ss.Width(r.Text)
		}
		x := (area.Min.X+area.Max.X)/2 - w/2
		y := area.Max.Y + titlePad
		for _, r := range p.Subtitle {
			ss.Color = r.Color
			dc.FillText(ss, vg.Point{X: x, Y: y}, r.Text)
			x += ss.Width(r.Text)
		}
	}
}

// eachTick calls fn with the normalised position, the length and the
// label of each tick of a within its range, and returns the ticks.
func eachTick(a plot.Axis, fn func(n, length vg.Length, label string)) []plot.Tick {
	ticks := a.Tick.Marker.Ticks(a.Min, a.Max)
	for _, t := range ticks {
		n := a.Norm(t.Value)
		if n < -1e-9 || n > 1+1e-9 {
			continue
		}
		l := vg.Length(majorTick)
		if t.Label == "" {
			l = minorTick
		}
		fn(vg.Length(n), l, t.Label)
	}
	return ticks
}

// drawBreak cuts the frame's sides between the normalised heights lo and
// hi and marks the cut with two short slanted strokes on each side.
func drawBreak(dc draw.Canvas, area vg.Rectangle, lo, hi float64) {
	y0 := area.Min.Y + vg.Length(lo)*area.Size().Y
	y1 := area.Min.Y + vg.Length(hi)*area.Size().Y
	w := vg.Points(spineWidth + 1)
	dc.SetColor(color.White)
	for _, x := range []vg.Length{area.Min.X, area.Max.X} {
		var r vg.Path
		r.Move(vg.Point{X: x - w, Y: y0})
		r.Line(vg.Point{X: x + w, Y: y0})
		r.Line(vg.Point{X: x + w, Y: y1})
		r.Line(vg.Point{X: x - w, Y: y1})
		r.Close()
		dc.Fill(r)
	}
	mark := draw.LineStyle{Color: color.Black, Width: vg.Points(spineWidth)}
	d := vg.Points(3)
	for _, x := range []vg.Length{area.Min.X, area.Max.X} {
		for _, y := range []vg.Length{y0, y1} {
			dc.StrokeLine2(mark, x-d, y-d/2, x+d, y+d/2)
		}
	}
}

// textHeight is the height of txt in sty with the depth of a subscript on
// its last line and the height of a superscript on its first, which
// text.Style.Height leaves out.
func textHeight(sty text.Style, txt string) vg.Length {
	h := sty.Height(txt)
	lines := handler.Lines(txt)
	ext := handler.Extents(sty.Font)
	_, top, _ := handler.Box(lines[0], sty.Font)
	_, _, bottom := handler.Box(lines[len(lines)-1], sty.Font)
	return h + max(0, top-ext.Ascent) + max(0, bottom-ext.Descent)
}

// withDPI inserts a pHYs chunk recording dpi into a PNG (Go's encoder
// writes none) right after its IHDR chunk, where the format requires it
// to come before the image data.
func withDPI(png []byte, dpi float64) ([]byte, error) {
	const ihdrEnd = 8 + 4 + 4 + 13 + 4 // signature, IHDR length, type, data, CRC
	if len(png) < ihdrEnd || string(png[12:16]) != "IHDR" {
		return nil, fmt.Errorf("encoded PNG has no IHDR chunk first")
	}
	ppm := uint32(math.Round(dpi / 0.0254)) // pixels per metre
	chunk := make([]byte, 0, 4+4+9+4)
	chunk = binary.BigEndian.AppendUint32(chunk, 9)
	chunk = append(chunk, "pHYs"...)
	chunk = binary.BigEndian.AppendUint32(chunk, ppm)
	chunk = binary.BigEndian.AppendUint32(chunk, ppm)
	chunk = append(chunk, 1) // unit: metre
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	out := make([]byte, 0, len(png)+len(chunk))
	out = append(out, png[:ihdrEnd]...)
	out = append(out, chunk...)
	return append(out, png[ihdrEnd:]...), nil
}
