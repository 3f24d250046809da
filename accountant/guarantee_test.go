package accountant

import (
	"math"
	"strconv"
	"testing"
)

func TestFormatBound(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{3 * 0.1, "0.3"}, // 0.30000000000000004: float64 noise of the inputs
		{0.3, "0.3"},
		{1e-5, "1e-05"},
		{2.9999700001e-05, "2.99998e-05"}, // 1-(1-1e-5)^3, never understated
		{0.1234564, "0.123457"},
		{0.1234566, "0.123457"},
		{9.9999991, "10"},
		{1.000001, "1.00001"},
		{0.9999995, "1"},
		{12.5, "12.5"},
		{0, "0"},
		{math.Inf(1), "+Inf"},
	} {
		if got := FormatBound(tc.x); got != tc.want {
			t.Errorf("FormatBound(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}

// TestFormatBoundNeverBelow checks that the text of a bound is never less
// than the bound, beyond the noise FormatBound allows, over many values.
func TestFormatBoundNeverBelow(t *testing.T) {
	for i := range 100000 {
		x := math.Exp(float64(i%2000)/40-40) * (1 + float64(i)/1e5)
		s := FormatBound(x)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < x-8*(math.Nextafter(x, math.Inf(1))-x) {
			t.Fatalf("FormatBound(%v) = %q, below it", x, s)
		}
		if len(strconv.FormatFloat(v, 'g', -1, 64)) > 12 {
			t.Fatalf("FormatBound(%v) = %q: more than six significant digits", x, s)
		}
		if v > x*(1+1e-5) {
			t.Fatalf("FormatBound(%v) = %q: raised by more than one unit in the sixth digit", x, s)
		}
	}
}

func TestGuaranteeString(t *testing.T) {
	if got := (Guarantee{Eps: 3 * 0.1, Delta: 2.9999700001e-05}).String(); got != "(0.3, 2.99998e-05)-DP" {
		t.Errorf("got %q", got)
	}
}
