package ctxio

import (
	"context"
	"errors"
	"testing"
)

// TestEvery: a cancelled context is reported at the first check due, by
// the items or by the units of work (by the items alone when Units is 0),
// and not between checks.
func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		units int // of each item
		bound int // Every.Units
		at    int // the item whose step reports the error
	}{
		{"by the items", 1, 1 << 16, 256},
		{"by the units", 1000, 1 << 16, 66},
		{"one item beyond the units", 1 << 20, 1 << 16, 1},
		{"by the items alone (Units 0)", 1 << 20, 0, 256},
	} {
		e := Every{Ctx: ctx, Items: 256, Units: tc.bound}
		for i := 1; i <= 300; i++ {
			if err := e.Step(tc.units); err != nil {
				if i != tc.at || !errors.Is(err, context.Canceled) {
					t.Errorf("%s: item %d: %v, want context.Canceled at item %d", tc.name, i, err, tc.at)
				}
				break
			}
			if i == tc.at {
				t.Errorf("%s: no error at item %d", tc.name, i)
			}
		}
	}
}
