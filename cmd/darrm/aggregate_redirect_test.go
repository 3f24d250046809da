//go:build unix

package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/ledger"
)

// TestRedirectionProtected: standard output redirected onto a file darrm
// reads or keeps (the ledger, the vote file, a gamma cache entry, a
// ledger's record), and an output onto the file standard input reads,
// are refused as --out onto them is, before anything is written (exit
// 2); a redirection elsewhere works.
func TestRedirectionProtected(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 20)
	led := newLedgerFile(t, dir, "redirect", votes)
	cache, entry := solvedCache(t, dir)
	entries := []string{entry}
	records, _ := filepath.Glob(filepath.Join(os.Getenv(statedir.Env), "ledgers", "*.json"))
	if len(records) == 0 {
		t.Fatal("no ledger record")
	}
	release := []string{"aggregate", "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--cache-dir", cache, "--ledger", led}
	run := func(stdin, stdout string, args ...string) (int, string) {
		t.Helper()
		cmd := child(args...)
		if stdin != "" {
			f, err := os.Open(stdin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd.Stdin = f
		}
		f, err := os.OpenFile(stdout, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = f, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return waitExit(t, cmd), stderr.String()
	}
	for _, tc := range []struct {
		name, stdin, stdout string
		args                []string
		want                string
	}{
		{"aggregate >> ledger", "", led, append(release, votes), "standard output (" + led + ") is the ledger"},
		{"aggregate >> the vote file", "", votes, append(release, votes), "is the vote file"},
		{"aggregate < votes >> votes", votes, votes, release, "is the vote file (standard input)"},
		{"aggregate --out votes < votes", votes, filepath.Join(dir, "summary.txt"), append(release, "--out", votes), "--out " + votes + " is the vote file (standard input)"},
		{"solve >> a cache entry", "", entries[0], []string{"solve", "--K", "3", "--m", "1", "--cache-dir", cache}, "is a file of the gamma cache"},
		{"ledger show >> its record", "", records[0], []string{"ledger", "show", led}, "is a file of darrm's records of the ledgers"},
		{"ledger show >> the ledger", "", led, []string{"ledger", "show", led}, "is an input of darrm ledger show"},
	} {
		before := map[string][]byte{}
		for _, f := range []string{led, votes, entries[0], records[0]} {
			before[f], _ = os.ReadFile(f)
		}
		code, stderr := run(tc.stdin, tc.stdout, tc.args...)
		if code != exitUsage || !containsFlat(stderr, tc.want) {
			t.Errorf("%s: exit %d, want %d with %q: %s", tc.name, code, exitUsage, tc.want, stderr)
		}
		for f, b := range before {
			if after, _ := os.ReadFile(f); string(after) != string(b) {
				t.Errorf("%s: %s changed", tc.name, f)
			}
		}
	}
	if r := recorded(t, led); r != 0 {
		t.Errorf("refused releases charged %d labels", r)
	}
	out := filepath.Join(dir, "labels.csv")
	if code, stderr := run(votes, out, release...); code != 0 || labelsIn(mustRead(t, out)) != 20 {
		t.Errorf("aggregate < votes > labels: exit %d: %s", code, stderr)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStdoutReaderGone: a reader of standard output that goes away (as
// head -3 does) does not kill darrm silently: the run fails (exit 1),
// says how many labels may have reached standard output, and the ledger
// is settled on exactly that count.
func TestStdoutReaderGone(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 300_000)
	led := newLedgerFile(t, dir, "reader-gone", votes)
	cmd := child("aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--ledger", led)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stdout, cmd.Stderr = pw, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	r := bufio.NewReader(pr)
	for range 3 {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	pr.Close()
	code := waitExit(t, cmd)
	m := mayHaveReached.FindStringSubmatch(stderr.String())
	if code != exitFailure || m == nil || !containsFlat(stderr.String(), "broken pipe") {
		t.Fatalf("exit %d, want %d with the count of labels: %s", code, exitFailure, stderr.String())
	}
	said, _ := strconv.Atoi(m[1])
	l, err := ledger.Open(t.Context(), led, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var spends []ledger.Spend
	if err := l.Runs(context.Background(), func(s ledger.Spend) error { spends = append(spends, s); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(spends) != 1 || !spends[0].Final || spends[0].Queries != said || said == 0 {
		t.Errorf("%d labels said to have left; the ledger's spends %+v", said, spends)
	}
}

// TestStderrProtected: standard error redirected onto a file darrm reads
// or keeps (2>>LEDGER, 2>>votes.csv, a gamma cache entry, a ledger's
// record) is refused as standard output onto it is, before any work (exit
// 2, nothing charged), and darrm writes nothing to it: not even the error
// message, which would damage the file as the output would. Standard
// error onto another file works.
func TestStderrProtected(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 20)
	led := newLedgerFile(t, dir, "stderr", votes)
	cache, entry := solvedCache(t, dir)
	records, _ := filepath.Glob(filepath.Join(os.Getenv(statedir.Env), "ledgers", "*.json"))
	if len(records) == 0 {
		t.Fatal("no ledger record")
	}
	release := []string{"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--cache-dir", cache, "--ledger", led}
	run := func(stderr string, args ...string) int {
		t.Helper()
		cmd := child(args...)
		f, err := os.OpenFile(stderr, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = io.Discard, f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return waitExit(t, cmd)
	}
	for _, tc := range []struct {
		name, stderr string
		args         []string
	}{
		{"aggregate 2>> ledger", led, release},
		{"aggregate 2>> the vote file", votes, release},
		{"aggregate 2>> a cache entry", entry, release},
		{"aggregate 2>> the record", records[0], release},
		{"ledger show 2>> the ledger", led, []string{"ledger", "show", led}},
	} {
		before := map[string][]byte{}
		for _, f := range []string{led, votes, entry, records[0]} {
			before[f] = mustRead(t, f)
		}
		if code := run(tc.stderr, tc.args...); code != exitUsage {
			t.Errorf("%s: exit %d, want %d", tc.name, code, exitUsage)
		}
		for f, b := range before {
			if after, _ := os.ReadFile(f); string(after) != string(b) {
				t.Errorf("%s: %s changed", tc.name, f)
			}
		}
	}
	if r := recorded(t, led); r != 0 {
		t.Errorf("refused releases charged %d labels", r)
	}
	log := filepath.Join(dir, "stderr.txt")
	if code := run(log, release...); code != 0 || recorded(t, led) != 20 {
		t.Errorf("aggregate 2>> another file: exit %d: %s", code, mustRead(t, log))
	}
}
