package accountant

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// TestCountComposesTwice: a one-bit count's search, guided by the coarse
// composition, makes the exact composition (a transform of 2^19 points)
// at the count found and the next only, where the bulk of the losses
// decides the count as well as where the mass of infinite losses does
// ("delta"); the count is the predicate's: it fits, the next does not.
func TestCountComposesTwice(t *testing.T) {
	for _, tc := range []struct {
		bits   string
		budget Guarantee
	}{
		{"pure", Guarantee{Eps: 4, Delta: 1e-6}},
		{"pure", Guarantee{Eps: 8, Delta: 1e-10}},
		{"delta", Guarantee{Eps: 6, Delta: 1e-2}},
		{"random", Guarantee{Eps: 8, Delta: 1e-8}},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.bits, tc.budget), func(t *testing.T) {
			forgetCompositions()
			pairs := testBits()[tc.bits]
			a := Account{Step: oneBitSpend(pairs), Budget: &Budget{tc.budget}}
			n, _, err := a.MaxSteps(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			c := recentBitCurves(pairs)
			c.mu.Lock()
			var made []int
			for _, r := range c.runs {
				if r.p != nil {
					made = append(made, r.k)
				}
			}
			c.mu.Unlock()
			slices.Sort(made)
			if !slices.Equal(made, []int{n, n + 1}) {
				t.Errorf("%d steps fit; the exact composition was made at %v, want %v", n, made, []int{n, n + 1})
			}
			for k, want := range map[int]bool{n: true, n + 1: false} {
				a.Steps = k
				if ok, err := a.Fits(); err != nil || ok != want {
					t.Errorf("%d steps fit: %v (%v), want %v", k, ok, err, want)
				}
			}
		})
	}
}
