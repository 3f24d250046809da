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
	Status gamma.Status          // Tight is drawn dotted, Violated dashed
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
	width vg.Length
}

// Line widths: gamma_opt is drawn first and widest, so that a baseline
// that coincides with it (gamma_Sub at m = 1, Lemma 3.4.2) shows as a
// narrow line inside a wide one rather than hiding it; a second gamma_opt
// (another prior) is narrower, the baselines narrowest.
const (
	optWidth      = 2.6
	otherOptWidth = 1.8
	baseWidth     = 1.1
)

var mechanismStyles = map[string]mechanismStyle{
	"opt":  {label: "γ_{opt}", color: color.RGBA{R: 214, G: 39, B: 40, A: 255}, glyph: draw.CircleGlyph{}},
	"sub":  {label: "γ_{Sub}", color: color.RGBA{R: 31, G: 119, B: 180, A: 255}, glyph: draw.BoxGlyph{}},
	"dsub": {label: "γ_{DSub}", color: color.RGBA{R: 23, G: 190, B: 207, A: 255}, glyph: draw.TriangleGlyph{}},
	"rr":   {label: "γ_{const} (RR)", color: color.RGBA{R: 44, G: 160, B: 44, A: 255}, glyph: draw.SquareGlyph{}},
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
			st.width = vg.Points(baseWidth)
			if m.Name == "opt" {
				st.width = vg.Points(optWidth)
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
					st.width = vg.Points(otherOptWidth)
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
// drawn dotted when they are at the budget up to rounding (Tight) and
// dashed when they exceed it (Violated), and the legend says which is
// which; gamma_opt is drawn widest, under the baselines, so that curves
// that coincide stay visible.
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
	drawn := map[gamma.Status]bool{}
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
		var groups []int
		if bars {
			barp = NewPlot()
			LogY(barp)
			barp.Y.Label.Text = "expected error"
			var err error
			if floor, err = barFloor(s.Mechanisms); err != nil {
				return err
			}
			var names []string
			groups, names, barp.X.Label.Text = barGroups(s.Mechanisms)
			barp.NominalX(names...)
			barp.Y.Min, barp.Y.Max = floor, barCeiling(s.Mechanisms)
		}
		for j, m := range s.Mechanisms {
			if m.Gamma.K() != s.K {
				return fmt.Errorf("gamma figure: %s has K = %d in a setting with K = %d", m.Name, m.Gamma.K(), s.K)
			}
			st := sty[key(m)]
			drawn[m.Status] = true
			if err := addShape(shape, m.Gamma, st, m.Status); err != nil {
				return err
			}
			if err := addErrorCurve(errp, m.Gamma, st, m.Status); err != nil {
				return err
			}
			// Errors that vanish up to rounding (a γ certified at
			// 1 − 10^-14 where 1 is optimal) would otherwise get an axis
			// of 10^-15.
			errp.Y.Max = math.Max(errp.Y.Max, minErrorAxis)
			if bars {
				addBars(barp, m, st, j, len(s.Mechanisms), floor, groups)
			}
		}
		base := band * panelRows * cols
		panels[base+col] = shape
		panels[base+cols+col] = errp
		if bars {
			panels[base+2*cols+col] = barp
		}
	}
	var legend []Entry
	for _, k := range order {
		l := line(sty[k], gamma.Certified)
		legend = append(legend, Entry{Label: sty[k].label, Thumbs: []plot.Thumbnailer{l, &plotter.Scatter{GlyphStyle: glyphStyle(sty[k])}}})
	}
	gray := mechanismStyle{color: color.Gray{Y: 70}, width: vg.Points(1.4)}
	if drawn[gamma.Tight] {
		legend = append(legend, Entry{Label: "dotted: at the budget up to rounding (tight), not certified", Thumbs: []plot.Thumbnailer{line(gray, gamma.Tight)}})
	}
	if drawn[gamma.Violated] {
		legend = append(legend, Entry{Label: "dashed: over the budget (violated), not (m·ε, δ)-DP", Thumbs: []plot.Thumbnailer{line(gray, gamma.Violated)}})
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

// line is a mechanism's line, solid when its certificate has status
// Certified, dotted when Tight and dashed when Violated.
func line(st mechanismStyle, status gamma.Status) *plotter.Line {
	l := &plotter.Line{LineStyle: draw.LineStyle{Color: st.color, Width: st.width}}
	switch status {
	case gamma.Certified:
	case gamma.Tight:
		l.Dashes = []vg.Length{vg.Points(1.2), vg.Points(1.8)}
	default:
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return l
}

func glyphStyle(st mechanismStyle) draw.GlyphStyle {
	return draw.GlyphStyle{Color: st.color, Radius: vg.Points(2.2), Shape: st.glyph}
}

func addShape(p *plot.Plot, g gamma.Gamma, st mechanismStyle, status gamma.Status) error {
	pts := make(plotter.XYs, len(g))
	for l, v := range g {
		pts[l] = plotter.XY{X: float64(l), Y: v}
	}
	l := line(st, status)
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

func addErrorCurve(p *plot.Plot, g gamma.Gamma, st mechanismStyle, status gamma.Status) error {
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
	l := line(st, status)
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

// barCeiling returns the upper end of the log axis of the bars: the decade
// above the largest expected error, so that no bar runs off the axis.
func barCeiling(ms []Mechanism) float64 {
	hi := 0.0
	for _, m := range ms {
		for _, e := range m.Errors {
			hi = math.Max(hi, e.Mean)
		}
	}
	if hi <= 0 {
		return 1
	}
	return math.Pow(10, math.Ceil(math.Log10(hi)))
}

// barGroups returns the actual distributions that get a group of bars (the
// indexes of the errors, in order), their names, and the axis label. An
// actual distribution under which every error is 0 (p_i = 0.5: the
// majority and DaRRM's release are both fair coins), which a log axis
// cannot show, gets no group; the label says so instead.
func barGroups(ms []Mechanism) (groups []int, names []string, label string) {
	label = "actual distribution of the p_{i}"
	var zero []string
	for i, e := range ms[0].Errors {
		if slices.ContainsFunc(ms, func(m Mechanism) bool { return m.Errors[i].Mean > 0 }) {
			groups = append(groups, i)
			names = append(names, actualName(e.Actual))
		} else {
			zero = append(zero, actualName(e.Actual))
		}
	}
	if len(zero) > 0 {
		label += "\n(" + strings.Join(zero, ", ") + ": every error is 0, not drawn)"
	}
	return groups, names, label
}

// addBars draws mechanism j of n as one bar per actual distribution of
// groups (barGroups), from the log axis' floor up; the k-th group is
// centred on x = k (the nominal axis).
func addBars(p *plot.Plot, m Mechanism, st mechanismStyle, j, n int, floor float64, groups []int) {
	const group = 0.8 // width of a group of bars, in units of the x axis
	w := group / float64(n)
	for k, i := range groups {
		e := m.Errors[i]
		if !(e.Mean > floor) {
			continue
		}
		x := float64(k) - group/2 + float64(j)*w
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
