package figure

import (
	"cmp"
	"context"
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

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/decimal"
)

// Curve is one noise function of a gamma figure, with its certificate and
// error curves: what the figure draws of a mechanism.
type Curve struct {
	Name  string    // "opt", "sub", "dsub" or "rr", as darrm solve names them
	Prior string    // the prior gamma_opt was optimised under ("uniform", "tp", ...)
	Gamma []float64 // γ(0), ..., γ(K)
	// Status is its exhaustive certificate's: a Tight one is at the
	// budget up to floating-point rounding, as a proof that makes the
	// mechanism exactly (m·ε, δ)-DP has it (γ_Sub, Lemma 3.4.1; γ_DSub,
	// Theorem 3.5.1).
	Status gamma.Status
	// Error[i] is the error E(DaRRM_γ) when every teacher votes 1 with
	// probability p = i/(len(Error)-1) (Definition 3.3.4).
	Error []float64
	// Expected are the expected errors under actual distributions of the
	// teachers' p_i (App. B.4), drawn as a row of their own on request.
	Expected []Expected
}

// Expected is an expected error under an actual distribution of the p_i.
type Expected struct {
	Actual string // "U(0,1)", "0.5", ...
	Mean   float64
}

// Setting is one column of a gamma figure: a problem and its mechanisms.
// In the one-vote relation (Relation accountant.OneVote) the teachers need
// not be private, and Eps and TargetDelta are the release's own guarantee
// (M is 1, Delta 0: no teachers' guarantee to state).
type Setting struct {
	constraints.Problem
	// SubSize is the number of teachers γ_Sub subsamples when it is not
	// floor(M) (App. B.4's M); 0 otherwise.
	SubSize    int
	Mechanisms []Curve
}

// oneVote says that the column's problem is in the one-vote relation.
func (s Setting) oneVote() bool { return s.Relation == accountant.OneVote }

// mechanismStyle is how a mechanism is drawn and named.
type mechanismStyle struct {
	label string
	color color.Color
	glyph draw.GlyphDrawer
	width vg.Length
	// proof names the result that makes the mechanism private, for a
	// mechanism exactly at the budget.
	proof string
}

// Line widths: gamma_opt is drawn first and widest, so that a baseline
// that coincides with it (gamma_Sub at m = 1, Lemma 3.4.2) shows as a
// narrow line inside a wide one rather than hiding it; the baselines'
// markers are hollow, so that a marker on another shows both.
const (
	optWidth  = 1.7
	baseWidth = 0.9
	glyphSize = 2.1
)

// The colours: Okabe and Ito's palette, which colour-blind readers and
// grey-scale prints tell apart.
var (
	vermillion = color.RGBA{R: 213, G: 94, B: 0, A: 255}
	blue       = color.RGBA{R: 0, G: 114, B: 178, A: 255}
	green      = color.RGBA{R: 0, G: 158, B: 115, A: 255}
	purple     = color.RGBA{R: 204, G: 121, B: 167, A: 255}
	skyBlue    = color.RGBA{R: 86, G: 180, B: 233, A: 255}
)

var mechanismStyles = map[string]mechanismStyle{
	"opt": {label: "γ_{opt}", color: vermillion, glyph: draw.CircleGlyph{}},
	"sub": {label: "γ_{Sub}", color: blue, glyph: draw.BoxGlyph{}, proof: "Lemma 3.4.1"},
	// black, not orange: orange and γ_opt's vermillion read as one hue
	"dsub": {label: "γ_{DSub}", color: color.Black, glyph: draw.PyramidGlyph{}, proof: "Theorem 3.5.1"},
	"rr":   {label: "γ_{const} (RR)", color: green, glyph: draw.CrossGlyph{}, proof: "Lemma B.1.1"},
	// GNMax's release of one bit as a γ (the one-vote relation's baseline).
	"gnmax": {label: "γ_{GNMax} (GNMax)", color: color.Gray{Y: 90}, glyph: draw.RingGlyph{}},
}

// hollow draws a glyph's outline, so that what it sits on shows through.
type hollow struct{ shape draw.GlyphDrawer }

func (h hollow) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	switch h.shape.(type) {
	case draw.BoxGlyph:
		draw.SquareGlyph{}.DrawGlyph(c, sty, pt)
	case draw.PyramidGlyph:
		draw.TriangleGlyph{}.DrawGlyph(c, sty, pt)
	default:
		h.shape.DrawGlyph(c, sty, pt)
	}
}

// optPriorColors tells apart gamma_opt under several priors in one figure.
var optPriorColors = []color.Color{vermillion, purple, skyBlue}

// priorNames are the thesis' names of darrm's priors (App. B.4).
var priorNames = map[string]string{"uniform": "T_{U}", "tp": "T_{P}"}

// styles assigns each mechanism of the settings a style, keyed by name and,
// for gamma_opt when the settings use several priors, prior; and returns
// the keys in order of first appearance, gamma_opt first.
func styles(settings []Setting) (map[string]mechanismStyle, []string, func(Curve) string) {
	priors := map[string]bool{}
	for _, s := range settings {
		for _, m := range s.Mechanisms {
			if m.Name == "opt" {
				priors[m.Prior] = true
			}
		}
	}
	key := func(m Curve) string {
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
				st = mechanismStyle{label: m.Name, color: color.Gray{Y: 90}, glyph: draw.RingGlyph{}}
			}
			st.width = vg.Points(baseWidth)
			if m.Name == "opt" {
				st.width = vg.Points(optWidth)
			} else {
				st.glyph = hollow{st.glyph}
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
					st.width = vg.Points(optWidth * 0.7)
				}
				nOpt++
			}
			out[k] = st
			order = append(order, k)
		}
	}
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
			return o.Problem == s.Problem && o.SubSize == s.SubSize
		})
		if i < 0 {
			s.Mechanisms = slices.Clone(s.Mechanisms)
			out = append(out, s)
			continue
		}
		for _, m := range s.Mechanisms {
			if !slices.ContainsFunc(out[i].Mechanisms, func(o Curve) bool { return o.Name == m.Name && (m.Name != "opt" || o.Prior == m.Prior) }) {
				out[i].Mechanisms = append(out[i].Mechanisms, m)
			}
		}
	}
	for _, s := range out {
		slices.SortStableFunc(s.Mechanisms, func(a, b Curve) int {
			return cmp.Compare(boolInt(a.Name != "opt"), boolInt(b.Name != "opt"))
		})
	}
	return out
}

// GammaFigure is one of the thesis' gamma figures (Figure 3.2, B.4-B.7):
// one column per problem (settings of the same problem share one, see
// merge; wrapping after Cols columns) with the shape of each γ over l on
// top and below it the error E(DaRRM_γ) when every teacher votes 1 with
// the same probability p; with Expected, also a row of the expected
// errors under the actual distributions of the p_i (Figure B.7), as points
// on a log axis. The panels of a row share their y axis. What the settings
// share is stated once under the title, what differs above each column.
// Mechanisms that are not certified below the budget are named in a note
// under the legend: "tight" ones, at the budget up to rounding as their
// proofs have them, and "violated" ones, over it, which are also drawn
// dashed. Notes are further lines of text under the legend.
type GammaFigure struct {
	Title    string
	Settings []Setting
	Cols     int
	Expected bool
	Notes    []string
}

// Write draws the figure into path (Figure.Save, in ctx).
func (g GammaFigure) Write(ctx context.Context, path string) error {
	title, settings, cols, expected := g.Title, g.Settings, g.Cols, g.Expected
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
	vary := varying(settings)
	panelRows := 2
	if expected {
		panelRows = 3
	}
	bands := (len(settings) + cols - 1) / cols
	panels := make([]*Panel, bands*panelRows*cols)
	var tight, violated statusList
	drawn := map[string]int{}
	var keyName, keyValue string
	for i, s := range settings {
		band, col := i/cols, i%cols
		shape, errp := NewPanel(), NewPanel()
		shape.Title.Text = columnTitle(s, vary)
		shape.X.Label.Text = "l (teachers voting 1)"
		shape.Y.Label.Text = "γ(l)"
		shape.X.Tick.Marker = Ticks{Integer: true, Most: 5}
		shape.X.Min, shape.X.Max = Pad(0, float64(s.K), 0.03)
		shape.Y.Min, shape.Y.Max = Pad(0, 1, 0.05)
		errp.X.Label.Text = "p (every p_{i} = p)"
		errp.Y.Label.Text = "error E(DaRRM_{γ})"
		errp.X.Tick.Marker = Ticks{Most: 5}
		errp.X.Min, errp.X.Max = Pad(0, 1, 0.03)
		top := 0.0
		var exp *Panel
		var groups []int
		if expected {
			var err error
			if exp, groups, err = expectedPanel(s.Mechanisms); err != nil {
				return err
			}
		}
		for j, m := range s.Mechanisms {
			if len(m.Gamma) != s.K+1 {
				return fmt.Errorf("gamma figure: %s has %d values in a setting with K = %d", m.Name, len(m.Gamma), s.K)
			}
			if len(m.Error) < 2 {
				return fmt.Errorf("gamma figure: %s has %d error values, want its error curve", m.Name, len(m.Error))
			}
			st := sty[key(m)]
			drawn[st.label]++
			keyName, keyValue = columnKey(s, vary)
			switch m.Status {
			case gamma.Tight:
				tight.add(st.label, st.proof, keyValue)
			case gamma.Violated:
				violated.add(st.label, "", keyValue)
			}
			n := len(s.Mechanisms)
			addCurve(shape, st, m.Status, func(i int) float64 { return float64(i) }, m.Gamma, markEvery(len(m.Gamma), 12, j, n))
			addCurve(errp, st, m.Status, func(i int) float64 { return float64(i) / float64(len(m.Error)-1) }, m.Error, markEvery(len(m.Error), 10, j, n))
			top = math.Max(top, slices.Max(m.Error))
			if expected {
				addPoints(exp, m, st, j, n, groups)
			}
		}
		// Errors that vanish up to rounding (a γ certified at 1 − 10^-14
		// where 1 is optimal) would otherwise get an axis of 10^-15.
		errp.Y.Min, errp.Y.Max = Pad(0, math.Max(top, minErrorAxis), 0.05)
		base := band * panelRows * cols
		panels[base+col] = shape
		panels[base+cols+col] = errp
		if expected {
			panels[base+2*cols+col] = exp
		}
	}
	var legend []Entry
	for _, k := range order {
		legend = append(legend, Entry{Label: sty[k].label, Thumbs: []plot.Thumbnailer{line(sty[k], gamma.Certified), &plotter.Scatter{GlyphStyle: glyphStyle(sty[k])}}})
	}
	if len(tight) > 0 {
		legend = append(legend, Entry{Label: "Exactly at the privacy budget, as their proofs have it (certificate: max f = budget up to rounding, \"tight\"): " + tight.text(drawn, keyName) + "."})
	}
	if len(violated) > 0 {
		legend = append(legend, Entry{Label: "Dashed: over the privacy budget, not (m·ε, δ)-DP (certificate: \"violated\"): " + violated.text(drawn, keyName) + "."})
	}
	if len(tight)+len(violated) > 0 {
		legend = append(legend, Entry{Label: "Every other γ is certified below the budget."})
	}
	for _, n := range g.Notes {
		legend = append(legend, Entry{Label: n})
	}
	if common := commonLine(settings, vary); title == "" {
		title = common
	} else {
		title += "\n" + common
	}
	aspect := 0.75
	if cols >= 4 {
		aspect = 0.85
	}
	f := Figure{Title: title, Legend: legend, Cols: cols, Panels: panels, ShareY: true, Aspect: aspect}
	return f.Save(ctx, path)
}

// statusList collects the mechanisms of one status and the columns they
// have it in (columnKey values).
type statusList []statusEntry

type statusEntry struct {
	label, proof string
	where        []string
}

func (l *statusList) add(label, proof, where string) {
	if i := slices.IndexFunc(*l, func(e statusEntry) bool { return e.label == label }); i >= 0 {
		(*l)[i].where = append((*l)[i].where, where)
		return
	}
	*l = append(*l, statusEntry{label, proof, []string{where}})
}

// text lists the mechanisms with the result that proves each private:
// first those with the status in every column they are drawn in (as
// counted by drawn), then each other with its columns.
func (l statusList) text(drawn map[string]int, keyName string) string {
	var every, some []string
	for _, e := range l {
		s := e.label
		if e.proof != "" {
			s += " (" + e.proof + ")"
		}
		if len(e.where) < drawn[e.label] && keyName != "" {
			some = append(some, s+" at "+keyName+" = "+strings.Join(e.where, ", "))
		} else {
			every = append(every, s)
		}
	}
	var parts []string
	if len(every) > 0 {
		parts = append(parts, andList(every)+" in every panel")
	}
	return strings.Join(append(parts, some...), "; ")
}

// andList joins items as "a", "a and b", "a, b and c".
func andList(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// vary says which of a gamma figure's parameters differ across its
// settings.
type vary struct{ k, m, eps, delta, target, sub bool }

func varying(settings []Setting) vary {
	var v vary
	s0 := settings[0]
	for _, s := range settings[1:] {
		v.k = v.k || s.K != s0.K
		v.m = v.m || s.M != s0.M
		v.eps = v.eps || s.Eps != s0.Eps
		v.delta = v.delta || s.Delta != s0.Delta
		v.target = v.target || s.TargetDelta != s0.TargetDelta
		v.sub = v.sub || s.SubSize != s0.SubSize
	}
	return v
}

// columnKey names a column in a note by what differs first (M, K, m):
// the parameter's name and its value in s.
func columnKey(s Setting, v vary) (string, string) {
	switch {
	case v.sub:
		return "M", strconv.Itoa(s.SubSize)
	case v.k:
		return "K", strconv.Itoa(s.K)
	case v.m:
		return "m", Num(s.M)
	}
	return "", ""
}

// columnTitle states what differs in a column; the figure's title states
// the rest (commonLine). A single setting states everything.
func columnTitle(s Setting, v vary) string {
	var parts []string
	if v.k {
		parts = append(parts, fmt.Sprintf("K = %d", s.K))
	}
	if v.m {
		parts = append(parts, "m = "+Num(s.M))
	}
	if v.eps {
		parts = append(parts, "ε = "+Num(s.Eps))
	}
	if v.delta {
		parts = append(parts, "Δ = "+Num(s.Delta))
	}
	if v.target {
		parts = append(parts, "δ = "+Num(s.TargetDelta))
	}
	t := strings.Join(parts, ", ")
	if v.sub {
		t = fmt.Sprintf("M = %d\n%s", s.SubSize, t)
	}
	return t
}

// commonLine states what the settings share: the teachers and the
// release's guarantee, m·ε and δ, where they are the same in every column.
func commonLine(settings []Setting, v vary) string {
	s := settings[0]
	if s.oneVote() && !slices.ContainsFunc(settings, func(o Setting) bool { return !o.oneVote() }) {
		return oneVoteLine(s, v)
	}
	var parts []string
	if !v.k {
		parts = append(parts, fmt.Sprintf("K = %d teachers", s.K))
	}
	var each []string
	if !v.eps {
		each = append(each, "ε = "+Num(s.Eps))
	}
	if !v.delta {
		each = append(each, "Δ = "+Num(s.Delta))
	}
	parts = append(parts, dpClause("each ", each)...)
	var rel []string
	if !v.m {
		rel = append(rel, "m = "+Num(s.M), "m·ε = "+Num(decimal.Mul(s.M, s.Eps)))
	}
	if !v.target {
		rel = append(rel, "δ = "+Num(s.TargetDelta))
	}
	if len(rel) > 0 {
		parts = append(parts, "release "+strings.Join(rel, ", "))
	}
	if s.SubSize > 0 && !v.sub {
		parts = append(parts, fmt.Sprintf("γ_{Sub} subsamples M = %d", s.SubSize))
	}
	return strings.Join(parts, "; ")
}

// oneVoteLine is commonLine for settings of the one-vote relation, whose
// teachers have no guarantee and whose ε is the release's own.
func oneVoteLine(s Setting, v vary) string {
	var parts []string
	if !v.k {
		parts = append(parts, fmt.Sprintf("K = %d non-private teachers", s.K))
	} else {
		parts = append(parts, "non-private teachers")
	}
	parts = append(parts, "one-vote relation (one record changes one vote)")
	var rel []string
	if !v.eps {
		rel = append(rel, "ε = "+Num(s.Eps))
	}
	if !v.target {
		rel = append(rel, "δ = "+Num(s.TargetDelta))
	}
	parts = append(parts, dpClause("each release ", rel)...)
	return strings.Join(parts, "; ")
}

// dpClause is the clause "prefix(a, b)-DP" of a title stating the
// parameters items, or none without items.
func dpClause(prefix string, items []string) []string {
	if len(items) == 0 {
		return nil
	}
	return []string{prefix + "(" + strings.Join(items, ", ") + ")-DP"}
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

// line is a mechanism's line, dashed when its certificate has status
// Violated.
func line(st mechanismStyle, status gamma.Status) *plotter.Line {
	l := &plotter.Line{LineStyle: draw.LineStyle{Color: st.color, Width: st.width}}
	if status == gamma.Violated {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2.5)}
	}
	return l
}

func glyphStyle(st mechanismStyle) draw.GlyphStyle {
	return draw.GlyphStyle{Color: st.color, Radius: vg.Points(glyphSize), Shape: st.glyph}
}

// markEvery returns the indexes of n points that mechanism j of k marks,
// about most of them: every point when n <= most, else every stride-th,
// the mechanisms' marks staggered so that curves that coincide show all
// their markers.
func markEvery(n, most, j, k int) []int {
	if n <= most {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	stride := (n + most - 1) / most
	var out []int
	for i := j * stride / k; i < n; i += stride {
		out = append(out, i)
	}
	return out
}

// addCurve draws y[i] at x(i) as st's line, with st's markers at marks.
func addCurve(p *Panel, st mechanismStyle, status gamma.Status, x func(int) float64, y []float64, marks []int) {
	pts := make(plotter.XYs, len(y))
	for i, v := range y {
		pts[i] = plotter.XY{X: x(i), Y: v}
	}
	l := line(st, status)
	l.XYs = pts
	p.Add(l)
	var at plotter.XYs
	for _, i := range marks {
		at = append(at, pts[i])
	}
	p.Add(&plotter.Scatter{XYs: at, GlyphStyle: glyphStyle(st)})
}

// minErrorAxis is the least upper end of the error axis.
const minErrorAxis = 0.01

// expectedPanel returns the panel of the expected errors under the actual
// distributions: one group per distribution under which some error is
// positive, named on the x axis, on a log axis from the decade below the
// smallest positive error to the decade above the largest. A distribution
// under which every error is 0 (p_i = 0.5: the majority and DaRRM's
// release are both fair coins), which a log axis cannot show, gets no
// group; the axis label says so instead. Every mechanism must carry the
// same actual distributions.
func expectedPanel(ms []Curve) (*Panel, []int, error) {
	lo, hi := math.Inf(1), 0.0
	for _, m := range ms {
		if len(m.Expected) == 0 || len(m.Expected) != len(ms[0].Expected) {
			return nil, nil, fmt.Errorf("gamma figure: %s has %d expected errors, %s %d: the expected errors need the same actual distributions for every mechanism", m.Name, len(m.Expected), ms[0].Name, len(ms[0].Expected))
		}
		for _, e := range m.Expected {
			if e.Mean > 0 {
				lo, hi = math.Min(lo, e.Mean), math.Max(hi, e.Mean)
			}
		}
	}
	p := NewPanel()
	LogY(p)
	p.Y.Label.Text = "expected error (log scale)"
	p.Y.Min, p.Y.Max = 1e-3, 1
	if hi > 0 {
		p.Y.Min, p.Y.Max = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	}
	var ticks []plot.Tick
	var zero []string
	var groups []int
	for i, e := range ms[0].Expected {
		if slices.ContainsFunc(ms, func(m Curve) bool { return m.Expected[i].Mean > 0 }) {
			ticks = append(ticks, plot.Tick{Value: float64(len(groups)), Label: actualName(e.Actual)})
			groups = append(groups, i)
		} else {
			zero = append(zero, actualName(e.Actual))
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	p.X.Label.Text = "actual distribution of the p_{i}"
	if len(zero) > 0 {
		p.X.Label.Text += "\n(" + strings.Join(zero, ", ") + ": every error is 0, not drawn)"
	}
	return p, groups, nil
}

// addPoints draws mechanism j of n as one point per group of the expected
// panel (the indexes of its errors, groups), the mechanisms side by side
// within a group.
func addPoints(p *Panel, m Curve, st mechanismStyle, j, n int, groups []int) {
	const group = 0.7 // width of a group, in units of the x axis
	var pts plotter.XYs
	for k, i := range groups {
		if e := m.Expected[i]; e.Mean > 0 {
			pts = append(pts, plotter.XY{X: float64(k) - group/2 + group*(float64(j)+0.5)/float64(n), Y: e.Mean})
		}
	}
	gs := glyphStyle(st)
	gs.Radius = vg.Points(glyphSize * 1.3)
	p.Add(&plotter.Scatter{XYs: pts, GlyphStyle: gs})
}

// actualName writes an actual distribution as the thesis does.
func actualName(a string) string {
	if _, err := strconv.ParseFloat(a, 64); err == nil {
		return "p_{i} = " + a
	}
	return a
}
