package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/statedir"
)

// TestLedgerShowVerifyAgree: ledger show and ledger verify print the same
// total to publish and the same spend, to the digit (a table rounds every
// total up), and both say what to publish; in JSON a key that reads as a
// number (an eps, a delta, K) holds a number or is absent, never "" or
// words: the teachers' guarantee of non-private teachers and the cap of a
// ledger without one are left out.
func TestLedgerShowVerifyAgree(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, filepath.Join(dir, "state"))
	for _, tc := range []struct {
		name, votes string
		init        []string
		release     []string
	}{
		{"non-private teachers, a filter", "../../testdata/votes-K11-one-vote.csv", []string{"--budget-eps", "2", "--budget-delta", "1e-5"},
			[]string{"--mechanism", "darrm-one-vote", "--target-eps", "0.1", "--delta", "1e-7"}},
		{"fixed private teachers, a cap", "../../testdata/votes-K11.csv", []string{"--budget-eps", "8", "--budget-delta", "1e-3"}, nil},
		{"a declared use", "../../testdata/votes-K11-one-vote.csv", []string{"--budget-eps", "2", "--budget-delta", "1e-5", "--mechanism", "darrm-one-vote", "--target-eps", "0.1", "--delta", "1e-7", "--replace"},
			[]string{"--mechanism", "darrm-one-vote", "--target-eps", "0.1", "--delta", "1e-7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			led := filepath.Join(t.TempDir(), "l.ledger")
			if _, e, code := darrm(t, "", append([]string{"ledger", "init", led, "--votes", tc.votes}, tc.init...)...); code != 0 {
				t.Fatalf("ledger init: %s", e)
			}
			args := append([]string{"aggregate", tc.votes, "--ledger", led, "--out", filepath.Join(t.TempDir(), "labels.csv"), "--max-queries", "7"}, tc.release...)
			if _, e, code := darrm(t, "", args...); code != 0 {
				t.Fatalf("aggregate: exit %d: %s", code, e)
			}
			values := map[string]map[string]string{}
			for _, cmd := range []string{"show", "verify"} {
				out, e, code := darrm(t, "", "ledger", cmd, led)
				if code != 0 {
					t.Fatalf("ledger %s: %s", cmd, e)
				}
				values[cmd] = map[string]string{}
				// A table's rows (│ key │ value │) and a show's settings
				// below its runs (key=value).
				for _, m := range regexp.MustCompile(`(?m)│ (publish_\w+|spent_\w+) +│ ([^│]*?) *│|(publish_\w+|spent_\w+)=(.*?)(?:  |$)`).FindAllStringSubmatch(out, -1) {
					if m[1] != "" {
						values[cmd][m[1]] = m[2]
					} else {
						values[cmd][m[3]] = m[4]
					}
				}
				for _, k := range []string{"publish_eps", "publish_delta", "publish_method", "spent_eps", "spent_delta"} {
					if values[cmd][k] == "" {
						t.Errorf("ledger %s states no %s:\n%s", cmd, k, out)
					}
				}
				js, e, code := darrm(t, "", "ledger", cmd, led, "--format", "json")
				if code != 0 {
					t.Fatalf("ledger %s --format json: %s", cmd, e)
				}
				var doc map[string]any
				if err := json.Unmarshal([]byte(js), &doc); err != nil {
					t.Fatal(err)
				}
				for k, v := range doc {
					if strings.HasSuffix(k, "_eps") || strings.HasSuffix(k, "_delta") || strings.HasSuffix(k, "_Delta") || strings.HasSuffix(k, "_prime") || k == "K" {
						if _, ok := v.(float64); !ok {
							t.Errorf("ledger %s JSON: %q = %#v, want a number or no key", cmd, k, v)
						}
					}
				}
			}
			for _, k := range []string{"publish_eps", "publish_delta", "publish_method", "spent_eps", "spent_delta"} {
				if values["show"][k] != values["verify"][k] {
					t.Errorf("%s: show says %q, verify %q", k, values["show"][k], values["verify"][k])
				}
			}
		})
	}
}

// TestLedgerShowRetiredNoRuns: ledger show of a ledger retired before
// any run (its lines a header and the end) prints its document, valid
// JSON with no rows, where it printed half of one and failed ("no
// results").
func TestLedgerShowRetiredNoRuns(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, filepath.Join(dir, "state"))
	old, replacement := filepath.Join(dir, "old.ledger"), filepath.Join(dir, "new.ledger")
	for _, led := range []string{old, replacement} {
		if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", "../../testdata/votes-K11-one-vote.csv", "--budget-eps", "1", "--budget-delta", "1e-5", "--replace"); code != 0 {
			t.Fatalf("ledger init: %s", e)
		}
	}
	for _, f := range []string{"json", "table", "csv"} {
		out, e, code := darrm(t, "", "ledger", "show", old, "--format", f)
		if code != 0 {
			t.Fatalf("ledger show --format %s: exit %d: %s", f, code, e)
		}
		var doc map[string]any
		if f == "json" && json.Unmarshal([]byte(out), &doc) != nil {
			t.Errorf("ledger show --format json: %s", out)
		}
	}
}
