package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/votefile"
)

// TestLedgerWitness: a ledger file restored from a copy taken before
// later releases passes ledger verify and takes releases from an analyst
// with no record; a checkpoint (ledger checkpoint) or a label file of a
// later release, given with --witness, refuses it in aggregate, ledger
// verify and ledger show (exit 2, no labels written), while a checkpoint
// of the copy's own state, older than the ledger, lets the release go on.
// A file that is no witness, and --witness without --ledger, are refused
// naming the flag.
func TestLedgerWitness(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	dir := t.TempDir()
	votes := voteFile(t, dir, 5, func(i int) int { return i % 12 })
	led := filepath.Join(dir, "k.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "100", "--budget-delta", "0.5"); code != 0 {
		t.Fatal(e)
	}
	release := func(out string, more ...string) (string, int) {
		t.Helper()
		_, stderr, code := darrm(t, "", append([]string{"aggregate", votes, "--no-cache", "--mechanism", "subsample", "--ledger", led, "--out", out}, more...)...)
		return stderr, code
	}
	if e, code := release(filepath.Join(dir, "a.csv")); code != 0 {
		t.Fatal(e)
	}
	old := filepath.Join(dir, "old.checkpoint")
	if out, e, code := darrm(t, "", "ledger", "checkpoint", led, "--out", old); code != 0 || !strings.Contains(unwrapped(out), "3 lines") || !strings.Contains(out, "--witness") {
		t.Fatalf("ledger checkpoint: exit %d:\n%s%s", code, out, e)
	}
	backup, _ := os.ReadFile(led)
	later := filepath.Join(dir, "b.csv")
	if e, code := release(later); code != 0 {
		t.Fatal(e)
	}
	f, err := os.Open(later)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := votefile.NewLabelReader(f, later)
	f.Close()
	if err != nil || lr.Meta() == nil || lr.Meta().LedgerLines != 4 || lr.Meta().LedgerHead == "" {
		t.Fatalf("the label file's header: %+v, %v; want the ledger's line 4, its reservation", lr.Meta(), err)
	}
	cp := filepath.Join(dir, "team.checkpoint")
	for range 2 { // written, then moved on over itself
		if out, e, code := darrm(t, "", "ledger", "checkpoint", led, "--out", cp); code != 0 || !strings.Contains(unwrapped(out), "5 lines") {
			t.Fatalf("ledger checkpoint: exit %d:\n%s%s", code, out, e)
		}
	}
	if _, e, code := darrm(t, "", "ledger", "verify", led, "--witness", cp, "--witness", later, "--witness", old); code != 0 ||
		!strings.Contains(e, "extends witness "+cp+": its line 5 is the one") || !strings.Contains(e, "extends witness "+old+": its line 3 is the one") {
		t.Errorf("ledger verify against its witnesses: exit %d: %s", code, e)
	}

	// The copy put back, for an analyst with no record of it.
	if err := os.WriteFile(led, backup, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(statedir.Env, t.TempDir())
	if _, e, code := darrm(t, "", "ledger", "verify", led); code != 0 {
		t.Errorf("the copy restored, verified without a witness: exit %d: %s", code, e)
	}
	for _, w := range []string{cp, later} {
		out := filepath.Join(dir, "c.csv")
		e, code := release(out, "--witness", w)
		if code != exitUsage || !strings.Contains(e, "ledger "+led+" is behind witness "+w) || !strings.Contains(e, "it has 3 lines") {
			t.Errorf("a release on the copy restored, --witness %s: exit %d: %s", w, code, e)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--witness %s: labels written", w)
		}
		for _, cmd := range []string{"verify", "show"} {
			if _, e, code := darrm(t, "", "ledger", cmd, led, "--witness", w); code != exitUsage || !strings.Contains(e, "is behind witness "+w) {
				t.Errorf("ledger %s --witness %s: exit %d: %s", cmd, w, code, e)
			}
		}
	}
	if after, _ := os.ReadFile(led); string(after) != string(backup) {
		t.Errorf("the refused releases changed the ledger")
	}
	if e, code := release(filepath.Join(dir, "d.csv"), "--witness", old); code != 0 {
		t.Errorf("a fresh analyst, --witness of an older state: exit %d: %s", code, e)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a vote file", []string{"aggregate", votes, "--no-cache", "--mechanism", "subsample", "--ledger", led, "--out", filepath.Join(dir, "e.csv"), "--witness", votes},
			`invalid argument "` + votes + `" for "--witness" flag: neither a checkpoint`},
		{"no ledger", []string{"aggregate", votes, "--no-cache", "--mechanism", "subsample", "--out", filepath.Join(dir, "e.csv"), "--witness", cp},
			"--witness is a state --ledger must extend"},
		{"labels over the witness", []string{"aggregate", votes, "--no-cache", "--mechanism", "subsample", "--ledger", led, "--out", later, "--witness", later},
			"is the --witness file"},
		{"checkpoint over a vote file", []string{"ledger", "checkpoint", led, "--out", votes}, "exists already and is no checkpoint"},
		{"checkpoint to stdout", []string{"ledger", "checkpoint", led, "--out", "-"}, "a checkpoint is a file"},
	} {
		before, _ := os.ReadFile(votes)
		kept, _ := os.ReadFile(later)
		if _, e, code := darrm(t, "", tc.args...); code != exitUsage || !strings.Contains(e, tc.want) {
			t.Errorf("%s: exit %d: %s; want exit 2 saying %q", tc.name, code, e, tc.want)
		}
		after, _ := os.ReadFile(votes)
		if now, _ := os.ReadFile(later); string(after) != string(before) || string(now) != string(kept) {
			t.Errorf("%s: the vote file or the label file changed", tc.name)
		}
	}
}
