package pate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noisymax"
)

// oneQuery returns the bounds of one GNMax query (noise of deviation
// sigma, of the given kind) answered at counts, summing to the number of
// teachers, at delta under the paper's conversion: the account of that
// query.
func oneQuery(counts []int, sigma float64, noise noisymax.Noise, delta float64) (bounds, error) {
	// Capped: a sum past maxAccountTeachers is refused as such, and never
	// overflows.
	teachers := castVotes(counts)
	wrap := func(err error) error {
		return fmt.Errorf("GNMax of %d counts (C classes) summing to %d (K teachers): %w", len(counts), teachers, err)
	}
	a, err := newRDPAccount(noisymax.Steps{Sigma2: sigma, Noise: noise}, teachers, len(counts), rdpOptions{memo: testMemo})
	if err != nil {
		return bounds{}, wrap(err)
	}
	if err := a.add(counts, answerGiven); err != nil {
		return bounds{}, wrap(err)
	}
	r, err := a.result(delta, accountant.PaperConversion)
	if err != nil {
		return bounds{}, wrap(err)
	}
	return r, nil
}

// TestGNMaxDataDependent checks the bounds of one query against an
// account built step by step, and that bad input is named.
func TestGNMaxDataDependent(t *testing.T) {
	for _, tc := range []struct {
		counts []int
		sigma  float64
		noise  noisymax.Noise
	}{
		{[]int{240, 5, 5, 0, 0, 0, 0, 0, 0, 0}, 10, noisymax.DiscreteNoise},
		{[]int{20, 0, 0}, 2, noisymax.ContinuousNoise},
		{[]int{6, 5}, 1, noisymax.DiscreteNoise},
	} {
		got, err := oneQuery(tc.counts, tc.sigma, tc.noise, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, n := range tc.counts {
			k += n
		}
		a, err := newRDPAccount(noisymax.Steps{Sigma2: tc.sigma, Noise: tc.noise}, k, len(tc.counts), rdpOptions{memo: testMemo})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.add(tc.counts, answerGiven); err != nil {
			t.Fatal(err)
		}
		want, err := a.result(1e-5, accountant.PaperConversion)
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
		_, err := oneQuery(tc.counts, tc.sigma, noisymax.DiscreteNoise, tc.delta)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("oneQuery(%v, %v, %v) = %v, want an error naming %q", tc.counts, tc.sigma, tc.delta, err, tc.want)
		}
	}
}

// TestAccountExamples: PATE's MNIST setting, 100 queries whose 250
// teachers nearly agree released by Confident-GNMax with the realised
// answers, in both directions (the default) and one-sided (the PATE
// paper's value); and one GNMax label with the discrete noise darrm's
// releases draw, whose data-dependent bound is far below the
// data-independent one at sigma = 10 and no lower at sigma = 40.
func TestAccountExamples(t *testing.T) {
	m := noisymax.Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}
	for _, tc := range []struct {
		dir  Directions
		want string
	}{
		{BothDirections, "both      data-independent eps 1.699, data-dependent eps 0.472 (not for publication)"},
		{OneSided, "one-sided data-independent eps 1.699, data-dependent eps 0.468 (not for publication)"},
	} {
		acct, err := newRDPAccount(m, 250, 10, rdpOptions{memo: testMemo, Directions: tc.dir})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			counts := []int{240, 5, 5, 0, 0, 0, 0, 0, 0, 0}
			ans := answerGiven
			if i%10 == 0 {
				ans = answerWithheld
			}
			if err := acct.add(counts, ans); err != nil {
				t.Fatal(err)
			}
		}
		r, err := acct.result(1e-5, accountant.PaperConversion)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%-9v data-independent eps %.3f, data-dependent eps %.3f (not for publication)", r.Directions, r.Independent.Eps, r.Dependent.Eps); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
	for _, tc := range []struct {
		sigma float64
		want  string
	}{
		{10, "sigma 10: data-independent eps 0.6886, data-dependent eps 0.2014"},
		{40, "sigma 40: data-independent eps 0.1703, data-dependent eps 0.1703"},
	} {
		r, err := oneQuery([]int{240, 5, 5, 0, 0, 0, 0, 0, 0, 0}, tc.sigma, noisymax.DiscreteNoise, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("sigma %g: data-independent eps %.4f, data-dependent eps %.4f", tc.sigma, r.Independent.Eps, r.Dependent.Eps); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// TestDirectionsText: Directions reads back from its text, and a bad
// name is refused, so that it works as a flag.
func TestDirectionsText(t *testing.T) {
	for _, d := range []Directions{BothDirections, OneSided} {
		b, err := d.MarshalText()
		var got Directions
		if err != nil || got.UnmarshalText(b) != nil || got != d {
			t.Errorf("%v: %q does not read back (%v)", d, b, err)
		}
	}
	if err := new(Directions).UnmarshalText([]byte("frobnicate")); err == nil {
		t.Error("Directions accepts frobnicate")
	}
	if OneSided.String() != "one-sided" || BothDirections.String() != "both" || Directions(7).String() != "Directions(7)" {
		t.Errorf("names %v %v %v", OneSided, BothDirections, Directions(7))
	}
	if err := new(Directions).UnmarshalText([]byte("symmetric")); err == nil || err.Error() != `directions "symmetric": must be one of both, one-sided` {
		t.Errorf("bad directions: %v", err)
	}
}

// TestPATENoiseUnset: every function of the account that takes a noisymax.Noise
// refuses the zero value with an error naming the noise rather than
// picking discrete or continuous for the caller, and smoothConditions
// establishes neither condition with it.
func TestPATENoiseUnset(t *testing.T) {
	var zero noisymax.Noise
	counts := []int{8, 2}
	_, _, thErr := checkedThresholdLogQ(8, 5, 2, zero)
	_, acctErr := newRDPAccount(noisymax.Steps{Sigma2: 2}, 10, 2, rdpOptions{memo: testMemo})
	_, oneErr := oneQuery(counts, 2, zero, 1e-5)
	for name, err := range map[string]error{
		"checkedGNMaxLogQ":          second(checkedGNMaxLogQ(counts, 2, zero)),
		"checkedGNMaxNeighbourLogQ": second(checkedGNMaxNeighbourLogQ(counts, 2, zero, neighbours{teachers: 10})),
		"checkedThresholdLogQ":      thErr,
		"thresholdNeighbourLogQ":    second(thresholdNeighbourLogQ(8, neighbours{teachers: 10}, 2, 5, 2, zero)),
		"newRDPAccount":             acctErr,
		"one query":                 oneErr,
	} {
		if err == nil || !strings.Contains(err.Error(), "noise ") {
			t.Errorf("%s with the zero noise: %v, want an error naming the noise", name, err)
		}
	}
	if c5, c6 := smoothConditions(testMemo, 40, 10, 20, zero); c5 || c6 {
		t.Errorf("smoothConditions with the zero noise = %v, %v; want neither established", c5, c6)
	}
}

// TestAccountCountsNotQuoted: an account refuses counts that do not sum
// to K without quoting their sum: it is a private query's votes.
func TestAccountCountsNotQuoted(t *testing.T) {
	for _, abstain := range []bool{false, true} {
		a, err := newRDPAccount(noisymax.Steps{Sigma2: 40, Noise: noisymax.DiscreteNoise}, 7, 3, rdpOptions{memo: testMemo, Abstain: abstain})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.add([]int{4, 6, 0}, answerGiven); err == nil || strings.Contains(err.Error(), "10") {
			t.Errorf("abstain %t: counts summing to 10 for K = 7: %v: want an error that does not quote the sum", abstain, err)
		}
	}
}
