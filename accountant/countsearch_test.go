package accountant

import (
	"context"
	"fmt"
	"math"
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
		if testing.Short() && tc.budget.Eps == 8 && tc.bits == "pure" {
			// Under -short without this budget, at a smaller size: the
			// first pure budget's count takes the same path (the exact
			// composition at n and n + 1, 2^19 points each), as "random".
			continue
		}
		t.Run(fmt.Sprintf("%s %v", tc.bits, tc.budget), func(t *testing.T) {
			m := new(Memo)
			pairs := testBits()[tc.bits]
			a := Account{Step: oneBitSpend(pairs), Budget: &Budget{tc.budget}}
			n, _, err := a.MaxSteps(context.Background(), m)
			if err != nil {
				t.Fatal(err)
			}
			want := []int{n, n + 1}
			if lowerBitDelta(m.curvesOf(pairs).loss, n+1, tc.budget.Eps, lowerBitWindow) > tc.budget.Delta {
				want = want[:1]
			}
			if made := exactMade(m, pairs); !slices.Equal(made, want) {
				t.Errorf("%d steps fit; the exact composition was made at %v, want %v", n, made, want)
			}
			for k, want := range map[int]bool{n: true, n + 1: false} {
				a.Steps = k
				if ok, err := a.Fits(testMemo); err != nil || ok != want {
					t.Errorf("%d steps fit: %v (%v), want %v", k, ok, err, want)
				}
			}
		})
	}
}

// exactMade returns the step counts, in increasing order, at which the
// exact composition of pairs was made in m.
func exactMade(m *Memo, pairs []BitPair) []int {
	c := m.curvesOf(pairs)
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

// TestCountRareLoss: where a rare large loss decides the count (a DaRRM
// label's pairs, largest loss 7.5 of mass 8e-10), roughDelta is within
// a percent of the coarse composition near the count, so the search
// makes the coarse composition at the count and the next alone; the
// count is still the predicate's: it fits, the next does not.
func TestCountRareLoss(t *testing.T) {
	for _, budget := range []Guarantee{{Eps: 8, Delta: 1e-8}, {Eps: 7, Delta: 3e-9}} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			m := new(Memo)
			s := Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 0.1, Delta: 2e-9}, Bits: darrmBits}
			a := Account{Step: s, Budget: &Budget{budget}}
			c := m.curvesOf(darrmBits)
			g, ok := rareCount(c.loss, budget)
			if !ok {
				t.Fatalf("rareCount: %d, not decided by the rare loss", g)
			}
			n, _, err := a.MaxSteps(context.Background(), m)
			if err != nil {
				t.Fatal(err)
			}
			var coarse []int
			c.mu.Lock()
			for q := range c.deltas {
				if q.window == coarseBitWindow && !slices.Contains(coarse, q.k) {
					coarse = append(coarse, q.k)
				}
			}
			c.mu.Unlock()
			slices.Sort(coarse)
			if want := []int{n, n + 1}; !slices.Equal(coarse, want) {
				t.Errorf("%d steps fit (roughDelta's count %d); the coarse composition was made at %v, want %v", n, g, coarse, want)
			}
			for _, k := range []int{n, n + 1} {
				r, _ := a.coarseRun(m, k, budget.Delta)
				got, want := roughDelta(c.loss, k, budget.Eps, 0), r.delta(budget.Eps)
				if math.Abs(got-want) > 0.01*want {
					t.Errorf("%d steps: roughDelta %g, the coarse composition %g", k, got, want)
				}
			}
			for k, want := range map[int]bool{n: true, n + 1: false} {
				a.Steps = k
				if ok, err := a.Fits(testMemo); err != nil || ok != want {
					t.Errorf("%d steps fit: %v (%v), want %v", k, ok, err, want)
				}
			}
		})
	}
}
