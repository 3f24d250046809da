package figure

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

func TestRuns(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []run
	}{
		{"γ(l)", []run{{s: "γ(l)"}}},
		{"γ_{opt} (T_{U})", []run{{s: "γ"}, {s: "opt", shift: -1}, {s: " (T"}, {s: "U", shift: -1}, {s: ")"}}},
		{"10^{-6}", []run{{s: "10"}, {s: "-6", shift: 1}}},
		{"p_i = 1_", []run{{s: "p_"}, {s: "i = 1_"}}},
		{"x_{open", []run{{s: "x_{open"}}},
	} {
		if got := runs(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("runs(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestTextBox(t *testing.T) {
	h := Text{Fonts: font.DefaultCache}
	fnt := font.From(font.Font{Typeface: "Liberation", Variant: "Serif"}, 10)
	w, ht, d := h.Box("ab", fnt)
	ws, _, ds := h.Box("a_{b}", fnt)
	wp, hp, _ := h.Box("a^{b}", fnt)
	if !(ws < w && wp < w) || !(ds > d) || !(hp > ht) {
		t.Errorf("plain %v×(%v+%v), sub %v (depth %v), sup %v (height %v)", w, ht, d, ws, ds, wp, hp)
	}
}

func TestTicks(t *testing.T) {
	for _, r := range [][2]float64{{0, 1}, {-0.05, 1.05}, {20.88, 46.1}, {0, 0.35}, {-3, 7}, {0, 50}, {0, 11}, {0, 101}, {460, 7600}, {0.0001, 0.00013}} {
		for _, integer := range []bool{false, true} {
			if integer && r[1]-r[0] < 2 {
				continue
			}
			var labels []float64
			var decimals []int
			for _, tk := range (Ticks{Integer: integer}).Ticks(r[0], r[1]) {
				if tk.Value < r[0]-1e-9 || tk.Value > r[1]+1e-9 {
					t.Errorf("%v: tick %v outside", r, tk.Value)
				}
				if tk.Label == "" {
					t.Errorf("%v: a minor tick at %v (linear axes have none)", r, tk.Value)
					continue
				}
				v, err := strconv.ParseFloat(tk.Label, 64)
				if err != nil || math.Abs(v-tk.Value) > 1e-9*math.Max(1, math.Abs(v)) {
					t.Errorf("%v: tick %v labelled %q", r, tk.Value, tk.Label)
				}
				if integer && v != math.Round(v) {
					t.Errorf("%v: integer axis labelled %q", r, tk.Label)
				}
				labels = append(labels, v)
				_, frac, _ := strings.Cut(tk.Label, ".")
				decimals = append(decimals, len(frac))
			}
			if len(labels) < 3 || len(labels) > 6 {
				t.Errorf("%v integer=%v: %d labelled ticks %v, want 3 to 6", r, integer, len(labels), labels)
			}
			if slices.Min(decimals) != slices.Max(decimals) {
				t.Errorf("%v: labels with %v decimals: one number of decimals per axis", r, decimals)
			}
		}
	}
}

// TestLogTicks: at least three labels, all in one form per axis (the
// figures mixed "0.001" with "10^{-4}" on one axis).
func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		labels string
	}{
		{1e-12, 1e3, "10^{-12} 10^{-9} 10^{-6} 10^{-3} 10^{0} 10^{3}"},
		{1e-3, 100, "0.001 0.01 0.1 1 10 100"},
		{1e-5, 1, "10^{-5} 10^{-4} 10^{-3} 10^{-2} 10^{-1} 10^{0}"},
		{20, 45, "20 30 40"},
		{2e-6, 9e-5, "2·10^{-6} 5·10^{-6} 10^{-5} 2·10^{-5} 5·10^{-5}"},
		{460, 7600, "500 1000 2000 5000"},
		{400, 12000, "500 1000 2000 5000 10000"},
	} {
		var labels []string
		for _, tk := range (LogTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Value < tc.lo*(1-1e-9) || tk.Value > tc.hi*(1+1e-9) {
				t.Errorf("[%v, %v]: tick %v outside", tc.lo, tc.hi, tk.Value)
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != tc.labels {
			t.Errorf("[%v, %v]: labels %q, want %q", tc.lo, tc.hi, got, tc.labels)
		}
	}
}

// TestBrokenScale: values below the break fill the lower part, values
// above it the upper part (linear, as the lower), the ones between cross the gap,
// in order; the ticks are those of both parts.
func TestBrokenScale(t *testing.T) {
	for _, s := range []BrokenScale{
		{Lo: 47, Hi: 94, Upper: 0.2, Cut: 0.05},
		{Lo: 1.2, Hi: 1.3, Upper: 0.3, Cut: 0.05},
	} {
		min, max := 22.0, 3000.0
		if s.Lo < 2 {
			min = 0.5
		}
		lo, hi := s.Gap(min, max)
		if math.Abs(lo-(1-s.Upper-s.Cut)) > 1e-12 || math.Abs(hi-lo-s.Cut) > 1e-12 {
			t.Errorf("%+v: gap [%v, %v]", s, lo, hi)
		}
		if n := s.Normalize(min, max, min); n != 0 {
			t.Errorf("%+v: min at %v", s, n)
		}
		if n := s.Normalize(min, max, max); math.Abs(n-1) > 1e-12 {
			t.Errorf("%+v: max at %v", s, n)
		}
		if n := s.Normalize(min, max, s.Lo); math.Abs(n-lo) > 1e-12 {
			t.Errorf("%+v: Lo at %v, want the gap's start %v", s, n, lo)
		}
		if n := s.Normalize(min, max, s.Hi); math.Abs(n-hi) > 1e-12 {
			t.Errorf("%+v: Hi at %v, want the gap's end %v", s, n, hi)
		}
		prev := -1.0
		for x := min; x <= max; x *= 1.01 {
			if n := s.Normalize(min, max, x); !(n > prev) {
				t.Fatalf("%+v: not increasing at %v", s, x)
			} else {
				prev = n
			}
		}
		below, above := 0, 0
		for _, tk := range s.Ticks(min, max) {
			switch {
			case tk.Value <= s.Lo:
				below++
			case tk.Value >= s.Hi:
				above++
			default:
				t.Errorf("%+v: a tick at %v in the gap", s, tk.Value)
			}
		}
		if below < 3 || above < 1 {
			t.Errorf("%+v: %d ticks below the break, %d above", s, below, above)
		}
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.1: "0.1", 0.2676: "0.2676", 6.452149: "6.452", 1e-5: "10^{-5}",
		2.99997e-5: "3·10^{-5}", 9.99995e-6: "10^{-5}", 1e-6: "10^{-6}", 3e-4: "3·10^{-4}", 25000: "2.5·10^{4}", -2e-7: "-2·10^{-7}"} {
		if got := Num(v); got != want {
			t.Errorf("Num(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestWrap(t *testing.T) {
	sty := style(8)
	txt := "Exactly at the privacy budget, as their proofs have it: γ_{Sub} (Lemma 3.4.1) in every panel."
	w := sty.Width(txt) / 2.5
	lines := wrapAt(sty, txt, w, false)
	if len(lines) < 3 || strings.Join(lines, " ") != txt {
		t.Errorf("wrap to %v: %q", w, lines)
	}
	for f := 0.2; f < 1; f += 0.02 {
		for _, l := range wrapAt(sty, txt, sty.Width(txt)*vg.Length(f), false) {
			if strings.HasSuffix(l, "Lemma") {
				t.Errorf("width %.2f: a line ends with %q, its number on the next", f, l)
			}
		}
	}
	for _, l := range lines[:len(lines)-1] {
		if sty.Width(l) > w {
			t.Errorf("line %q is wider than %v", l, w)
		}
	}
}

// TestWrapTitle: a title wraps between the things it states (after "; ",
// then ", "), never beside "=" or "·", at every width from a few words
// up: the old wrap at any space gave "m·ε =" / "0.3".
func TestWrapTitle(t *testing.T) {
	sty := style(titleSize)
	txt := "K = 11 teachers; each (ε = 0.3, Δ = 0)-DP; release m = 1, m·ε = 0.3, δ = 10^{-5}"
	for f := 0.3; f < 1; f += 0.05 {
		w := sty.Width(txt) * vg.Length(f)
		lines := wrapAt(sty, txt, w, true)
		if strings.Join(lines, " ") != txt {
			t.Fatalf("width %.2f: %q lose or add words", f, lines)
		}
		for _, l := range lines {
			ws := strings.Fields(l)
			if operators[ws[0]] || operators[ws[len(ws)-1]] {
				t.Errorf("width %.2f: line %q starts or ends with an operator: %q", f, l, lines)
			}
		}
	}
	lines := wrapAt(sty, txt, sty.Width(txt)*0.7, true)
	if len(lines) != 2 || lines[0] != "K = 11 teachers; each (ε = 0.3, Δ = 0)-DP;" {
		t.Errorf("at 0.7 of its width: %q, want a break after the teachers' clause", lines)
	}
}

// TestOneVoteTitle: a figure of the one-vote relation calls its teachers
// non-private and states the release's (ε, δ), not a teachers' guarantee
// of (ε, 0) and an m = 1; GNMax's γ has a name in the legend.
func TestOneVoteTitle(t *testing.T) {
	s := gammaSetting(1, gamma.Certified)
	s.Relation, s.Eps, s.Delta, s.TargetDelta = accountant.OneVote, 0.3, 0, 1e-5
	got := commonLine([]Setting{s}, varying([]Setting{s}))
	if got != "K = 11 non-private teachers; one-vote relation (one record changes one vote); each release (ε = 0.3, δ = 10^{-5})-DP" {
		t.Errorf("one-vote title %q", got)
	}
	s.Mechanisms = append(s.Mechanisms, Curve{Name: "gnmax"})
	st, _, _ := styles([]Setting{s})
	if l := st["gnmax"].label; !strings.HasPrefix(l, "γ_{GNMax}") {
		t.Errorf("gnmax's legend label %q", l)
	}
}

// onePanel is a figure of one panel with a line from (0, 0) to (1, 1).
func onePanel() *Figure {
	p := NewPanel()
	p.Title.Text = "γ_{opt}, ε = 0.1, δ = 10^{-5}"
	p.X.Label.Text, p.Y.Label.Text = "l", "γ(l)"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	p.Add(l)
	return &Figure{Title: "title", Legend: []Entry{{Label: "γ_{Sub}", Thumbs: []plot.Thumbnailer{l}}}, Panels: []*Panel{p, nil}, Cols: 2}
}

// TestSavePNG checks the PNG: decodable, 300 dots per inch of the
// figure's size, with a pHYs chunk that says so right after IHDR, and the
// same bytes on every save.
func TestSavePNG(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.png"), filepath.Join(dir, "b.png")
	if err := onePanel().Save(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	if err := onePanel().Save(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	ba, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ba, bb) {
		t.Error("two saves of one figure differ")
	}
	img, err := png.Decode(bytes.NewReader(ba))
	if err != nil {
		t.Fatal(err)
	}
	wantW := int(math.Round(float64(2*PanelWidth) / float64(vg.Inch) * DPI))
	if w := img.Bounds().Dx(); math.Abs(float64(w-wantW)) > 1 {
		t.Errorf("width %d px, want %d (two panels at %d dpi)", w, wantW, DPI)
	}
	if string(ba[37:41]) != "pHYs" || binary.BigEndian.Uint32(ba[41:]) != 11811 || ba[49] != 1 {
		t.Errorf("no pHYs chunk of 11811 px/m after IHDR: % x", ba[33:58])
	}
	svg := filepath.Join(dir, "a.svg")
	if err := onePanel().Save(t.Context(), svg); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(svg); !bytes.HasPrefix(bytes.TrimSpace(b), []byte("<?xml")) {
		t.Errorf("SVG starts %q", b[:20])
	}
	bad := filepath.Join(dir, "a.gif")
	if err := onePanel().Save(t.Context(), bad); err == nil {
		t.Error(".gif: no error")
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error(".gif: file written")
	}
}

// TestAxesMeet draws a panel and follows its frame in the pixels: the x
// axis starts where the y axis is, at the corner (gonum's own axes leave a
// gap between them), and the frame is closed on the top and right.
func TestAxesMeet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.png")
	if err := onePanel().Save(t.Context(), path); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	dark := func(x, y int) bool {
		r, g, b, _ := img.At(x, y).RGBA()
		return r+g+b < 3*0x4000
	}
	// The frame's left side: the first column, from the left, with a run
	// of dark pixels taller than half the image's height / 3.
	b := img.Bounds()
	run := func(x int) (top, bottom int) {
		best, start := 0, -1
		for y := b.Min.Y; y <= b.Max.Y; y++ {
			if y < b.Max.Y && dark(x, y) {
				if start < 0 {
					start = y
				}
				continue
			}
			if start >= 0 && y-start > best {
				best, top, bottom = y-start, start, y-1
			}
			start = -1
		}
		return top, bottom
	}
	left := -1
	var top, bottom int
	for x := b.Min.X; x < b.Max.X/2; x++ {
		if t0, b0 := run(x); b0-t0 > b.Dy()/3 {
			left, top, bottom = x, t0, b0
			break
		}
	}
	if left < 0 {
		t.Fatal("no left side of a frame found")
	}
	// The bottom side: the row, at most a tick's length above the end of
	// the left side's run (the tick at the corner continues it), from
	// which dark pixels run right from the left side.
	right, end := left, bottom
	for y := end; y >= end-20 && right-left < b.Dx()/6; y-- {
		right = left
		for right+1 < b.Max.X && dark(right+1, y) {
			right++
		}
		bottom = y
	}
	if right-left < b.Dx()/6 {
		t.Fatalf("no bottom side of the frame starts at its left side (x = %d): the axes do not meet", left)
	}
	// The line is a few pixels wide: look within 3 of the edge found.
	near := func(x, y, dx, dy int) bool {
		for i := 0; i < 4; i++ {
			if dark(x+i*dx, y+i*dy) {
				return true
			}
		}
		return false
	}
	for x := left; x <= right; x += 7 {
		if !near(x, top, 0, 1) {
			t.Errorf("no top side at (%d, %d)", x, top)
			break
		}
	}
	for y := top; y <= bottom; y += 7 {
		if !near(right, y, -1, 0) {
			t.Errorf("no right side at (%d, %d)", right, y)
			break
		}
	}
}

// TestShareY: panels of a row with the same y scale get one range and
// only the leftmost is labelled; a panel with another scale keeps its own.
func TestShareY(t *testing.T) {
	mk := func(lo, hi float64) *Panel {
		p := NewPanel()
		p.Y.Min, p.Y.Max = lo, hi
		return p
	}
	broken := mk(0, 100)
	broken.Y.Scale = BrokenScale{Lo: 10, Hi: 90, Upper: 0.2, Cut: 0.05}
	panels := []*Panel{mk(0, 0.45), mk(0, 0.35), nil, mk(0, 0.16), mk(-1, 2), broken}
	shareY(panels, 3)
	for i, want := range [][2]float64{{0, 0.45}, {0, 0.45}, {}, {-1, 2}, {-1, 2}, {0, 100}} {
		if p := panels[i]; p != nil && (p.Y.Min != want[0] || p.Y.Max != want[1]) {
			t.Errorf("panel %d: y range [%v, %v], want %v", i, p.Y.Min, p.Y.Max, want)
		}
	}
}

// gammaSetting is a setting of K = 11 with gamma_opt under two priors and
// RR, each with an error curve and three expected errors.
func gammaSetting(m float64, rrStatus gamma.Status) Setting {
	g := make([]float64, 12)
	errCurve := make([]float64, 21)
	for i := range g {
		g[i] = 1
	}
	for i := range errCurve {
		errCurve[i] = 0.1 * float64(i%5)
	}
	exp := []Expected{{Actual: "U(0,1)", Mean: 0.1}, {Actual: "0.5"}, {Actual: "U(0,0.1)", Mean: 2e-5}}
	rr := slices.Repeat([]float64{0.3}, 12)
	return Setting{Problem: constraints.Problem{K: 11, M: m, Eps: 0.1, Delta: 1e-5, TargetDelta: m * 1e-5}, Mechanisms: []Curve{
		{Name: "opt", Prior: "uniform", Gamma: g, Error: errCurve, Expected: exp},
		{Name: "opt", Prior: "tp", Gamma: g, Error: errCurve, Expected: exp},
		{Name: "rr", Gamma: rr, Status: rrStatus, Error: errCurve, Expected: exp},
	}}
}

func TestWriteGammas(t *testing.T) {
	dir := t.TempDir()
	s, s5 := gammaSetting(3, gamma.Tight), gammaSetting(5, gamma.Certified)
	if err := (GammaFigure{Title: "t", Settings: []Setting{s, s5, s}, Cols: 2, Expected: true, Notes: []string{"a note"}}).Write(t.Context(), filepath.Join(dir, "g.png")); err != nil {
		t.Fatal(err)
	}
	if got := merge([]Setting{s, {Problem: constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: s.TargetDelta}, Mechanisms: s.Mechanisms[1:]}, {Problem: constraints.Problem{K: 11, M: 5}}}); len(got) != 2 || len(got[0].Mechanisms) != 3 {
		t.Errorf("merge: %d settings, %d mechanisms in the first; want 2 and 3", len(got), len(got[0].Mechanisms))
	}
	sty, order, key := styles([]Setting{s})
	if len(order) != 3 || sty[key(s.Mechanisms[0])].label != "γ_{opt} (T_{U})" || sty[key(s.Mechanisms[1])].label != "γ_{opt} (T_{P})" {
		t.Errorf("legend %v: %+v", order, sty)
	}
	bad := gammaSetting(3, gamma.Certified)
	bad.Mechanisms[2].Expected = nil
	if err := (GammaFigure{Settings: []Setting{bad}, Expected: true}).Write(t.Context(), filepath.Join(dir, "x.png")); err == nil {
		t.Error("expected errors missing: no error")
	}
	bad = gammaSetting(3, gamma.Certified)
	bad.K = 13
	if err := (GammaFigure{Settings: []Setting{bad}}).Write(t.Context(), filepath.Join(dir, "y.png")); err == nil {
		t.Error("K mismatch: no error")
	}
	bad = gammaSetting(3, gamma.Certified)
	bad.Mechanisms[0].Error = nil
	if err := (GammaFigure{Settings: []Setting{bad}}).Write(t.Context(), filepath.Join(dir, "z.png")); err == nil {
		t.Error("no error curve: no error")
	}
}

// TestGammaTitles: the panels state what differs, the figure's title what
// the settings share (fig-3.2 repeated K = 11, ε = 0.1 in every panel),
// and App. B.4's M heads its column.
func TestGammaTitles(t *testing.T) {
	a, b := gammaSetting(1, gamma.Tight), gammaSetting(3, gamma.Certified)
	v := varying([]Setting{a, b})
	if got := columnTitle(b, v); got != "m = 3, δ = 3·10^{-5}" {
		t.Errorf("column title %q", got)
	}
	if got := commonLine([]Setting{a, b}, v); got != "K = 11 teachers; each (ε = 0.1, Δ = 10^{-5})-DP" {
		t.Errorf("common line %q", got)
	}
	a.SubSize, b.SubSize = 10, 13
	v = varying([]Setting{a, b})
	if got := columnTitle(b, v); got != "M = 13\nm = 3, δ = 3·10^{-5}" {
		t.Errorf("column title with M %q", got)
	}
	one := varying([]Setting{a})
	if got := commonLine([]Setting{a}, one); !strings.Contains(got, "m = 1, m·ε = 0.1, δ = 10^{-5}") || !strings.Contains(got, "M = 10") {
		t.Errorf("common line of one setting %q", got)
	}
}

// TestStatusNote: the note names the mechanisms at the budget, with the
// result that proves each private and the columns where not every one.
func TestStatusNote(t *testing.T) {
	var l statusList
	l.add("γ_{Sub}", "Lemma 3.4.1", "1")
	l.add("γ_{DSub}", "Theorem 3.5.1", "1")
	l.add("γ_{DSub}", "Theorem 3.5.1", "3")
	l.add("γ_{const} (RR)", "Lemma B.1.1", "11")
	got := l.text(map[string]int{"γ_{Sub}": 4, "γ_{DSub}": 2, "γ_{const} (RR)": 4}, "m")
	want := "γ_{DSub} (Theorem 3.5.1) in every panel; γ_{Sub} (Lemma 3.4.1) at m = 1; γ_{const} (RR) (Lemma B.1.1) at m = 11"
	if got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}

// TestMarkEvery: all points of a short curve; else about most of them,
// the mechanisms' marks staggered.
func TestMarkEvery(t *testing.T) {
	if got := markEvery(12, 12, 1, 4); len(got) != 12 {
		t.Errorf("12 points: %v", got)
	}
	a, b := markEvery(102, 12, 0, 4), markEvery(102, 12, 2, 4)
	if len(a) < 10 || len(a) > 13 || a[0] == b[0] || slices.ContainsFunc(a, func(i int) bool { return slices.Contains(b, i) }) {
		t.Errorf("102 points: %v and %v", a, b)
	}
}

func TestWriteGNMax(t *testing.T) {
	dir := t.TempDir()
	target := GNMaxTarget{Eps: 0.2676, Delta: 3e-4, LambdaMin: 31.3, Grid: GNMaxMinimum{Lambda: 62.31, Sigma: 21.46}, Exact: GNMaxMinimum{Lambda: 62.12, Sigma: 21.46}}
	for l := 31.8; l <= 500; l += 0.5 {
		target.Lambda = append(target.Lambda, l)
		target.Sigma2 = append(target.Sigma2, l/(0.2676-math.Log(1/3e-4)/(l-1)))
	}
	if err := WriteGNMax(t.Context(), filepath.Join(dir, "b8.png"), "t", []GNMaxTarget{target, target}, []float64{34.31}, ""); err != nil {
		t.Fatal(err)
	}
	if err := WriteGNMax(t.Context(), filepath.Join(dir, "x.png"), "t", nil, nil, ""); err == nil {
		t.Error("no target: no error")
	}
	target.Sigma2 = target.Sigma2[1:]
	if err := WriteGNMax(t.Context(), filepath.Join(dir, "y.png"), "t", []GNMaxTarget{target}, nil, ""); err == nil {
		t.Error("orders and values of different lengths: no error")
	}
}

// TestPanelMarks: one mark per target goes into its target's panel only
// (Figure B.8 drew both published λ in both panels); other counts go into
// every panel.
func TestPanelMarks(t *testing.T) {
	marks := []float64{34.31, 35.74}
	for i, want := range [][]float64{{34.31}, {35.74}} {
		if got := panelMarks(marks, i, 2); !slices.Equal(got, want) {
			t.Errorf("panel %d of 2: %v, want %v", i, got, want)
		}
	}
	if got := panelMarks(marks, 2, 3); !slices.Equal(got, marks) {
		t.Errorf("panel 2 of 3: %v, want every mark", got)
	}
}

// TestMechanismColoursApart: any two noise functions a gamma figure can
// draw together have colours a reader tells apart: hues 30° apart, or
// lightness a quarter of the scale apart, or one of them grey. γ_DSub's
// orange beside γ_opt's vermillion (15° and 0.17 apart) read as one hue in
// Figures B.5-B.7.
func TestMechanismColoursApart(t *testing.T) {
	type named struct {
		name string
		c    color.Color
	}
	var cs []named
	for name, st := range mechanismStyles {
		cs = append(cs, named{name, st.color})
	}
	for i, c := range optPriorColors[1:] { // the first is γ_opt's own
		cs = append(cs, named{fmt.Sprintf("opt prior %d", i+1), c})
	}
	// hue in degrees, chroma and luma in [0, 1]
	hcl := func(c color.Color) (h, chroma, luma float64) {
		r, g, b, _ := c.RGBA()
		R, G, B := float64(r>>8)/255, float64(g>>8)/255, float64(b>>8)/255
		mx, mn := math.Max(R, math.Max(G, B)), math.Min(R, math.Min(G, B))
		chroma, luma = mx-mn, 0.299*R+0.587*G+0.114*B
		switch {
		case chroma == 0:
		case mx == R:
			h = 60 * math.Mod((G-B)/chroma+6, 6)
		case mx == G:
			h = 60 * ((B-R)/chroma + 2)
		default:
			h = 60 * ((R-G)/chroma + 4)
		}
		return h, chroma, luma
	}
	for i, a := range cs {
		for _, b := range cs[i+1:] {
			h1, c1, l1 := hcl(a.c)
			h2, c2, l2 := hcl(b.c)
			dh := math.Abs(h1 - h2)
			dh = math.Min(dh, 360-dh)
			if dh < 30 && math.Abs(l1-l2) < 0.25 && c1 > 0.1 && c2 > 0.1 {
				t.Errorf("%s and %s: hues %.0f° and lightness %.2f apart", a.name, b.name, dh, math.Abs(l1-l2))
			}
		}
	}
}

// TestCheckCols: a stated number of panels per row is at least 1, and a
// refusal names the value and the rule.
func TestCheckCols(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{1, ""}, {4, ""}, {0, "cols = 0: must be >= 1"}, {-2, "cols = -2: must be >= 1"}} {
		if err := CheckCols(tc.n); fmt.Sprint(err) != tc.want && !(err == nil && tc.want == "") {
			t.Errorf("CheckCols(%d) = %v, want %q", tc.n, err, tc.want)
		}
	}
}
