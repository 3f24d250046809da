package constraints_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/optimal"
)

// TestSolveOnePathAnySchedule solves problems whose cutting-plane paths
// differed with the worker count before the search merged its workers'
// candidates by a total order (docs/solve.md, "One path whatever the
// workers"), with one, two and eight workers and with the work items of
// every separation shuffled, and checks that each takes the same path
// (rows, passes, LP solves) to the same certified gamma, bit for bit. It
// lives here, not in package optimal, because the shuffle is this
// package's test hook.
func TestSolveOnePathAnySchedule(t *testing.T) {
	schedules := constraints.Schedules
	if testing.Short() {
		// Under -short the same check at a smaller size (a solve of K =
		// 151 is about 0.35 s of CPU): one worker against eight with the
		// items shuffled, which differ in both the worker count and the
		// shuffle, where the paths had differed; TestSameResultsAnySchedule
		// compares the search and the separation under all six.
		schedules = []constraints.Schedule{{Workers: 1}, {Workers: 8, Seed: 3}}
	}
	cases := []struct {
		p    constraints.Problem
		long bool // seconds per solve: not in -short
	}{
		{p: constraints.New(151, 2, 0.1, 1e-3)},
		{p: constraints.New(451, 2, 0.1, 1e-4), long: true},
	}
	for _, tc := range cases {
		if tc.long && testing.Short() {
			continue
		}
		var want string
		for _, s := range schedules {
			restore := s.Deal()
			r, err := optimal.Solve(context.Background(), tc.p, gamma.UniformPrior(), optimal.Options{Workers: s.Workers})
			restore()
			if err != nil {
				t.Fatalf("K=%d m=%g Delta=%g, %v: %v", tc.p.K, tc.p.M, tc.p.Delta, s, err)
			}
			if r.Certificate.Status != gamma.Certified {
				t.Fatalf("K=%d m=%g Delta=%g, %v: %v", tc.p.K, tc.p.M, tc.p.Delta, s, r.Certificate.Status)
			}
			bits := make([]uint64, len(r.Gamma))
			for l, v := range r.Gamma {
				bits[l] = math.Float64bits(v)
			}
			got := fmt.Sprintf("%d rows, %d passes, %d LP solves, gamma %x", r.Rows, r.Passes, r.LPSolves, bits)
			if want == "" {
				want = got
				t.Logf("K=%d m=%g Delta=%g: %d rows, %d passes, %d LP solves, gap %.2g", tc.p.K, tc.p.M, tc.p.Delta, r.Rows, r.Passes, r.LPSolves, r.Gap)
			} else if got != want {
				t.Errorf("K=%d m=%g Delta=%g, %v:\n got %s\nwant %s (%v)", tc.p.K, tc.p.M, tc.p.Delta, s, got, want, schedules[0])
			}
		}
	}
}
