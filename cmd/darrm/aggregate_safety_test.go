//go:build unix

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darrm/darrm/ledger"
)

// The tests of this file attack the release with darrm itself, mostly as
// a child process (GO_DARRM_MAIN=1, see TestMain); those of the ledger's
// own commands are in ledger_unix_test.go.

var mayHaveReached = regexp.MustCompile(`(\d+) labels may have reached`)

// TestShortWriteCounts: with a file size limit on standard output
// (ulimit -f), the labels that reached the file, the last one cut, are
// all in the ledger, and the error gives their number.
func TestShortWriteCounts(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 300_000)
	led := newLedgerFile(t, dir, "short-write", votes)
	b, stderr := shortWrite(t, dir, votes, "--ledger", led)
	got := labelsIn(b)
	m := mayHaveReached.FindStringSubmatch(stderr)
	if got == 0 || m == nil || m[1] != strconv.Itoa(got) {
		t.Errorf("%d labels in the file (%d bytes), error: %s", got, len(b), stderr)
	}
	if r := recorded(t, led); r != got {
		t.Errorf("%d labels in the file, %d in the ledger", got, r)
	}
}

// shortWrite releases the labels of votes, subsampled, to a standard
// output held to 100 blocks (ulimit -f), with args after; it returns what
// reached the file and the error, the run having exited 1.
func shortWrite(t *testing.T, dir, votes string, args ...string) (labels []byte, stderr string) {
	t.Helper()
	out, err := os.Create(filepath.Join(dir, "a.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := inShell("ulimit -f 100", append([]string{"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache"}, args...)...)
	var errb strings.Builder
	cmd.Stdout, cmd.Stderr = out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitFailure {
		t.Fatalf("exit %d, want %d: %s", code, exitFailure, errb.String())
	}
	b, _ := os.ReadFile(out.Name())
	return b, errb.String()
}

// TestOutputTargets: --out is refused when it is the ledger (by its name,
// a hard link or a symbolic link), the vote file or a gamma cache entry;
// /dev/stdout redirected to a file writes to standard output. (--out as a
// symbolic link is checked for every mechanism, a FIFO or a device for the
// first, for every one without -short, by TestEveryCheckOfEveryMechanism.)
func TestOutputTargets(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 50)
	led := newLedgerFile(t, dir, "outputs", votes)
	cache, entry := solvedCache(t, dir)
	entries := []string{entry}
	os.Link(led, filepath.Join(dir, "hard"))
	os.Symlink(led, filepath.Join(dir, "soft"))
	before, _ := os.ReadFile(led)
	release := []string{"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--cache-dir", cache, "--ledger", led}
	for out, want := range map[string]string{
		led:                                  "is the ledger",
		filepath.Join(dir, "hard"):           "is the ledger",
		filepath.Join(dir, "soft"):           "is the ledger",
		votes:                                "is the vote file",
		entries[0]:                           "is a file of the gamma cache",
		filepath.Join(dir, ".", "votes.csv"): "is the vote file",
	} {
		if _, stderr, code := darrm(t, "", append(release, "--out", out)...); code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("--out %s: exit %d: %s", out, code, stderr)
		}
	}
	if after, _ := os.ReadFile(led); string(after) != string(before) || recorded(t, led) != 0 {
		t.Error("a refused release changed the ledger")
	}
	if _, stderr, code := darrm(t, "", "solve", "--K", "3", "--m", "1", "--cache-dir", cache, "--plot", entries[0]); code != exitUsage || !strings.Contains(stderr, "gamma cache") {
		t.Errorf("solve --plot on a cache entry: exit %d: %s", code, stderr)
	}

	redirected := filepath.Join(dir, "redirected.csv")
	f, _ := os.Create(redirected)
	st0, _ := f.Stat()
	// /dev/stdout as a link of the test's own, so that a regression
	// replaces the link in the temporary folder, not the machine's.
	stdoutLink := filepath.Join(dir, "stdout")
	if err := os.Symlink("/proc/self/fd/1", stdoutLink); err != nil {
		t.Fatal(err)
	}
	cmd := child(append(release, "--out", stdoutLink)...)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = f, &stderr
	cmd.Start()
	code := waitExit(t, cmd)
	f.Close()
	st1, _ := os.Stat(redirected)
	if st, err := os.Lstat(stdoutLink); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link to standard output was replaced")
	}
	if code != 0 || !os.SameFile(st0, st1) || len(readLines(t, redirected)) != 51 || !strings.Contains(stderr.String(), "answered") {
		t.Errorf("--out /dev/stdout into a file: exit %d, same file %t, %d lines: %s", code, os.SameFile(st0, st1), len(readLines(t, redirected)), stderr.String())
	}
}

// TestSignalsWhileBlocked: darrm exits 130 promptly on SIGINT or SIGTERM
// while it waits for the ledger's lock (and says so, naming the file),
// for data on standard input, and for a reader of standard output that has
// stalled (counting what may have reached it); a FIFO as ledger is
// refused at once.
func TestSignalsWhileBlocked(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 300_000)
	led := newLedgerFile(t, dir, "signals", votes)
	release := []string{"aggregate", "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", led}

	// Waiting for the lock.
	held, err := ledger.Open(context.Background(), led, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := child(append(release, votes)...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	cmd.Start()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !strings.Contains(stderr.String(), "waiting"); time.Sleep(10 * time.Millisecond) {
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd); code != exitInterrupted || !strings.Contains(stderr.String(), "waiting for the lock on ledger "+led) {
		t.Errorf("lock wait: exit %d: %s", code, stderr.String())
	}
	held.Close()

	// No data on standard input: the signal comes once the command reads
	// it (the child says when its reader's goroutine is on a stack, see
	// sayWhenAt), after main has set up its handler. A signal before that
	// ends the process as the signal's default does (exit -1), which a
	// fixed wait, on a loaded machine, did not rule out.
	const reading = "ctxio.(*Reader).loop("
	cmd = child(release...)
	cmd.Env = append(cmd.Env, "GO_DARRM_AT="+reading)
	at := &lineWatch{want: "darrm-test: at " + reading + "\n", seen: make(chan struct{})}
	cmd.Stderr = at
	stdin, _ := cmd.StdinPipe()
	cmd.Start()
	select {
	case <-at.seen:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("stdin with no data: not reading it within a minute: %s", at)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd); code != exitInterrupted {
		t.Errorf("stdin with no data: exit %d: %s", code, at)
	}
	stdin.Close()

	// A reader of standard output that reads nothing: the signal comes
	// once labels are in the pipe, so the command has set up its handler
	// and is blocked writing them (its first write, of more than a pipe
	// holds). A fixed wait came, on a loaded machine, before that write,
	// and the command then rightly said that no label had left.
	cmd = child(append(release, votes)...)
	pr, pw, _ := os.Pipe()
	stderr = syncBuffer{}
	cmd.Stdout, cmd.Stderr = pw, &stderr
	cmd.Start()
	pw.Close()
	waitReadable(t, pr)
	cmd.Process.Signal(syscall.SIGTERM)
	code := waitExit(t, cmd)
	b, _ := io.ReadAll(pr)
	pr.Close()
	m := mayHaveReached.FindStringSubmatch(stderr.String())
	if code != exitInterrupted || m == nil {
		t.Fatalf("stalled stdout: exit %d: %s", code, stderr.String())
	}
	said, _ := strconv.Atoi(m[1])
	if r := recorded(t, led); r < labelsIn(b) || r != said {
		t.Errorf("stalled stdout: %d labels read from the pipe, %d said to have left, %d in the ledger", labelsIn(b), said, r)
	}

	// A FIFO as ledger, read or released into: refused at once.
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o600)
	for _, args := range [][]string{{"ledger", "show", fifo}, {"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", fifo}} {
		cmd := child(args...)
		var e strings.Builder
		cmd.Stderr = &e
		cmd.Start()
		if code := waitExit(t, cmd); code != exitUsage || !strings.Contains(joinError(e.String()), "is a FIFO, not a ledger file") {
			t.Errorf("%v: exit %d: %s", args, code, e.String())
		}
	}
}

// TestShortWriteTotal: without a ledger to record them, the labels that
// may have reached a standard output that failed get their total to
// publish in the error, as the summary of a release gives it, not only
// their number and per-query guarantee.
func TestShortWriteTotal(t *testing.T) {
	dir := t.TempDir()
	_, stderr := shortWrite(t, dir, smallVotes(t, dir, 300_000))
	msg := unwrapped(stderr)
	if m := mayHaveReached.FindStringSubmatch(msg); m == nil || !strings.Contains(msg, "; their total to publish: (") {
		t.Errorf("no count, or no total to publish for them: %s", msg)
	}
}
