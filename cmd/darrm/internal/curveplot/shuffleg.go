package curveplot

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/darrm/darrm/cmd/darrm/internal/figure"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/shuffleexp"
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/shuffleg"
)

// This file turns DP-ShuffleG's reports into the panels of its figures
// (thesis Figure 4.2).

// Metric is the quantity a DP-ShuffleG panel shows: LossMetric or
// ExcessMetric.
type Metric int

const (
	// LossMetric is the objective G(x; D) on the private data, linear axis.
	LossMetric Metric = iota
	// ExcessMetric is G(x; D) − G(x*; D), log axis.
	ExcessMetric
)

var metricNames = enum.Names[Metric]{What: "Metric", List: []string{LossMetric: "loss", ExcessMetric: "excess"}, Or: true}

// String returns "loss" or "excess".
func (m Metric) String() string { return metricNames.String(m) }

// MarshalText returns the name of m, as --plot-Metric takes it.
func (m Metric) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText sets m from its name: loss or excess.
func (m *Metric) UnmarshalText(b []byte) error { return metricNames.Unmarshal(m, b) }

// algorithmColours gives each DP-ShuffleG algorithm one colour across
// panels, with the thesis' blue DP-ShuffleG, green Public Only and red
// Interleaved.
var algorithmColours = map[string]int{
	shuffleg.DPShuffleG.String():  0,
	shuffleg.PrivPub.String():     1,
	shuffleg.PubPriv.String():     2,
	shuffleg.Interleaved.String(): 3,
	shuffleg.PublicOnly.String():  4,
}

var taskNames = map[string]string{"mean": "mean estimation", "ridge": "ridge regression", "lasso-logistic": "lasso logistic regression"}

// shufflegData names a report's dataset by its catalog title, marked as a
// substitute unless it is the thesis' own, and its task.
func shufflegData(r *shuffleexp.Report) string {
	data := r.Dataset
	if info, err := datasets.Lookup(r.Dataset); err == nil {
		data = info.Title
	}
	if !r.ThesisDataset {
		data += " (substitute)"
	}
	task, ok := taskNames[r.Task]
	if !ok {
		task = r.Task
	}
	return data + ", " + task
}

// shufflegPanel is the panel of a DP-ShuffleG experiment's report (Figure
// 4.2): each algorithm's curve of m at the learning rate its search chose,
// which the panel's key lists, under title.
func shufflegPanel(r *shuffleexp.Report, m Metric, title string) Panel {
	p := Panel{Title: title, XLabel: "epoch", YLabel: "loss G(x; D)", KeyTitle: "η ="}
	if m == ExcessMetric {
		p.YLabel, p.LogY = "excess risk G(x; D) − G(x*; D)", true
		// An excess can round to <= 0 at the optimum: floor the axis a
		// decade below the smallest positive mean.
		p.Floor = math.Inf(1)
		for _, a := range r.Results {
			for _, v := range a.ExcessMean {
				if v > 0 {
					p.Floor = math.Min(p.Floor, v/10)
				}
			}
		}
		if math.IsInf(p.Floor, 1) {
			p.Floor = 1e-12
		}
	}
	// No run's loss is below the optimum, nor its excess below 0.
	lower := 0.0
	if m == LossMetric {
		lower = r.Optimum.Value
	}
	p.Lower = &lower
	for _, a := range r.Results {
		s := Series{Label: a.Label, Mean: a.LossMean, Std: a.LossStd, Key: figure.Num(a.LR)}
		if !a.Contractive {
			s.Key += nonContractiveMark
		}
		if c, ok := algorithmColours[a.Algo]; ok {
			s.Color, s.Glyph = Colour(c), Glyph(c)
		}
		if m == ExcessMetric {
			s.Mean, s.Std = a.ExcessMean, a.ExcessStd
		}
		p.Series = append(p.Series, s)
	}
	return p
}

// ShufflegFigure lays out the reports' panels: with cols > 0, in the order
// given, cols to a row, each panel's title stating its setting; otherwise
// one row per setting other than ε (dataset and task, order, p, ...), in
// order of first appearance, headed by what sets it apart, its panels in
// increasing ε from the left, each titled with its ε, and what every
// report shares stated once under the title; how the noise was accounted
// (conversion, order rule, clip) is stated where the reports differ in it.
// Rows whose ε differ (1 and 5 for ridge, 5 and 10 otherwise, as Figure 4.2
// has them) are not spread over a column per ε, which would leave cells
// empty. Each reference is drawn thin and dashed in the panel of the report
// of the same dataset, task, ε, δ, p, epochs and accounting; a reference
// that matches no panel is an error.
func ShufflegFigure(reports, refs []shuffleexp.Report, m Metric, title string, cols int) (Figure, error) {
	f := Figure{Title: title, Notes: shufflegNotes(reports)}
	if len(refs) > 0 {
		f.Notes = append(f.Notes, "Thin dashed: the same algorithms with "+referenceOrders(refs)+", for comparison.")
	}
	if slices.ContainsFunc(append(slices.Clip(reports), refs...), anyNonContractive) {
		f.Notes = append(f.Notes, "η"+nonContractiveMark+": above the contraction bound 1/L* (run with --allow-noncontractive): the privacy analysis does not hold, that curve is NOT (ε, δ)-DP.")
	}
	byReport := make([]*Panel, len(reports))
	common, differs := shufflegCommon(reports)
	if common != "" {
		f.Title = strings.TrimSpace(f.Title + "\n" + common)
	}
	if cols > 0 || len(reports) == 1 {
		for i := range reports {
			r := &reports[i]
			t := shufflegData(r) + "\n" + shufflegSetting(r, differs, true)
			p := shufflegPanel(r, m, strings.TrimRight(t, "\n"))
			f.Panels, byReport[i] = append(f.Panels, &p), &p
		}
		f.Cols = max(cols, 1)
		return f, addReferences(byReport, reports, refs, m)
	}
	var rows []string
	members := map[string][]int{} // a row's reports
	for i := range reports {
		row := shufflegRow(&reports[i], differs)
		if !slices.Contains(rows, row) {
			rows = append(rows, row)
		}
		members[row] = append(members[row], i)
		f.Cols = max(f.Cols, len(members[row]))
	}
	f.RowTitles, f.ShareY = rows, true
	f.Panels = make([]*Panel, len(rows)*f.Cols)
	for ri, row := range rows {
		in := members[row]
		slices.SortStableFunc(in, func(a, b int) int { return cmp.Compare(reports[a].Eps, reports[b].Eps) })
		for c, i := range in {
			p := shufflegPanel(&reports[i], m, "ε = "+figure.Num(reports[i].Eps))
			f.Panels[ri*f.Cols+c], byReport[i] = &p, &p
		}
	}
	return f, addReferences(byReport, reports, refs, m)
}

// addReferences puts each reference's curves into the panel of its
// report, panels[j] being report j's.
func addReferences(panels []*Panel, reports, refs []shuffleexp.Report, m Metric) error {
	for i := range refs {
		ref := &refs[i]
		j := slices.IndexFunc(reports, func(r shuffleexp.Report) bool {
			return r.Dataset == ref.Dataset && r.Task == ref.Task && r.Eps == ref.Eps && r.Delta == ref.Delta && r.Fraction == ref.Fraction && r.Epochs == ref.Epochs &&
				r.Conversion == ref.Conversion && r.AlphaRule == ref.AlphaRule && r.Clip == ref.Clip
		})
		if j < 0 {
			return fmt.Errorf("reference %d (%s, %s, ε = %g, p = %g, %s conversion, α: %s, clip %g): no report of the same dataset, task, ε, δ, p, epochs, conversion, α rule and clip to compare it with",
				i+1, ref.Dataset, ref.Task, ref.Eps, ref.Fraction, ref.Conversion, ref.AlphaRule, ref.Clip)
		}
		panels[j].Reference = append(panels[j].Reference, shufflegPanel(ref, m, "").Series...)
	}
	return nil
}

// referenceOrders names the orders of the references: "the RR order".
func referenceOrders(refs []shuffleexp.Report) string {
	var orders []string
	for _, r := range refs {
		if o := strings.ToUpper(r.Order); !slices.Contains(orders, o) {
			orders = append(orders, o)
		}
	}
	return "the " + strings.Join(orders, " or ") + " order"
}

// shufflegRow is the heading of a report's row in the grid: its dataset and
// task, and the settings other than ε in which the reports differ.
func shufflegRow(r *shuffleexp.Report, differs shufflegDiffers) string {
	s := shufflegSetting(r, differs, false)
	if s == "" {
		return shufflegData(r)
	}
	return shufflegData(r) + "; " + s
}

// shufflegDiffers says which of a report's settings (shufflegSettings)
// differ across the reports.
type shufflegDiffers [9]bool

// statedSettings is the number of leading shufflegSettings a figure states
// even where every report shares them; the others, how the noise was
// accounted (the RDP conversion, the Rényi order's rule, the clipping norm
// G), it states only where the reports differ in them.
const statedSettings = 6

// shufflegSettings are r's settings other than its dataset and task, in the
// order a title states them (ε, δ, order, p, epochs, runs, conversion,
// order rule, clip): their values, and each in words.
func shufflegSettings(r *shuffleexp.Report) ([9]any, [9]string) {
	return [9]any{r.Eps, r.Delta, r.Order, r.Fraction, r.Epochs, r.Runs, r.Conversion, r.AlphaRule, r.Clip},
		[9]string{"ε = " + figure.Num(r.Eps), "δ = " + figure.Num(r.Delta), strings.ToUpper(r.Order) + " order",
			fmt.Sprintf("p = %g", r.Fraction), fmt.Sprintf("%d epochs", r.Epochs), fmt.Sprintf("%d runs", r.Runs),
			r.Conversion + " conversion", "α: " + r.AlphaRule, fmt.Sprintf("clip %g", r.Clip)}
}

// shufflegSetting states r's settings that differ across the reports (ε
// only if withEps).
func shufflegSetting(r *shuffleexp.Report, d shufflegDiffers, withEps bool) string {
	_, texts := shufflegSettings(r)
	var parts []string
	for i, t := range texts {
		if d[i] && (withEps || i > 0) {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, ", ")
}

// shufflegCommon states what every report shares, and says what differs.
func shufflegCommon(reports []shuffleexp.Report) (string, shufflegDiffers) {
	if len(reports) == 1 {
		return "", shufflegDiffers{true, true, true, true, true, true}
	}
	keys0, texts0 := shufflegSettings(&reports[0])
	var d shufflegDiffers
	for i := range reports[1:] {
		keys, _ := shufflegSettings(&reports[i+1])
		for j := range keys {
			d[j] = d[j] || keys[j] != keys0[j]
		}
	}
	var parts []string
	for i, t := range texts0[:statedSettings] {
		if !d[i] {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, ", "), d
}

// nonContractiveMark follows the learning rate of a result whose rate
// exceeds the contraction bound, as darrm shuffleg's table marks it.
const nonContractiveMark = " (!)"

// anyNonContractive reports whether a result of r ran above the
// contraction bound, where its ε is no guarantee.
func anyNonContractive(r shuffleexp.Report) bool {
	return slices.ContainsFunc(r.Results, func(a shuffleexp.ReportResult) bool { return !a.Contractive })
}

// shufflegNotes are the lines under the legend of a DP-ShuffleG figure:
// what p, the bands and the key are.
func shufflegNotes(reports []shuffleexp.Report) []string {
	runs := slices.MaxFunc(reports, func(a, b shuffleexp.Report) int { return cmp.Compare(a.Runs, b.Runs) }).Runs
	lr := "Learning rate η (above each panel, in the algorithm's colour): as given."
	searched := slices.ContainsFunc(reports, func(r shuffleexp.Report) bool {
		return slices.ContainsFunc(r.Results, func(a shuffleexp.ReportResult) bool { return len(a.Grid) > 1 })
	})
	if searched {
		grid := "its grid"
		if strings.HasPrefix(reports[0].LRSearch, "thesis grid") {
			grid = "the thesis' grid {0.5, 0.1, 0.05, ..., 10^{-9}}"
		}
		lr = "Learning rate η (above each panel, in the algorithm's colour): the rate of " + grid + " with the lowest mean final loss, per algorithm."
	}
	return []string{
		fmt.Sprintf("Lines: mean over %d runs; shaded: ± one standard deviation. p: the fraction of the steps on private samples (Priv-Pub, Pub-Priv: of the epochs, the private ones first or last; Interleaved: of each epoch).", runs),
		lr,
	}
}
