//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Helpers of the tests that run darrm as a child process
// (GO_DARRM_MAIN=1, see TestMain) and of their vote files and ledgers.

// child returns a command that runs darrm with args.
func child(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "GO_DARRM_MAIN=1")
	return cmd
}

// inShell returns a command that runs darrm with args after the shell
// commands pre (e.g. a ulimit).
func inShell(pre string, args ...string) *exec.Cmd {
	cmd := exec.Command("sh", append([]string{"-c", pre + `; exec "$0" "$@"`, os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), "GO_DARRM_MAIN=1")
	return cmd
}

// waitExit waits for cmd (started) and returns its exit status; a run that
// does not end within a minute is killed and fails the test (a hang).
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	return waitExitWithin(t, cmd, time.Minute)
}

// waitExitWithin is waitExit with another limit, for runs that must end
// promptly.
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
		t.Fatalf("%v did not end within %v", cmd.Args, limit)
		return -1
	}
}

// waitReadable waits until the pipe r holds data, or its writers have
// closed it; a pipe that stays empty for a minute fails the test (a hang).
func waitReadable(t *testing.T, r *os.File) {
	t.Helper()
	rc, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if cerr := rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err = unix.Poll(fds, int(time.Minute/time.Millisecond))
			if err != unix.EINTR {
				return
			}
		}
	}); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("nothing written to the pipe within a minute")
	}
}

// smallVotes writes n rows of K = 3 votes, for releases by subsampling
// (which needs no gamma).
func smallVotes(t *testing.T, dir string, n int) string {
	t.Helper()
	path := filepath.Join(dir, "votes.csv")
	if err := os.WriteFile(path, []byte(strings.Repeat("1,1,0\n", n)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// binding3 are the parameters of the ensembles of smallVotes: K = 3
// teachers, each (0.1, 1e-5)-DP, a fresh mechanism per query on shared
// data. A release of its votes states the teachers' guarantee (stated).
var binding3 = []string{"--K", "3", "--eps", "0.1", "--Delta", "1e-5", "--kind", "per-query", "--partition", "shared"}

// newLedgerFile creates a ledger with a large budget for ensemble name,
// and puts that ensemble's metadata header (binding3's) on the vote file
// votes, whose releases the ledger then takes: it refuses votes without
// a header.
func newLedgerFile(t *testing.T, dir, name, votes string) string {
	t.Helper()
	led := filepath.Join(dir, name+".ledger")
	if _, e, code := darrm(t, "", append([]string{"ledger", "init", led, "--ensemble", name, "--budget-eps", "1e9", "--budget-delta", "0.5"}, binding3...)...); code != 0 {
		t.Fatal(e)
	}
	withHeader(t, votes, provenance.Binding{Ensemble: name, Teachers: provenance.Teachers{K: 3, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes))
	return led
}

// withHeader puts the metadata header meta on the first line of the vote
// file at path.
func withHeader(t *testing.T, path string, meta *votefile.Meta) {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, err := meta.AppendHeader(nil, votefile.FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(head, body...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recorded returns the labels the ledger at path counts.
func recorded(t *testing.T, path string) int {
	t.Helper()
	l, err := ledger.Open(context.Background(), path, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Spent().Steps
}

// solvedCache solves K = 3, m = 1 into a cache folder in dir and
// returns the folder and its entry.
func solvedCache(t *testing.T, dir string) (cache, entry string) {
	t.Helper()
	cache = filepath.Join(dir, "cache")
	if _, e, code := darrm(t, "", "solve", "--K", "3", "--m", "1", "--cache-dir", cache); code != 0 {
		t.Fatal(e)
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "*.json"))
	if len(entries) != 1 {
		t.Fatalf("cache entries %v", entries)
	}
	return cache, entries[0]
}
