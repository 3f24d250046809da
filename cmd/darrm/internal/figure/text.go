package figure

import (
	"math"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// Text is the text handler of darrm's figures: plain text, Greek letters
// and other Unicode drawn as they are, in which _{...} sets a subscript and
// ^{...} a superscript (γ_{opt}, 10^{-6}). gonum's LaTeX handler would do
// more, but it panics on characters outside its math alphabet (·, ⁻), and
// these two marks are all the figures need.
type Text struct {
	Fonts *font.Cache
}

var _ text.Handler = Text{}

// Sub- and superscripts are set at scriptScale of the font size, their
// baselines shifted by subShift below and supShift above the line's.
const (
	scriptScale = 0.7
	subShift    = 0.22
	supShift    = 0.38
)

// run is a stretch of a line in one position: shift is -1 for a
// subscript, +1 for a superscript, 0 on the baseline.
type run struct {
	s     string
	shift int
}

// runs splits a line at its _{...} and ^{...} marks. A mark without its
// closing brace, or a brace without a mark, is text.
func runs(line string) []run {
	var out []run
	for line != "" {
		i := strings.IndexAny(line, "_^")
		if i < 0 || i+1 >= len(line) || line[i+1] != '{' {
			if i < 0 {
				out = append(out, run{s: line})
				break
			}
			out = append(out, run{s: line[:i+1]})
			line = line[i+1:]
			continue
		}
		end := strings.IndexByte(line[i+2:], '}')
		if end < 0 {
			out = append(out, run{s: line})
			break
		}
		if i > 0 {
			out = append(out, run{s: line[:i]})
		}
		shift := -1
		if line[i] == '^' {
			shift = 1
		}
		out = append(out, run{s: line[i+2 : i+2+end], shift: shift})
		line = line[i+3+end:]
	}
	return out
}

func (h Text) face(fnt font.Font, shift int) font.Face {
	if shift != 0 {
		fnt.Size *= scriptScale
	}
	return h.Fonts.Lookup(fnt, fnt.Size)
}

// Cache returns the fonts used by the handler.
func (h Text) Cache() *font.Cache { return h.Fonts }

// Extents returns the extents of fnt.
func (h Text) Extents(fnt font.Font) font.Extents {
	f := h.face(fnt, 0)
	return f.Extents()
}

// Lines splits txt into lines.
func (h Text) Lines(txt string) []string {
	return strings.Split(strings.TrimRight(txt, "\n"), "\n")
}

// Box returns the width of a line and its height above and depth below
// the baseline, scripts included.
func (h Text) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	ext := h.Extents(fnt)
	height, depth = ext.Ascent, ext.Descent
	for _, r := range runs(txt) {
		f := h.face(fnt, r.shift)
		width += f.Width(r.s)
		e := f.Extents()
		switch r.shift {
		case 1:
			height = max(height, vg.Length(supShift)*fnt.Size+e.Ascent)
		case -1:
			depth = max(depth, vg.Length(subShift)*fnt.Size+e.Descent)
		}
	}
	return width, height, depth
}

// Draw draws txt with style sty at pt, as text.Plain does, run by run.
func (h Text) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if txt == "" {
		return
	}
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		c.Rotate(sty.Rotation)
	}
	sin64, cos64 := math.Sincos(sty.Rotation)
	sin, cos := vg.Length(sin64), vg.Length(cos64)
	pt.X, pt.Y = pt.Y*sin+pt.X*cos, pt.Y*cos-pt.X*sin

	// Lines are laid out from the top of the block down, each as tall as
	// its Box (scripts included) plus the font's gap, as text.Style.Height
	// measures the block: so the first line of a title sits at the same
	// place whatever the lines below it, and titles of a row line up.
	ext := h.Extents(sty.Font)
	gap := ext.Height - ext.Ascent - ext.Descent
	y := pt.Y + sty.Height(txt)*vg.Length(sty.YAlign+1) // the block's top
	for i, line := range h.Lines(txt) {
		w, above, below := h.Box(line, sty.Font)
		if i > 0 {
			y -= gap
		}
		y -= above
		x := pt.X + vg.Length(sty.XAlign)*w
		for _, r := range runs(line) {
			f := h.face(sty.Font, r.shift)
			dy := vg.Length(0)
			switch r.shift {
			case 1:
				dy = vg.Length(supShift) * sty.Font.Size
			case -1:
				dy = -vg.Length(subShift) * sty.Font.Size
			}
			c.FillString(f, vg.Point{X: x, Y: y + dy}, r.s)
			x += f.Width(r.s)
		}
		y -= below
	}
	if sty.Rotation != 0 {
		c.Pop()
	}
}
