// Package roots finds where a monotone predicate stops holding: the last
// integer that fits, a bracket of floats grown geometrically from a guess,
// the float at the edge of a bracket (and the largest value that fits,
// bisected on its reciprocal: MostGenerous), and the first of a
// geometrically growing sequence of raises at which a value solved in
// closed form meets what rounding may have left it just short of.
//
// Every search returns a point at which the predicate was seen to hold,
// never an untested midpoint, so a caller that checks a privacy bound with
// the predicate gets an answer that meets the bound.
package roots

import (
	"context"
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

// LastNear is Last searching from guess, an estimate of the answer: it
// tests guess, then steps of 1, 2, 4, ... away from it, up while they
// fit and down while they do not (never below lo), then bisects the
// bracket found. With a predicate that holds up to some k and fails above
// it the answer is Last's; a guess d away costs about 2·log2(d) + 2
// calls of fits.
func LastNear(lo, guess, limit int, fits func(int) (bool, error)) (int, error) {
	guess = min(max(guess, lo), limit)
	if guess > lo {
		ok, err := fits(guess)
		if err != nil {
			return 0, err
		}
		if !ok {
			return lastBelow(lo, guess, fits)
		}
	}
	lo = guess
	for step := 1; ; step *= 2 {
		if lo == limit {
			return 0, fmt.Errorf("more than %d steps fit: %w", limit, ErrLimitFits)
		}
		next := lo + min(step, limit-lo)
		ok, err := fits(next)
		if err != nil {
			return 0, err
		}
		if !ok {
			return bisect(lo, next, fits)
		}
		lo = next
	}
}

// lastBelow returns the largest k in [lo, hi) with fits(k), given fits(lo)
// and not fits(hi): steps of 1, 2, 4, ... down from hi until one fits,
// then bisection.
func lastBelow(lo, hi int, fits func(int) (bool, error)) (int, error) {
	for step := 1; ; step *= 2 {
		next := max(lo, hi-step)
		if next == lo {
			return bisect(lo, hi, fits)
		}
		ok, err := fits(next)
		if err != nil {
			return 0, err
		}
		if ok {
			return bisect(next, hi, fits)
		}
		hi = next
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

// NoneFitError is Bracket's answer when the predicate holds nowhere it
// looked: from its start down to the least value of the range, or to the
// first value below that is beyond the function's range. Least is the
// last value tried that is within it.
type NoneFitError struct{ Least float64 }

func (e *NoneFitError) Error() string { return fmt.Sprintf("nothing fits down to %v", e.Least) }

// AllFitError is Bracket's answer when the predicate holds at every value
// of its 200 steps up: Last is the last of them.
type AllFitError struct{ Last float64 }

func (e *AllFitError) Error() string { return fmt.Sprintf("every value fits up to %v", e.Last) }

// Bracket returns lo at which fits holds and hi > lo at which it does not,
// or hi = 0 when max itself holds, for a predicate that holds below some
// value of [min, max] and fails above it (a noise scale too generous for a
// budget): from x0 (clamped to the range) in steps of the factor grow > 1,
// up while it holds and down while it does not, at most 200 steps each
// way. An error for which beyond reports true is a value beyond the
// function's range (which the caller's function refuses, not a failure):
// at the start the search moves up until a value is within it (in as
// many steps as cross float64's range); a step up
// beyond it ends the bracket there; a step down beyond it ends the search
// with a *NoneFitError. Any other error of fits, or of ctx, ends the
// search and is returned. The bracket's ends are values fits was asked
// about, so a bisection between them (Edge) answers a value that fits.
func Bracket(ctx context.Context, x0, min, max, grow float64, fits func(float64) (bool, error), beyond func(error) bool) (lo, hi float64, err error) {
	x := math.Max(min, math.Min(x0, max))
	ok, err := fits(x)
	// A start far below the range (a target eps of a budget of 1e-100,
	// or 0) may take more than 200 steps to reach it: as many as cross
	// the range of float64 at this factor.
	up := int(math.Max(200, math.Ceil(2100/math.Log2(grow))))
	for i := 0; err != nil && beyond(err) && i < up && x < max; i++ {
		if cerr := ctx.Err(); cerr != nil {
			return 0, 0, cerr
		}
		x = math.Min(math.Max(grow*x, math.SmallestNonzeroFloat64), max) // from 0 too
		ok, err = fits(x)
	}
	if err != nil {
		return 0, 0, err
	}
	if ok {
		for range 200 {
			if err := ctx.Err(); err != nil {
				return 0, 0, err
			}
			next := math.Min(grow*x, max)
			if next == x {
				return x, 0, nil
			}
			ok, err = fits(next)
			if err != nil && !beyond(err) {
				return 0, 0, err
			}
			if err != nil || !ok {
				return x, next, nil
			}
			x = next
		}
		return 0, 0, &AllFitError{Last: x}
	}
	for range 200 {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		next := math.Max(x/grow, min)
		if next == x {
			break
		}
		ok, err = fits(next)
		if err != nil {
			if beyond(err) {
				break
			}
			return 0, 0, err
		}
		if ok {
			return next, x, nil
		}
		x = next
	}
	return 0, 0, &NoneFitError{Least: x}
}

// MostGenerous returns the largest x in [lo, hi] with fits(x), within a
// relative rel of the boundary, given fits(lo) and not fits(hi), for a
// predicate that holds up to some x and fails above it (0 < lo < hi): the
// same bisection as every calibration of the accountant (Edge, on 1/x), which
// returns the end of the last bracket that fits, never a midpoint, so
// the answer always meets what fits tests. guess, when not nil, is a
// cheap estimate of fits that decides the bisection's steps, and fits
// confirms its last bracket (EdgeGuided): where guess decides every
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
		y = Edge(1/hi, 1/lo, rel, ok)
	} else {
		y = EdgeGuided(1/hi, 1/lo, rel, ok, func(y float64) bool { return guess(1 / y) })
	}
	if ferr != nil {
		return 0, ferr
	}
	return 1 / y, nil
}
