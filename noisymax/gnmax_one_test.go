package noisymax

import (
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// TestGNMaxDataDependent checks the one-call bound against the account it
// stands for, and that bad input is named.
func TestGNMaxDataDependent(t *testing.T) {
	for _, tc := range []struct {
		counts []int
		sigma  float64
		noise  Noise
	}{
		{[]int{240, 5, 5, 0, 0, 0, 0, 0, 0, 0}, 10, DiscreteNoise},
		{[]int{20, 0, 0}, 2, ContinuousNoise},
		{[]int{6, 5}, 1, DiscreteNoise},
	} {
		got, err := GNMaxDataDependent(tc.counts, tc.sigma, tc.noise, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, n := range tc.counts {
			k += n
		}
		a, err := NewAccount(ConfidentGNMax{Sigma2: tc.sigma, Noise: tc.noise}, k, len(tc.counts), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Add(tc.counts, Answered); err != nil {
			t.Fatal(err)
		}
		want, err := a.Result(1e-5, accountant.PaperConversion)
		if err != nil {
			t.Fatal(err)
		}
		if got.Dependent != want.Dependent || got.Independent != want.Independent || got.Queries != 1 || got.Answered != 1 ||
			got.Teachers != k || got.Directions != BothDirections {
			t.Errorf("%v: got %+v, want %+v", tc.counts, got, want)
		}
		if !(got.Dependent.Eps <= got.Independent.Eps) {
			t.Errorf("%v: data-dependent eps %v above the data-independent %v", tc.counts, got.Dependent.Eps, got.Independent.Eps)
		}
	}
	for _, tc := range []struct {
		counts []int
		sigma  float64
		delta  float64
		want   string
	}{
		{[]int{5}, 1, 1e-5, "classes"},
		{nil, 1, 1e-5, "0 counts (C classes) summing to 0 (K teachers): PATE account: teachers = 0"},
		{[]int{5, -1}, 1, 1e-5, "count[1] = -1"},
		{[]int{5, 1}, 0, 1e-5, "sigma2 = 0"},
		{[]int{5, 1}, 1, 0, "delta = 0"},
	} {
		_, err := GNMaxDataDependent(tc.counts, tc.sigma, DiscreteNoise, tc.delta)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("GNMaxDataDependent(%v, %v, %v) = %v, want an error naming %q", tc.counts, tc.sigma, tc.delta, err, tc.want)
		}
	}
}
