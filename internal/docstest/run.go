//go:build unix

package docstest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Config says where and how the blocks run.
type Config struct {
	Src     string   // the work tree whose files are copied, fresh for each Markdown file
	Files   []string // the files to copy (TrackedFiles(Src))
	TempDir string   // scratch space: the copies, HOME, caches, TMPDIR
	// PathDirs go first on PATH: darrm's folder and go's.
	PathDirs []string
	// Env is the environment to start from. HOME, TMPDIR, XDG_*, DARRM_*,
	// BASH_ENV, ENV and CDPATH are replaced, and GOPATH is $HOME/go with
	// no GOBIN, as on a new machine (go install writes into the scratch
	// folder); the caches Go needs that would follow HOME or GOPATH
	// (GOCACHE, GOMODCACHE, GOENV) must be set in it.
	Env []string
	// DataDir is the real data folder when the data are present; otherwise
	// NoData says why data blocks are skipped.
	DataDir, NoData string
	// Slow says whether a slow block runs; nil runs none.
	Slow func(Block) bool
	// Timeout bounds a block; SlowTimeout a slow block.
	Timeout, SlowTimeout time.Duration
	// Isolation, if not nil, runs the blocks where writing outside their
	// scratch folder fails (NewIsolation; Probe first).
	Isolation *Isolation
	// Logf, if not nil, receives a line per block.
	Logf func(format string, args ...any)
}

// Status is the outcome of a block: Passed, Failed or Skipped.
type Status int

const (
	// Passed blocks ran and exited 0 without a command failing, touching
	// the repository or leaving a file that git does not ignore.
	Passed Status = iota
	// Failed blocks did not check, failed, timed out, changed files of the
	// repository or left files behind that git does not ignore.
	Failed
	// Skipped blocks did not run.
	Skipped
)

// Result is what happened to one block.
type Result struct {
	Block   Block
	Status  Status
	Why     string // the reason it was skipped, or the failure (starting "file:line: ")
	Elapsed time.Duration
	Output  string // the tail of its output, when it failed
}

// headerLines is the number of lines the runner puts before a block.
const headerLines = 4

// nestedEnv is set in the blocks' environment, so that a block running
// `go test ./...` does not run the docs test again inside itself.
const nestedEnv = "DARRM_DOCSTEST_NESTED"

// RunFile runs the blocks of one Markdown file in order, from the root of a
// fresh copy of cfg.Src with its own HOME, caches and TMPDIR. It first
// checks every block (bash -n, prompts, output lines, commands that exist);
// a file with a bad block runs nothing. After a block fails, the file's
// later blocks are skipped, since they may depend on it.
func RunFile(ctx context.Context, cfg Config, file string, blocks []Block) []Result {
	results := make([]Result, 0, len(blocks))
	failAll := func(why string) []Result {
		for _, b := range blocks {
			results = append(results, Result{Block: b, Status: Failed, Why: why})
		}
		return results
	}
	scratch, err := os.MkdirTemp(cfg.TempDir, strings.NewReplacer("/", "-", ".", "-").Replace(file)+"-")
	if err != nil {
		return failAll(fmt.Sprintf("%s: %v", file, err))
	}
	root := filepath.Join(scratch, "repo")
	tracked := make(map[string]bool, len(cfg.Files))
	for _, f := range cfg.Files {
		tracked[f] = true
	}
	tree, err := Copy(cfg.Src, root, cfg.Files)
	if err != nil {
		return failAll(fmt.Sprintf("%s: fresh copy of the repository: %v", file, err))
	}
	ign, err := newIgnores(scratch, root)
	if err != nil {
		return failAll(fmt.Sprintf("%s: the repository's ignore rules: %v", file, err))
	}
	env, err := fileEnv(cfg, scratch)
	if err != nil {
		return failAll(fmt.Sprintf("%s: %v", file, err))
	}
	resolve, err := resolver(env, root)
	if err != nil {
		return failAll(fmt.Sprintf("%s: %v", file, err))
	}
	bad := false
	for _, b := range blocks {
		var errs []error
		if err := syntaxCheck(ctx, b); err != nil {
			errs = append(errs, err)
		}
		r := resolve
		if b.Marker&Skip != 0 {
			r = nil // may name commands only its own setting has (sbatch, kubectl)
		}
		if err := Lint(b, r); err != nil {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			bad = true
			results = append(results, Result{Block: b, Status: Failed, Why: errors.Join(errs...).Error()})
		} else {
			results = append(results, Result{Block: b, Status: Skipped})
		}
	}
	if bad {
		for i := range results {
			if results[i].Status == Skipped {
				results[i].Why = "not run: another block of " + file + " does not check"
			}
		}
		return results
	}
	failed := false
	for i, b := range blocks {
		r := &results[i]
		switch {
		case failed:
			r.Why = "not run: an earlier block of " + file + " failed"
			continue
		case b.Marker&Skip != 0:
			r.Why = b.Reason
			continue
		case b.Marker&Slow != 0 && (cfg.Slow == nil || !cfg.Slow(b)):
			r.Why = "slow: DARRM_DOCS_SLOW=1 runs them"
			continue
		case b.Marker&Data != 0 && cfg.DataDir == "":
			r.Why = "data: " + cfg.NoData
			continue
		}
		benv := env
		timeout := cfg.Timeout
		if b.Marker&Data != 0 {
			benv = append(env[:len(env):len(env)], "DARRM_DATA="+cfg.DataDir)
		}
		if b.Marker&Slow != 0 {
			timeout = cfg.SlowTimeout
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl)-10*time.Second < timeout {
			timeout = max(time.Until(dl)-10*time.Second, time.Second)
		}
		*r = runBlock(ctx, b, root, scratch, benv, timeout, cfg.Isolation)
		if r.Status == Passed {
			c, now, err := tree.Changes()
			var left []string
			if err == nil {
				left, err = ign.notIgnored(c.AddedFiles())
			}
			c = c.Of(tracked)
			switch {
			case err != nil:
				r.Status, r.Why = Failed, fmt.Sprintf("%s: after the block: %v", b.Pos(), err)
			case !c.Empty():
				r.Status = Failed
				r.Why = fmt.Sprintf("%s: the block changed files of the repository: %s (write outputs to new files in the current directory)", b.Pos(), c)
			case len(left) > 0:
				r.Status = Failed
				r.Why = fmt.Sprintf("%s: the block leaves files that git does not ignore, untracked in a reader's clone: %s (write outputs to names .gitignore ignores)", b.Pos(), strings.Join(left, ", "))
			}
			tree = now
		}
		if cfg.Logf != nil {
			switch r.Status {
			case Passed:
				cfg.Logf("%s: ok (%s, %.1f s)", b.Pos(), b.Marker, r.Elapsed.Seconds())
			default:
				cfg.Logf("%s: FAILED (%.1f s)", b.Pos(), r.Elapsed.Seconds())
			}
		}
		failed = r.Status == Failed
	}
	return results
}

// fileEnv is the environment of one file's blocks: HOME, the XDG folders,
// GOPATH, darrm's cache, state and data folders and TMPDIR under scratch,
// PATH with cfg.PathDirs first.
func fileEnv(cfg Config, scratch string) ([]string, error) {
	home := filepath.Join(scratch, "home")
	dirs := map[string]string{
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		// Go's default on a new machine, where go install puts darrm.
		"GOPATH":          filepath.Join(home, "go"),
		"TMPDIR":          filepath.Join(scratch, "tmp"),
		"DARRM_CACHE_DIR": filepath.Join(scratch, "cache"),
		"DARRM_STATE_DIR": filepath.Join(scratch, "state"),
		// An empty folder, so that a block needing data it is not marked
		// for fails here, not only on a machine without them.
		"DARRM_DATA": filepath.Join(scratch, "no-data"),
	}
	var env []string
	path := ""
	for _, kv := range cfg.Env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH":
			path = v
		case k == "HOME", k == "TMPDIR", k == "BASH_ENV", k == "ENV", k == "CDPATH", k == "GOPATH", k == "GOBIN",
			strings.HasPrefix(k, "XDG_"), strings.Contains(k, "DARRM"):
		default:
			env = append(env, kv)
		}
	}
	for k, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		env = append(env, k+"="+d)
	}
	env = append(env, "PATH="+strings.Join(append(cfg.PathDirs[:len(cfg.PathDirs):len(cfg.PathDirs)], path), string(os.PathListSeparator)), nestedEnv+"=1")
	return env, nil
}

// resolver returns a function that tells whether a command's first word
// names a command in env from root: a shell builtin or keyword, a file on
// PATH, or a path (relative to root) to an executable file.
func resolver(env []string, root string) (func(string) error, error) {
	out, err := exec.Command("bash", "-c", "compgen -b; compgen -k").Output()
	if err != nil {
		return nil, fmt.Errorf("listing bash's builtins: %v%s", err, stderrOf(err))
	}
	builtin := map[string]bool{}
	for _, w := range strings.Fields(string(out)) {
		builtin[w] = true
	}
	var path []string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = filepath.SplitList(v)
		}
	}
	executable := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
	}
	return func(w string) error {
		if builtin[w] {
			return nil
		}
		if strings.Contains(w, "/") {
			p := w
			if !filepath.IsAbs(p) {
				p = filepath.Join(root, p)
			}
			if !executable(p) {
				return fmt.Errorf("%s is not an executable file of the repository", w)
			}
			return nil
		}
		for _, d := range path {
			if d != "" && executable(filepath.Join(d, w)) {
				return nil
			}
		}
		return fmt.Errorf("%s is neither a shell builtin nor a command on PATH", w)
	}, nil
}

// syntaxCheck runs bash -n on the block.
func syntaxCheck(ctx context.Context, b Block) error {
	cmd := exec.CommandContext(ctx, "bash", "-n")
	cmd.Stdin = strings.NewReader(b.Text())
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	// bash -n names the line of its standard input: make it the file's.
	msg := strings.TrimSpace(string(out))
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimPrefix(l, "bash: ")
		if rest, ok := strings.CutPrefix(l, "line "); ok {
			if n, tail, ok := strings.Cut(rest, ":"); ok {
				if k, err := strconv.Atoi(n); err == nil {
					l = fmt.Sprintf("%s:%d:%s", b.File, b.LineOf(k-1), tail)
				}
			}
		}
		lines = append(lines, l)
	}
	return fmt.Errorf("%s: bash -n: %s", b.Pos(), strings.Join(lines, "; "))
}

// runBlock runs one block with bash in dir, isolated by iso if not nil, and
// returns its result.
func runBlock(ctx context.Context, b Block, dir, scratch string, env []string, timeout time.Duration, iso *Isolation) Result {
	res := Result{Block: b, Status: Failed}
	base := filepath.Join(scratch, fmt.Sprintf("block-%d", b.Line))
	errFile, curFile, statusFile, outFile := base+".err", base+".cur", base+".status", base+".out"
	// The ERR trap records every failing command that set -e does not
	// ignore (set -E and inherit_errexit: also inside functions, subshells
	// and command substitutions, whose failure a command such as
	// `set -- $(...)` would otherwise swallow). The DEBUG trap records, at
	// the first command of each line, the line (so that a timeout can name
	// it) and a non-zero status left by the line before: set -e does not
	// stop at a failure before && or ||, so a list that failed that way
	// and let the block go on shows there.
	// The traps name their files by variables: a path quoted inside the
	// trap's own quotes would not stay quoted.
	script := fmt.Sprintf("set -eE -o pipefail; shopt -s inherit_errexit\n"+
		"__docstest_err=%s __docstest_cur=%s __docstest_status=%s\n"+
		"trap 'printf \"%%d %%d %%s\\n\" \"$?\" \"$LINENO\" \"$BASH_COMMAND\" >> \"$__docstest_err\"' ERR\n"+
		"trap '__docstest_s=$?; if [ \"$LINENO\" != \"${__docstest_l-}\" ]; then __docstest_l=$LINENO; printf \"%%d\\n\" \"$LINENO\" > \"$__docstest_cur\"; "+
		"[ \"$__docstest_s\" = 0 ] || printf \"%%d %%d\\n\" \"$__docstest_s\" \"$LINENO\" >> \"$__docstest_status\"; fi' DEBUG\n",
		shellQuote(errFile), shellQuote(curFile), shellQuote(statusFile)) + b.Text()
	if err := os.WriteFile(base+".sh", []byte(script), 0o644); err != nil {
		res.Why = fmt.Sprintf("%s: %v", b.Pos(), err)
		return res
	}
	out, err := os.Create(outFile)
	if err != nil {
		res.Why = fmt.Sprintf("%s: %v", b.Pos(), err)
		return res
	}
	defer out.Close()

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := iso.Command(ctx, base+".sh")
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, out, out
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	res.Elapsed = time.Since(start)
	if cmd.Process != nil {
		// What the block left running in the background.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if runErr == nil {
		// Exit 0, but a command failed where set -e let the block go on.
		if why := wentOn(b, errFile, statusFile); why != "" {
			res.Why, res.Output = why, tail(outFile, 40, 4096)
			return res
		}
		res.Status = Passed
		return res
	}
	res.Output = tail(outFile, 40, 4096)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Why = fmt.Sprintf("timed out after %v", timeout)
		if n, ok := lastLine(curFile); ok {
			first, cmd := commandAt(b.Lines, n)
			res.Why = fmt.Sprintf("%s:%d: %s, running: %s", b.File, b.LineOf(first), res.Why, cmd)
		} else {
			res.Why = b.Pos() + ": " + res.Why
		}
	case ctx.Err() != nil:
		res.Why = fmt.Sprintf("%s: interrupted: %v", b.Pos(), ctx.Err())
	default:
		res.Why = failure(b, runErr, errFile, curFile)
	}
	return res
}

// failure describes a block that exited non-zero: the file line and the
// source of the command that failed, and its exit status.
func failure(b Block, runErr error, errFile, curFile string) string {
	data, _ := os.ReadFile(errFile)
	first, _, _ := strings.Cut(string(data), "\n")
	if f := strings.SplitN(first, " ", 3); len(f) == 3 {
		status, err1 := strconv.Atoi(f[0])
		line, err2 := strconv.Atoi(f[1])
		if n := line - headerLines - 1; err1 == nil && err2 == nil && n >= 0 && n < len(b.Lines) {
			first, cmd := commandAt(b.Lines, n)
			return fmt.Sprintf("%s:%d: exit status %d: %s", b.File, b.LineOf(first), status, cmd)
		}
	}
	if n, ok := lastLine(curFile); ok {
		first, cmd := commandAt(b.Lines, n)
		return fmt.Sprintf("%s:%d: %v, the last command started: %s", b.File, b.LineOf(first), runErr, cmd)
	}
	return fmt.Sprintf("%s: %v", b.Pos(), runErr)
}

// wentOn describes a command that failed in a block that exited 0, or
// returns "": one that the ERR trap recorded (inside a command
// substitution or a subshell whose failure the command around it did not
// pass on), else a top-level list that failed before && or || and let the
// next one run. Pasted into a shell, such a block goes on past its
// failure.
func wentOn(b Block, errFile, statusFile string) string {
	if data, _ := os.ReadFile(errFile); len(data) > 0 {
		return failure(b, errors.New("exit status 0"), errFile, "") + " (inside a command substitution or a subshell: the command around it went on)"
	}
	data, _ := os.ReadFile(statusFile)
	tops := topLevel(b.Lines)
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		status, err1 := strconv.Atoi(f[0])
		line, err2 := strconv.Atoi(f[1])
		n := line - headerLines - 1
		i := slices.Index(tops, n)
		if err1 != nil || err2 != nil || i < 1 {
			continue
		}
		// The list that failed, its lines without their comments.
		var code []string
		var q byte
		for _, l := range b.Lines[tops[i-1]:n] {
			var c string
			c, q = scanLine(l, q)
			code = append(code, strings.TrimSuffix(strings.TrimSpace(c), "\\"))
		}
		return fmt.Sprintf("%s:%d: exit status %d: %s (a command before && or || failed: the block went on to line %d)",
			b.File, b.LineOf(tops[i-1]), status, strings.Join(strings.Fields(strings.Join(code, " ")), " "), b.LineOf(n))
	}
	return ""
}

// lastLine reads the block line the DEBUG trap recorded last, as an index
// into the block's lines.
func lastLine(curFile string) (int, bool) {
	data, err := os.ReadFile(curFile)
	if err != nil {
		return 0, false
	}
	line, err := strconv.Atoi(strings.TrimSpace(string(data)))
	n := line - headerLines - 1
	return n, err == nil && n >= 0
}

// commandAt returns the index of the first line of the command on line i
// of lines, and the command, with the lines it continues and that continue
// it (a trailing backslash) joined.
func commandAt(lines []string, i int) (int, string) {
	if i >= len(lines) {
		return i, "(end of block)"
	}
	lo, hi := i, i
	for lo > 0 && strings.HasSuffix(strings.TrimRight(lines[lo-1], " \t"), "\\") {
		lo--
	}
	for hi < len(lines)-1 && strings.HasSuffix(strings.TrimRight(lines[hi], " \t"), "\\") {
		hi++
	}
	var parts []string
	for _, l := range lines[lo : hi+1] {
		parts = append(parts, strings.TrimSuffix(strings.TrimSpace(l), "\\"))
	}
	return lo, strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

// tail returns at most the last n lines and max bytes of a file.
func tail(file string, n, max int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	if len(data) > max {
		data = data[len(data)-max:]
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
