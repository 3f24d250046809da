package accountant

import (
	"encoding"
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
		{[]text{ptr(Simple), ptr(General), ptr(Optimal)}, func() text { return new(Method) }},
		{[]text{ptr(PaperConversion), ptr(ImprovedConversion)}, func() text { return new(Conversion) }},
		{[]text{ptr(GNMaxGrid), ptr(GNMaxExact), ptr(GNMaxTight)}, func() text { return new(GNMaxSearch) }},
		{[]text{ptr(AlphaExact), ptr(AlphaTable43)}, func() text { return new(AlphaRule) }},
		{[]text{ptr(AutoRR), ptr(RRMethod{Method: Simple}), ptr(RRMethod{Method: Optimal})}, func() text { return new(RRMethod) }},
		{[]text{ptr(DiscreteNoise), ptr(ContinuousNoise)}, func() text { return new(PATENoise) }},
		{[]text{ptr(BothDirections), ptr(OneSided)}, func() text { return new(PATEDirections) }},
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
	if OneSided.String() != "one-sided" || BothDirections.String() != "both" || PATEDirections(7).String() != "PATEDirections(7)" || PATENoise(-1).String() != "PATENoise(-1)" {
		t.Errorf("names %v %v %v %v", OneSided, BothDirections, PATEDirections(7), PATENoise(-1))
	}
	if _, err := ParsePATEDirections("symmetric"); err == nil || err.Error() != `directions "symmetric": must be one of both, one-sided` {
		t.Errorf("bad directions: %v", err)
	}
	if _, err := ParsePATENoise("laplace"); err == nil || err.Error() != `noise "laplace": must be one of discrete, continuous` {
		t.Errorf("bad noise: %v", err)
	}
}
