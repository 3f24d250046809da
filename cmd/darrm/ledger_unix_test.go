//go:build unix

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darrm/darrm/ledger"
)

// waitExitWithin is waitExit with a shorter limit, for runs that must end
// promptly (a run that does not is killed and fails the test).
func waitExitWithin(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Errorf("%v did not end within %v", cmd.Args, limit)
		return -1
	}
}

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
	led := newLedgerFile(t, dir, "record-lock")
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
