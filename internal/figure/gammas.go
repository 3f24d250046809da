package figure

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/report"
)

// Mechanism is one noise function of a gamma figure.
type Mechanism struct {
	Name   string // "opt", "sub", "dsub" or "rr", as darrm solve names them
	Prior  string // the prior gamma_opt was optimised under ("uniform", "tp", ...)
	Gamma  gamma.Gamma
	Status gamma.Status          // anything but Certified is drawn dashed
	Errors []gamma.ErrorEstimate // expected errors under actual distributions
}

// Setting is one column of a gamma figure: a problem and its mechanisms.
type Setting struct {
	K                          int
	M, Eps, Delta, TargetDelta float64
	Mechanisms                 []Mechanism
}

// SolveSetting is the column of a darrm solve document: its problem, and
// gamma_opt and the baselines with their certificates' status.
func SolveSetting(out report.Solve) Setting {
	s := Setting{K: out.K, M: out.M, Eps: out.Eps, Delta: out.Delta, TargetDelta: out.TargetDelta}
	for _, m := range out.Mechanisms() {
		s.Mechanisms = append(s.Mechanisms, Mechanism{Name: m.Name, Prior: out.Prior, Gamma: m.Gamma, Status: m.Certificate.Status, Errors: m.Errors})
	}
	return s
}

// mechanismStyle is how a mechanism is drawn and named.
type mechanismStyle struct {
	label string
	color color.Color
	glyph draw.GlyphDrawer
}

var mechanismStyles = map[string]mechanismStyle{
	"opt":  {"γ_{opt}", color.RGBA{R: 214, G: 39, B: 40, A: 255}, draw.CircleGlyph{}},
	"sub":  {"γ_{Sub}", color.RGBA{R: 31, G: 119, B: 180, A: 255}, draw.BoxGlyph{}},
	"dsub": {"γ_{DSub}", color.RGBA{R: 23, G: 190, B: 207, A: 255}, draw.TriangleGlyph{}},
	"rr":   {"γ_{const} (RR)", color.RGBA{R: 44, G: 160, B: 44, A: 255}, draw.SquareGlyph{}},
}

// optPriorColors tells apart gamma_opt under several priors in one figure.
var optPriorColors = []color.Color{
	color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 148, G: 103, B: 189, A: 255},
	color.RGBA{R: 140, G: 86, B: 75, A: 255},
}

// priorNames are the thesis' names of darrm's priors (App. B.4).
var priorNames = map[string]string{"uniform": "T_{U}", "tp": "T_{P}"}

// styles assigns each mechanism of the settings a style, keyed by name and,
// for gamma_opt when the settings use several priors, prior; and returns
// the keys in order of first appearance.
func styles(settings []Setting) (map[string]mechanismStyle, []string, func(Mechanism) string) {
	priors := map[string]bool{}
	for _, s := range settings {
		for _, m := range s.Mechanisms {
			if m.Name == "opt" {
				priors[m.Prior] = true
			}
		}
	}
	key := func(m Mechanism) string {
		if m.Name == "opt" && len(priors) > 1 {
			return "opt:" + m.Prior
		}
		return m.Name
	}
	out := map[string]mechanismStyle{}
	var order []string
	nOpt := 0
	for _, s := range settings {
		for _, m := range s.Mechanisms {
			k := key(m)
			if _, ok := out[k]; ok {
				continue
			}
			st, ok := mechanismStyles[m.Name]
			if !ok {
				st = mechanismStyle{label: m.Name, color: color.Gray{Y: 90}, glyph: draw.CrossGlyph{}}
			}
			if k != m.Name {
				name, ok := priorNames[m.Prior]
				if !ok {
					name = "prior " + m.Prior
				}
				st.label += " (" + name + ")"
				st.color = optPriorColors[nOpt%len(optPriorColors)]
				if nOpt > 0 {
					st.glyph = draw.PyramidGlyph{}
				}
				nOpt++
			}
			out[k] = st
			order = append(order, k)
		}
	}
	// gamma_opt first, under each prior, then the baselines.
	slices.SortStableFunc(order, func(a, b string) int {
		return cmp.Compare(boolInt(!strings.HasPrefix(a, "opt")), boolInt(!strings.HasPrefix(b, "opt")))
	})
	return out, order, key
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// merge puts settings of the same problem into one column, in order of
// first appearance: their mechanisms together, gamma_opt first (under each
// prior, Figure B.7), then each baseline once.
func merge(settings []Setting) []Setting {
	var out []Setting
	for _, s := range settings {
		i := slices.IndexFunc(out, func(o Setting) bool {
			return o.K == s.K && o.M == s.M && o.Eps == s.Eps && o.Delta == s.Delta && o.TargetDelta == s.TargetDelta
		})
		if i < 0 {
			s.Mechanisms = slices.Clone(s.Mechanisms)
			out = append(out, s)
			continue
		}
		for _, m := range s.Mechanisms {
			if !slices.ContainsFunc(out[i].Mechanisms, func(o Mechanism) bool { return o.Name == m.Name && (m.Name != "opt" || o.Prior == m.Prior) }) {
				out[i].Mechanisms = append(out[i].Mechanisms, m)
			}
		}
	}
	for _, s := range out {
		slices.SortStableFunc(s.Mechanisms, func(a, b Mechanism) int {
			return cmp.Compare(boolInt(a.Name != "opt"), boolInt(b.Name != "opt"))
		})
	}
	return out
}

// WriteGammas draws the thesis' gamma figures (Figure 3.2, B.4-B.7) into
// path: one column per problem (settings of the same problem share one,
// see merge; wrapping after cols columns), with the shape of
// each γ over l on top and below it the error E(DaRRM_γ) when every
// teacher votes 1 with the same probability p, over p in [0, 1]; with bars
// also a row of the expected errors under the actual distributions of the
// p_i that the mechanisms carry (Figure B.7). Mechanisms that are not
// certified (m·ε, δ)-DP, such as a baseline exactly at the budget, are
// drawn dashed and the legend says so.
func WriteGammas(path, title string, settings []Setting, cols int, bars bool) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	if len(settings) == 0 {
		return fmt.Errorf("gamma figure: no setting")
	}
	settings = merge(settings)
	if cols <= 0 || cols > len(settings) {
		cols = len(settings)
	}
	sty, order, key := styles(settings)
	panelRows := 2
	if bars {
		panelRows = 3
	}
	bands := (len(settings) + cols - 1) / cols
	panels := make([]*plot.Plot, bands*panelRows*cols)
	uncertified := false
	for i, s := range settings {
		band, col := i/cols, i%cols
		shape, errp := NewPlot(), NewPlot()
		shape.Title.Text = settingTitle(s)
		shape.X.Label.Text = "l (teachers voting 1)"
		shape.Y.Label.Text = "γ(l)"
		shape.X.Tick.Marker = Ticks{Integer: true}
		shape.Y.Min, shape.Y.Max = 0, 1.05
		shape.X.Min, shape.X.Max = 0, float64(s.K)
		errp.X.Label.Text = "p (every p_{i} = p)"
		errp.Y.Label.Text = "error E(DaRRM_{γ})"
		errp.X.Min, errp.X.Max = 0, 1
		errp.Y.Min = 0
		var barp *plot.Plot
		var floor float64
		if bars {
			barp = NewPlot()
			LogY(barp)
			barp.Y.Label.Text = "expected error"
			barp.X.Label.Text = "actual distribution of the p_{i}"
			var err error
			if floor, err = barFloor(s.Mechanisms); err != nil {
				return err
			}
			barp.Y.Min = floor
		}
		for j, m := range s.Mechanisms {
			if m.Gamma.K() != s.K {
				return fmt.Errorf("gamma figure: %s has K = %d in a setting with K = %d", m.Name, m.Gamma.K(), s.K)
			}
			st := sty[key(m)]
			dashed := m.Status != gamma.Certified
			uncertified = uncertified || dashed
			if err := addShape(shape, m.Gamma, st, dashed); err != nil {
				return err
			}
			if err := addErrorCurve(errp, m.Gamma, st, dashed); err != nil {
				return err
			}
			// Errors that vanish up to rounding (a γ certified at
			// 1 − 10^-14 where 1 is optimal) would otherwise get an axis
			// of 10^-15.
			errp.Y.Max = math.Max(errp.Y.Max, minErrorAxis)
			if bars {
				addBars(barp, m, st, j, len(s.Mechanisms), floor)
			}
		}
		base := band * panelRows * cols
		panels[base+col] = shape
		panels[base+cols+col] = errp
		if bars {
			barp.NominalX(barLabels(s.Mechanisms)...)
			panels[base+2*cols+col] = barp
		}
	}
	var legend []Entry
	for _, k := range order {
		l := line(sty[k], false)
		legend = append(legend, Entry{Label: sty[k].label, Thumbs: []plot.Thumbnailer{l, &plotter.Scatter{GlyphStyle: glyphStyle(sty[k])}}})
	}
	if uncertified {
		legend = append(legend, Entry{Label: "dashed: tight or violated, not certified", Thumbs: []plot.Thumbnailer{line(mechanismStyle{color: color.Gray{Y: 90}}, true)}})
	}
	f := Figure{Title: title, Legend: legend, Cols: cols, Panels: panels, PanelWidth: 2.9 * vg.Inch, PanelHeight: 2.3 * vg.Inch}
	return f.Save(path)
}

// settingTitle states a column's problem: K, m and ε, then the guarantee
// m·ε and δ and the teachers' Δ.
func settingTitle(s Setting) string {
	return fmt.Sprintf("K = %d, m = %s, ε = %s\nm·ε = %s, δ = %s, Δ = %s",
		s.K, Num(s.M), Num(s.Eps), Num(s.M*s.Eps), Num(s.TargetDelta), Num(s.Delta))
}

// Num writes v for a figure: with 4 significant digits, or below 10^-3 and
// from 10^4 up with 3 as m·10^{k} (Text markup).
func Num(v float64) string {
	a := math.Abs(v)
	if v == 0 || (a >= 1e-3 && a < 1e4) {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	k := int(math.Floor(math.Log10(a)))
	m := strconv.FormatFloat(v/math.Pow(10, float64(k)), 'g', 3, 64)
	if m == "10" || m == "-10" { // 9.9996·10^k rounds up
		k++
		m = strings.TrimSuffix(m, "0")
	}
	exp := "10^{" + strconv.Itoa(k) + "}"
	switch m {
	case "1":
		return exp
	case "-1":
		return "-" + exp
	}
	return m + "·" + exp
}

func line(st mechanismStyle, dashed bool) *plotter.Line {
	l := &plotter.Line{LineStyle: draw.LineStyle{Color: st.color, Width: vg.Points(1.3)}}
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2.5)}
	}
	return l
}

func glyphStyle(st mechanismStyle) draw.GlyphStyle {
	return draw.GlyphStyle{Color: st.color, Radius: vg.Points(2.2), Shape: st.glyph}
}

func addShape(p *plot.Plot, g gamma.Gamma, st mechanismStyle, dashed bool) error {
	pts := make(plotter.XYs, len(g))
	for l, v := range g {
		pts[l] = plotter.XY{X: float64(l), Y: v}
	}
	l := line(st, dashed)
	l.XYs = pts
	p.Add(l)
	// Markers help tell overlapping curves apart; above 35 teachers they
	// would merge into a band.
	if g.K() <= 35 {
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle = glyphStyle(st)
		p.Add(sc)
	}
	return nil
}

// errorPoints is the resolution of the error curves over p; minErrorAxis
// the least upper end of their axis.
const (
	errorPoints  = 201
	minErrorAxis = 0.01
)

func addErrorCurve(p *plot.Plot, g gamma.Gamma, st mechanismStyle, dashed bool) error {
	curve := make(plotter.XYs, errorPoints)
	probs := make([]float64, g.K())
	for i := range curve {
		x := float64(i) / (errorPoints - 1)
		for j := range probs {
			probs[j] = x
		}
		e, err := gamma.TVError(g, probs)
		if err != nil {
			return err
		}
		curve[i] = plotter.XY{X: x, Y: e}
	}
	l := line(st, dashed)
	l.XYs = curve
	p.Add(l)
	return nil
}

// barFloor returns the lower end of the log axis of the bars: the decade
// below the smallest positive expected error. Every mechanism must carry
// the same actual distributions.
func barFloor(ms []Mechanism) (float64, error) {
	lo := math.Inf(1)
	for _, m := range ms {
		if len(m.Errors) == 0 || len(m.Errors) != len(ms[0].Errors) {
			return 0, fmt.Errorf("gamma figure: %s has %d expected errors, %s %d: bars need the same actual distributions for every mechanism", m.Name, len(m.Errors), ms[0].Name, len(ms[0].Errors))
		}
		for _, e := range m.Errors {
			if e.Mean > 0 {
				lo = math.Min(lo, e.Mean)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return 1e-3, nil
	}
	return math.Pow(10, math.Floor(math.Log10(lo))), nil
}

// barLabels names the groups of bars: the actual distributions, marked
// when every error under one is 0 (p_i = 0.5: the majority and DaRRM's
// release are both fair coins), which a log axis cannot show.
func barLabels(ms []Mechanism) []string {
	names := make([]string, len(ms[0].Errors))
	for i, e := range ms[0].Errors {
		names[i] = actualName(e.Actual)
		if !slices.ContainsFunc(ms, func(m Mechanism) bool { return m.Errors[i].Mean > 0 }) {
			names[i] += "\n(all 0)"
		}
	}
	return names
}

// addBars draws mechanism j of n as one bar per actual distribution, from
// the log axis' floor up; group i is centred on x = i (the nominal axis).
func addBars(p *plot.Plot, m Mechanism, st mechanismStyle, j, n int, floor float64) {
	const group = 0.8 // width of a group of bars, in units of the x axis
	w := group / float64(n)
	for i, e := range m.Errors {
		if !(e.Mean > floor) {
			continue
		}
		x := float64(i) - group/2 + float64(j)*w
		bar, _ := plotter.NewPolygon(plotter.XYs{{X: x, Y: floor}, {X: x + w, Y: floor}, {X: x + w, Y: e.Mean}, {X: x, Y: e.Mean}})
		bar.Color = st.color
		bar.LineStyle.Width = 0
		p.Add(bar)
	}
}

// actualName writes an actual distribution as the thesis does.
func actualName(a string) string {
	if _, err := strconv.ParseFloat(a, 64); err == nil {
		return "p_{i} = " + a
	}
	return a
}
