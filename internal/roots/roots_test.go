package roots

import (
	"errors"
	"math"
	"testing"
)

// TestLast: Last and LastIn return the last k that fits (never one
// beyond), Last an error when its bound fits, and both pass on an error of
// the predicate.
func TestLast(t *testing.T) {
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
