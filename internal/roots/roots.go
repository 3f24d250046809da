// Package roots finds where a monotone predicate stops holding: the last
// integer that fits, the float at the edge of a bracket, and the first of a
// geometrically growing sequence of raises at which a value solved in
// closed form meets what rounding may have left it just short of.
//
// Every search returns a point at which the predicate was seen to hold,
// never an untested midpoint, so a caller that checks a privacy bound with
// the predicate gets an answer that meets the bound.
package roots

import (
	"errors"
	"fmt"
	"math"
)

// ErrLimitFits marks Last's error when its bound itself fits: the
// predicate holds at every count it searched.
var ErrLimitFits = errors.New("the search's bound fits")

// Last returns the largest k in [lo, limit] with fits(k), given fits(lo),
// for a predicate that holds up to some k and fails above it (a total that
// grows with the number of steps): exponential search from lo, then
// bisection. It returns an error wrapping ErrLimitFits when fits(limit)
// holds, so that a caller never mistakes its own search bound for an
// answer. An error of fits ends
// the search and is returned.
func Last(lo, limit int, fits func(int) (bool, error)) (int, error) {
	hi := lo
	for {
		next := min(limit, max(2*hi, hi+1))
		if next == hi {
			return 0, fmt.Errorf("more than %d steps fit: %w", limit, ErrLimitFits)
		}
		ok, err := fits(next)
		if err != nil {
			return 0, err
		}
		if !ok {
			return bisect(lo, next, fits)
		}
		lo, hi = next, next
	}
}

// LastIn returns the largest k in [lo, hi] with fits(k), given fits(lo)
// and lo <= hi, for a predicate that holds up to some k and fails above
// it: bisection on [lo, hi), then hi itself when everything below it fits.
// An error of fits ends the search and is returned.
func LastIn(lo, hi int, fits func(int) (bool, error)) (int, error) {
	k, err := bisect(lo, hi, fits)
	if err != nil || k < hi-1 || k == hi {
		return k, err
	}
	ok, err := fits(hi)
	if err != nil {
		return 0, err
	}
	if ok {
		return hi, nil
	}
	return k, nil
}

// bisect returns the largest k in [lo, hi) with fits(k), taking fits(lo)
// as true and fits(hi) as false.
func bisect(lo, hi int, fits func(int) (bool, error)) (int, error) {
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

// Edge returns a point at which ok holds, within rel·|hold| of where it
// stops holding (rel = 0: adjacent floats), for a predicate that fails at
// fail, holds at hold and changes once between them, on either side: the
// end of the last bracket that holds, never the midpoint, so the answer
// always meets what ok tests.
func Edge(fail, hold, rel float64, ok func(float64) bool) float64 {
	_, hold = bracket(fail, hold, rel, ok)
	return hold
}

// EdgeGuided returns Edge(fail, hold, rel, ok), its steps decided by
// guess, a cheap estimate of ok, and its last bracket confirmed by ok:
// when ok fails at the bracket's failing end and holds at its holding end,
// every step guess decided went as ok decides it, for a predicate that
// changes once, so the answer is Edge's; otherwise it is Edge's with ok
// itself. Either way ok holds at the answer.
func EdgeGuided(fail, hold, rel float64, ok, guess func(float64) bool) float64 {
	f, h := bracket(fail, hold, rel, guess)
	if (f == fail || !ok(f)) && (h == hold || ok(h)) {
		return h
	}
	return Edge(fail, hold, rel, ok)
}

// bracket returns the last bracket of Edge's search: ok fails at its
// first end (or it is fail) and holds at its second (or it is hold).
func bracket(fail, hold, rel float64, ok func(float64) bool) (float64, float64) {
	for math.Abs(hold-fail) > rel*math.Abs(hold) {
		lo, hi := min(fail, hold), max(fail, hold)
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if ok(mid) {
			hold = mid
		} else {
			fail = mid
		}
	}
	return fail, hold
}

// RaiseUntil returns the first x of x0, x0 + u, x0 + 3u, x0 + 7u, ...
// (u one ulp of x0: one ulp, then geometrically more) at which ok holds,
// and whether one did within 1100 steps (beyond them x is past every
// float64): for a value solved in closed form (a calibrated σ) that
// rounding may have left just on the wrong side of what ok checks. An
// error of ok ends the search and is returned.
func RaiseUntil(x0 float64, ok func(float64) (bool, error)) (float64, bool, error) {
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
