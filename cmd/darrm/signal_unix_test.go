//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalEndsLongWork sends SIGTERM to every long-running command a
// moment after it starts, in the middle of its longest loop (each would
// run for many seconds more), and checks that it stops by itself: exit
// 130, saying it was interrupted, and not by the last resort that ends a
// process still working after the signal (main's stopAfter, here after
// 10 s, not 1 s, so that a loaded machine's scheduling does not count),
// which would mean a loop that never checks its context. The limit on
// each run is a hang's, not a timing.
func TestSignalEndsLongWork(t *testing.T) {
	dir := t.TempDir()
	fakeMNIST(t, 660, 120)
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	gammaOf := func(k int) string {
		var b strings.Builder
		for l := 0; l <= k; l++ {
			fmt.Fprintf(&b, "%g\n", 0.9*float64(max(2*l-k, k-2*l))/float64(k))
		}
		return write(fmt.Sprintf("gamma-K%d.txt", k), b.String())
	}
	g2001 := gammaOf(2001)
	counts := write("counts.csv", strings.Repeat(strings.Repeat("25,", 9)+"25\n", 200000))
	votes101 := write("votes101.csv", strings.Repeat("1,", 100)+"0\n")
	cases := []struct {
		name string
		args []string
	}{
		// The accountant's search of the queries a budget allows: about
		// a hundred exact compositions of a one-bit release.
		{"plan", []string{"plan", "--mechanism", "darrm-one-vote", "--K", "101", "--target-eps", "0.001", "--budget-eps", "10", "--budget-delta", "1e-5"}},
		// The same search before the first label of a release.
		{"aggregate", []string{"aggregate", votes101, "--mechanism", "darrm-one-vote", "--target-eps", "0.001", "--budget-eps", "10", "--budget-delta", "1e-5", "--partition", "keyed-hash", "--out", filepath.Join(dir, "labels.csv")}},
		{"solve", []string{"solve", "--K", "2001", "--m", "5", "--Delta", "0", "--no-cache"}},
		{"verify", []string{"verify", g2001, "--m", "1", "--eps", "0.1", "--Delta", "1e-5"}},
		{"separate", []string{"separate", g2001, "--K", "2001", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--shard", "0/1", "--out", filepath.Join(dir, "part.json")}},
		{"simulate", []string{"simulate", "--K", "11", "--m", "3", "--queries", "2000000000", "--no-cache"}},
		{"account pate", []string{"account", "pate", counts, "--input-format", "counts", "--sigma2", "40", "--threshold", "200", "--sigma1", "150", "--target-delta", "1e-5"}},
		{"teachers train", []string{"teachers", "train", "--dataset", "mnist58", "--epochs", "100000", "--no-cache"}},
		{"transfer", []string{"transfer", "--dataset", "mnist58", "--no-cache", "--queries", "10,100", "--redraws", "100000"}},
		{"shuffleg", []string{"shuffleg", "--task", "mean", "--dataset", "synthetic", "--n", "2000", "--d", "200", "--target-eps", "5", "--epochs", "5000", "--runs", "10"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := child(c.args...)
			cmd.Env = append(cmd.Env, "GO_DARRM_GRACE=10s")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Past the start (a signal before main sets up its handler
			// kills the process by the default action), into the work.
			time.Sleep(500 * time.Millisecond)
			cmd.Process.Signal(syscall.SIGTERM)
			code := waitExitWithin(t, cmd, 30*time.Second)
			msg := stderr.String()
			if code != 130 || !strings.Contains(msg, "interrupted") {
				t.Fatalf("exit %d, want 130 (interrupted): %s", code, msg)
			}
			if strings.Contains(msg, "still working") {
				t.Errorf("stopped by the last resort, not by its own loop: %s", msg)
			}
		})
	}
}

// TestStopAfter: work that never checks its context (a HiGHS solve in C)
// is ended grace after the interrupt, as interrupted, saying so.
func TestStopAfter(t *testing.T) {
	cmd := child()
	cmd.Env = append(cmd.Env, "GO_DARRM_MAIN=0", "GO_DARRM_STOP_AFTER=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := waitExitWithin(t, cmd, 30*time.Second); code != 130 || !strings.Contains(stderr.String(), "still working 10ms after the signal: stopped") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}
