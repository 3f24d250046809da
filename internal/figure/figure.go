// Package figure draws darrm's figures with gonum/plot in one style fit for
// a paper: Greek symbols and sub- and superscripts (Text), labelled ticks
// on every axis (Ticks, LogTicks), one legend above the panels where it
// covers no curve (Figure), PNG at 300 dpi or SVG by the file's extension,
// written atomically so that a failed command leaves no half-written
// image behind. It holds the figures of darrm's solve and account
// commands; package curveplot draws the DP-ShuffleG curves on top of it.
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

// Font sizes in points.
const (
	titleSize  = 11
	panelSize  = 9
	labelSize  = 9
	tickSize   = 8
	legendSize = 9
)

// The default size of one panel.
const (
	PanelWidth  = 3.2 * vg.Inch
	PanelHeight = 2.5 * vg.Inch
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

// style returns a text style of the figures at size points.
func style(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: handler}
}

// NewPlot returns an empty panel in the figures' style: the Text handler
// for every label, Ticks on both axes and a light grid.
func NewPlot() *plot.Plot {
	p := plot.New()
	set := func(s *text.Style, size vg.Length) {
		s.Handler = handler
		s.Font.Size = size
	}
	set(&p.Title.TextStyle, panelSize)
	set(&p.X.Label.TextStyle, labelSize)
	set(&p.Y.Label.TextStyle, labelSize)
	set(&p.X.Tick.Label, tickSize)
	set(&p.Y.Tick.Label, tickSize)
	set(&p.Legend.TextStyle, legendSize)
	p.Title.Padding = vg.Points(4)
	p.X.Tick.Marker = Ticks{}
	p.Y.Tick.Marker = Ticks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	grid.Vertical.Width = vg.Points(0.4)
	grid.Horizontal.Width = vg.Points(0.4)
	p.Add(grid)
	return p
}

// LogY puts p's y axis on a log scale with LogTicks.
func LogY(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = LogTicks{}
}

// Entry is one item of a figure's legend: a label (Text markup) and the
// thumbnails of the styles it stands for.
type Entry struct {
	Label  string
	Thumbs []plot.Thumbnailer
}

// Figure is a grid of panels under a title and one legend that spans the
// figure, so that the legend covers no curve.
type Figure struct {
	Title  string
	Legend []Entry
	Cols   int          // panels per row (0: all in one row)
	Panels []*plot.Plot // row-major; nil leaves a cell empty
	// PanelWidth and PanelHeight size each cell (0: the defaults).
	PanelWidth, PanelHeight vg.Length
}

// legend layout: gap between a thumbnail and its label, between entries,
// thumbnail width and the figure's margin.
const (
	thumbWidth = 22
	thumbGap   = 4
	entryGap   = 14
	margin     = 6
)

// legendLines breaks the legend into lines no wider than width.
func (f *Figure) legendLines(width vg.Length) [][]Entry {
	sty := style(legendSize)
	var lines [][]Entry
	var x vg.Length
	for _, e := range f.Legend {
		w := thumbWidth + thumbGap + sty.Width(e.Label)
		if len(lines) == 0 || x+entryGap+w > width {
			lines = append(lines, nil)
			x = -entryGap
		}
		lines[len(lines)-1] = append(lines[len(lines)-1], e)
		x += entryGap + w
	}
	return lines
}

// Save draws the figure and writes it to path: PNG at DPI dots per inch or
// SVG, by the extension.
func (f *Figure) Save(path string) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	cols := f.Cols
	if cols <= 0 {
		cols = len(f.Panels)
	}
	rows := (len(f.Panels) + cols - 1) / cols
	pw, ph := f.PanelWidth, f.PanelHeight
	if pw == 0 {
		pw = PanelWidth
	}
	if ph == 0 {
		ph = PanelHeight
	}
	titleSty, legendSty := style(titleSize), style(legendSize)
	// The panels widen to make room for a title wider than them.
	width := max(vg.Length(cols)*pw, titleSty.Width(f.Title)) + 2*margin
	var titleH vg.Length
	if f.Title != "" {
		titleH = textHeight(titleSty, f.Title) + margin
	}
	lines := f.legendLines(width - 2*margin)
	// A legend line holds the tallest script (γ_{opt}, 10^{-6}) and a gap.
	lineH := textHeight(legendSty, "A_{p}^{2}g") * 1.25
	legendH := vg.Length(len(lines)) * lineH
	if legendH > 0 {
		legendH += 2 * margin
	}
	height := margin + titleH + legendH + vg.Length(rows)*ph

	var canvas vg.CanvasWriterTo
	png := !strings.EqualFold(filepath.Ext(path), ".svg")
	if png {
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(DPI))}
	} else {
		canvas = vgsvg.New(width, height)
	}
	dc := draw.New(canvas)
	top := height - margin
	if f.Title != "" {
		titleSty.XAlign, titleSty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(titleSty, vg.Point{X: width / 2, Y: top}, f.Title)
		top -= titleH
	}
	legendSty.YAlign = draw.YCenter
	for _, line := range lines {
		var lw vg.Length
		for i, e := range line {
			if i > 0 {
				lw += entryGap
			}
			lw += thumbWidth + thumbGap + legendSty.Width(e.Label)
		}
		x, mid := (width-lw)/2, top-lineH/2
		for _, e := range line {
			icon := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: mid - lineH/3}, Max: vg.Point{X: x + thumbWidth, Y: mid + lineH/3}}}
			for _, t := range e.Thumbs {
				t.Thumbnail(&icon)
			}
			x += thumbWidth + thumbGap
			dc.FillText(legendSty, vg.Point{X: x, Y: mid}, e.Label)
			x += legendSty.Width(e.Label) + entryGap
		}
		top -= lineH
	}
	if rows > 0 {
		grid := make([][]*plot.Plot, rows)
		for r := range grid {
			grid[r] = make([]*plot.Plot, cols)
			for c := range grid[r] {
				if i := r*cols + c; i < len(f.Panels) {
					grid[r][c] = f.Panels[i]
				}
			}
		}
		area := draw.Crop(dc, margin, -margin, margin, top-height)
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(10), PadY: vg.Points(10)}
		// The panels' titles are drawn here, all of a row on one line:
		// plot.Align lines up the data areas, which leaves the title of a
		// panel that needs less room above its axes lower than its
		// neighbours'. Each plot keeps its title's text, invisible, so
		// that Align leaves it the room.
		titles := make([][]text.Style, rows)
		for r := range grid {
			titles[r] = make([]text.Style, cols)
			for c, p := range grid[r] {
				if p != nil && p.Title.Text != "" {
					titles[r][c] = p.Title.TextStyle
					p.Title.TextStyle.Color = color.Transparent
				}
			}
		}
		canvases := plot.Align(grid, tiles, area)
		for r := range grid {
			var rowTop vg.Length
			for c, p := range grid[r] {
				if p != nil {
					rowTop = max(rowTop, canvases[r][c].Max.Y)
				}
			}
			for c, p := range grid[r] {
				if p == nil {
					continue
				}
				p.Draw(canvases[r][c])
				if p.Title.Text != "" {
					sty := titles[r][c]
					p.Title.TextStyle = sty
					x := canvases[r][c].Center().X
					dc.FillText(sty, vg.Point{X: x, Y: rowTop}, p.Title.Text)
				}
			}
		}
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
	return atomicfile.WriteOutput(context.Background(), path, 0o644, func(w io.Writer) error {
		_, err := w.Write(out)
		return err
	})
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
