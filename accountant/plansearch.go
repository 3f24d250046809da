package accountant

import (
	"fmt"

	"github.com/darrm/darrm/internal/roots"
)

// MostGenerous returns the largest x in [lo, hi] with fits(x), within a
// relative rel of the boundary, given fits(lo) and not fits(hi), for a
// predicate that holds up to some x and fails above it (0 < lo < hi): the
// same bisection as every calibration here (roots.Edge, on 1/x), which
// returns the end of the last bracket that fits, never a midpoint, so
// the answer always meets what fits tests. guess, when not nil, is a
// cheap estimate of fits that decides the bisection's steps, and fits
// confirms its last bracket (roots.EdgeGuided): where guess decides every
// step as fits would, the answer is the same for two calls of fits;
// otherwise the search is fits's alone. An error of fits ends the search
// and is returned.
func MostGenerous(lo, hi, rel float64, fits func(float64) (bool, error), guess func(float64) bool) (float64, error) {
	if !(lo > 0 && lo < hi) {
		return 0, fmt.Errorf("most generous: bracket [%v, %v]: must have 0 < lo < hi", lo, hi)
	}
	var ferr error
	ok := func(y float64) bool {
		if ferr != nil {
			return true // end the search; the error is returned
		}
		f, err := fits(1 / y)
		if err != nil {
			ferr = err
			return true
		}
		return f
	}
	var y float64
	if guess == nil {
		y = roots.Edge(1/hi, 1/lo, rel, ok)
	} else {
		y = roots.EdgeGuided(1/hi, 1/lo, rel, ok, func(y float64) bool { return guess(1 / y) })
	}
	if ferr != nil {
		return 0, ferr
	}
	return 1 / y, nil
}
