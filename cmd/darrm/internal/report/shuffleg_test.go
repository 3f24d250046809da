package report

import (
	"strconv"
	"strings"
	"testing"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/experiments/shuffleexp"
)

// TestShufflegTableRoundsUp: shuffleg's table prints each algorithm's eps
// (its calibration's bound) rounded up, never below the report's JSON: it
// printed it to the nearest six digits, 0.99999949 as 0.999999.
func TestShufflegTableRoundsUp(t *testing.T) {
	eps := 0.99999949
	r := &shuffleexp.Report{Results: []shuffleexp.ReportResult{{Label: "Interleaved-RR", Sigma: 7, Eps: eps, LR: 0.01, Contractive: true}}}
	var b strings.Builder
	if err := (Shuffleg{Report: r}).Write(&b, cliout.Table); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		cells := strings.Split(line, "│")
		if len(cells) < 6 || strings.TrimSpace(cells[1]) != "Interleaved-RR" {
			continue
		}
		if got, err := strconv.ParseFloat(strings.TrimSpace(cells[4]), 64); err != nil || got < eps {
			t.Errorf("eps prints %q for %v: below it", cells[4], eps)
		}
		return
	}
	t.Fatalf("no row of Interleaved-RR in\n%s", b.String())
}
