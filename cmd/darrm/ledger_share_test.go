package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/ledger"
)

// TestLedgerShares: ledger init --share gives analysts shares of the
// budget; aggregate --analyst charges as one, held to the share; ledger
// show sums the spends per analyst and names each run's; bad --share and
// --analyst values, and --analyst without --ledger, are refused naming the
// flag.
func TestLedgerShares(t *testing.T) {
	dir := t.TempDir()
	// A record of its own: the ledger is the vote file's ensemble's.
	t.Setenv(ledger.EnvStateDir, filepath.Join(dir, "state"))
	votes := "../../testdata/votes-K11-one-vote.csv"
	led := filepath.Join(dir, "team.ledger")
	init := []string{"ledger", "init", led, "--votes", votes, "--budget-eps", "1", "--budget-delta", "1e-5", "--filter", "simple"}
	for _, c := range []struct {
		share, want string
	}{
		{"alice", `--share "alice": want NAME=FRACTION`},
		{"alice=x", `the fraction "x" is not a number`},
		{"alice=0.5,alice=0.2", `analyst "alice" is given a share twice`},
		{"alice=1.5", "--share"},
		{"alice=0", "(0, 1]"},
	} {
		if _, e, code := darrm(t, "", append(init, "--share", c.share)...); code != exitUsage || !strings.Contains(e, c.want) {
			t.Errorf("--share %s: exit %d, %q; want %d and %q", c.share, code, e, exitUsage, c.want)
		}
	}
	if _, e, code := darrm(t, "", append(init, "--share", "alice=0.5", "--share", "bob=0.2")...); code != 0 {
		t.Fatal(e)
	}
	release := func(analyst ...string) (string, string, int) {
		args := []string{"aggregate", votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.1", "--delta", "1e-7",
			"--out", filepath.Join(dir, "labels.csv"), "--format", "json", "--ledger", led}
		return darrm(t, "", append(args, analyst...)...)
	}
	var doc struct {
		Released int
		Ledger   struct {
			Analyst    string
			ShareBound bool `json:"share_bound"`
		}
	}
	out, e, code := release("--analyst", "alice")
	if decode(t, out, &doc); code != exitBudget || doc.Released == 0 || doc.Released >= 10 {
		t.Errorf("alice: exit %d, %d released, %s; want her share's labels, fewer than the ledger's 10", code, doc.Released, e)
	}
	// Her share stopped her, not the budget: the status says so.
	if doc.Ledger.Analyst != "alice" || !doc.Ledger.ShareBound {
		t.Errorf("alice's release: ledger status %+v, want her share named as what bounds her", doc.Ledger)
	}
	aliceLabels := doc.Released
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--analyst", "carol"}, `gives analysts shares of its budget ("alice", "bob"), none to "carol"`, exitUsage},
		{nil, "this run names no analyst", exitUsage},
		{[]string{"--analyst", "a\tb"}, "--analyst", exitUsage},
	} {
		if _, e, code := release(c.args...); code != c.code || !strings.Contains(e, c.want) {
			t.Errorf("aggregate %q: exit %d, %q; want %d and %q", c.args, code, e, c.code, c.want)
		}
	}
	if _, e, code := darrm(t, "", "aggregate", votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.1", "--delta", "1e-7", "--analyst", "bob"); code != exitUsage || !strings.Contains(e, "--analyst names who charges --ledger") {
		t.Errorf("--analyst without --ledger: exit %d, %q", code, e)
	}

	out, e, code = darrm(t, "", "ledger", "show", led, "--format", "json")
	var show struct {
		Analysts []struct {
			Analyst string
			Runs    int
			Labels  int
			Share   float64
		}
		Rows []struct{ Analyst string }
	}
	if code != 0 {
		t.Fatal(e)
	}
	if err := json.Unmarshal([]byte(out), &show); err != nil {
		t.Fatal(err)
	}
	if len(show.Analysts) != 2 || show.Analysts[0].Analyst != "alice" || show.Analysts[0].Labels != aliceLabels || show.Analysts[0].Share != 0.5 ||
		show.Analysts[1].Analyst != "bob" || show.Analysts[1].Runs != 0 || len(show.Rows) != 1 || show.Rows[0].Analyst != "alice" {
		t.Errorf("ledger show: %s; want alice's %d labels of her share 0.5, bob's share unused, and alice's run", out, aliceLabels)
	}
	if out, _, _ := darrm(t, "", "ledger", "show", led); !strings.Contains(out, "alice: 1 run, ") || !strings.Contains(out, "of a share 0.5") {
		t.Errorf("ledger show's table: %s", out)
	}
}
