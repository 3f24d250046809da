//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSignalEndsLongWork sends SIGTERM to every long-running command as
// soon as it is in its longest loop (each would run for many seconds
// more; the child says when a function of the loop is on its stack, see
// sayWhenAt), and checks that it stops by itself: exit 130, saying it
// was interrupted, and not by the last resort that ends a process still
// working after the signal (main's stopAfter, here after 10 s, not 1 s,
// so that a loaded machine's scheduling does not count), which would mean
// a loop that never checks its context. The limits on each run are a
// hang's, not a timing.
func TestSignalEndsLongWork(t *testing.T) {
	dir := t.TempDir()
	// Under -short fewer training images: the teachers' training, before
	// transfer's loop, is shorter.
	train := 660
	if testing.Short() {
		train = 220
	}
	fakeMNIST(t, train, 120)
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
	eps := make([]string, 300) // some 37 s of tight searches at K = 16384
	for i := range eps {
		eps[i] = fmt.Sprint(0.001 * float64(i+1))
	}
	targets := strings.Join(eps, ",")
	cases := []struct {
		name string
		// at is a function of the longest loop: the signal is sent once
		// the child is in it.
		at   string
		args []string
	}{
		// The accountant's search of the queries a budget allows: about
		// a hundred exact compositions of a one-bit release.
		{"plan", "accountant.Account.MaxSteps(", []string{"plan", "--mechanism", "darrm-one-vote", "--K", "101", "--target-eps", "0.001", "--budget-eps", "10", "--budget-delta", "1e-5"}},
		// The same search before the first label of a release.
		{"aggregate", "accountant.Account.MaxSteps(", []string{"aggregate", votes101, "--mechanism", "darrm-one-vote", "--target-eps", "0.001", "--budget-eps", "10", "--budget-delta", "1e-5", "--partition", "keyed-hash", "--out", filepath.Join(dir, "labels.csv")}},
		{"solve", "optimal.solveLP(", []string{"solve", "--K", "2001", "--m", "5", "--Delta", "0", "--no-cache"}},
		{"verify", "constraints.Problem.Separate(", []string{"verify", g2001, "--m", "1", "--eps", "0.1", "--Delta", "1e-5"}},
		{"separate", "constraints.Problem.Separate(", []string{"separate", g2001, "--K", "2001", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--shard", "0/1", "--out", filepath.Join(dir, "part.json")}},
		{"simulate", "ensemble.Simulate(", []string{"simulate", "--K", "11", "--m", "3", "--queries", "2000000000", "--no-cache"}},
		// A search per target, each blind to the context: the command
		// stops between two.
		{"account gnmax", "noisymax.GNMaxSigmaTight(", []string{"account", "gnmax", "--target-eps", targets, "--target-delta", "1e-5", "--gnmax-search", "tight", "--K", "16384"}},
		{"account pate", "pate.Account(", []string{"account", "pate", counts, "--input-format", "counts", "--sigma2", "40", "--threshold", "200", "--sigma1", "150", "--target-delta", "1e-5"}},
		{"teachers train", "teachers.trainEach(", []string{"teachers", "train", "--dataset", "mnist58", "--epochs", "100000", "--no-cache"}},
		{"transfer", "transfer.measure(", []string{"transfer", "--dataset", "mnist58", "--no-cache", "--queries", "10,100", "--redraws", "100000"}},
		{"shuffleg", "shuffleexp.(*Experiment).runJobs(", []string{"shuffleg", "--task", "mean", "--dataset", "synthetic", "--n", "2000", "--d", "200", "--target-eps", "5", "--epochs", "5000", "--runs", "10"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := child(c.args...)
			cmd.Env = append(cmd.Env, "GO_DARRM_GRACE=10s", "GO_DARRM_AT="+c.at)
			stderr := &lineWatch{want: "darrm-test: at " + c.at + "\n", seen: make(chan struct{})}
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Past the start (a signal before main sets up its handler
			// kills the process by the default action), into the work:
			// the child says so (sayWhenAt). The limits are a hang's.
			select {
			case <-stderr.seen:
			case err := <-done:
				t.Fatalf("ended (%v) before it reached %s: %s", err, c.at, stderr)
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				<-done
				t.Fatalf("did not reach %s within a minute: %s", c.at, stderr)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("did not end within 30 s of the signal: %s", stderr)
			}
			code, msg := cmd.ProcessState.ExitCode(), stderr.String()
			if code != 130 || !strings.Contains(msg, "interrupted") {
				t.Fatalf("exit %d, want 130 (interrupted): %s", code, msg)
			}
			if strings.Contains(msg, "still working") {
				t.Errorf("stopped by the last resort, not by its own loop: %s", msg)
			}
		})
	}
}

// lineWatch keeps what a child writes and closes seen once it has
// written want.
type lineWatch struct {
	syncBuffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *lineWatch) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if strings.Contains(w.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

// TestStopAfter: work that never checks its context (HiGHS's presolve, in C)
// is ended grace after the interrupt, as interrupted, saying so; a
// command that finished keeps its exit status, however long its exit
// then takes.
func TestStopAfter(t *testing.T) {
	for _, c := range []struct {
		mode, say string
		code      int
	}{
		{"1", "still working 10ms after the signal: stopped", 130},
		{"finished", "", 0},
	} {
		cmd := child()
		cmd.Env = append(cmd.Env, "GO_DARRM_MAIN=0", "GO_DARRM_STOP_AFTER="+c.mode)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if code := waitExitWithin(t, cmd, 30*time.Second); code != c.code || !strings.Contains(stderr.String(), c.say) || c.say == "" && stderr.Len() != 0 {
			t.Errorf("%s: exit %d: %s, want %d and %q", c.mode, code, stderr.String(), c.code, c.say)
		}
	}
}
