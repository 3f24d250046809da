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
		{[]text{ptr(Simple), ptr(General), ptr(Optimal), ptr(Exact), ptr(Renyi), ptr(ZCDPFilter), ptr(RenyiFilter), ptr(AdvancedFilter), ptr(GDPFilter)}, func() text { return new(Method) }},
		{[]text{ptr(ApproxSpend), ptr(PureSpend), ptr(GaussianSpend), ptr(SampledGaussianSpend), ptr(OneBitSpend), ptr(LaplaceSpend)}, func() text { return new(SpendKind) }},
		{[]text{ptr(PaperConversion), ptr(ImprovedConversion)}, func() text { return new(Conversion) }},
		{[]text{ptr(AlphaExact), ptr(AlphaTable43)}, func() text { return new(AlphaRule) }},
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
	for _, tc := range []struct {
		v    encoding.TextUnmarshaler
		want string
	}{
		{new(Method), `method "Simple": must be one of simple, general, optimal, exact, rdp, zcdp-filter, rdp-filter, advanced-filter, gdp-filter`},
		{new(SpendKind), `spend kind "Simple": must be one of approx, pure, gaussian, sampled-gaussian, one-bit, laplace`},
	} {
		if err := tc.v.UnmarshalText([]byte("Simple")); err == nil || err.Error() != tc.want {
			t.Errorf("%T of Simple: %v, want %s", tc.v, err, tc.want)
		}
	}
	if Method(9).String() != "Method(9)" || SpendKind(-1).String() != "SpendKind(-1)" {
		t.Errorf("values without a name print as %v and %v", Method(9), SpendKind(-1))
	}
}

func ptr[T any](v T) *T { return &v }
