package accountant

import "testing"

func TestGuaranteeString(t *testing.T) {
	if got := (Guarantee{Eps: 3 * 0.1, Delta: 2.9999700001e-05}).String(); got != "(0.3, 2.99998e-05)-DP" {
		t.Errorf("got %q", got)
	}
}
