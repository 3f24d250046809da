package setup

import (
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
)

// TestPTRFailedMessage checks what a failed test says it spent and what
// holds: the total on an unseeded run, the ledger's on a ledger, and no
// total at all on a seeded run, whose test outcome anyone with the seed
// can read.
func TestPTRFailedMessage(t *testing.T) {
	total := accountant.Total{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
	for _, tc := range []struct {
		name      string
		e         PTRFailed
		want, not string
	}{
		{"unseeded", PTRFailed{Publish: total}, "the total (2, 1e-05)-DP to publish for this run, by generalized PTR, holds", "NOT FOR RELEASE"},
		{"ledger", PTRFailed{Publish: total, Ledger: "team.ledger"}, "charged to ledger team.ledger, whose total to publish is now (2, 1e-05)-DP", "NOT FOR RELEASE"},
		{"seeded", PTRFailed{Publish: total, Seeded: true}, "NOT FOR RELEASE", "to publish for this run"},
	} {
		tc.e.Plan = &report.PTR{Queries: 600, TestEps: 1.1, TestDelta: 2e-7}
		msg := tc.e.Error()
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.not) {
			t.Errorf("%s: %q: want %q, not %q", tc.name, msg, tc.want, tc.not)
		}
	}
}

// TestFilterAccounting: --accounting's per-draw name is the name of the
// filter each draw is charged to, as the label file's header states it.
func TestFilterAccounting(t *testing.T) {
	if FilterAccounting != accountant.GDPFilter.String() {
		t.Errorf("FilterAccounting = %q, the filter is %q", FilterAccounting, accountant.GDPFilter)
	}
}
