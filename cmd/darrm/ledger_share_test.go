package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/statedir"
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
	t.Setenv(statedir.Env, filepath.Join(dir, "state"))
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
	// A share that allows no step of the labels declared is refused,
	// named, with why: its analyst could release nothing.
	none := filepath.Join(dir, "none.ledger")
	declared := []string{"ledger", "init", none, "--votes", votes, "--budget-eps", "1", "--budget-delta", "1e-5",
		"--mechanism", "darrm-one-vote", "--target-eps", "0.1", "--delta", "1e-7", "--share", "alice=0.05", "--share", "bob=0.95"}
	for _, filter := range [][]string{nil, {"--filter", "simple"}} {
		if _, e, code := darrm(t, "", append(declared, filter...)...); code != exitUsage || !strings.Contains(unwrapped(e), "--share alice=0.05 allows no label") {
			t.Errorf("a share of no label (%v): exit %d, %q; want %d, the share named", filter, code, e, exitUsage)
		}
		if _, err := os.Stat(none); !os.IsNotExist(err) {
			t.Errorf("a refused ledger init left %s (%v)", none, err)
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
	// Her share stopped her, not the budget: the status says so, and so
	// does the error the run ends with.
	if doc.Ledger.Analyst != "alice" || !doc.Ledger.ShareBound || !strings.Contains(unwrapped(e), `analyst "alice"'s share of ledger`) {
		t.Errorf("alice's release: ledger status %+v, %q; want her share named as what bounds her", doc.Ledger, e)
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
	// An empty --ledger (a script's unset variable) releases nothing
	// uncounted, from either command that charges one.
	for _, args := range [][]string{
		{"aggregate", votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.1", "--delta", "1e-7", "--ledger", "", "--out", filepath.Join(t.TempDir(), "l.csv")},
		{"account", "pate", votes, "--target-delta", "1e-5", "--sigma2", "40", "--ledger", ""},
	} {
		if out, e, code := darrm(t, "", args...); code != exitUsage || !strings.Contains(e, `--ledger "": names no ledger`) || out != "" {
			t.Errorf("%s --ledger \"\": exit %d, %q%q", args[0], code, out, e)
		}
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

// TestPlanShare: plan --share --analyst plans GNMax for alice's share
// 0.4 of a new ledger and prints the ledger init that makes it, shares
// included; run as printed, that ledger lets alice release exactly the
// labels the plan says, the next refused, and bob his share; ledger show
// and the release's summary state each analyst's spend against their
// share. On a ledger open to any use, an analyst's spend is stated at
// the share's delta. Bad --share and --analyst values are refused naming
// the flag.
func TestPlanShare(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, filepath.Join(dir, "state"))
	budget := []string{"--budget-eps", "2", "--budget-delta", "1e-5"}
	planArgs := append([]string{"plan", "--mechanism", "gnmax", "--K", "250", "--classes", "10", "--queries", "120", "--for", "ledger",
		"--share", "alice=0.4", "--share", "bob=0.6", "--analyst", "alice", "--format", "json"}, budget...)
	out, e, code := darrm(t, "", planArgs...)
	if code != 0 {
		t.Fatal(e)
	}
	var p struct {
		Sigma2     float64
		Ledger     int `json:"ledger_queries"`
		All        int `json:"ledger_all_queries"`
		Share      float64
		Analyst    string
		LedgerInit string `json:"ledger_init"`
	}
	decode(t, out, &p)
	if p.Ledger < 120 || p.Ledger != int(0.4*float64(p.All)) || p.Share != 0.4 || p.Analyst != "alice" ||
		!strings.Contains(p.LedgerInit, "--share alice=0.4 --share bob=0.6") {
		t.Fatalf("plan: %s; want alice's 120 or more, floor(0.4 x the ledger's), and an init with the shares", out)
	}
	// The votes: one more row than the ledger allows, under a header
	// that binds the ledger.
	var votes strings.Builder
	votes.WriteString(`# {"darrm-votes":1,"ensemble":"plan-share","K":250,"classes":10,"layout":"counts","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":250,"source":{"method":"none"}}]}` + "\n")
	for range p.All + 1 {
		votes.WriteString("160,10,10,10,10,10,10,10,10,10\n")
	}
	vf := filepath.Join(dir, "votes.csv")
	if err := os.WriteFile(vf, []byte(votes.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	led := filepath.Join(dir, "team.ledger")
	words := strings.Fields(p.LedgerInit)
	if words[0] != "darrm" {
		t.Fatalf("ledger_init %q", p.LedgerInit)
	}
	for i, w := range words {
		switch w {
		case "LEDGER":
			words[i] = led
		case "VOTES":
			words[i] = vf
		}
	}
	out, e, code = darrm(t, "", words[1:]...)
	if code != 0 {
		t.Fatalf("the printed init %q: %s", p.LedgerInit, e)
	}
	if want := fmt.Sprintf(`"alice" 0.4: %d of its declared use's %d labels`, p.Ledger, p.All); !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
		t.Errorf("ledger init: %s; want the shares stated (%s)", out, want)
	}
	sigma2 := strconv.FormatFloat(p.Sigma2, 'g', -1, 64)
	release := func(analyst string) (int, ledger.Balance, int) {
		t.Helper()
		out, e, code := darrm(t, "", "aggregate", vf, "--mechanism", "gnmax", "--classes", "10", "--sigma2", sigma2, "--delta", "1e-5",
			"--ledger", led, "--analyst", analyst, "--out", filepath.Join(dir, analyst+".csv"), "--format", "json")
		var doc struct {
			Released int
			Ledger   ledger.Balance
		}
		if code != 0 && code != exitBudget {
			t.Fatalf("%s's release: exit %d, %s", analyst, code, e)
		}
		decode(t, out, &doc)
		return doc.Released, doc.Ledger, code
	}
	n, st, code := release("alice")
	if n != p.Ledger || code != exitBudget || !st.ShareBound || st.ShareLabels != p.Ledger || st.AnalystSpent == nil || *st.AnalystSpent != *st.Share {
		t.Errorf("alice released %d (exit %d), status %+v; want the plan's %d, her share then spent", n, code, st, p.Ledger)
	}
	if n, _, code := release("alice"); n != 0 || code != exitBudget {
		t.Errorf("alice again: %d released, exit %d; want none, her share spent", n, code)
	}
	bob := int(0.6 * float64(p.All))
	if n, _, code := release("bob"); n != bob || code != exitBudget {
		t.Errorf("bob released %d, exit %d; want his %d", n, code, bob)
	}
	out, e, code = darrm(t, "", "ledger", "show", led, "--format", "json")
	var show struct {
		Analysts []ledger.AnalystSpend
	}
	if code != 0 {
		t.Fatal(e)
	}
	decode(t, out, &show)
	if len(show.Analysts) != 2 {
		t.Fatalf("ledger show: %s", out)
	}
	for i, want := range []int{p.Ledger, bob} {
		if a := show.Analysts[i]; a.Labels != want || a.ShareLabels != want || a.ShareBudget == nil || a.Spent != *a.ShareBudget || a.Spent.Delta != 1e-5 {
			t.Errorf("ledger show, %s: %+v; want %d labels, the whole share spent, at the budget's delta", a.Analyst, a, want)
		}
	}
	if out, _, _ := darrm(t, "", "ledger", "show", led); !strings.Contains(out, fmt.Sprintf("of a share 0.4, %d labels", p.Ledger)) {
		t.Errorf("ledger show's table: %s", out)
	}

	// An open ledger: alice's spend at her share's delta, 0.4 of 1e-5
	// (in doubles, as the ledger scales it).
	share, delta := 0.4, 1e-5
	shareDelta := share * delta
	t.Setenv(statedir.Env, filepath.Join(dir, "state-open"))
	led = filepath.Join(dir, "open.ledger")
	if _, e, code := darrm(t, "", append([]string{"ledger", "init", led, "--votes", vf, "--filter", "gdp-filter", "--share", "alice=0.4"}, budget...)...); code != 0 {
		t.Fatal(e)
	}
	if n, st, _ := release("alice"); n == 0 || st.AnalystSpent == nil || st.AnalystSpent.Delta != shareDelta || st.Share.Delta != shareDelta {
		t.Errorf("alice on the open ledger: %d released, status %+v; want her spend at her share's delta %v", n, st, shareDelta)
	}
	out, _, _ = darrm(t, "", "ledger", "show", led, "--format", "json")
	if decode(t, out, &show); len(show.Analysts) != 1 || show.Analysts[0].Spent.Delta != shareDelta {
		t.Errorf("ledger show of the open ledger: %s; want alice's spend at delta %v", out, shareDelta)
	}

	base := []string{"plan", "--mechanism", "gnmax", "--K", "250", "--classes", "10", "--budget-eps", "2", "--budget-delta", "1e-5"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--queries", "120", "--share", "alice=0.4"}, "give --for ledger"},
		{[]string{"--queries", "120", "--for", "ledger", "--share", "alice=0.4", "--share", "bob=0.6"}, `--analyst: give whose --share to plan for, one of "alice", "bob"`},
		{[]string{"--queries", "120", "--for", "ledger", "--share", "alice=0.4", "--analyst", "carol"}, `--analyst "carol" has no --share`},
		{[]string{"--sigma2", "50", "--share", "alice=1.5"}, "--share"},
		{[]string{"--sigma2", "50", "--share", "alice"}, "want NAME=FRACTION"},
		{[]string{"--sigma2", "50", "--analyst", "alice"}, "give the ledger's shares with --share"},
		// The plan's ledger init would refuse bob's share: floor(0.001 x 121) labels.
		{[]string{"--queries", "120", "--for", "ledger", "--share", "alice=0.999", "--share", "bob=0.001", "--analyst", "alice"}, `--share bob=0.001 allows none of the new ledger's 121 labels`},
		{[]string{"--queries", "120", "--for", "ledger", "--filter", "zcdp-filter", "--share", "alice=0.999", "--share", "bob=0.001", "--analyst", "alice"}, `--share bob=0.001 allows none`},
	} {
		if _, e, code := darrm(t, "", append(base, c.args...)...); code != exitUsage || !strings.Contains(e, c.want) {
			t.Errorf("plan %q: exit %d, %q; want %d and %q", c.args, code, e, exitUsage, c.want)
		}
	}
}
