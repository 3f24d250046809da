package noisymax

import (
	"encoding"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestTextRoundTrip: every value of the package's enumerations reads back
// from its text, and a bad name is refused, so that they work as flags.
func TestTextRoundTrip(t *testing.T) {
	type text interface {
		encoding.TextMarshaler
		encoding.TextUnmarshaler
	}
	for _, tc := range []struct {
		values []text
		fresh  func() text
	}{
		{[]text{ptr(GNMaxGrid), ptr(GNMaxExact), ptr(GNMaxTight)}, func() text { return new(GNMaxSearch) }},
		{[]text{ptr(DiscreteNoise), ptr(ContinuousNoise)}, func() text { return new(Noise) }},
	} {
		for _, v := range tc.values {
			b, err := v.MarshalText()
			got := tc.fresh()
			if err != nil || got.UnmarshalText(b) != nil {
				t.Errorf("%v: %q does not read back (%v)", v, b, err)
			} else if g, _ := got.MarshalText(); string(g) != string(b) {
				t.Errorf("%q reads back as %q", b, g)
			}
		}
		if err := tc.fresh().UnmarshalText([]byte("frobnicate")); err == nil {
			t.Errorf("%T accepts frobnicate", tc.fresh())
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestPATEEnumNames: the names and the errors of PATE's options.
func TestPATEEnumNames(t *testing.T) {
	if Noise(-1).String() != "Noise(-1)" {
		t.Errorf("name %v", Noise(-1))
	}
	for _, name := range []string{"laplace", "", "unset"} {
		want := fmt.Sprintf("noise %q: must be one of discrete, continuous", name)
		if err := new(Noise).UnmarshalText([]byte(name)); err == nil || err.Error() != want {
			t.Errorf("Noise.UnmarshalText(%q): %v, want %q", name, err, want)
		}
	}
}

// TestPATENoiseUnset: the zero value names no noise, and every entry point
// of this package that takes a Noise refuses it with an error naming the
// noise rather than picking discrete or continuous for the caller
// (package pate's account: its TestPATENoiseUnset).
func TestPATENoiseUnset(t *testing.T) {
	var zero Noise
	if zero != UnsetNoise || zero.String() != "unset" {
		t.Fatalf("zero value %v, want UnsetNoise", zero)
	}
	_, jsonErr := json.Marshal(struct{ Noise Noise }{zero})
	for name, err := range map[string]error{
		"Check":         zero.Check("sigma2", 2),
		"GNMaxBitProbs": bitErr(GNMaxBitProbs(2, 5, zero)),
		"MarshalText":   jsonErr,
		"another value": Noise(3).Check("sigma2", 2),
	} {
		if err == nil || !strings.Contains(err.Error(), "noise ") {
			t.Errorf("%s with the zero noise: %v, want an error naming the noise", name, err)
		}
	}
	for _, n := range []Noise{DiscreteNoise, ContinuousNoise} {
		if err := n.Check("sigma2", 2); err != nil {
			t.Errorf("%v: %v", n, err)
		}
	}
}

// bitErr returns the error of a GNMaxBitProbs call.
func bitErr(_ []float64, err error) error { return err }
