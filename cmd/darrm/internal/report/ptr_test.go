package report

import (
	"strings"
	"testing"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
)

// TestPTROutcome: the plan's first line says what the release did: the
// proposal labelled on a pass, nothing on a failed test, and on a failed
// test with a fallback the queries the data-independent release labelled,
// and why there was no test when it was not drawn.
func TestPTROutcome(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		p    PTR
		want string
	}{
		{PTR{Queries: 40, Passed: &yes, Fallback: 7}, "the test passed: the 40 queries proposed released"},
		{PTR{Queries: 600, Passed: &no}, "the test FAILED: no label released"},
		{PTR{Queries: 600, Passed: &no, Fallback: 81}, "the test FAILED: the first 81 queries released by the data-independent fallback, within what the test left"},
		{PTR{Queries: 600}, "the test was not drawn: the ledger has no room for the total"},
	} {
		var b strings.Builder
		tc.p.write(cliout.NewText(&b))
		if got := strings.Join(strings.Fields(b.String()), " "); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}
