package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/statedir"
)

// TestTinyLaplaceScale: a Laplace scale whose per-query eps 2/b is vacuous
// or overflows (issue 40, item 9) is refused before any label or header is
// written, with exit 2 and the flag named, with a ledger or without one;
// the ledger is left as it was.
func TestTinyLaplaceScale(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, t.TempDir())
	counts := countsFile(t, dir, "counts.csv", 5, func(i int) []int { return plurality(200, i%10) })
	led := filepath.Join(dir, "pate.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", counts, "--budget-eps", "10", "--budget-delta", "1e-3"); code != 0 {
		t.Fatal(e)
	}
	before, err := os.ReadFile(led)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "labels.csv")
	for _, scale := range []string{"1e-310", "1e-300", "0.01"} {
		for _, extra := range [][]string{nil, {"--ledger", led}} {
			args := append([]string{"aggregate", counts, "--mechanism", "lnmax", "--laplace-scale", scale, "--out", out}, extra...)
			_, e, code := darrm(t, "", args...)
			if code != exitUsage || !strings.Contains(e, "--laplace-scale = "+scale) || !strings.Contains(e, "must be in [0.02, 1e+15]") {
				t.Errorf("%v: exit %d: %s", args, code, e)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%v: wrote %s", args, out)
			}
		}
	}
	if after, _ := os.ReadFile(led); !bytes.Equal(before, after) {
		t.Errorf("the ledger changed:\n%s", after)
	}
}

// TestOneVoteNeedsKeyedHash: the one-vote relation holds only on keyed-hash
// shares (issue 40, item 2): a one-vote header with file-position (or
// shared) shares is refused by a release and by ledger init, with exit 2
// and the reason, and so are ledger init's flags that assert it.
func TestOneVoteNeedsKeyedHash(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, t.TempDir())
	orig, err := os.ReadFile("../../testdata/votes-K11-one-vote.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"file-position", "shared"} {
		votes := filepath.Join(dir, p+".csv")
		os.WriteFile(votes, bytes.Replace(orig, []byte(`"partition":"keyed-hash"`), []byte(`"partition":"`+p+`"`), 1), 0o644)
		out := filepath.Join(dir, "labels.csv")
		led := filepath.Join(dir, p+".ledger")
		for _, args := range [][]string{
			{"aggregate", votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--delta", "1e-5", "--seed", "1", "--out", out},
			{"aggregate", votes, "--mechanism", "gnmax", "--eps", "0.1", "--Delta", "1e-5", "--seed", "1", "--out", out},
			{"ledger", "init", led, "--votes", votes, "--budget-eps", "20", "--budget-delta", "1e-3"},
			{"ledger", "init", led, "--ensemble", "e", "--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--relation", "one-vote", "--kind", "fixed", "--partition", p, "--budget-eps", "20", "--budget-delta", "1e-3"},
		} {
			_, e, code := darrm(t, "", args...)
			if code != exitUsage || !strings.Contains(e, "the one-vote relation does not hold on") {
				t.Errorf("%v: exit %d: %s", args, code, e)
			}
			for _, f := range []string{out, led} {
				if _, err := os.Stat(f); err == nil {
					t.Errorf("%v: wrote %s", args, f)
				}
			}
		}
	}
}

// TestHeaderlessAssertsNothing: stripping the metadata header of
// shared-data votes does not buy the one-vote cost (issue 40, item 4):
// without --partition keyed-hash every one-vote mechanism refuses votes
// without a header, and a ledger bound to a one-vote ensemble refuses them
// even with it; the assertion is recorded in the labels' header.
func TestHeaderlessAssertsNothing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, t.TempDir())
	t.Setenv("DARRM_CACHE_DIR", t.TempDir())
	raw, err := os.ReadFile("../../testdata/votes-K11.csv")
	if err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.csv")
	os.WriteFile(plain, raw[bytes.IndexByte(raw, '\n')+1:], 0o644)
	counts := filepath.Join(dir, "counts.csv")
	os.WriteFile(counts, []byte("240,5,5,0\n200,30,10,10\n"), 0o644)
	led := filepath.Join(dir, "one-vote.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", "../../testdata/votes-K11-one-vote.csv", "--budget-eps", "20", "--budget-delta", "1e-3", "--filter", "simple"); code != 0 {
		t.Fatal(e)
	}
	before, _ := os.ReadFile(led)
	out := filepath.Join(dir, "labels.csv")
	releases := [][]string{
		{"aggregate", plain, "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--delta", "1e-5"},
		{"aggregate", plain, "--mechanism", "gnmax", "--eps", "0.1", "--Delta", "1e-5"},
		{"aggregate", counts, "--input-format", "counts", "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5"},
		{"aggregate", counts, "--input-format", "counts", "--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5"},
		{"aggregate", counts, "--input-format", "counts", "--mechanism", "lnmax", "--laplace-scale", "20"},
	}
	for _, r := range releases {
		args := append(r, "--seed", "1", "--out", out)
		if _, e, code := darrm(t, "", args...); code != exitUsage || !strings.Contains(e, "has no metadata header") || !strings.Contains(e, "--partition keyed-hash") {
			t.Errorf("%v: exit %d: %s", args, code, e)
		}
		if _, e, code := darrm(t, "", append(args, "--partition", "file-position")...); code != exitUsage || !strings.Contains(e, "does not hold on file-position shares") {
			t.Errorf("%v --partition file-position: exit %d: %s", args, code, e)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: wrote labels", args)
		}
		asserted := append(args, "--partition", "keyed-hash")
		if _, e, code := darrm(t, "", asserted...); code != 0 {
			t.Errorf("%v: exit %d: %s", asserted, code, e)
		} else if head, _ := os.ReadFile(out); !bytes.Contains(head, []byte(`"relation":"one-vote","partition":"keyed-hash"`)) {
			t.Errorf("%v: the labels' header does not record the assertion: %.300s", asserted, head)
		}
		os.Remove(out)
	}
	for _, r := range releases[:2] {
		args := append(r, "--partition", "keyed-hash", "--ledger", led, "--out", out)
		if _, e, code := darrm(t, "", args...); code != exitUsage || !strings.Contains(e, "has no metadata header") {
			t.Errorf("%v: exit %d: %s", args, code, e)
		}
	}
	if after, _ := os.ReadFile(led); !bytes.Equal(before, after) {
		t.Errorf("the ledger changed")
	}
}

// TestAccountPATEHeaderAgrees: account pate --labels refuses a label
// header whose settings do not give its own stated per-label eps (issue
// 40, item 3), or that repeats a key (item 10), with exit 2, naming the
// field and the values.
func TestAccountPATEHeaderAgrees(t *testing.T) {
	dir := t.TempDir()
	counts := countsFile(t, dir, "counts.csv", 20, func(i int) []int { return plurality(200, i%10) })
	labels := filepath.Join(dir, "labels.csv")
	if _, e, code := darrm(t, "", "aggregate", counts, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--seed", "1", "--out", labels); code != 0 {
		t.Fatal(e)
	}
	raw, _ := os.ReadFile(labels)
	for _, tc := range []struct{ from, to, want string }{
		{`"sigma2":40`, `"sigma2":400`, "settings (sigma2 = 400, noise discrete) give eps = "},
		{`"sigma2":40`, `"sigma2":40,"sigma2":400`, `"sigma2": repeated key`},
	} {
		edited := filepath.Join(dir, "edited.csv")
		os.WriteFile(edited, bytes.Replace(raw, []byte(tc.from), []byte(tc.to), 1), 0o644)
		out, e, code := darrm(t, "", "account", "pate", counts, "--labels", edited, "--target-delta", "1e-5", "--seed", "1", "--release-estimate")
		if code != exitUsage || !strings.Contains(e, tc.want) || out != "" {
			t.Errorf("%s -> %s: exit %d: %s%s", tc.from, tc.to, code, out, e)
		}
	}
	if _, e, code := darrm(t, "", "account", "pate", counts, "--labels", labels, "--target-delta", "1e-5", "--seed", "1", "--release-estimate"); code != 0 {
		t.Errorf("the labels as written: exit %d: %s", code, e)
	}
}

// TestVacuousSettings: settings under which a guarantee or a step says
// nothing are refused before any work, with exit 2, naming the flag, the
// value and the rule (issue 40, item 10): a per-query delta above 1/2, a
// threshold below 0 or beyond K + 10·sigma1, and a JSON id beyond float64.
func TestVacuousSettings(t *testing.T) {
	dir := t.TempDir()
	counts := countsFile(t, dir, "counts.csv", 5, func(i int) []int { return plurality(200, i%10) })
	out := filepath.Join(dir, "labels.csv")
	ids := filepath.Join(dir, "ids.jsonl")
	os.WriteFile(ids, []byte("{\"id\":1,\"votes\":[1,0,1]}\n{\"id\":1e999,\"votes\":[1,0,1]}\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"aggregate", counts, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "0.99"}, "--delta = 0.99: must be"},
		{[]string{"aggregate", "../../testdata/votes-K11.csv", "--delta", "0.99"}, "--delta = 0.99: must be"},
		{[]string{"account", "pate", counts, "--sigma2", "40", "--target-delta", "0.99"}, "--target-delta = 0.99: must be"},
		{[]string{"aggregate", counts, "--mechanism", "confident-gnmax", "--threshold", "-1", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5"}, "--threshold = -1: must be in [0, K + 10·sigma1]"},
		{[]string{"aggregate", counts, "--mechanism", "confident-gnmax", "--threshold", "1e300", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5"}, "--threshold = 1e+300: must be in [0, K + 10·sigma1]"},
		{[]string{"account", "pate", counts, "--threshold", "1e300", "--sigma1", "150", "--sigma2", "40", "--target-delta", "1e-5"}, "--threshold = 1e+300"},
		{[]string{"aggregate", ids, "--mechanism", "subsample", "--eps", "0.1", "--Delta", "1e-5", "--no-cache"}, "line 2"},
	} {
		o, e, code := darrm(t, "", append(tc.args, "--seed", "1", "--out", out)...)
		if tc.args[0] == "account" {
			o, e, code = darrm(t, "", tc.args...)
		}
		if code != exitUsage || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d: %s%s", tc.args, code, o, e)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", tc.args, out)
			os.Remove(out)
		}
	}
}

// TestAccountPATELedgerReference: with --ledger the releases the ledger
// charged are the reference for the label header (issue 40, item 3): a
// header edited consistently (sigma2 and eps together) agrees with itself
// but with no charged release, and is refused with exit 2.
func TestAccountPATELedgerReference(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, t.TempDir())
	counts := countsFile(t, dir, "counts.csv", 20, func(i int) []int { return plurality(200, i%10) })
	led := filepath.Join(dir, "pate.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", counts, "--budget-eps", "100", "--budget-delta", "1e-3"); code != 0 {
		t.Fatal(e)
	}
	labels := filepath.Join(dir, "labels.csv")
	if _, e, code := darrm(t, "", "aggregate", counts, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--ledger", led, "--out", labels); code != 0 {
		t.Fatal(e)
	}
	acct := []string{"account", "pate", counts, "--target-delta", "1e-5", "--seed", "1", "--release-estimate", "--ledger", led}
	if _, e, code := darrm(t, "", append(acct, "--labels", labels)...); code != 0 {
		t.Fatalf("the labels as charged: exit %d: %s", code, e)
	}
	// The header of a release at sigma2 = 400, which the ledger never charged.
	other := filepath.Join(dir, "other.csv")
	if _, e, code := darrm(t, "", "aggregate", counts, "--mechanism", "gnmax", "--sigma2", "400", "--delta", "1e-5", "--seed", "1", "--out", other); code != 0 {
		t.Fatal(e)
	}
	raw, _ := os.ReadFile(labels)
	forgedHead := strings.SplitN(string(mustRead(t, other)), "\n", 3)[1]
	lines := strings.SplitN(string(raw), "\n", 2)
	forged := filepath.Join(dir, "forged.csv")
	os.WriteFile(forged, []byte(strings.Replace(forgedHead, `"for_release":false`, `"for_release":true`, 1)+"\n"+lines[1]), 0o644)
	if out, e, code := darrm(t, "", append(acct, "--labels", forged)...); code != exitUsage || !strings.Contains(e, "records no release of that mechanism at that guarantee") || out != "" {
		t.Errorf("a header that agrees with itself, not with the ledger: exit %d: %s%s", code, out, e)
	}
	// Without --labels the ledger only takes the charge of a new draw of
	// the smooth-sensitivity release, as its (eps, delta): a zcdp-filter
	// ledger refuses that, and nothing is drawn.
	if _, e, code := darrm(t, "", "account", "pate", counts, "--sigma2", "40", "--target-delta", "1e-5", "--release-estimate", "--ledger", led); code != exitUsage || !strings.Contains(e, "--filter simple") {
		t.Errorf("--ledger without --labels on a zcdp-filter ledger: exit %d: %s", code, e)
	}
}

// TestAccountPATEOtherLedger: labels whose header names the ledger they
// were charged to are refused, exit 2 naming both ids, when --ledger is
// another ledger (issue 55), even one of the same ensemble that charged a
// release of the same settings: its total does not cover them.
func TestAccountPATEOtherLedger(t *testing.T) {
	dir := t.TempDir()
	counts := countsFile(t, dir, "counts.csv", 20, func(i int) []int { return plurality(200, i%10) })
	idOf := regexp.MustCompile(`"ledger":"([0-9a-f]{32})"`)
	// The same ensemble's ledger in two records of it (two state folders):
	// each ledger charges a release of the same settings.
	var leds, labels, ids [2]string
	for i := range leds {
		t.Setenv(statedir.Env, t.TempDir())
		leds[i], labels[i] = filepath.Join(dir, fmt.Sprintf("l%d.ledger", i)), filepath.Join(dir, fmt.Sprintf("labels%d.csv", i))
		if _, e, code := darrm(t, "", "ledger", "init", leds[i], "--votes", counts, "--budget-eps", "100", "--budget-delta", "1e-3"); code != 0 {
			t.Fatal(e)
		}
		if _, e, code := darrm(t, "", "aggregate", counts, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--ledger", leds[i], "--out", labels[i]); code != 0 {
			t.Fatal(e)
		}
		m := idOf.FindSubmatch(mustRead(t, labels[i]))
		if m == nil {
			t.Fatalf("%s names no ledger", labels[i])
		}
		ids[i] = string(m[1])
	}
	acct := []string{"account", "pate", counts, "--target-delta", "1e-5", "--format", "json", "--ledger", leds[1]}
	if _, e, code := darrm(t, "", append(acct, "--labels", labels[1])...); code != 0 {
		t.Fatalf("labels charged to --ledger: exit %d: %s", code, e)
	}
	out, e, code := darrm(t, "", append(acct, "--labels", labels[0])...)
	if code != exitUsage || out != "" || !strings.Contains(e, ids[0]) || !strings.Contains(e, ids[1]) {
		t.Errorf("labels charged to ledger %s, --ledger %s: exit %d: %s%s", ids[0], ids[1], code, out, e)
	}
}
