package roots

import (
	"context"
	"errors"
	"math"
	"testing"
)

// TestLast: Last and LastIn return the last k that fits (never one
// beyond), Last an error when its bound fits, and both pass on an error of
// the predicate.
func TestLast(t *testing.T) {
	bad0 := errors.New("bad")
	for _, c := range []struct{ lo, limit, last int }{{1, 100, 1}, {1, 100, 37}, {5, 1 << 40, 123456789}, {1, 64, 63}} {
		fits := func(k int) (bool, error) { return k <= c.last, nil }
		got, err := Last(c.lo, c.limit, fits)
		if err != nil || got != c.last {
			t.Errorf("Last(%d, %d) with last %d: %d, %v", c.lo, c.limit, c.last, got, err)
		}
		for _, hi := range []int{c.last, c.last + 1, c.limit} {
			if got, err := LastIn(c.lo, hi, fits); err != nil || got != c.last {
				t.Errorf("LastIn(%d, %d) with last %d: %d, %v", c.lo, hi, c.last, got, err)
			}
		}
	}
	for _, c := range []struct{ lo, guess, limit, last, calls int }{
		{1, 146, 1 << 40, 146, 2}, {1, 146, 1 << 40, 147, 4}, {1, 146, 1 << 40, 140, 6}, {1, 146, 1 << 40, 1, 12},
		{1, 5, 1 << 40, 123456789, 54}, {5, 1, 100, 5, 1}, {1, 200, 100, 37, 12},
	} {
		calls := 0
		fits := func(k int) (bool, error) { calls++; return k <= c.last, nil }
		if got, err := LastNear(c.lo, c.guess, c.limit, fits); err != nil || got != c.last || calls > c.calls {
			t.Errorf("LastNear(%d, %d, %d) with last %d: %d, %v after %d calls (at most %d)", c.lo, c.guess, c.limit, c.last, got, err, calls, c.calls)
		}
	}
	if _, err := LastNear(1, 10, 64, func(int) (bool, error) { return true, nil }); !errors.Is(err, ErrLimitFits) {
		t.Error("LastNear: no error when the bound fits")
	}
	if _, err := LastNear(1, 10, 64, func(k int) (bool, error) { return k < 12, map[bool]error{true: bad0}[k == 11] }); !errors.Is(err, bad0) {
		t.Errorf("LastNear: error of the predicate: %v", err)
	}
	if got, err := LastIn(3, 3, func(int) (bool, error) { return true, nil }); err != nil || got != 3 {
		t.Errorf("LastIn(3, 3): %d, %v", got, err)
	}
	if _, err := Last(1, 64, func(int) (bool, error) { return true, nil }); !errors.Is(err, ErrLimitFits) {
		t.Error("Last: no error when the bound fits")
	}
	bad := errors.New("bad")
	if _, err := Last(1, 64, func(k int) (bool, error) { return k < 10, map[bool]error{true: bad}[k == 12] }); !errors.Is(err, bad) {
		t.Errorf("Last: error of the predicate: %v", err)
	}
	if _, err := LastIn(1, 64, func(k int) (bool, error) { return k < 10, map[bool]error{true: bad}[k == 32] }); !errors.Is(err, bad) {
		t.Errorf("LastIn: error of the predicate: %v", err)
	}
}

// TestEdge: Edge returns a point that holds, within its tolerance of the
// boundary, from either side; with rel = 0 the boundary's own float.
func TestEdge(t *testing.T) {
	for _, x := range []float64{1e-3, 0.5, 1.7, 1e6} {
		got := Edge(0, 2e6, 1e-12, func(y float64) bool { return y >= x })
		if got < x || got > x*(1+1e-11) {
			t.Errorf("Edge up to %g: %g", x, got)
		}
		got = Edge(2e6, 0, 1e-12, func(y float64) bool { return y <= x })
		if got > x || got < x*(1-1e-11) {
			t.Errorf("Edge down to %g: %g", x, got)
		}
		if got := Edge(-2e6, 0, 0, func(y float64) bool { return y >= -x }); got != -x {
			t.Errorf("Edge to adjacent floats at %g: %g", -x, got)
		}
	}
}

// TestRaiseUntil: the first of x0, x0 + u, x0 + 3u, ... that holds, and
// false when none does.
func TestRaiseUntil(t *testing.T) {
	for _, steps := range []int{0, 1, 5, 40} {
		x0 := 1.5
		want := x0
		for i, u := 0, math.Nextafter(x0, 2)-x0; i < steps; i, u = i+1, 2*u {
			want += u
		}
		got, ok, err := RaiseUntil(x0, func(y float64) (bool, error) { return y >= want, nil })
		if !ok || err != nil || got != want {
			t.Errorf("RaiseUntil to %d steps: %v, %v, %v, want %v", steps, got, ok, err, want)
		}
	}
	if _, ok, _ := RaiseUntil(1, func(float64) (bool, error) { return false, nil }); ok {
		t.Error("RaiseUntil: found a value where none holds")
	}
}

// TestEdgeGuided: guided by a wrong estimate or a right one, the answer is
// Edge's, and ok holds at it.
func TestEdgeGuided(t *testing.T) {
	for _, edge := range []float64{1e-6, 0.3, 1, 7.5} {
		ok := func(x float64) bool { return x >= edge }
		want := Edge(0, 10, 1e-9, ok)
		for name, guess := range map[string]func(float64) bool{
			"exact": ok,
			"close": func(x float64) bool { return x >= edge*(1+1e-12) },
			"wrong": func(x float64) bool { return x >= edge/2 },
			"never": func(float64) bool { return false },
		} {
			if got := EdgeGuided(0, 10, 1e-9, ok, guess); got != want && name != "close" || !ok(got) {
				t.Errorf("edge %g, guess %s: %v, Edge %v", edge, name, got, want)
			}
		}
	}
}

// TestBracket: Bracket returns a value that fits and the next step that
// does not (or the range's end that fits), moves up out of a start beyond
// the function's range, ends a step up beyond it as a value that does not
// fit and a step down beyond it as nothing fitting, and passes on other
// errors and a cancelled context.
func TestBracket(t *testing.T) {
	errBeyond, errBad := errors.New("beyond"), errors.New("bad")
	beyond := func(err error) bool { return errors.Is(err, errBeyond) }
	// below returns a predicate that holds up to edge, with values below
	// lowest and above highest beyond the range.
	below := func(edge, lowest, highest float64) func(float64) (bool, error) {
		return func(x float64) (bool, error) {
			if x < lowest || x > highest {
				return false, errBeyond
			}
			return x <= edge, nil
		}
	}
	inf := math.Inf(1)
	for _, c := range []struct {
		name         string
		x0, min, max float64
		fits         func(float64) (bool, error)
		lo, hi       float64
		none, all    bool
		least, last  float64
		err          error
	}{
		{name: "up from a fit", x0: 1, min: 0.1, max: 100, fits: below(5, 0, inf), lo: 4, hi: 8},
		{name: "down from a miss", x0: 20, min: 0.1, max: 100, fits: below(5, 0, inf), lo: 5, hi: 10},
		{name: "the range's end fits", x0: 1, min: 0.1, max: 100, fits: below(inf, 0, inf), lo: 100},
		{name: "a start clamped to the range", x0: 1000, min: 0.1, max: 100, fits: below(60, 0, inf), lo: 50, hi: 100},
		{name: "nothing fits down to min", x0: 8, min: 1, max: 100, fits: below(0, 0, inf), none: true, least: 1},
		{name: "a start beyond the range", x0: 1, min: 0.1, max: 100, fits: below(5, 3, inf), lo: 4, hi: 8},
		{name: "a step up beyond the range", x0: 1, min: 0.1, max: 100, fits: below(10, 0, 6), lo: 4, hi: 8},
		{name: "a step down beyond the range", x0: 8, min: 0.1, max: 100, fits: below(1, 3, inf), none: true, least: 4},
		// More than 200 steps up to the range (a target eps of a budget
		// of 1e-100), or from 0: the walk reaches it.
		{name: "a start far below the range", x0: 1e-100, min: 0, max: 100, fits: below(1e-6, 1e-15, inf), lo: math.Ldexp(1e-100, 312), hi: math.Ldexp(1e-100, 313)},
		{name: "nothing fits from far below the range", x0: 1e-100, min: 0, max: 100, fits: below(0, 1e-15, inf), none: true, least: math.Ldexp(1e-100, 283)},
		{name: "a start at 0", x0: 0, min: 0, max: 100, fits: below(1e-6, 1e-15, inf), lo: math.Ldexp(1, -20), hi: math.Ldexp(1, -19)},
		{name: "every value fits", x0: 1, min: 0.1, max: inf, fits: below(inf, 0, inf), all: true, last: math.Ldexp(1, 200)},
		{name: "an error", x0: 1, min: 0.1, max: 100, fits: func(x float64) (bool, error) {
			if x > 3 {
				return false, errBad
			}
			return true, nil
		}, err: errBad},
	} {
		lo, hi, err := Bracket(context.Background(), c.x0, c.min, c.max, 2, c.fits, beyond)
		var none *NoneFitError
		var all *AllFitError
		switch {
		case c.none:
			if !errors.As(err, &none) || none.Least != c.least {
				t.Errorf("%s: %v, %v, %v; want nothing fits down to %v", c.name, lo, hi, err, c.least)
			}
		case c.all:
			if !errors.As(err, &all) || all.Last != c.last {
				t.Errorf("%s: %v, %v, %v; want every value fits up to %v", c.name, lo, hi, err, c.last)
			}
		case c.err != nil:
			if !errors.Is(err, c.err) {
				t.Errorf("%s: %v, %v, %v; want %v", c.name, lo, hi, err, c.err)
			}
		default:
			if err != nil || lo != c.lo || hi != c.hi {
				t.Errorf("%s: %v, %v, %v; want %v, %v", c.name, lo, hi, err, c.lo, c.hi)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Bracket(ctx, 1, 0.1, 100, 2, below(50, 0, inf), beyond); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled search: %v", err)
	}
}

// TestMostGenerousGuided: the guided search returns the unguided one's
// answer whether its guess decides every step as fits does, is off by a
// little or is wrong everywhere, and fits holds at the answer; a good
// guess leaves fits two calls.
func TestMostGenerousGuided(t *testing.T) {
	const edge, rel = 3.7, 1e-3
	fits := func(calls *int) func(float64) (bool, error) {
		return func(x float64) (bool, error) { *calls++; return x <= edge, nil }
	}
	var n int
	want, err := MostGenerous(1, 10, rel, fits(&n), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		guess func(float64) bool
		calls int // the most calls of fits, 0: any
	}{
		{"exact", func(x float64) bool { return x <= edge }, 2},
		{"off by 1e-6", func(x float64) bool { return x <= edge*(1+1e-6) }, 0},
		{"wrong", func(float64) bool { return true }, 0},
		{"none", nil, 0},
	} {
		var calls int
		got, err := MostGenerous(1, 10, rel, fits(&calls), tc.guess)
		if err != nil || got != want || got > edge {
			t.Errorf("%s: %v, %v; want %v (fits up to %v)", tc.name, got, err, want, edge)
		}
		if tc.calls > 0 && calls > tc.calls {
			t.Errorf("%s: %d calls of fits, want at most %d", tc.name, calls, tc.calls)
		}
	}
}
