//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLedgerUpgradeSaysItsVersion: an upgrade of a version-3 ledger
// makes one of version 4 (its rule kept) and says so, where it said
// "to version 5" over a ledger that ledger show gave as of version 4;
// an upgrade of it again says that it is of version 4, which this darrm
// releases on as it is, not of this darrm's version.
func TestLedgerUpgradeSaysItsVersion(t *testing.T) {
	led := filepath.Join(t.TempDir(), "v3-says.ledger")
	v3LedgerOf(t, led, `{"version":3,"id":"00112233445566778899aabbccddeeff","ensemble":"v3-says","relation":"one-vote","budget":{"eps":3,"delta":0.00001},"delta_prime":0.00001,"created":"2025-01-02T03:04:05Z","teachers":{"K":3,"eps":0,"Delta":0,"kind":"fixed","partition":"keyed-hash"}}`,
		`{"run":"r1","time":"2025-01-02T03:04:05Z","mechanism":"darrm-one-vote","eps":0.05,"delta":0,"queries":3,"final":true}`)
	out, stderr, code := darrm(t, "", "ledger", "upgrade", led)
	if code != 0 || !containsFlat(out, "upgraded from version 3 to version 4") {
		t.Fatalf("upgrade: exit %d: %s%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(led + ".v3"); !strings.Contains(string(b), `{"upgraded":{"to":4,`) {
		t.Errorf("the kept copy's mark does not name version 4: %s", b)
	}
	out, stderr, code = darrm(t, "", "ledger", "upgrade", led)
	if code != 0 || !containsFlat(out, "is of version 4, which this darrm releases on as it is: there is nothing to upgrade") {
		t.Errorf("upgrade of the upgraded ledger: exit %d: %s%s", code, out, stderr)
	}
}
