package figure

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/darrm/darrm/cmd/darrm/internal/report"
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
	d := report.Solve{Problem: report.Problem{K: 5, M: 1, Eps: 0.1}, Prior: "tp", Gamma: rr, Certificate: gamma.Certificate{Status: gamma.Tight},
		Errors:  []gamma.ErrorEstimate{{Actual: "U(0,1)", Mean: 0.2}},
		Compare: []report.Evaluated{{Name: "sub", Gamma: sub, Evaluation: report.Evaluation{Certificate: gamma.Certificate{Status: gamma.Certified}}}}}
	s, err := SolveSetting(d)
	if err != nil {
		t.Fatal(err)
	}
	if s.K != 5 || s.M != 1 || s.SubSize != 0 || len(s.Mechanisms) != 2 || s.Mechanisms[0].Name != "opt" || s.Mechanisms[0].Status != Tight ||
		s.Mechanisms[1].Name != "sub" || s.Mechanisms[1].Status != Certified || s.Mechanisms[1].Prior != "tp" ||
		len(s.Mechanisms[0].Expected) != 1 || s.Mechanisms[0].Expected[0].Mean != 0.2 {
		t.Errorf("%+v", s)
	}
	e := s.Mechanisms[0].Error
	if len(e) != errorPoints || math.Abs(e[0]-0.35) > 1e-12 || math.Abs(e[errorPoints/2]) > 1e-12 || math.Abs(e[errorPoints-1]-0.35) > 1e-12 {
		t.Errorf("error curve of RR with γ = 0.3: %v ... %v ... %v", e[:2], e[errorPoints/2], e[errorPoints-2:])
	}
	d.Compare[0].Gamma = sub3
	if s, _ := SolveSetting(d); s.SubSize != 3 {
		t.Errorf("gamma_Sub of 3 teachers at m = 1: SubSize %d, want 3", s.SubSize)
	}
}

// TestWriteSolve: a solve document's figure is written to its path.
func TestWriteSolve(t *testing.T) {
	rr, _ := gamma.Const(5, 0.3)
	path := filepath.Join(t.TempDir(), "g.svg")
	d := report.Solve{Problem: report.Problem{K: 5, M: 1, Eps: 0.1}, Prior: "uniform", Gamma: rr, Certificate: gamma.Certificate{Status: gamma.Tight}}
	if err := WriteSolve(path, d); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("figure %s: %v", path, err)
	}
}
