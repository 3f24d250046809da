//go:build unix

package docstest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeDarrm stands for darrm in the runner's tests: it rejects a flag it
// does not know, as darrm does, and otherwise prints its arguments.
const fakeDarrm = `#!/bin/sh
for a in "$@"; do
	case $a in
	--bogus*) echo "darrm: unknown flag $a" >&2; exit 2 ;;
	esac
done
echo "darrm $*"
`

// runDoc runs the sh blocks of a README with the given content from a
// fresh copy of a small repository, with fakeDarrm on PATH.
func runDoc(t *testing.T, readme string, edit func(*Config)) []Result {
	t.Helper()
	src := t.TempDir()
	files := map[string]string{"README.md": readme, "testdata/in.txt": "in\n", "testdata/gone.txt": "gone\n",
		".gitignore": "/out.txt\n/testdata/labels.csv\n/ran.txt\n/ignored/\n"}
	var names []string
	for name, content := range files {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "darrm"), []byte(fakeDarrm), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Src: src, Files: names, TempDir: t.TempDir(), PathDirs: []string{bin},
		Env:     append(os.Environ(), "DARRM_FROM_USER=1", "HOME=/nonexistent-home"),
		NoData:  "no data here",
		Timeout: time.Minute, SlowTimeout: time.Minute,
	}
	if edit != nil {
		edit(&cfg)
	}
	blocks, err := Parse("README.md", []byte(readme))
	if err != nil {
		t.Fatal(err)
	}
	return RunFile(context.Background(), cfg, "README.md", blocks)
}

// check compares results with want: per block, a status and substrings of
// its Why.
func check(t *testing.T, got []Result, want []Status, why ...[]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(got), len(want), got)
	}
	for i, r := range got {
		if r.Status != want[i] {
			t.Errorf("block %s: status %v (%s), want %v", r.Block.Pos(), r.Status, r.Why, want[i])
		}
		if i < len(why) {
			for _, w := range why[i] {
				if !strings.Contains(r.Why, w) {
					t.Errorf("block %s: %q does not contain %q", r.Block.Pos(), r.Why, w)
				}
			}
		}
	}
}

func TestRunFilePasses(t *testing.T) {
	data := t.TempDir()
	readme := "# x\n```sh\n" +
		// A clean environment: HOME, GOPATH and darrm's folders are the run's own,
		// the user's DARRM_ variables are gone, the data folder is empty.
		// A failure before && fails the block too.
		"h=$(printenv HOME) &&\n" +
		"  test \"$h\" != /nonexistent-home && test -d \"$h\" && tmp=$(printenv TMPDIR) && test -d \"$tmp\" &&\n" +
		"  test -d \"$DARRM_CACHE_DIR\" && test -d \"$DARRM_STATE_DIR\" && data=$(ls -A \"$DARRM_DATA\") && test -z \"$data\" &&\n" +
		"  test -z \"${DARRM_FROM_USER:-}\" && test \"$DARRM_DOCSTEST_NESTED\" = 1 &&\n" +
		// GOPATH is a new machine's, $HOME/go, so go install writes there.
		"  test \"$GOPATH\" = \"$h/go\" && test -z \"${GOBIN:-}\"\n" +
		"darrm solve --K 11 > out.txt   # outputs in the current folder, ignored by git\n" +
		"mkdir -p out/empty ignored && darrm aggregate testdata/in.txt > testdata/labels.csv && echo x > ignored/x\n" +
		"cat testdata/in.txt\n" +
		"touch testdata/in.txt                 # rewritten, same content: not a change\n" +
		// Failures handled where they happen let the block go on.
		"false || echo handled\nif false; then\n  echo no\nelse\n  echo yes\nfi\n" +
		"! false\nfor i in 1 2; do\n  test $i = 1 || echo \"$i\"\ndone\n" +
		"```\n\nThen:\n\n```sh\n" +
		`grep -q 'darrm solve --K 11' out.txt   # files of an earlier block` + "\n" +
		"echo changed > out.txt && rm testdata/labels.csv\n" +
		"```\n<!-- docs-test: data -->\n```sh\n" +
		`test "$DARRM_DATA" = "$WANT_DATA"` + "\n" +
		"```\n<!-- docs-test: slow data -->\n```sh\n" +
		`test "$DARRM_DATA" = "$WANT_DATA"` + "\n" +
		"```\n<!-- docs-test: slow -->\n```sh\n" +
		`test "$DARRM_DATA" != "$WANT_DATA"` + "\n" +
		"```\n"
	got := runDoc(t, readme, func(c *Config) {
		c.DataDir = data
		c.Slow = func(Block) bool { return true }
		c.Env = append(c.Env, "WANT_DATA="+data)
	})
	check(t, got, []Status{Passed, Passed, Passed, Passed, Passed})
}

func TestRunFileFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		readme string
		edit   func(*Config)
		want   []Status
		why    [][]string
		output string // in the failed block's output
	}{{
		name: "a typo'd flag names the file, the line and the command",
		readme: "# x\n\n```sh\ndarrm solve --K 11\ndarrm solve --K 11 \\\n  --bogus-flag 3   # typo\necho after\n```\n" +
			"```sh\ndarrm simulate\n```\n",
		want:   []Status{Failed, Skipped},
		why:    [][]string{{"README.md:5: exit status 2: darrm solve --K 11 --bogus-flag 3 # typo"}, {"not run: an earlier block of README.md failed"}},
		output: "darrm: unknown flag --bogus-flag",
	}, {
		name:   "a failure inside a pipeline",
		readme: "```sh\necho a | false | cat\n```\n",
		want:   []Status{Failed},
		why:    [][]string{{"README.md:2: exit status 1: echo a | false | cat"}},
	}, {
		// The lint refuses both in the text of a block; a command that
		// hides its substitution from the lint fails when it runs.
		name:   "a failure inside a command substitution that a command swallows",
		readme: "```sh\neval 'set -- $(false; echo a)'\necho \"after: $1\"\n```\n",
		want:   []Status{Failed},
		why:    [][]string{{"README.md:2: exit status 1: eval", "inside a command substitution or a subshell"}},
		output: "after: ",
	}, {
		name:   "a failure before && lets the block go on",
		readme: "```sh\necho start\ndarrm solve --bogus-flag > out.txt &&\n  darrm aggregate out.txt\necho went on\n```\n",
		want:   []Status{Failed},
		why:    [][]string{{"README.md:3: exit status 2: darrm solve --bogus-flag > out.txt && darrm aggregate out.txt (a command before && or || failed: the block went on to line 5)"}},
		output: "went on",
	}, {
		name:   "files git does not ignore",
		readme: "```sh\ndarrm solve > out.txt && darrm solve > g.json && mkdir -p parts && darrm solve > parts/p0.json\n```\n",
		want:   []Status{Failed},
		why:    [][]string{{"README.md:1: the block leaves files that git does not ignore, untracked in a reader's clone: g.json, parts/p0.json"}},
	}, {
		name:   "files of the repository modified and deleted",
		readme: "```sh\necho more >> testdata/in.txt\nrm testdata/gone.txt\nmkdir -p out/empty\n```\n",
		want:   []Status{Failed},
		why:    [][]string{{"README.md:1: the block changed files of the repository: modified testdata/in.txt; deleted testdata/gone.txt (write outputs to new files"}},
	}, {
		name: "paths shared with the reader's files",
		readme: "```sh\ndarrm aggregate testdata/in.txt --out /tmp/labels.csv\necho x > ~/x   # and /tmp in a comment is fine\n" +
			"darrm solve --plot=\"$TMPDIR/g.png\" > /var/tmp/x\ncat $HOME/.x\nd=$(mktemp -d)   # a name of its own\n```\n",
		want: []Status{Failed},
		why: [][]string{{`README.md:2: "darrm aggregate testdata/in.txt --out /tmp/labels.csv" names /tmp, shared with the reader's own files`,
			"README.md:3:", "names ~", "README.md:4:", "names $TMPDIR", "README.md:5:", "names $HOME"}},
	}, {
		name:   "a timeout names the command running",
		readme: "```sh\necho start\nsleep 30\n```\n",
		edit:   func(c *Config) { c.Timeout = 300 * time.Millisecond },
		want:   []Status{Failed},
		why:    [][]string{{"README.md:3: timed out after 300ms, running: sleep 30"}},
	}, {
		name:   "a syntax error",
		readme: "```sh\necho ok\nif true; then\n  echo x\n```\n",
		want:   []Status{Failed},
		why:    [][]string{{"README.md:1: bash -n:", "syntax error"}},
	}, {
		name: "a bad block runs nothing of its file",
		readme: "```sh\necho ran > ran.txt\n```\n" +
			"<!-- docs-test: slow -->\n```sh\n$ darrm solve --K 11\ncertificate: CERTIFIED\n```\n",
		want: []Status{Skipped, Failed},
		why:  [][]string{{"not run: another block of README.md does not check"}, {"README.md:6: a shell prompt", `README.md:7: "certificate: CERTIFIED" looks like output`}},
	}, {
		name:   "an unknown command in a block not run",
		readme: "<!-- docs-test: data -->\n```sh\ndarrm transfer\nnosuchcommand-xyz --x\n```\n",
		want:   []Status{Failed},
		why:    [][]string{{`README.md:4: "nosuchcommand-xyz --x": nosuchcommand-xyz is neither a shell builtin nor a command on PATH`}},
	}, {
		name: "markers",
		readme: "<!-- docs-test: slow -->\n```sh\nexit 1\n```\n<!-- docs-test: data -->\n```sh\nexit 1\n```\n" +
			"<!-- docs-test: skip (a Slurm script) -->\n```sh\nsbatch job.sh\n```\n```sh\ntrue\n```\n",
		want: []Status{Skipped, Skipped, Skipped, Passed},
		why:  [][]string{{"slow: DARRM_DOCS_SLOW=1 runs them"}, {"data: no data here"}, {"a Slurm script"}},
	}, {
		name:   "slow data blocks need both the request and the data",
		readme: "<!-- docs-test: slow data -->\n```sh\nexit 1\n```\n",
		edit:   func(c *Config) { c.Slow = func(Block) bool { return true } },
		want:   []Status{Skipped},
		why:    [][]string{{"data: no data here"}},
	}, {
		name:   "a slow block on request",
		readme: "<!-- docs-test: slow -->\n```sh\nexit 3\n```\n",
		edit:   func(c *Config) { c.Slow = func(Block) bool { return true } },
		want:   []Status{Failed},
		why:    [][]string{{"README.md:3: exit status 3, the last command started: exit 3"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := runDoc(t, tc.readme, tc.edit)
			check(t, got, tc.want, tc.why...)
			if tc.output != "" && (len(got) == 0 || !strings.Contains(got[0].Output, tc.output)) {
				t.Errorf("output %q does not contain %q", got[0].Output, tc.output)
			}
		})
	}
}

// TestRunFileBackground checks that what a block leaves running in the
// background is stopped when the block ends.
func TestRunFileBackground(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	got := runDoc(t, "```sh\nsleep 300 &\necho $! > \"$PID_FILE\"\n```\n", func(c *Config) { c.Env = append(c.Env, "PID_FILE="+pidFile) })
	check(t, got, []Status{Passed})
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	// Killed, then reaped by whoever adopted it: poll rather than race.
	for i := 0; ; i++ {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		st, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if f := strings.Fields(string(st)); len(f) > 2 && f[2] == "Z" {
			return // killed, not yet reaped
		}
		if i == 100 {
			t.Fatalf("the block's background process %d still runs: %v", pid, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestIsolation: a block that writes outside its scratch folder fails
// where user namespaces make the isolation possible, and the repository's
// copy, its scratch folder and Go's caches stay writable.
func TestIsolation(t *testing.T) {
	outside := t.TempDir() // under the temporary folder, as a reader's /tmp file is
	iso := NewIsolation()
	if err := iso.Probe(context.Background()); err != nil {
		t.Skip(err)
	}
	target := filepath.Join(outside, "labels.csv")
	// The paths come through the environment: the text of a block that
	// names them is refused before anything runs.
	readme := "```sh\ntmp=$(printenv TMPDIR) && home=$(printenv HOME) && darrm solve > out.txt && echo x > \"$tmp/ok\" && echo x > \"$home/ok\"\n```\n" +
		"```sh\necho x > \"$TARGET\"\n```\n"
	got := runDoc(t, readme, func(c *Config) {
		c.Env = append(c.Env, "TARGET="+target)
		c.Isolation = NewIsolation(c.TempDir)
		if err := c.Isolation.Probe(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	check(t, got, []Status{Passed, Failed}, nil, []string{"README.md:5: exit status 1: echo x >"})
	if len(got) == 2 && !strings.Contains(got[1].Output, "Read-only file system") {
		t.Errorf("output %q, want the read-only file system named", got[1].Output)
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("the block wrote %s", target)
	}
}

func TestSummary(t *testing.T) {
	b := func(line int, m Marker, reason string) Block {
		return Block{File: "README.md", Line: line, Marker: m, Reason: reason}
	}
	got := Summary([]Result{
		{Block: b(3, Run, ""), Status: Passed, Elapsed: 1500 * time.Millisecond},
		{Block: b(9, Slow, ""), Status: Skipped, Why: "slow: DARRM_DOCS_SLOW=1 runs them"},
		{Block: b(14, Skip, "downloads"), Status: Skipped, Why: "downloads"},
		{Block: b(20, Run, ""), Status: Failed, Why: "README.md:21: exit status 2", Elapsed: time.Second},
		{Block: b(30, Slow, ""), Status: Skipped, Why: "slow: DARRM_DOCS_SLOW=1 runs them"},
	}, 1, 4*time.Second)
	want := "docs test: 5 sh blocks in 1 file: 2 ran in 2.5 s (4.0 s in all), 1 passed, 1 failed, 3 skipped\n" +
		"  skipped, slow: DARRM_DOCS_SLOW=1 runs them: README.md:9, README.md:30\n" +
		"  skipped, skip: README.md:14 (downloads)"
	if got != want {
		t.Errorf("Summary =\n%s\nwant\n%s", got, want)
	}
}
