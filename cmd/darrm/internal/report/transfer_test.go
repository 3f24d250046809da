package report

import (
	"strconv"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
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

// TestTransferCapBelowOrAbove: the line under the table that says a
// private-teacher row's total is the cap at every Q says the cap is below
// one label's guarantee only where it is (disjoint shares). On shared data
// the cap, the teachers' 11-fold composition (0.1888, 0.0012) on MNIST, is
// above a label's (0.06687, 0.0003), and it said "below one label's" there
// too.
func TestTransferCapBelowOrAbove(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cap      accountant.Cap
		label    accountant.Guarantee
		want     string
		wantNone string
	}{
		{"disjoint", accountant.Cap{Guarantee: accountant.Guarantee{Eps: 0.08846, Delta: 1e-4}, K: 11, Shares: accountant.Disjoint},
			accountant.Guarantee{Eps: 0.2654, Delta: 3e-4}, "darrm-opt: the cap at every Q, below one label's (0.2654, 0.0003)", "above one label's"},
		{"shared", accountant.Cap{Guarantee: accountant.Guarantee{Eps: 0.1888, Delta: 0.0012}, K: 11, Shares: accountant.Shared, Method: accountant.Optimal, DeltaPrime: 1e-4},
			accountant.Guarantee{Eps: 0.06687, Delta: 3e-4}, "darrm-opt: the cap at every Q, above one label's (0.06687, 0.0003) but the only bound proved for fixed teachers", "below one label's"},
		// A cap of smaller ε and larger δ than a label's is neither below
		// it nor above it: it said "above".
		{"neither", accountant.Cap{Guarantee: accountant.Guarantee{Eps: 0.05, Delta: 0.0012}, K: 11, Shares: accountant.Shared, Method: accountant.Optimal, DeltaPrime: 1e-4},
			accountant.Guarantee{Eps: 0.06687, Delta: 3e-4}, "darrm-opt: the cap at every Q, not below one label's (0.06687, 0.0003) but the only bound proved for fixed teachers", "above one label's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := transfer.Result{Mechanism: "darrm-opt", Queries: 20, QueryEps: tc.label.Eps, QueryDelta: tc.label.Delta,
				TotalEps: tc.cap.Eps, TotalDelta: tc.cap.Delta, TotalMethod: "general"}
			out := Transfer{Dataset: "mnist58", K: 11, Results: []transfer.Result{r}, Cap: &tc.cap,
				CapFrom: []transfer.Crossover{{Mechanism: "darrm-opt", CapFrom: 1}}}
			var b strings.Builder
			if err := out.Write(&b, cliout.Table); err != nil {
				t.Fatal(err)
			}
			text := strings.Join(strings.Fields(b.String()), " ")
			if !strings.Contains(text, tc.want) || strings.Contains(text, tc.wantNone) {
				t.Errorf("want %q and not %q in\n%s", tc.want, tc.wantNone, b.String())
			}
		})
	}
}
