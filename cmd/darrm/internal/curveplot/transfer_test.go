package curveplot

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/darrm/darrm/internal/transfer"
)

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

// TestWriteTransfer: the figure of transfer's results is written to its
// path.
func TestWriteTransfer(t *testing.T) {
	res := []transfer.Result{{Mechanism: "gnmax", M: 3, Queries: 20, AccuracyMean: 0.9}, {Mechanism: "gnmax", M: 3, Queries: 50, AccuracyMean: 0.8}}
	path := filepath.Join(t.TempDir(), "t.svg")
	if err := WriteTransfer(path, "mnist58", 11, res); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("figure %s: %v", path, err)
	}
}
