package setup

import (
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// TestRRMethod: auto is RRComposition's choice for the teachers' Delta; a
// method given is used whatever Delta; each value reads back as itself; a
// bad name says auto is allowed.
func TestRRMethod(t *testing.T) {
	for _, tc := range []struct {
		text  string
		delta float64
		want  accountant.Method
	}{
		{"auto", 1e-5, accountant.General},
		{"auto", 0, accountant.Simple},
		{"simple", 1e-5, accountant.Simple},
		{"general", 0, accountant.General},
		{"optimal", 1e-5, accountant.Optimal},
	} {
		var r RRMethod
		if err := r.UnmarshalText([]byte(tc.text)); err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		if got := r.For(tc.delta); got != tc.want {
			t.Errorf("%s for Delta = %g: %v, want %v", tc.text, tc.delta, got, tc.want)
		}
	}
	for _, v := range []RRMethod{AutoRR, {Method: accountant.Simple}, {Method: accountant.Optimal}} {
		b, err := v.MarshalText()
		var got RRMethod
		if err != nil || got.UnmarshalText(b) != nil {
			t.Errorf("%v: %q does not read back (%v)", v, b, err)
		} else if g, _ := got.MarshalText(); string(g) != string(b) {
			t.Errorf("%q reads back as %q", b, g)
		}
	}
	var r RRMethod
	if err := r.UnmarshalText([]byte("advanced")); err == nil || !strings.HasSuffix(err.Error(), "(or auto)") {
		t.Errorf("advanced: %v", err)
	}
	if err := r.UnmarshalText([]byte("frobnicate")); err == nil {
		t.Error("RRMethod accepts frobnicate")
	}
	const want = `method "Simple": must be one of simple, general, optimal, exact, rdp, zcdp-filter, rdp-filter, advanced-filter, gdp-filter (or auto)`
	if err := r.UnmarshalText([]byte("Simple")); err == nil || err.Error() != want {
		t.Errorf("RRMethod of Simple: %v, want %s", err, want)
	}
}
