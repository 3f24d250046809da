//go:build unix

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darrm/darrm/ledger"
)

// recordLock returns the lock file of ensemble's record in the tests'
// state folder (TestMain).
func recordLock(ensemble string) string {
	sum := sha256.Sum256([]byte(ensemble))
	return filepath.Join(os.Getenv(ledger.EnvStateDir), "ledgers", hex.EncodeToString(sum[:16])+".lock")
}

// TestRecordLockInterrupt: a release that waits for the lock of its
// ledger's record (held by another run during its check of the whole
// ledger) says so and ends with exit status 130 on SIGINT or SIGTERM.
func TestRecordLockInterrupt(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 10)
	led := newLedgerFile(t, dir, "record-lock", votes)
	f, err := os.OpenFile(recordLock("record-lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := child("aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", led, "--out", filepath.Join(dir, "labels.csv"))
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !strings.Contains(stderr.String(), "waiting"); time.Sleep(10 * time.Millisecond) {
		}
		cmd.Process.Signal(sig)
		if code := waitExitWithin(t, cmd, 10*time.Second); code != exitInterrupted || !strings.Contains(stderr.String(), "waiting for the lock on the record of ensemble record-lock") {
			t.Errorf("%v while the record is held: exit %d: %s", sig, code, stderr.String())
		}
	}
}

// readOnlyDir returns a folder that darrm cannot write to: a folder
// without write permission, or, for root, whom permissions do not stop, a
// place under /sys where no folder can be made; the test is skipped where
// there is none.
func readOnlyDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(dir, 0o500)
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if f, err := os.Create(filepath.Join(dir, "probe")); err == nil {
		f.Close()
		dir = "/sys/darrm-state-test"
		if err := os.Mkdir(dir, 0o700); err == nil || !os.IsPermission(err) {
			os.Remove(dir)
			t.Skip("no folder here that this user cannot write")
		}
	}
	return dir
}

// TestLedgerSmallerRefusals: a damaged record is bad input (exit 2, as
// docs/aggregate.md's table says), and ledger show prints the ledger with
// a warning all the same; a file that is no ledger is said to be none; an
// upgrade of a ledger of the current version says so and exits 0; init
// --replace prints the record it replaces; and a state folder that darrm
// cannot write names DARRM_STATE_DIR.
func TestLedgerSmallerRefusals(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(ledger.EnvStateDir, t.TempDir())
	votes := smallVotes(t, dir, 10)
	led := newLedgerFile(t, dir, "smaller", votes)
	release := []string{"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--out", filepath.Join(dir, "labels.csv")}
	if _, e, code := darrm(t, "", append(release, "--ledger", led)...); code != 0 {
		t.Fatalf("release: exit %d: %s", code, e)
	}
	record := strings.TrimSuffix(recordLock("smaller"), ".lock") + ".json"
	good, _ := os.ReadFile(record)
	os.WriteFile(record, []byte("{not a record"), 0o600)
	if _, e, code := darrm(t, "", append(release, "--ledger", led)...); code != exitUsage || !strings.Contains(e, "ledger record") {
		t.Errorf("damaged record: exit %d: %s", code, e)
	}
	if out, e, code := darrm(t, "", "ledger", "show", led); code != 0 || !strings.Contains(e, "warning") || !strings.Contains(out, "subsample") {
		t.Errorf("ledger show with a damaged record: exit %d:\n%s%s", code, out, e)
	}
	os.WriteFile(record, good, 0o600)

	if _, e, code := darrm(t, "", append(release, "--ledger", votes)...); code != exitUsage || !strings.Contains(e, "not a ledger") || strings.Contains(e, "good copy") {
		t.Errorf("--ledger votes.csv: exit %d: %s", code, e)
	}

	out, e, code := darrm(t, "", "ledger", "upgrade", led)
	if code != 0 || !strings.Contains(out, "nothing to upgrade") {
		t.Errorf("upgrade of a current ledger: exit %d: %s%s", code, out, e)
	}

	again := filepath.Join(dir, "again.ledger")
	out, e, code = darrm(t, "", append([]string{"ledger", "init", again, "--ensemble", "smaller", "--budget-eps", "1e9", "--budget-delta", "0.5", "--replace"}, binding3...)...)
	if code != 0 || !strings.Contains(out, "it replaces the record of ledger "+led) {
		t.Errorf("init --replace: exit %d: %s%s", code, out, e)
	}

	t.Setenv(ledger.EnvStateDir, readOnlyDir(t))
	if _, e, code := darrm(t, "", append(release, "--ledger", again)...); code == 0 || !strings.Contains(e, "DARRM_STATE_DIR") {
		t.Errorf("a state folder that cannot be written: exit %d: %s", code, e)
	}
}
