//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darrm/darrm/internal/statedir"
)

// TestLedgerWitnessFiles: a FIFO given as --witness is refused at once
// (exit 2), not waited on; a checkpoint whose ensemble holds ESC and NUL
// is refused, its value printed escaped; a team's witness folder
// (DARRM_WITNESS_DIR, or --witness-dir) refuses a ledger put back from a
// copy taken before a release, for an analyst with no record.
func TestLedgerWitnessFiles(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	dir := t.TempDir()
	votes := voteFile(t, dir, 5, func(i int) int { return i % 12 })
	team := filepath.Join(dir, "team")
	if err := os.Mkdir(team, 0o755); err != nil {
		t.Fatal(err)
	}
	led := filepath.Join(dir, "k.ledger")
	t.Setenv("DARRM_WITNESS_DIR", team)
	if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "100", "--budget-delta", "0.5"); code != 0 {
		t.Fatal(e)
	}
	t.Setenv("DARRM_WITNESS_DIR", "")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	start := time.Now()
	if _, e, code := darrm(t, "", "ledger", "verify", led, "--witness", fifo); code != 2 || !strings.Contains(e, "not a regular file") || time.Since(start) > 10*time.Second {
		t.Errorf("a FIFO as --witness: exit %d after %v: %s", code, time.Since(start), e)
	}
	cp := filepath.Join(dir, "k.checkpoint")
	if _, e, code := darrm(t, "", "ledger", "checkpoint", led, "--out", cp); code != 0 {
		t.Fatal(e)
	}
	b, _ := os.ReadFile(cp)
	bad := filepath.Join(dir, "bad.checkpoint")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(b), `"ensemble":"`, `"ensemble":"\u001b[31m\u0000`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := darrm(t, "", "ledger", "verify", led, "--witness", bad); code != 2 || strings.ContainsAny(e, "\x1b\x00") || !strings.Contains(e, `\x1b[31m\x00`) {
		t.Errorf("a checkpoint whose ensemble holds ESC and NUL: exit %d: %q", code, e)
	}

	backup, _ := os.ReadFile(led)
	if _, e, code := darrm(t, "", "aggregate", votes, "--no-cache", "--mechanism", "subsample", "--ledger", led, "--out", filepath.Join(dir, "a.csv"), "--witness-dir", team); code != 0 {
		t.Fatal(e)
	}
	if err := os.WriteFile(led, backup, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(statedir.Env, t.TempDir()) // a fresh analyst
	t.Setenv("DARRM_WITNESS_DIR", team)
	if _, e, code := darrm(t, "", "aggregate", votes, "--no-cache", "--mechanism", "subsample", "--ledger", led, "--out", filepath.Join(dir, "b.csv")); code != 2 || !strings.Contains(unwrapped(e), "is behind witness") {
		t.Errorf("the ledger put back, for a fresh analyst with the team's folder: exit %d: %s", code, e)
	}
}
