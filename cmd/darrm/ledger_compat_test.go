//go:build unix

package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
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

// TestLedgerUpgradePastSimpleBudget: a version-3 ledger took a run when
// any of simple, general or optimal composition said it fitted, so its
// runs may sum past its budget by simple composition, the one rule the
// upgrade keeps. Its total to publish is then that sum, not the budget:
// the budget of a filter that never held those runs is no guarantee of
// them (an upgraded ledger of 404 labels of 0.1 at budget (10, 0.01)
// published (10, 0.01) while its runs had spent 40.4).
func TestLedgerUpgradePastSimpleBudget(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "v3-past.ledger")
	// 80 pure labels of 0.05: 4 by simple composition, 2.35 by optimal
	// composition at delta' 1e-5, which took them within (3, 1e-5).
	v3LedgerOf(t, led, `{"version":3,"id":"0123456789abcdef0123456789abcdef","ensemble":"v3-past","relation":"one-vote","budget":{"eps":3,"delta":0.00001},"delta_prime":0.00001,"created":"2025-01-02T03:04:05Z","teachers":{"K":3,"eps":0,"Delta":0,"kind":"fixed","partition":"keyed-hash"}}`,
		`{"run":"r1","time":"2025-01-02T03:04:05Z","mechanism":"darrm-one-vote","eps":0.05,"delta":0,"queries":40,"final":true}`,
		`{"run":"r2","time":"2025-01-03T03:04:05Z","mechanism":"darrm-one-vote","eps":0.05,"delta":0,"queries":40,"final":true}`)
	var doc struct {
		PublishEps   float64 `json:"publish_eps"`
		PublishDelta float64 `json:"publish_delta"`
		SpentEps     float64 `json:"spent_eps"`
	}
	for _, when := range []string{"before", "after"} {
		if when == "after" {
			if out, stderr, code := darrm(t, "", "ledger", "upgrade", led); code != 0 {
				t.Fatalf("upgrade: exit %d: %s%s", code, out, stderr)
			}
		}
		out, stderr, code := darrm(t, "", "ledger", "show", led, "--format", "json")
		if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || math.Abs(doc.SpentEps-4) > 1e-9 || doc.PublishEps < doc.SpentEps || doc.PublishDelta > 1e-5 {
			t.Errorf("ledger show %s the upgrade: exit %d, %+v, want the runs' simple composition (4, 0) to publish: %s%s", when, code, doc, out, stderr)
		}
	}
	out, stderr, code := darrm(t, "", "ledger", "show", led)
	if code != 0 || !containsFlat(out, "spent more than the budget") {
		t.Errorf("ledger show after the upgrade does not say why it publishes more than the budget: exit %d: %s%s", code, out, stderr)
	}
	votes := filepath.Join(dir, "votes.csv")
	os.WriteFile(votes, []byte(strings.Repeat("1,1,0\n", 5)), 0o644)
	withHeader(t, votes, provenance.Binding{Ensemble: "v3-past", Teachers: provenance.Teachers{K: 3, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(2, votefile.LayoutVotes))
	labels := filepath.Join(dir, "labels.csv")
	out, stderr, code = darrm(t, "", "aggregate", votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.05", "--delta", "0", "--cache-dir", dir, "--ledger", led, "--out", labels)
	if b, _ := os.ReadFile(labels); code != exitBudget || labelsIn(b) > 0 || containsFlat(out+stderr, "TO PUBLISH: (3, 1e-05)-DP") {
		t.Errorf("release after the upgrade: exit %d, %d labels, want none and the runs' total to publish: %s%s", code, labelsIn(b), out, stderr)
	}
}

// TestLedgerVerifyKeptCopy: the version-3 copy that an upgrade keeps is
// for reading (ledger show, verify). ledger verify refused it as a
// second ledger of the ensemble (exit 2) and said to adopt it, which
// adopt refuses; it checks it, naming the ledger the record holds, and
// a release on it and an adopt of it stay refused.
func TestLedgerVerifyKeptCopy(t *testing.T) {
	led := filepath.Join(t.TempDir(), "v3-kept.ledger")
	v3LedgerOf(t, led, `{"version":3,"id":"ffeeddccbbaa99887766554433221100","ensemble":"v3-kept","relation":"one-vote","budget":{"eps":3,"delta":0.00001},"delta_prime":0.00001,"created":"2025-01-02T03:04:05Z","teachers":{"K":3,"eps":0,"Delta":0,"kind":"fixed","partition":"keyed-hash"}}`,
		`{"run":"r1","time":"2025-01-02T03:04:05Z","mechanism":"darrm-one-vote","eps":0.05,"delta":0,"queries":3,"final":true}`)
	if out, stderr, code := darrm(t, "", "ledger", "upgrade", led); code != 0 {
		t.Fatalf("upgrade: exit %d: %s%s", code, out, stderr)
	}
	kept := led + ".v3"
	out, stderr, code := darrm(t, "", "ledger", "verify", kept)
	if code != 0 || !containsFlat(stderr, "names ledger "+led) || containsFlat(stderr, "adopt") {
		t.Errorf("verify of the kept copy: exit %d: %s%s", code, out, stderr)
	}
	// The record names the upgraded ledger, not the copy: verify does not
	// say that it agrees with the copy, as it said.
	var doc struct{ Record string }
	out, stderr, code = darrm(t, "", "ledger", "verify", kept, "--format", "json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || doc.Record != "names another ledger" {
		t.Errorf("verify of the kept copy: exit %d, record %q, want %q: %s%s", code, doc.Record, "names another ledger", out, stderr)
	}
	if out, stderr, code = darrm(t, "", "ledger", "verify", led, "--format", "json"); json.Unmarshal([]byte(out), &doc) != nil || code != 0 || doc.Record != "agrees" {
		t.Errorf("verify of the upgraded ledger: exit %d, record %q, want agrees: %s%s", code, doc.Record, out, stderr)
	}
	// Nor beside a checkpoint of the upgraded ledger, which is not of it
	// (it was refused as a second ledger of the ensemble).
	cp := filepath.Join(t.TempDir(), "cp.json")
	if out, stderr, code := darrm(t, "", "ledger", "checkpoint", led, "--out", cp); code != 0 {
		t.Fatalf("checkpoint: exit %d: %s%s", code, out, stderr)
	}
	if out, stderr, code := darrm(t, "", "ledger", "verify", kept, "--witness", cp); code != 0 || !containsFlat(stderr, "not of this copy an upgrade kept") {
		t.Errorf("verify of the kept copy beside a checkpoint of the upgraded ledger: exit %d: %s%s", code, out, stderr)
	}
	if _, stderr, code := darrm(t, "", "ledger", "adopt", kept); code != exitUsage || !containsFlat(stderr, "never upgrade this copy") {
		t.Errorf("adopt of the kept copy: exit %d: %s", code, stderr)
	}
}
