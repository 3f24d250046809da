package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/plan"
)

// TestNewWinner: the winner is the best value among the candidates that
// compete (higher or lower being better), with the runner-up; a tie, a
// single candidate and none are said as such.
func TestNewWinner(t *testing.T) {
	ptr := func(x float64) *float64 { return &x }
	names := []string{"a", "b", "c", "d"}
	all := func(int) bool { return true }
	for _, tc := range []struct {
		name   string
		values []float64
		lower  bool
		ok     func(int) bool
		want   Winner
		says   string
	}{
		{"higher", []float64{0.5, 0.8, 0.7, 0.1}, false, all, Winner{By: "x", Winner: "b", Value: 0.8, RunnerUp: "c", RunnerValue: ptr(0.7)}, "b wins (0.8 against 0.7 for c)"},
		{"lower", []float64{0.5, 0.8, 0.7, 0.1}, true, all, Winner{By: "x", Winner: "d", Value: 0.1, RunnerUp: "a", RunnerValue: ptr(0.5)}, "d wins (0.1 against 0.5 for a)"},
		{"runner-up first", []float64{0.9, 0.3, 0.95, 0.2}, false, all, Winner{By: "x", Winner: "c", Value: 0.95, RunnerUp: "a", RunnerValue: ptr(0.9)}, "c wins"},
		{"close", []float64{0.99998, 0.99997, 0.1, 0.1}, false, all, Winner{By: "x", Winner: "a", Value: 0.99998, RunnerUp: "b", RunnerValue: ptr(0.99997)}, "a wins (0.99998 against 0.99997 for b)"},
		{"tie", []float64{0.5, 0.5, 0.1, 0.1}, false, all, Winner{By: "x", Winner: "a", Value: 0.5, RunnerUp: "b", RunnerValue: ptr(0.5), Tied: true}, "a and b tie"},
		{"one fits", []float64{0.5, 0.9, 0.7, 0.1}, false, func(i int) bool { return i == 2 }, Winner{By: "x", Winner: "c", Value: 0.7}, "c (0.7) is the only one that fits"},
		{"none fits", []float64{0.5, 0.9, 0.7, 0.1}, false, func(int) bool { return false }, Winner{By: "x"}, "nothing fits the budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := newWinner("x", names, func(i int) float64 { return tc.values[i] }, tc.lower, tc.ok)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%+v, want %+v", got, tc.want)
			}
			var b bytes.Buffer
			text := cliout.NewText(&b)
			writeWinner(text, EqualTotals{BudgetEps: 4, BudgetDelta: 1e-5, Queries: 10}, got)
			if err := text.Close(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.says) || !strings.Contains(b.String(), "(4, 1e-05) over 10 queries") {
				t.Errorf("says %q, want it to contain %q", b.String(), tc.says)
			}
		})
	}
}

// TestSolveEqualNothingFits: a comparison in which no mechanism fits says
// so, and why each does not, in a note.
func TestSolveEqualNothingFits(t *testing.T) {
	why := errors.New("budget-eps = 0.01: not even 10 queries fit")
	rows := []SolveEqualRow{{Name: "opt", Planned: NewPlanned(plan.Equal{Mechanism: "darrm", NoFit: why})}, {Name: "rr", Planned: NewPlanned(plan.Equal{Mechanism: "rr", NoFit: why})}}
	s := NewSolveEqual(EqualTotals{BudgetEps: 0.01, BudgetDelta: 1e-5, Queries: 10}, rows)
	var b bytes.Buffer
	text := cliout.NewText(&b)
	s.write(text)
	if err := text.Close(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"does not fit [1]", "does not fit [2]", "[1] darrm: " + why.Error(), "[2] rr: " + why.Error(), "nothing fits the budget, so nothing wins"} {
		if !strings.Contains(unwrapped(b.String()), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}

// unwrapped returns text with its lines joined and its runs of spaces
// made one, so that a phrase is found wherever cliout.Wrap broke it.
func unwrapped(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestPlannedColumnsRoundUp checks that a comparison at equal totals
// prints each per-query guarantee and total to publish rounded up: they
// were rounded to the nearest four digits (three for delta), so solve
// --compare --budget-eps 2 --budget-delta 2e-4 --queries 10 read gamma_sub's
// total 1.921 for 1.9212566376663744.
func TestPlannedColumnsRoundUp(t *testing.T) {
	for _, tc := range []struct {
		name             string
		perQuery, total  accountant.Guarantee
		wantPer, wantTot string
	}{
		{"gamma_sub", accountant.Guarantee{Eps: 0.6995730145175064, Delta: 6.995520426116826e-05}, accountant.Guarantee{Eps: 1.9212566376663744, Delta: 0.0002},
			"(0.699574, 6.99553e-05)", "(1.92126, 0.0002)"},
		{"gamma_opt", accountant.Guarantee{Eps: 0.24749244712990937, Delta: 2.4749062196946513e-05}, accountant.Guarantee{Eps: 1.9999204580672085, Delta: 0.0002},
			"(0.247493, 2.47491e-05)", "(1.99993, 0.0002)"},
		{"exact decimals", accountant.Guarantee{Eps: 0.3, Delta: 1e-5}, accountant.Guarantee{Eps: 4, Delta: 1e-5}, "(0.3, 1e-05)", "(4, 1e-05)"},
	} {
		p := Planned{Mechanism: "darrm", Parameter: "m", Value: 3, PerQueryEps: tc.perQuery.Eps, PerQueryDelta: tc.perQuery.Delta,
			Publish: &Publish{Total: accountant.Total{Guarantee: tc.total, Method: accountant.Exact}}}
		cols := p.columns(cliout.NewText(&bytes.Buffer{}))
		if cols[1] != tc.wantPer || !strings.HasPrefix(cols[2], tc.wantTot+" ") {
			t.Errorf("%s: per query %q, total %q: want %q and %q, each rounded up", tc.name, cols[1], cols[2], tc.wantPer, tc.wantTot)
		}
	}
	// The planned setting is rounded toward more noise, as plan's tables
	// round it: simulate's target-eps 0.179886 read 0.1799.
	for _, tc := range []struct {
		m     ensemble.Mechanism
		param string
		value float64
		want  string
	}{
		{ensemble.OneVoteDaRRM{}, "target-eps", 0.17988599, "target-eps 0.1798"},
		{ensemble.DaRRM{}, "m", 5.98847, "m 5.988"},
		{ensemble.GNMax{}, "sigma2", 48.7427, "sigma2 48.75"},
		{ensemble.LNMax{}, "laplace-scale", 28.00123, "laplace-scale 28.01"},
	} {
		p := Planned{Mechanism: tc.m.Name(), Parameter: tc.param, Value: tc.value, round: flagRounding(tc.m, tc.param), PerQueryEps: 0.3, PerQueryDelta: 1e-5,
			Publish: &Publish{Total: accountant.Total{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-5}, Method: accountant.Exact}}}
		if got := p.columns(cliout.NewText(&bytes.Buffer{}))[0]; got != tc.want {
			t.Errorf("planned %s %v: %q, want %q", tc.param, tc.value, got, tc.want)
		}
	}
}

// TestWinnerRunnerUpValue: a winner states its runner-up's value whenever
// it has a runner-up, 0 included, and none without one: omitempty left
// out a value of 0, so solve --compare --actual 1 at equal totals wrote a
// tie of gamma_opt and gamma_sub at expected error 0 without
// runner_up_value.
func TestWinnerRunnerUpValue(t *testing.T) {
	names := []string{"a", "b"}
	for _, tc := range []struct {
		name   string
		values []float64
		ok     func(int) bool
		want   string
	}{
		{"tie at 0", []float64{0, 0}, func(int) bool { return true }, `"runner_up_value":0,`},
		{"runner-up at 0", []float64{0.5, 0}, func(int) bool { return true }, `"runner_up_value":0,`},
		{"runner-up", []float64{0.5, 0.25}, func(int) bool { return true }, `"runner_up_value":0.25,`},
		{"no runner-up", []float64{0.5, 0}, func(i int) bool { return i == 0 }, ""},
	} {
		b, err := json.Marshal(newWinner("x", names, func(i int) float64 { return tc.values[i] }, false, tc.ok))
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(b), "runner_up_value"); tc.want == "" && has || tc.want != "" && !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %s, want %q", tc.name, b, tc.want)
		}
	}
}

// TestWinnerKeys: a winner of a comparison at equal totals has the keys
// docs/transfer.md lists whether or not its runner-up ties it: tied was
// left out when false (omitempty) and note when empty, so a script reading
// a winner's tied failed on every comparison without a tie.
func TestWinnerKeys(t *testing.T) {
	names := []string{"a", "b"}
	for _, values := range [][]float64{{0.5, 0.25}, {0.5, 0.5}} {
		b, err := json.Marshal(newWinner("x", names, func(i int) float64 { return values[i] }, false, func(int) bool { return true }))
		if err != nil {
			t.Fatal(err)
		}
		var w map[string]any
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"by", "winner", "value", "runner_up", "runner_up_value", "tied", "note"} {
			if _, ok := w[k]; !ok {
				t.Errorf("values %v: %s lacks %s", values, b, k)
			}
		}
		if w["tied"] != (values[0] == values[1]) {
			t.Errorf("values %v: tied %v", values, w["tied"])
		}
	}
}
