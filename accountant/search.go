package accountant

import (
	"fmt"
	"math"
)

// lastFit returns the largest k in [lo, limit] with fits(k), given
// fits(lo), for a predicate that holds up to some k and fails above it
// (a total that grows with the number of steps): exponential search from
// lo, then bisection. It returns an error when fits(limit) holds, so
// that a caller never mistakes its own search bound for an answer.
func lastFit(lo, limit int, fits func(int) (bool, error)) (int, error) {
	hi := lo
	for {
		next := min(limit, max(2*hi, hi+1))
		if next == hi {
			return 0, fmt.Errorf("more than %d steps fit", limit)
		}
		ok, err := fits(next)
		if err != nil {
			return 0, err
		}
		if !ok {
			hi = next
			break
		}
		lo, hi = next, next
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := fits(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// bisectUp returns an x in [lo, hi] with ok(x), within a relative rel of
// the boundary, for a predicate that fails at lo and holds at hi and
// changes once between them: the end of the last bracket that holds,
// never the midpoint, so the answer always meets what ok tests.
func bisectUp(lo, hi, rel float64, ok func(float64) bool) float64 {
	_, hi = bisect(lo, hi, rel, ok)
	return hi
}

// bisect returns the last bracket of bisectUp's search: ok fails at its
// start (or it is lo) and holds at its end (or it is hi).
func bisect(lo, hi, rel float64, ok func(float64) bool) (float64, float64) {
	for hi-lo > rel*hi {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, hi
}

// bisectGuided returns bisectUp(lo, hi, rel, ok), its steps decided by
// guess, a cheap estimate of ok, and its last bracket confirmed by ok:
// when ok fails at the bracket's start and holds at its end, every step
// guess decided went as ok decides it, for a predicate that changes once
// (a midpoint at or below the start fails, one at or above the end
// holds), so the answer is bisectUp's; otherwise it is bisectUp's with ok
// itself. Either way ok holds at the answer.
func bisectGuided(lo, hi, rel float64, ok, guess func(float64) bool) float64 {
	a, b := bisect(lo, hi, rel, guess)
	if (a == lo || !ok(a)) && (b == hi || ok(b)) {
		return b
	}
	return bisectUp(lo, hi, rel, ok)
}

// raiseUntil returns the first x of x0, x0 + u, x0 + 3u, x0 + 7u, ...
// (u one ulp of x0: one ulp, then geometrically more) at which ok holds,
// and whether one did within 1100 steps (beyond them x is past every
// float64): for a value solved in closed form (a calibrated σ) that
// rounding may have left just on the wrong side of what ok checks. An
// error of ok ends the search and is returned.
func raiseUntil(x0 float64, ok func(float64) (bool, error)) (float64, bool, error) {
	x, step := x0, math.Nextafter(x0, math.Inf(1))-x0
	for range 1100 {
		fits, err := ok(x)
		if err != nil {
			return 0, false, err
		}
		if fits {
			return x, true, nil
		}
		x += step
		step *= 2
	}
	return 0, false, nil
}
