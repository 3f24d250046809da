//go:build !cgo

package lp

import (
	"context"
	"errors"
)

// errNoCgo is every call's answer in a build without cgo: HiGHS is C++,
// linked through cgo. Such a build still loads, certifies and samples a
// cached or given gamma (package optimal's Source); it only cannot solve.
var errNoCgo = errors.New("lp: built without cgo (CGO_ENABLED=0): the LP solver, HiGHS, needs cgo and a C++ toolchain; solve on a build with cgo, or use a cached or given gamma")

// Solver is the LP of the cgo build; without cgo, New never returns one.
type Solver struct{}

// New reports that solving needs cgo.
func New(c, lower, upper []float64, maximize bool, opts Options) (*Solver, error) {
	return nil, errNoCgo
}

// Close does nothing: there is no solver to release.
func (s *Solver) Close() {}

// NumRows returns 0.
func (s *Solver) NumRows() int { return 0 }

// DropRows reports that solving needs cgo.
func (s *Solver) DropRows(drop func(i int) bool) error { return errNoCgo }

// AddRows reports that solving needs cgo.
func (s *Solver) AddRows(cuts []Cut) error { return errNoCgo }

// SetObjective reports that solving needs cgo.
func (s *Solver) SetObjective(c []float64) error { return errNoCgo }

// Solve reports that solving needs cgo.
func (s *Solver) Solve(ctx context.Context) (Solution, error) { return Solution{}, errNoCgo }
