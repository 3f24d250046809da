package constraints

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// TestSameResultsAnySchedule runs the search (Candidates) and the exact
// separation with one, two and eight workers and with their work items
// shuffled, and checks that every result is the same bit for bit: which
// worker walks which pairs must not change what they return.
func TestSameResultsAnySchedule(t *testing.T) {
	ctx := context.Background()
	for _, c := range familyCases(t, 41, []float64{1e-3, 1e-5}, func(k int) bool { return k >= 21 && k%10 == 1 }) {
		floor := c.p.Budget() * 0.9
		var want string
		for _, s := range Schedules {
			restore := s.Deal()
			cands, bound, err := c.p.Candidates(ctx, c.gamma, 12, s.Workers)
			if err != nil {
				t.Fatal(err)
			}
			sep, err := c.p.Separate(ctx, c.gamma, SeparateOptions{Top: 12, Floor: floor, Workers: s.Workers})
			if err != nil {
				t.Fatal(err)
			}
			restore()
			got := fmt.Sprintf("candidates %v, bound %x; maximum %x at %v, top %v", bitsOf(cands), math.Float64bits(bound), math.Float64bits(sep.MaxF), sep.Worst, bitsOf(sep.Top))
			if want == "" {
				want = got
			} else if got != want {
				t.Errorf("K=%d Delta=%g %s, %v:\n got %s\nwant %s (%v)", c.p.K, c.p.Delta, c.name, s, got, want, Schedules[0])
			}
		}
	}
}

// bitsOf prints each multiset with the bits of its cost.
func bitsOf(list []Scored) string {
	out := ""
	for _, s := range list {
		out += fmt.Sprintf("%v:%x ", s.Config, math.Float64bits(s.F))
	}
	return out
}
