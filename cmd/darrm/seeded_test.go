package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/statedir"
)

// TestSeededLabelsNotOffered: labels of a seeded run (their header's
// for_release false), by generalized PTR or data-independent, are never
// offered for publication by a command that reads them: account pate
// --labels says NOT FOR RELEASE first, marks eps_guarantee so and names
// nothing to publish (JSON publish null, a warning), and a ledger command
// given them as a witness says so too; the same labels drawn from
// crypto/rand are offered as before. Labels in a file without a metadata
// header (NumPy), which cannot say they were seeded, are offered with a
// warning that the guarantee is of labels drawn from crypto/rand.
func TestSeededLabelsNotOffered(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, filepath.Join(dir, "state"))
	votes := ptrCounts(t, dir, "votes.csv", 40, 238)
	gnmax := []string{"--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5"}
	for _, tc := range []struct {
		name   string
		args   []string
		seeded bool
	}{
		{"ptr, seeded", ptrFlags, true},
		{"data-independent, seeded", gnmax, true},
		{"data-independent", gnmax, false},
		{"data-independent, seeded, NumPy", gnmax, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			npy := strings.HasSuffix(tc.name, "NumPy")
			labels := filepath.Join(t.TempDir(), "labels.csv")
			if npy {
				labels = filepath.Join(t.TempDir(), "labels.npy")
			}
			args := append([]string{"aggregate", votes, "--out", labels}, tc.args...)
			if tc.seeded {
				args = append(args, "--seed", "7")
			}
			if _, e, code := darrm(t, "", args...); code != 0 {
				t.Fatalf("aggregate: exit %d: %s", code, e)
			}
			acct := []string{"account", "pate", votes, "--labels", labels, "--target-delta", "1e-5"}
			if npy {
				acct = append(acct, "--sigma2", "40") // no header states it
			}
			table, e, code := darrm(t, "", acct...)
			if code != 0 {
				t.Fatalf("account pate: exit %d: %s", code, e)
			}
			js, _, _ := darrm(t, "", append(acct, "--format", "json")...)
			var doc struct {
				Publish *string `json:"publish"`
				Warning string  `json:"warning"`
			}
			if err := json.Unmarshal([]byte(js), &doc); err != nil {
				t.Fatal(err)
			}
			offered := strings.Contains(table, "PUBLISH: the guarantee") || doc.Publish != nil
			if unstated := strings.Contains(doc.Warning, "no metadata header"); npy {
				if !offered || !unstated {
					t.Errorf("labels without a header: offered %v, warning %q; want offered with a warning that nothing says their noise was secret", offered, doc.Warning)
				}
				return
			} else if unstated {
				t.Errorf("labels with a header warned of none: %q", doc.Warning)
			}
			if tc.seeded && (offered || !strings.HasPrefix(table, "*** NOT FOR RELEASE") || !strings.Contains(doc.Warning, "NOT FOR RELEASE")) {
				t.Errorf("seeded labels offered for publication (publish %v, warning %q):\n%s", doc.Publish, doc.Warning, table)
			}
			if !tc.seeded && (!offered || strings.Contains(table, "NOT FOR RELEASE")) {
				t.Errorf("labels from crypto/rand not offered as before:\n%s", table)
			}
		})
	}
	t.Run("witness", func(t *testing.T) {
		led := filepath.Join(dir, "k250.ledger")
		if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "4", "--budget-delta", "1e-5"); code != 0 {
			t.Fatalf("ledger init: %s", e)
		}
		labels := filepath.Join(dir, "witness.csv")
		if _, e, code := darrm(t, "", append([]string{"aggregate", votes, "--out", labels, "--ledger", led, "--seed", "7"}, gnmax...)...); code != 0 {
			t.Fatalf("aggregate: exit %d: %s", code, e)
		}
		for _, cmd := range []string{"show", "verify"} {
			_, e, code := darrm(t, "", "ledger", cmd, led, "--witness", labels)
			if code != 0 || !strings.Contains(strings.Join(strings.Fields(e), " "), "witness.csv: NOT FOR RELEASE: its labels were drawn from a seeded generator") {
				t.Errorf("ledger %s --witness of seeded labels: exit %d, %q; want NOT FOR RELEASE said", cmd, code, e)
			}
		}
	})
}
