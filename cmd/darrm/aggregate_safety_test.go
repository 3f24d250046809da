//go:build unix

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/votefile"
)

// The tests of this file attack the ledger and the release with darrm
// itself, mostly as a child process (GO_DARRM_MAIN=1, see TestMain).

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
	withHeader(t, votes, &votefile.Meta{Ensemble: name, K: 3, Classes: 2, Relation: accountant.PrivateTeachers, Kind: votefile.PerQuery, Partition: votefile.SharedData,
		Teachers: []votefile.TeacherGroup{{Count: 3, Guarantee: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}}}})
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
	l, err := ledger.ReadOnly(context.Background(), path, ledger.Options{})
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

var mayHaveReached = regexp.MustCompile(`(\d+) labels may have reached`)

// TestShortWriteCounts: with a file size limit on standard output
// (ulimit -f), the labels that reached the file, the last one cut, are
// all in the ledger, and the error gives their number.
func TestShortWriteCounts(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 300_000)
	led := newLedgerFile(t, dir, "short-write", votes)
	out, err := os.Create(filepath.Join(dir, "a.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := inShell("ulimit -f 100", "aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", led)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitFailure {
		t.Fatalf("exit %d, want %d: %s", code, exitFailure, stderr.String())
	}
	b, _ := os.ReadFile(out.Name())
	got := labelsIn(b)
	m := mayHaveReached.FindStringSubmatch(stderr.String())
	if got == 0 || m == nil || m[1] != strconv.Itoa(got) {
		t.Errorf("%d labels in the file (%d bytes), error: %s", got, len(b), stderr.String())
	}
	if r := recorded(t, led); r != got {
		t.Errorf("%d labels in the file, %d in the ledger", got, r)
	}
}

// TestOutputTargets: --out is refused when it is the ledger (by its name,
// a hard link or a symbolic link), the vote file or a gamma cache entry;
// /dev/stdout redirected to a file writes to standard output. (--out as a
// symbolic link, a FIFO or a device is checked for every mechanism by
// TestEveryCheckOfEveryMechanism.)
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

	// No data on standard input.
	cmd = child(release...)
	stdin, _ := cmd.StdinPipe()
	cmd.Start()
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd); code != exitInterrupted {
		t.Errorf("stdin with no data: exit %d", code)
	}
	stdin.Close()

	// A reader of standard output that reads nothing.
	cmd = child(append(release, votes)...)
	pr, pw, _ := os.Pipe()
	stderr = syncBuffer{}
	cmd.Stdout, cmd.Stderr = pw, &stderr
	cmd.Start()
	pw.Close()
	time.Sleep(500 * time.Millisecond) // the pipe fills
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
		if code := waitExit(t, cmd); code != exitUsage || !strings.Contains(e.String(), "is a FIFO, not a ledger file") {
			t.Errorf("%v: exit %d: %s", args, code, e.String())
		}
	}
}

// TestLedgerRefusals: reading a file as a ledger never changes it; a
// second ledger for an ensemble, an old copy restored and lines removed
// are refused with the command that resolves them, and darrm ledger
// adopt resolves them.
func TestLedgerRefusals(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 10)
	config := filepath.Join(dir, "config.json")
	os.WriteFile(config, []byte(`{"a":1}`), 0o644)
	noEnd := filepath.Join(dir, "noend.csv")
	os.WriteFile(noEnd, []byte("1,1,0\n1,0,0"), 0o644)
	for _, args := range [][]string{{"ledger", "show", config}, {"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", noEnd}} {
		if _, stderr, code := darrm(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
	if b, _ := os.ReadFile(config); string(b) != `{"a":1}` {
		t.Errorf("ledger show changed config.json to %q", b)
	}
	if b, _ := os.ReadFile(noEnd); string(b) != "1,1,0\n1,0,0" {
		t.Errorf("--ledger changed the vote file to %q", b)
	}

	led := newLedgerFile(t, dir, "refusals", votes)
	release := []string{"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", led, "--out", filepath.Join(dir, "labels.csv")}
	if _, e, code := darrm(t, "", release...); code != 0 {
		t.Fatal(e)
	}
	old, _ := os.ReadFile(led)
	if _, e, code := darrm(t, "", release...); code != 0 {
		t.Fatal(e)
	}
	os.WriteFile(led, old, 0o644) // an old copy restored
	_, stderr, code := darrm(t, "", release...)
	if code != exitUsage || !strings.Contains(stderr, "darrm ledger adopt "+led) || !strings.Contains(stderr, "older copy was restored") {
		t.Errorf("old copy: exit %d: %s", code, stderr)
	}
	if _, stderr, code := darrm(t, "", "ledger", "adopt", led); code != 0 || recorded(t, led) != 10 {
		t.Errorf("adopt: exit %d: %s", code, stderr)
	}
	if _, e, code := darrm(t, "", release...); code != 0 {
		t.Errorf("after adopt: %s", e)
	}
	second := filepath.Join(dir, "second.ledger")
	_, stderr, code = darrm(t, "", append([]string{"ledger", "init", second, "--ensemble", "refusals", "--budget-eps", "1e9", "--budget-delta", "0.5"}, binding3...)...)
	if code != exitUsage || !strings.Contains(stderr, "--replace") {
		t.Errorf("second ledger: exit %d: %s", code, stderr)
	}
}

// v3Ledger writes a ledger of version 3, as darrm wrote them, of the
// ensemble of binding3 with budget (10, 1e-3) and the spends given as
// JSON without their prior: a hash chain, each spend with the (ε, δ) sums
// before it (one spend per run).
func v3Ledger(t *testing.T, path string, spends ...string) {
	t.Helper()
	prev := ""
	line := func(kind, raw string) string {
		h := sha256.New()
		fmt.Fprintf(h, "darrm-ledger/3\n%s\n%s\n", prev, kind)
		h.Write([]byte(raw))
		sum := hex.EncodeToString(h.Sum(nil))
		l := `{"prev":"` + prev + `","` + kind + `":` + raw + `,"sha256":"` + sum + `"}` + "\n"
		prev = sum
		return l
	}
	s := line("header", `{"version":3,"id":"0123456789abcdef0123456789abcdef","ensemble":"v3","relation":"private-teachers","budget":{"eps":10,"delta":0.001},"delta_prime":0.00001,"created":"2025-01-02T03:04:05Z","teachers":{"K":3,"eps":0.1,"Delta":0.00001,"kind":"per-query","partition":"shared"}}`)
	var seq accountant.Sequence
	for _, sp := range spends {
		prior, _ := json.Marshal(seq)
		s += line("spend", strings.TrimSuffix(sp, "}")+`,"prior":`+string(prior)+"}")
		var g struct{ Eps, Delta float64 }
		var q struct{ Queries int }
		json.Unmarshal([]byte(sp), &g)
		json.Unmarshal([]byte(sp), &q)
		if next, err := seq.Add(accountant.Guarantee{Eps: g.Eps, Delta: g.Delta}, q.Queries); err == nil {
			seq = next
		}
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerMessages: the ledger's exit statuses, messages and output:
// I/O failures exit 1; a directory or an unwritable ledger is not told to
// be created; ledger show names no flag it lacks; an infinite budget is refused in the flag's terms; a
// spend of eps 0 names its line; an ESC in a field is printed escaped;
// JSON says eps and delta in lower case; totals are not printed to the
// last float digit.
func TestLedgerMessages(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{append([]string{"ledger", "init", filepath.Join(dir, "inf"), "--ensemble", "e", "--budget-eps", "Inf", "--budget-delta", "0"}, binding3...), exitUsage, "--budget-eps = +Inf: must be a finite number > 0"},
		{append([]string{"ledger", "init", filepath.Join(dir, "nan"), "--ensemble", "e", "--budget-eps", "NaN", "--budget-delta", "0"}, binding3...), exitUsage, "--budget-eps = NaN"},
		{append([]string{"ledger", "init", filepath.Join(dir, "esc"), "--ensemble", "e\x1b[31m", "--budget-eps", "1", "--budget-delta", "0"}, binding3...), exitUsage, `--ensemble = "e\x1b[31m": control characters are not allowed`},
		{[]string{"ledger", "show", dir}, exitUsage, "is a directory, not a ledger file"},
		{[]string{"ledger", "show", filepath.Join(dir, "missing")}, exitUsage, "no such file (create it with darrm ledger init)"},
	} {
		_, stderr, code := darrm(t, "", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "--ledger:") || strings.Contains(stderr, "json:") {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
		}
	}
	if _, stderr, _ := darrm(t, "", "ledger", "show", dir); strings.Contains(stderr, "ledger init") {
		t.Errorf("a directory is told to be created: %s", stderr)
	}

	// A full disk (here a file size limit of 0) at init: a failure, not
	// bad input, and no file left.
	full := filepath.Join(dir, "full.ledger")
	cmd := inShell("ulimit -f 0", append([]string{"ledger", "init", full, "--ensemble", "full", "--budget-eps", "1", "--budget-delta", "0"}, binding3...)...)
	var e strings.Builder
	cmd.Stderr = &e
	cmd.Start()
	if code := waitExit(t, cmd); code != exitFailure {
		t.Errorf("init on a full disk: exit %d: %s", code, e.String())
	}
	if _, err := os.Stat(full); err == nil {
		t.Error("init on a full disk left a file")
	}

	votes := smallVotes(t, dir, 5)

	// Version 3, with an ESC in a field and a spend of eps 0.
	v1 := filepath.Join(dir, "v3.ledger")
	v3Ledger(t, v1, `{"run":"r1","time":"2025-01-02T03:04:05Z","mechanism":"darrm\u001b[2J","eps":0.30000000000000004,"delta":0,"queries":3,"final":true}`)
	out, stderr, code := darrm(t, "", "ledger", "show", v1)
	if code != 0 || strings.ContainsRune(out, 0x1b) || !strings.Contains(out, `darrm\x1b[2J`) || !strings.Contains(stderr, "darrm ledger upgrade") {
		t.Errorf("ESC in a field: exit %d: %q %s", code, out, stderr)
	}
	l, err := ledger.ReadOnly(context.Background(), v1, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	total, _, _ := l.Total()
	l.Close()
	if full := strconv.FormatFloat(total.Eps, 'g', -1, 64); !strings.Contains(out, "total_eps="+accountant.FormatBound(total.Eps)+" ") || len(full) > 8 && strings.Contains(out, full) {
		t.Errorf("the total %s is not rounded up to 6 digits: %s", full, out)
	}
	out, _, _ = darrm(t, "", "ledger", "show", v1, "--format", "json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc["budget_eps"] != 10.0 || doc["version"] != 3.0 {
		t.Errorf("ledger show JSON: %v %v", doc, err)
	}
	v3Ledger(t, v1, `{"run":"r1","time":"2025-01-02T03:04:05Z","mechanism":"darrm","eps":0,"delta":0,"queries":3,"final":true}`)
	if _, stderr, code := darrm(t, "", "ledger", "show", v1); code != exitUsage || !strings.Contains(stderr, "line 2: spend: eps = 0: must be a finite number > 0") {
		t.Errorf("spend of eps 0: exit %d: %s", code, stderr)
	}

	// The upgrade, and the ledger block of aggregate's JSON in lower case.
	v3Ledger(t, v1, `{"run":"r1","time":"2025-01-02T03:04:05Z","mechanism":"subsample","eps":0.1,"delta":0,"queries":3,"final":true}`)
	if _, stderr, code := darrm(t, "", "aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", v1); code != exitUsage || !strings.Contains(stderr, "darrm ledger upgrade") {
		t.Errorf("a release on version 3: exit %d: %s", code, stderr)
	}
	if out, stderr, code := darrm(t, "", append([]string{"ledger", "upgrade", v1}, binding3...)...); code != 0 || !strings.Contains(out, "the spends of 1 run carried over") {
		t.Errorf("upgrade: exit %d: %s%s", code, out, stderr)
	}
	withHeader(t, votes, &votefile.Meta{Ensemble: "v3", K: 3, Classes: 2, Relation: accountant.PrivateTeachers, Kind: votefile.PerQuery, Partition: votefile.SharedData,
		Teachers: []votefile.TeacherGroup{{Count: 3, Guarantee: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}}}})
	out, stderr, code = darrm(t, "", "aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", v1, "--out", filepath.Join(dir, "l.csv"), "--format", "json")
	if code != 0 || !strings.Contains(out, `"budget": {`+"\n"+`      "eps": 10,`) || strings.Contains(out, `"Eps"`) {
		t.Errorf("aggregate JSON after the upgrade: exit %d: %s%s", code, out, stderr)
	}
	if r := recorded(t, v1); r != 8 {
		t.Errorf("after the upgrade and a release of 5: %d labels recorded", r)
	}
}

// TestUnwritableLedger: a ledger this user cannot write is a failure
// (exit 1) that says why, not bad input, and is not told to be created.
// As root, which may write any file, the release runs
// as nobody, from a copy of the test binary that nobody may run.
func TestUnwritableLedger(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 5)
	led := newLedgerFile(t, dir, "unwritable", votes)
	os.Chmod(led, 0o444)
	cmd := child("aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", led)
	if os.Getuid() == 0 {
		bin := filepath.Join(dir, "darrm.test")
		b, err := os.ReadFile(os.Args[0])
		if err != nil || os.WriteFile(bin, b, 0o755) != nil {
			t.Skip("cannot copy the test binary")
		}
		for d := dir; d != "/"; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o005 != 0o005 && strings.HasPrefix(d, os.TempDir()) && d != os.TempDir() {
				os.Chmod(d, st.Mode().Perm()|0o005)
			}
		}
		// nobody's records go to a folder of the test's, open to nobody,
		// so that the ledger is the only file nobody cannot write.
		state := filepath.Join(dir, "nobody-state")
		if os.Mkdir(state, 0o777) != nil || os.Chmod(state, 0o777) != nil {
			t.Skip("cannot make a folder for nobody's records")
		}
		cmd.Path, cmd.Args[0] = bin, bin
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		cmd.Env = append(cmd.Env, ledger.EnvStateDir+"="+state, "HOME=/nonexistent")
	}
	var e strings.Builder
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	if code := waitExit(t, cmd); code != exitFailure || !strings.Contains(e.String(), "permission denied") || strings.Contains(e.String(), "ledger init") {
		t.Errorf("read-only ledger: exit %d: %s", code, e.String())
	}
}
