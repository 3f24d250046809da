package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/plan"
)

// TestNewWinner: the winner is the best value among the candidates that
// compete (higher or lower being better), with the runner-up; a tie, a
// single candidate and none are said as such.
func TestNewWinner(t *testing.T) {
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
		{"higher", []float64{0.5, 0.8, 0.7, 0.1}, false, all, Winner{By: "x", Winner: "b", Value: 0.8, RunnerUp: "c", RunnerValue: 0.7}, "b wins (0.8 against 0.7 for c)"},
		{"lower", []float64{0.5, 0.8, 0.7, 0.1}, true, all, Winner{By: "x", Winner: "d", Value: 0.1, RunnerUp: "a", RunnerValue: 0.5}, "d wins (0.1 against 0.5 for a)"},
		{"runner-up first", []float64{0.9, 0.3, 0.95, 0.2}, false, all, Winner{By: "x", Winner: "c", Value: 0.95, RunnerUp: "a", RunnerValue: 0.9}, "c wins"},
		{"close", []float64{0.99998, 0.99997, 0.1, 0.1}, false, all, Winner{By: "x", Winner: "a", Value: 0.99998, RunnerUp: "b", RunnerValue: 0.99997}, "a wins (0.99998 against 0.99997 for b)"},
		{"tie", []float64{0.5, 0.5, 0.1, 0.1}, false, all, Winner{By: "x", Winner: "a", Value: 0.5, RunnerUp: "b", RunnerValue: 0.5, Tied: true}, "a and b tie"},
		{"one fits", []float64{0.5, 0.9, 0.7, 0.1}, false, func(i int) bool { return i == 2 }, Winner{By: "x", Winner: "c", Value: 0.7}, "c (0.7) is the only one that fits"},
		{"none fits", []float64{0.5, 0.9, 0.7, 0.1}, false, func(int) bool { return false }, Winner{By: "x"}, "nothing fits the budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := newWinner("x", names, func(i int) float64 { return tc.values[i] }, tc.lower, tc.ok)
			if got != tc.want {
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
