package report

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/darrm/darrm/experiments/transfer"
	"github.com/darrm/darrm/gamma"
)

// TestGammaSetting: a solve document's column has its problem and every
// mechanism, gamma_opt first, with its certificate's status, its error
// curve (RR's: (1 − γ)/2 at p = 0 and 1, 0 at 1/2) and expected errors; a
// gamma_Sub of another size than floor(m) gives the column its M.
func TestGammaSetting(t *testing.T) {
	sub, _ := gamma.Sub(5, 1)
	sub3, _ := gamma.Sub(5, 3)
	rr, _ := gamma.Const(5, 0.3)
	d := Solve{Problem: Problem{K: 5, M: 1, Eps: 0.1}, Prior: "tp", Gamma: rr, Certificate: gamma.Certificate{Status: gamma.Tight},
		Errors:  []gamma.ErrorEstimate{{Actual: "U(0,1)", Mean: 0.2}},
		Compare: []Evaluated{{Name: "sub", Gamma: sub, Evaluation: Evaluation{Certificate: gamma.Certificate{Status: gamma.Certified}}}}}
	s, err := d.Setting()
	if err != nil {
		t.Fatal(err)
	}
	if s.K != 5 || s.M != 1 || s.SubSize != 0 || len(s.Mechanisms) != 2 || s.Mechanisms[0].Name != "opt" || s.Mechanisms[0].Status != gamma.Tight ||
		s.Mechanisms[1].Name != "sub" || s.Mechanisms[1].Status != gamma.Certified || s.Mechanisms[1].Prior != "tp" ||
		len(s.Mechanisms[0].Expected) != 1 || s.Mechanisms[0].Expected[0].Mean != 0.2 {
		t.Errorf("%+v", s)
	}
	e := s.Mechanisms[0].Error
	if len(e) != errorPoints || math.Abs(e[0]-0.35) > 1e-12 || math.Abs(e[errorPoints/2]) > 1e-12 || math.Abs(e[errorPoints-1]-0.35) > 1e-12 {
		t.Errorf("error curve of RR with γ = 0.3: %v ... %v ... %v", e[:2], e[errorPoints/2], e[errorPoints-2:])
	}
	d.Compare[0].Gamma = sub3
	if s, _ := d.Setting(); s.SubSize != 3 {
		t.Errorf("gamma_Sub of 3 teachers at m = 1: SubSize %d, want 3", s.SubSize)
	}
}

// TestWriteSolve: a solve document's figure is written to its path.
func TestWriteSolve(t *testing.T) {
	rr, _ := gamma.Const(5, 0.3)
	path := filepath.Join(t.TempDir(), "g.svg")
	d := Solve{Problem: Problem{K: 5, M: 1, Eps: 0.1}, Prior: "uniform", Gamma: rr, Certificate: gamma.Certificate{Status: gamma.Tight}}
	if err := d.WriteFigure(t.Context(), path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("figure %s: %v", path, err)
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

// TestWriteTransfer: the figure of transfer's results is written to its
// path.
func TestWriteTransfer(t *testing.T) {
	res := []transfer.Result{{Mechanism: "gnmax", M: 3, Queries: 20, AccuracyMean: 0.9}, {Mechanism: "gnmax", M: 3, Queries: 50, AccuracyMean: 0.8}}
	path := filepath.Join(t.TempDir(), "t.svg")
	if err := (Transfer{Dataset: "mnist58", K: 11, Results: res}).WriteFigure(t.Context(), path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("figure %s: %v", path, err)
	}
}
