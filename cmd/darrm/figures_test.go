package main

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/cmd/darrm/internal/curveplot"
	"github.com/darrm/darrm/cmd/darrm/internal/figure"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/shuffleg"
	"github.com/darrm/darrm/transfer"
)

// TestGammaSetting: a solve document's column has its problem and every
// mechanism, gamma_opt first, with its certificate's status, its error
// curve (RR's: (1 − γ)/2 at p = 0 and 1, 0 at 1/2) and expected errors; a
// gamma_Sub of another size than floor(m) gives the column its M.
func TestGammaSetting(t *testing.T) {
	sub, _ := gamma.Sub(5, 1)
	sub3, _ := gamma.Sub(5, 3)
	rr, _ := gamma.Const(5, 0.3)
	d := report.Solve{Problem: report.Problem{K: 5, M: 1, Eps: 0.1}, Prior: "tp", Gamma: rr, Certificate: gamma.Certificate{Status: gamma.Tight},
		Errors:  []gamma.ErrorEstimate{{Actual: "U(0,1)", Mean: 0.2}},
		Compare: []report.Mechanism{{Name: "sub", Gamma: sub, Evaluation: gamma.Evaluation{Certificate: gamma.Certificate{Status: gamma.Certified}}}}}
	s, err := gammaSetting(d)
	if err != nil {
		t.Fatal(err)
	}
	if s.K != 5 || s.M != 1 || s.SubSize != 0 || len(s.Mechanisms) != 2 || s.Mechanisms[0].Name != "opt" || s.Mechanisms[0].Status != figure.Tight ||
		s.Mechanisms[1].Name != "sub" || s.Mechanisms[1].Status != figure.Certified || s.Mechanisms[1].Prior != "tp" ||
		len(s.Mechanisms[0].Expected) != 1 || s.Mechanisms[0].Expected[0].Mean != 0.2 {
		t.Errorf("%+v", s)
	}
	e := s.Mechanisms[0].Error
	if len(e) != errorPoints || math.Abs(e[0]-0.35) > 1e-12 || math.Abs(e[errorPoints/2]) > 1e-12 || math.Abs(e[errorPoints-1]-0.35) > 1e-12 {
		t.Errorf("error curve of RR with γ = 0.3: %v ... %v ... %v", e[:2], e[errorPoints/2], e[errorPoints-2:])
	}
	d.Compare[0].Gamma = sub3
	if s, _ := gammaSetting(d); s.SubSize != 3 {
		t.Errorf("gamma_Sub of 3 teachers at m = 1: SubSize %d, want 3", s.SubSize)
	}
}

// shufflegReport is a report of two algorithms on dataset at eps.
func shufflegReport(dataset string, eps float64, order string) shuffleg.Report {
	return shuffleg.Report{Dataset: dataset, Task: "ridge", Eps: eps, Delta: 1e-6, Order: order, Fraction: 0.5, Epochs: 2, Runs: 3, LRSearch: "thesis grid (Section 4.7.4)",
		Results: []shuffleg.ReportResult{
			{Algo: "interleaved", Label: "Interleaved-RR", LR: 5e-5, LossMean: []float64{3, 2, 1}, LossStd: []float64{0, 0, 0}, ExcessMean: []float64{2, 1, 0}, ExcessStd: []float64{0, 0, 0},
				Grid: []shuffleg.ReportGrid{{LR: 0.1}, {LR: 5e-5}}},
			{Algo: "public-only", Label: "Public Only", LR: 0.01, LossMean: []float64{3, 2, 2}, LossStd: []float64{0, 0, 0}, ExcessMean: []float64{2, 1, 1}, ExcessStd: []float64{0, 0, 0}},
		}}
}

// TestShufflegFigure: one row per dataset headed by its name (marked
// substitute), its panels in increasing ε from the left whatever ε the
// other rows have (no empty cell between them), the shared settings under the title,
// each panel's learning rates in its key, and the notes that say what the
// lines, bands, p and η are.
func TestShufflegFigure(t *testing.T) {
	reports := []shuffleg.Report{shufflegReport("diabetes", 5, "rr"), shufflegReport("diabetes", 1, "rr"), shufflegReport("breast-cancer", 10, "rr")}
	f, err := shufflegFigure(reports, nil, lossMetric, "Figure", 0)
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
	if p.KeyTitle == "" || p.Series[0].Key != "5·10^{-5}" || p.Series[1].Key != "0.01" || p.Series[0].Color != curveplot.Colour(3) || p.Series[1].Color != curveplot.Colour(4) ||
		p.Series[0].Glyph != curveplot.Glyph(3) || p.Series[1].Glyph != curveplot.Glyph(4) {
		t.Errorf("panel %+v", p)
	}
	notes := strings.Join(f.Notes, "\n")
	for _, want := range []string{"mean over 3 runs", "± one standard deviation", "p: the fraction of the steps on private samples", "the thesis' grid", "lowest mean final loss"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q do not say %q", notes, want)
		}
	}

	// With --cols, the panels come in order and their titles say it all.
	f, _ = shufflegFigure(reports, nil, excessMetric, "", 2)
	if f.Cols != 2 || len(f.Panels) != 3 || !strings.Contains(f.Panels[1].Title, "ε = 1") || !f.Panels[1].LogY {
		t.Errorf("--cols 2: %d panels, %q", len(f.Panels), f.Panels[1].Title)
	}
}

// TestShufflegReferences: a reference goes into the panel of the report of
// the same dataset, task, ε and p in another order; one that matches no
// panel is an error.
func TestShufflegReferences(t *testing.T) {
	reports := []shuffleg.Report{shufflegReport("mnist69", 5, "ig"), shufflegReport("mnist69", 10, "ig")}
	refs := []shuffleg.Report{shufflegReport("mnist69", 10, "rr")}
	f, err := shufflegFigure(reports, refs, lossMetric, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels[0].Reference) != 0 || len(f.Panels[1].Reference) != 2 || !strings.Contains(strings.Join(f.Notes, " "), "Thin dashed: the same algorithms with the RR order") {
		t.Errorf("references %d and %d, notes %q", len(f.Panels[0].Reference), len(f.Panels[1].Reference), f.Notes)
	}
	refs[0].Eps = 1
	if _, err := shufflegFigure(reports, refs, lossMetric, "", 0); err == nil || !strings.Contains(err.Error(), "no report of the same dataset") {
		t.Errorf("a reference without its panel: %v", err)
	}
}

func TestMetricText(t *testing.T) {
	for _, m := range []metric{lossMetric, excessMetric} {
		b, _ := m.MarshalText()
		var got metric
		if err := got.UnmarshalText(b); err != nil || got != m {
			t.Errorf("%v: %q reads back as %v (%v)", m, b, got, err)
		}
	}
	var m metric
	if m.UnmarshalText([]byte("gain")) == nil {
		t.Error("gain accepted")
	}
}

// TestTransferPanel: a series per mechanism that has results, in the
// thesis' order, and a title with the privacy of each label.
func TestTransferPanel(t *testing.T) {
	res := []transfer.Result{
		{Mechanism: "rr", M: 3, Queries: 20, AccuracyMean: 0.6, QueryEps: 0.27, QueryDelta: 3e-4},
		{Mechanism: "gnmax", M: 3, Queries: 20, AccuracyMean: 0.9},
		{Mechanism: "gnmax", M: 3, Queries: 50, AccuracyMean: 0.8},
		{Mechanism: "majority", M: 3, Queries: 20, AccuracyMean: 0.95, QueryEps: 0.97},
	}
	for _, tc := range []struct {
		name    string
		res     []transfer.Result
		title   string
		series  []string
		gnmaxXs int
	}{
		{"three mechanisms", res, "mnist58, K = 11, m = 3: each noisy label (0.27, 0.0003)-DP", []string{"GNMax", "RR, γ_{const}", "majority, no noise"}, 2},
		{"no results", nil, "mnist58", nil, 0},
	} {
		p := transferPanel("mnist58", 11, tc.res)
		var labels []string
		for _, s := range p.Series {
			labels = append(labels, s.Label)
		}
		if p.Title != tc.title || !slices.Equal(labels, tc.series) || len(p.Series) > 0 && len(p.Series[0].X) != tc.gnmaxXs {
			t.Errorf("%s: title %q, series %v", tc.name, p.Title, labels)
		}
	}
}
