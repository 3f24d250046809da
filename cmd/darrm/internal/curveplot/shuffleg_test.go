package curveplot

import (
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/experiments/shuffleexp"
)

// shufflegReport is a report of two algorithms on dataset at eps.
func shufflegReport(dataset string, eps float64, order string) shuffleexp.Report {
	return shuffleexp.Report{Dataset: dataset, Task: "ridge", Eps: eps, Delta: 1e-6, Order: order, Fraction: 0.5, Epochs: 2, Runs: 3, LRSearch: "thesis grid (Section 4.7.4)",
		Results: []shuffleexp.ReportResult{
			{Algo: "interleaved", Label: "Interleaved-RR", LR: 5e-5, Contractive: true, LossMean: []float64{3, 2, 1}, LossStd: []float64{0, 0, 0}, ExcessMean: []float64{2, 1, 0}, ExcessStd: []float64{0, 0, 0},
				Grid: []shuffleexp.ReportGrid{{LR: 0.1}, {LR: 5e-5}}},
			{Algo: "public-only", Label: "Public Only", LR: 0.01, Contractive: true, LossMean: []float64{3, 2, 2}, LossStd: []float64{0, 0, 0}, ExcessMean: []float64{2, 1, 1}, ExcessStd: []float64{0, 0, 0}},
		}}
}

// TestShufflegFigure: one row per dataset headed by its name (marked
// substitute), its panels in increasing ε from the left whatever ε the
// other rows have (no empty cell between them), the shared settings under the title,
// each panel's learning rates in its key, and the notes that say what the
// lines, bands, p and η are.
func TestShufflegFigure(t *testing.T) {
	reports := []shuffleexp.Report{shufflegReport("diabetes", 5, "rr"), shufflegReport("diabetes", 1, "rr"), shufflegReport("breast-cancer", 10, "rr")}
	f, err := ShufflegFigure(reports, nil, LossMetric, "Figure", 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Cols != 2 || len(f.Panels) != 4 || !f.ShareY {
		t.Fatalf("%d columns, %d cells, share %v; want 2, 4, true", f.Cols, len(f.Panels), f.ShareY)
	}
	for i, want := range []string{"ε = 1", "ε = 5", "ε = 10", ""} {
		if p := f.Panels[i]; (p == nil) != (want == "") || p != nil && p.Title != want {
			t.Errorf("cell %d: %+v, want title %q", i, p, want)
		}
	}
	if !slices.Equal(f.RowTitles, []string{"diabetes (substitute), ridge regression", "breast cancer (substitute), ridge regression"}) {
		t.Errorf("rows %q", f.RowTitles)
	}
	if f.Title != "Figure\nδ = 10^{-6}, RR order, p = 0.5, 2 epochs, 3 runs" {
		t.Errorf("title %q", f.Title)
	}
	p := f.Panels[0]
	if p.KeyTitle == "" || p.Series[0].Key != "5·10^{-5}" || p.Series[1].Key != "0.01" || p.Series[0].Color != Colour(3) || p.Series[1].Color != Colour(4) ||
		p.Series[0].Glyph != Glyph(3) || p.Series[1].Glyph != Glyph(4) {
		t.Errorf("panel %+v", p)
	}
	notes := strings.Join(f.Notes, "\n")
	for _, want := range []string{"mean over 3 runs", "± one standard deviation", "p: the fraction of the steps on private samples", "the thesis' grid", "lowest mean final loss"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q do not say %q", notes, want)
		}
	}

	// With --cols, the panels come in order and their titles say it all.
	f, _ = ShufflegFigure(reports, nil, ExcessMetric, "", 2)
	if f.Cols != 2 || len(f.Panels) != 3 || !strings.Contains(f.Panels[1].Title, "ε = 1") || !f.Panels[1].LogY {
		t.Errorf("--cols 2: %d panels, %q", len(f.Panels), f.Panels[1].Title)
	}
}

// TestShufflegReferences: a reference goes into the panel of the report of
// the same dataset, task, ε and p in another order; one that matches no
// panel is an error.
func TestShufflegReferences(t *testing.T) {
	reports := []shuffleexp.Report{shufflegReport("mnist69", 5, "ig"), shufflegReport("mnist69", 10, "ig")}
	refs := []shuffleexp.Report{shufflegReport("mnist69", 10, "rr")}
	f, err := ShufflegFigure(reports, refs, LossMetric, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels[0].Reference) != 0 || len(f.Panels[1].Reference) != 2 || !strings.Contains(strings.Join(f.Notes, " "), "Thin dashed: the same algorithms with the RR order") {
		t.Errorf("references %d and %d, notes %q", len(f.Panels[0].Reference), len(f.Panels[1].Reference), f.Notes)
	}
	refs[0].Eps = 1
	if _, err := ShufflegFigure(reports, refs, LossMetric, "", 0); err == nil || !strings.Contains(err.Error(), "no report of the same dataset") {
		t.Errorf("a reference without its panel: %v", err)
	}
}

// TestShufflegAccounting: reports whose noise was accounted otherwise
// (another RDP conversion, order rule or clipping norm, so another σ at
// the same ε) are told apart in their rows' headings, and a reference
// accounted otherwise is no comparison for a panel; reports that share
// the accounting keep the headings they had.
func TestShufflegAccounting(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(r *shuffleexp.Report)
		rows   []string // with the change made to the second report
	}{
		{"same", func(*shuffleexp.Report) {}, []string{"MNIST-69 (substitute), ridge regression"}},
		{"conversion", func(r *shuffleexp.Report) { r.Conversion = "improved" },
			[]string{"MNIST-69 (substitute), ridge regression; paper conversion", "MNIST-69 (substitute), ridge regression; improved conversion"}},
		{"alpha rule", func(r *shuffleexp.Report) { r.AlphaRule = "table-4.3" },
			[]string{"MNIST-69 (substitute), ridge regression; α: exact", "MNIST-69 (substitute), ridge regression; α: table-4.3"}},
		{"clip", func(r *shuffleexp.Report) { r.Clip = 1 },
			[]string{"MNIST-69 (substitute), ridge regression; clip 10", "MNIST-69 (substitute), ridge regression; clip 1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			report := func() shuffleexp.Report {
				r := shufflegReport("mnist69", 5, "rr")
				r.Conversion, r.AlphaRule, r.Clip = "paper", "exact", 10
				return r
			}
			a, b := report(), report()
			b.Eps = 10
			c.change(&b)
			f, err := ShufflegFigure([]shuffleexp.Report{a, b}, nil, LossMetric, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.RowTitles, c.rows) {
				t.Errorf("rows %q, want %q", f.RowTitles, c.rows)
			}
			ref := report()
			ref.Order = "ig"
			c.change(&ref)
			_, err = ShufflegFigure([]shuffleexp.Report{a}, []shuffleexp.Report{ref}, LossMetric, "", 0)
			if same := c.name == "same"; (err == nil) != same {
				t.Errorf("a reference accounted like the report (%v): %v", same, err)
			}
		})
	}
}

// TestShufflegNonContractive: a curve run above the contraction bound
// (--allow-noncontractive), whose ε is no guarantee, has its learning rate
// marked "(!)" in its panel's key, as darrm shuffleg's table marks it, and
// a note says what the mark means; a figure with none has neither.
func TestShufflegNonContractive(t *testing.T) {
	for _, c := range []struct {
		name      string
		report    bool // the report's Interleaved ran above the bound
		reference bool // the reference's did
		keys      [2]string
	}{
		{"contractive", false, false, [2]string{"5·10^{-5}", "0.01"}},
		{"report", true, false, [2]string{"5·10^{-5} (!)", "0.01"}},
		{"reference", false, true, [2]string{"5·10^{-5}", "0.01"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, ref := shufflegReport("mnist69", 5, "ig"), shufflegReport("mnist69", 5, "rr")
			r.Results[0].Contractive, ref.Results[0].Contractive = !c.report, !c.reference
			f, err := ShufflegFigure([]shuffleexp.Report{r}, []shuffleexp.Report{ref}, LossMetric, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			p := f.Panels[0]
			if got := [2]string{p.Series[0].Key, p.Series[1].Key}; got != c.keys {
				t.Errorf("keys %q, want %q", got, c.keys)
			}
			if got, want := p.Reference[0].Key, "5·10^{-5}"; c.reference && got != want+" (!)" || !c.reference && got != want {
				t.Errorf("reference key %q", got)
			}
			noted := strings.Contains(strings.Join(f.Notes, " "), "(!): above the contraction bound")
			if want := c.report || c.reference; noted != want {
				t.Errorf("notes %q: mark explained %v, want %v", f.Notes, noted, want)
			}
		})
	}
}

func TestMetricText(t *testing.T) {
	for _, m := range []Metric{LossMetric, ExcessMetric} {
		b, _ := m.MarshalText()
		var got Metric
		if err := got.UnmarshalText(b); err != nil || got != m {
			t.Errorf("%v: %q reads back as %v (%v)", m, b, got, err)
		}
	}
	var m Metric
	if err := m.UnmarshalText([]byte("gain")); err == nil || err.Error() != `Metric "gain": must be loss or excess` {
		t.Errorf("gain: %v", err)
	}
}
