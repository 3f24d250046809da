package report

import (
	"strconv"
	"strings"
	"testing"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/experiments/transfer"
)

// TestTransferTableRoundsUp: transfer's table prints each guarantee (per
// query and total) rounded up, as every table prints a bound, never below
// the value JSON and CSV hold: it printed them to the nearest four and
// three digits (%.4g, %.3g), GNMax's total 0.7767327 as 0.7767.
func TestTransferTableRoundsUp(t *testing.T) {
	r := transfer.Result{Mechanism: "gnmax", Queries: 20, QueryEps: 0.42684183859578867, QueryDelta: 0.00050049,
		TotalEps: 0.7767326715402305, TotalDelta: 0.010041646933451645, TotalMethod: "exact"}
	var b strings.Builder
	if err := (Transfer{Dataset: "mnist58", K: 11, Results: []transfer.Result{r}}).Write(&b, cliout.Table); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		cells := strings.Split(line, "│")
		if len(cells) < 6 || strings.TrimSpace(cells[1]) != "gnmax" {
			continue
		}
		for i, want := range [][2]float64{{r.QueryEps, r.QueryDelta}, {r.TotalEps, r.TotalDelta}} {
			pair, _, _ := strings.Cut(strings.TrimSpace(cells[4+i]), ")")
			eps, delta, _ := strings.Cut(strings.TrimPrefix(pair, "("), ", ")
			e, errE := strconv.ParseFloat(eps, 64)
			d, errD := strconv.ParseFloat(delta, 64)
			if errE != nil || errD != nil || e < want[0] || d < want[1] {
				t.Errorf("%q for %v: below it", cells[4+i], want)
			}
		}
		return
	}
	t.Fatalf("no row of gnmax in\n%s", b.String())
}
