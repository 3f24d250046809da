package curveplot

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/shuffleg"
	"github.com/darrm/darrm/transfer"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := Panel{Title: "t", XLabel: "epoch", YLabel: "loss", Series: []Series{
		{Label: "a", Mean: []float64{3, 2, 1}, Std: []float64{0.1, 0.2, 0.1}},
		{Label: "b", Mean: []float64{3, 2.5, 2}, Std: []float64{0, 0.1, 0.3}},
	}}
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, "panel"+ext)
		if err := Write(path, "title", []Panel{p, p}, 2); err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", ext, err)
		}
	}
	p.LogY, p.Floor = true, 1e-3
	p.Series[0].Std[2] = 5 // mean − std < 0: cut at the floor
	if err := Write(filepath.Join(dir, "log.png"), "", []Panel{p}, 1); err != nil {
		t.Fatal(err)
	}
}

func TestWriteRejects(t *testing.T) {
	dir := t.TempDir()
	good := Series{Label: "a", Mean: []float64{1, 2}, Std: []float64{0, 0}}
	for name, tc := range map[string]struct {
		path string
		s    Series
	}{
		"extension": {"x.gif", good},
		"lengths":   {"x.png", Series{Label: "a", Mean: []float64{1, 2}, Std: []float64{0}}},
		"inf":       {"x.png", Series{Label: "a", Mean: []float64{1, math.Inf(1)}, Std: []float64{0, 0}}},
	} {
		path := filepath.Join(dir, tc.path)
		if err := Write(path, "", []Panel{{Series: []Series{tc.s}}}, 1); err == nil {
			t.Errorf("%s: no error", name)
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%s: file written despite the error", name)
		}
	}
}

// TestReportPanel checks the panel of a report: the title states the
// setting and marks a substitute dataset, each algorithm has its colour,
// and the excess metric puts values at or below zero on the log axis's
// floor; a band is cut at the optimum, which no run goes below; a curve
// far above the others is cut at the top of theirs, and the title says
// where.
func TestReportPanel(t *testing.T) {
	r := &shuffleg.Report{Dataset: "breast-cancer", Task: "ridge", Eps: 1, Delta: 1e-6, Fraction: 0.5, Epochs: 2, Results: []shuffleg.ReportResult{
		{Algo: "interleaved", Label: "Interleaved-RR", LossMean: []float64{3, 2, 1}, LossStd: []float64{0, 0, 0}, ExcessMean: []float64{2, 1, 0}, ExcessStd: []float64{0, 0, 0}},
		{Algo: "public-only", Label: "Public Only", LossMean: []float64{3, 2, 2}, LossStd: []float64{0, 0, 0}, ExcessMean: []float64{2, 1, 1}, ExcessStd: []float64{0, 0, 0}},
	}}
	p := ReportPanel(r, Loss)
	for _, want := range []string{"breast cancer (substitute)", "ridge regression", "ε = 1", "δ = 10^{-6}", "p = 0.5", "2 epochs"} {
		if !strings.Contains(p.Title, want) {
			t.Errorf("title %q does not say %q", p.Title, want)
		}
	}
	if p.LogY || p.Series[0].Color != palette[3] || p.Series[1].Color != palette[4] || p.Series[0].Mean[2] != 1 {
		t.Errorf("loss panel %+v", p)
	}
	r.ThesisDataset = true
	x := ReportPanel(r, Excess)
	if strings.Contains(x.Title, "substitute") || !x.LogY || x.Floor != 0.1 || x.Series[0].Mean[2] != 0 {
		t.Errorf("excess panel %+v", x)
	}
	r.Optimum.Value = 0.9
	r.Results[0].LossStd = []float64{0, 0, 0.5} // 1 − 0.5 is below the optimum
	band, err := ReportPanel(r, Loss).plot()
	if err != nil {
		t.Fatal(err)
	}
	if band.Y.Min != 0.9 {
		t.Errorf("band cut at %v, want the optimum 0.9", band.Y.Min)
	}
	r.Results[1].LossMean[1] = 200 // far above the other curve
	l := ReportPanel(r, Loss)
	pl, err := l.plot()
	if err != nil {
		t.Fatal(err)
	}
	if l.LogY || pl.Y.Max >= 200 || pl.Y.Max < 3 || !strings.HasSuffix(pl.Title.Text, "\nPublic Only above the axis at epoch 1\n(200; its band not drawn)") {
		t.Errorf("loss panel with a curve far above the others: axis up to %v, title %q", pl.Y.Max, pl.Title.Text)
	}
	if err := Write(filepath.Join(t.TempDir(), "x.png"), "", []Panel{x}, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseMetric("excess"); err != nil {
		t.Error(err)
	}
	if _, err := ParseMetric("risk"); err == nil {
		t.Error("metric risk: no error")
	}
}

func TestMetricText(t *testing.T) {
	for _, m := range []Metric{Loss, Excess} {
		b, _ := m.MarshalText()
		var got Metric
		if err := got.UnmarshalText(b); err != nil || got != m {
			t.Errorf("%v: %q reads back as %v (%v)", m, b, got, err)
		}
	}
	var m Metric
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
		p := TransferPanel("mnist58", 11, tc.res)
		var labels []string
		for _, s := range p.Series {
			labels = append(labels, s.Label)
		}
		if p.Title != tc.title || !slices.Equal(labels, tc.series) || len(p.Series) > 0 && len(p.Series[0].X) != tc.gnmaxXs {
			t.Errorf("%s: title %q, series %v", tc.name, p.Title, labels)
		}
	}
}

// TestAxisTop: series far above the rest are cut, highest first, as long
// as one series stays whole; a spread that is not extreme is kept.
func TestAxisTop(t *testing.T) {
	for _, tc := range []struct {
		name string
		his  []float64
		top  float64
		cut  []int
	}{
		{"none above", []float64{2, 3, 4}, 4.09, nil},
		{"one far above", []float64{2, 100, 3}, 3.1, []int{1}},
		{"two far above", []float64{500, 2, 60}, 2.05, []int{0, 2}},
		{"just under the span", []float64{1.5, 2.2}, 2.236, nil},
		{"one series", []float64{7}, 7.18, nil},
	} {
		top, cut := axisTop(1, tc.his)
		if math.Abs(top-tc.top) > 1e-12 || !slices.Equal(cut, tc.cut) {
			t.Errorf("%s: top %v, cut %v; want %v, %v", tc.name, top, cut, tc.top, tc.cut)
		}
	}
}
