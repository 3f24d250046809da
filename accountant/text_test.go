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
		{[]text{ptr(AlphaExact), ptr(AlphaTable43)}, func() text { return new(AlphaRule) }},
		{[]text{ptr(AutoRR), ptr(RRMethod{Method: Simple}), ptr(RRMethod{Method: Optimal})}, func() text { return new(RRMethod) }},
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

func second[T any](_ T, err error) error { return err }
