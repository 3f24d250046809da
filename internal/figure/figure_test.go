package figure

import (
	"bytes"
	"encoding/binary"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/report"
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
	for _, r := range [][2]float64{{0, 1}, {0, 1.05}, {20.88, 46.1}, {0, 0.35}, {-3, 7}, {0, 50}, {0, 11}, {0, 101}, {460, 7600}, {0.0001, 0.00013}} {
		for _, integer := range []bool{false, true} {
			if integer && r[1]-r[0] < 2 {
				continue
			}
			var labels []float64
			for _, tk := range (Ticks{Integer: integer}).Ticks(r[0], r[1]) {
				if tk.Value < r[0]-1e-9 || tk.Value > r[1]+1e-9 {
					t.Errorf("%v: tick %v outside", r, tk.Value)
				}
				if tk.Label == "" {
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
			}
			if len(labels) < 3 || len(labels) > 8 {
				t.Errorf("%v integer=%v: %d labelled ticks %v, want 3 to 8", r, integer, len(labels), labels)
			}
		}
	}
}

func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		first  string
	}{
		{1e-12, 1e3, "10^{-12}"},
		{1e-3, 100, "0.001"},
		{20, 45, "20"},
		{1.5, 3.2, "1.50"},
		{2e-6, 9e-5, "2·10^{-6}"},
		{460, 7600, "500"},
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
		if len(labels) < 3 || len(labels) > 10 || labels[0] != tc.first {
			t.Errorf("[%v, %v]: labels %q, want 3 to 10 starting with %q", tc.lo, tc.hi, labels, tc.first)
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

// TestSavePNG checks the PNG: decodable, 300 dots per inch of the
// figure's size, with a pHYs chunk that says so right after IHDR, and the
// same bytes on every save.
func TestSavePNG(t *testing.T) {
	dir := t.TempDir()
	fig := func() *Figure {
		p := NewPlot()
		p.Title.Text = "γ_{opt}, ε = 0.1, δ = 10^{-5}"
		l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
		p.Add(l)
		return &Figure{Title: "title", Legend: []Entry{{Label: "γ_{Sub}", Thumbs: []plot.Thumbnailer{l}}}, Panels: []*plot.Plot{p, nil}, Cols: 2}
	}
	a, b := filepath.Join(dir, "a.png"), filepath.Join(dir, "b.png")
	if err := fig().Save(a); err != nil {
		t.Fatal(err)
	}
	if err := fig().Save(b); err != nil {
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
	wantW := int(math.Round(float64(2*PanelWidth+2*margin) / float64(vg.Inch) * DPI))
	if w := img.Bounds().Dx(); math.Abs(float64(w-wantW)) > 1 {
		t.Errorf("width %d px, want %d (two panels at %d dpi)", w, wantW, DPI)
	}
	if string(ba[37:41]) != "pHYs" || binary.BigEndian.Uint32(ba[41:]) != 11811 || ba[49] != 1 {
		t.Errorf("no pHYs chunk of 11811 px/m after IHDR: % x", ba[33:58])
	}
	svg := filepath.Join(dir, "a.svg")
	if err := fig().Save(svg); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(svg); !bytes.HasPrefix(bytes.TrimSpace(b), []byte("<?xml")) {
		t.Errorf("SVG starts %q", b[:20])
	}
	bad := filepath.Join(dir, "a.gif")
	if err := fig().Save(bad); err == nil {
		t.Error(".gif: no error")
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error(".gif: file written")
	}
}

func TestWriteGammas(t *testing.T) {
	dir := t.TempDir()
	sub, _ := gamma.Sub(11, 3)
	rr, _ := gamma.Const(11, 0.3)
	errs := []gamma.ErrorEstimate{{Actual: "U(0,1)", Mean: 0.1}, {Actual: "0.5"}, {Actual: "U(0,0.1)", Mean: 0.02}}
	s := Setting{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: 3e-5, Mechanisms: []Mechanism{
		{Name: "opt", Prior: "uniform", Gamma: sub, Status: gamma.Certified, Errors: errs},
		{Name: "opt", Prior: "tp", Gamma: sub, Status: gamma.Certified, Errors: errs},
		{Name: "rr", Gamma: rr, Status: gamma.Tight, Errors: errs},
	}}
	if err := WriteGammas(filepath.Join(dir, "g.png"), "t", []Setting{s, s, s}, 2, true); err != nil {
		t.Fatal(err)
	}
	if got := merge([]Setting{s, {K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: 3e-5, Mechanisms: s.Mechanisms[1:]}, {K: 11, M: 5}}); len(got) != 2 || len(got[0].Mechanisms) != 3 {
		t.Errorf("merge: %d settings, %d mechanisms in the first; want 2 and 3", len(got), len(got[0].Mechanisms))
	}
	sty, order, key := styles([]Setting{s})
	if len(order) != 3 || sty[key(s.Mechanisms[0])].label != "γ_{opt} (T_{U})" || sty[key(s.Mechanisms[1])].label != "γ_{opt} (T_{P})" {
		t.Errorf("legend %v: %+v", order, sty)
	}
	s.Mechanisms[2].Errors = nil
	if err := WriteGammas(filepath.Join(dir, "x.png"), "t", []Setting{s}, 1, true); err == nil {
		t.Error("bars without expected errors: no error")
	}
	s.K = 13
	if err := WriteGammas(filepath.Join(dir, "y.png"), "t", []Setting{s}, 1, false); err == nil {
		t.Error("K mismatch: no error")
	}
}

func TestWriteGNMax(t *testing.T) {
	dir := t.TempDir()
	targets := []accountant.Guarantee{{Eps: 0.2676, Delta: 3e-4}, {Eps: 0.2556, Delta: 3e-4}}
	if err := WriteGNMax(filepath.Join(dir, "b8.png"), "t", targets, []float64{34.31}, ""); err != nil {
		t.Fatal(err)
	}
	if err := WriteGNMax(filepath.Join(dir, "x.png"), "t", nil, nil, ""); err == nil {
		t.Error("no target: no error")
	}
	if err := WriteGNMax(filepath.Join(dir, "y.png"), "t", []accountant.Guarantee{{Eps: 0.01, Delta: 1e-6}}, nil, ""); err == nil {
		t.Error("a target the grid cannot meet: no error")
	}
}

// TestSolveSetting: a solve document's column has its problem and every
// mechanism, gamma_opt first, with its certificate's status.
func TestSolveSetting(t *testing.T) {
	sub, _ := gamma.Sub(5, 1)
	d := report.Solve{Problem: report.Problem{K: 5, M: 1, Eps: 0.1}, Prior: "tp", Gamma: sub, Certificate: gamma.Certificate{Status: gamma.Tight},
		Compare: []report.Mechanism{{Name: "sub", Gamma: sub, Evaluation: gamma.Evaluation{Certificate: gamma.Certificate{Status: gamma.Certified}}}}}
	s := SolveSetting(d)
	if s.K != 5 || s.M != 1 || len(s.Mechanisms) != 2 || s.Mechanisms[0].Name != "opt" || s.Mechanisms[0].Status != gamma.Tight ||
		s.Mechanisms[1].Name != "sub" || s.Mechanisms[1].Status != gamma.Certified || s.Mechanisms[1].Prior != "tp" {
		t.Errorf("%+v", s)
	}
}
