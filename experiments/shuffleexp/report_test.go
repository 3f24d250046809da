package shuffleexp

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/experiments/datasets"
)

// TestReport checks that a report carries the experiment's settings and
// results, survives a JSON round trip bit for bit (so figures can be
// redrawn from it), holds no timing, and that its curves CSV has one row
// per algorithm and epoch.
func TestReport(t *testing.T) {
	p := newTestProblem(t, meanEstimation(10), 30, 30, 6, 3)
	e := testExperiment(t, p)
	e.AlphaRule = accountant.AlphaTable43
	e.LRs = []float64{0.01, 5} // 5 is above 1/L* = 1: skipped
	res, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	info := datasets.Info{Name: "toy", Split: "split", Thesis: true}
	r := NewReport(e, res, "mean", info, "given grid")
	if r.Dataset != "toy" || !r.ThesisDataset || r.AlphaRule != "table-4.3" || r.Task != "mean" || r.N != 30 || r.D != 6 ||
		!r.Seeded || *r.Seed != 42 || len(r.Results) != len(allAlgorithms()) || r.Optimum.Value != p.Optimum().Value {
		t.Fatalf("report %+v", r)
	}
	for i, a := range r.Results {
		lm, _ := res[i].FinalLoss()
		// Public Only has no privacy analysis to break: it runs every rate.
		skipped := res[i].Algorithm.Private()
		if a.Label != res[i].Label || a.FinalLossMean != lm || a.Sigma != res[i].Calibration.Sigma || len(a.Grid) != 2 ||
			(a.Grid[1].Status == string(GridNonContractive)) != skipped || (a.Grid[1].FinalLossMean == nil) != skipped || a.Grid[0].FinalLossMean == nil {
			t.Errorf("%s: %+v", a.Label, a)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "second") {
		t.Errorf("the report holds a timing: %s", b)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if !bytes.Equal(b, b2) {
		t.Error("the report changes in a JSON round trip")
	}
	var buf bytes.Buffer
	if err := r.WriteCurves(&buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + len(allAlgorithms())*(e.Epochs+1); len(rows) != want || rows[0][3] != "loss_mean" || rows[1][2] != "0" {
		t.Errorf("%d CSV rows, want %d: %v", len(rows), want, rows[:2])
	}
}
