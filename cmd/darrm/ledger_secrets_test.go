package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/ledger"
)

// TestLedgerLockTimeout: a release, ledger adopt and ledger upgrade on a
// ledger that another run holds give up after --lock-timeout, exit 1
// (a failure, not an interrupt: no signal came), say what they waited
// for, and charge nothing; --lock-timeout must be positive.
func TestLedgerLockTimeout(t *testing.T) {
	dir := t.TempDir()
	votes := filepath.Join(dir, "votes.csv")
	if err := os.WriteFile(votes, []byte("1,1,0\n0,1,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	led := newLedgerFile(t, dir, "held", votes)
	held, err := ledger.Open(context.Background(), led, ledger.Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for _, args := range [][]string{
		{"aggregate", votes, "--mechanism", "subsample", "--no-cache", "--ledger", led, "--lock-timeout", "200ms"},
		{"ledger", "adopt", led, "--lock-timeout", "200ms"},
	} {
		out, e, code := darrm(t, "", args...)
		if code != exitFailure || out != "" || !strings.Contains(e, "waiting for the lock on ledger "+led) ||
			!strings.Contains(e, "gave up after waiting 200ms for a lock held by another darrm run") || !strings.Contains(e, "--lock-timeout") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", args[:2], code, out, e)
		}
	}
	if lines := held.Lines(); lines != 1 {
		t.Errorf("the ledger has %d lines: a run that gave up wrote", lines)
	}
	for _, v := range []string{"0s", "-1s"} {
		if _, e, code := darrm(t, "", "ledger", "show", led, "--lock-timeout", v); code != exitUsage || !strings.Contains(e, "--lock-timeout = "+v+": must be positive") {
			t.Errorf("--lock-timeout %s: exit %d, %q", v, code, e)
		}
	}
}

// TestLedgerURLPassword: a command given a ledger's URL with a password
// warns once that others can read it, naming ~/.pgpass and PGPASSWORD,
// and never prints the password; a URL without one is not warned of.
func TestLedgerURLPassword(t *testing.T) {
	const pw = "s3cret/with?odd#chars"
	for _, c := range []struct {
		args []string
		warn bool
	}{
		{[]string{"ledger", "show", "postgres://alice:" + pw + "@127.0.0.1:1/db?ledger=x"}, true},
		{[]string{"ledger", "verify", "postgres://alice@127.0.0.1:1/db?password=" + strings.ReplaceAll(pw, "/", "%2F") + "&ledger=x"}, true},
		{[]string{"ledger", "show", "postgres://alice@127.0.0.1:1/db?ledger=x"}, false},
	} {
		_, e, code := darrm(t, "", c.args...)
		n := strings.Count(e, "holds a password, which other users of this machine can read")
		switch {
		case code == exitOK:
			t.Errorf("%s: exit 0: %s", c.args[2], e)
		case c.warn && (n != 1 || !strings.Contains(e, "~/.pgpass or PGPASSWORD")), !c.warn && n != 0:
			t.Errorf("%s: warned %d times: %s", c.args[2], n, e)
		case strings.Contains(e, "s3cret") || strings.Contains(e, "odd#chars"):
			t.Errorf("%s: the password shows: %s", c.args[2], e)
		}
	}
}
