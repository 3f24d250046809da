package accountant

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// TestCountComposesTwice: a one-bit count's search, guided by the coarse
// composition, makes the exact composition (a transform of 2^19 points)
// at the count found, and at the next only where the lower bound
// (lowerBitDelta) does not show it beyond the budget, where the bulk of
// the losses decides the count as well as where the mass of infinite
// losses does ("delta"); the count is the predicate's: it fits, the next
// does not.
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
			want := []int{n, n + 1}
			if lowerBitDelta(cachedBitCurves(pairs).loss, n+1, tc.budget.Eps, lowerBitWindow) > tc.budget.Delta {
				want = want[:1]
			}
			if made := exactMade(pairs); !slices.Equal(made, want) {
				t.Errorf("%d steps fit; the exact composition was made at %v, want %v", n, made, want)
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

// exactMade returns the step counts, in increasing order, at which the
// exact composition of pairs was made.
func exactMade(pairs []BitPair) []int {
	c := recentBitCurves(pairs)
	c.mu.Lock()
	defer c.mu.Unlock()
	var made []int
	for _, r := range c.runs {
		if r.p != nil {
			made = append(made, r.k)
		}
	}
	slices.Sort(made)
	return made
}
