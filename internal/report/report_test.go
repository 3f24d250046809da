package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cliout"
)

func TestGroupDigits(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "999": "999", "1000": "1,000", "31824": "31,824", "4300000000": "4,300,000,000"} {
		if got := groupDigits(in); got != want {
			t.Errorf("groupDigits(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSolveCSVColumns checks the layout darrm verify reads back: l, then
// gamma_opt, then one column per baseline, one row per l.
func TestSolveCSVColumns(t *testing.T) {
	out := Solve{
		Gamma:   []float64{0, 0.5, 1, 0.5},
		Compare: []Mechanism{{Name: "Sub", Gamma: []float64{0.25, 0.5, 0.75, 1}}},
	}
	var b bytes.Buffer
	if err := out.Write(&b, cliout.CSV); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows[0], ","); got != "l,gamma_opt,gamma_Sub" {
		t.Errorf("header %q", got)
	}
	if len(rows) != 5 || strings.Join(rows[2], ",") != "1,0.5,0.5" || strings.Join(rows[4], ",") != "3,0.5,1" {
		t.Errorf("rows %v", rows)
	}
}

func TestVerdictNamesEveryStatus(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range []gamma.Status{gamma.Certified, gamma.Tight, gamma.Violated} {
		v := Verdict(s)
		if seen[v] {
			t.Errorf("Verdict(%v) = %q repeats another status", s, v)
		}
		seen[v] = true
	}
	if !strings.HasPrefix(Verdict(gamma.Certified), "CERTIFIED") {
		t.Errorf("Verdict(Certified) = %q", Verdict(gamma.Certified))
	}
}
