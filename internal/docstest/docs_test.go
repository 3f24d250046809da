//go:build unix

package docstest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/experiments/datasets"
)

// TestDocs runs every ```sh block of README.md and docs/*.md as written (see
// the package comment). Environment:
//
//	DARRM_DOCS_SLOW=1        run the slow blocks too (give go test a -timeout to match);
//	                         or a comma-separated list of them, FILE:LINE of the opening fence
//	DARRM_DOCS_DATA=0        skip the data blocks even when the data are present
//	DARRM_DOCS_TIMEOUT=5m    the limit per block (slow blocks: DARRM_DOCS_SLOW_TIMEOUT, 2h)
//	DARRM_DOCS_SUMMARY=FILE  also write the summary (and the failures) to FILE
//
// go test -short skips it.
func TestDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the docs test builds darrm and runs the docs' shell blocks")
	}
	if os.Getenv(nestedEnv) != "" {
		t.Skip("running inside a docs block (" + nestedEnv + " is set)")
	}
	start := time.Now()
	src := repoRoot(t)
	files, err := TrackedFiles(src)
	if err != nil {
		t.Fatal(err)
	}
	// go test caches a passing result until a file the test opened changes:
	// the copies open every tracked file; the index tells a file added.
	if out, err := exec.Command("git", "-C", src, "rev-parse", "--git-path", "index").Output(); err == nil {
		idx := strings.TrimSpace(string(out))
		if !filepath.IsAbs(idx) {
			idx = filepath.Join(src, idx)
		}
		_, _ = os.Stat(idx)
	}
	docs := docFiles(files)
	if len(docs) == 0 {
		t.Fatal("no README.md or docs/*.md among the tracked files")
	}

	goBin, goEnv := goTool(t, src)
	bin := filepath.Join(t.TempDir(), "bin")
	buildStart := time.Now()
	build := exec.Command(goBin, "build", "-o", filepath.Join(bin, "darrm"), "./cmd/darrm")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/darrm: %v\n%s", err, out)
	}
	t.Logf("built darrm in %.1f s", time.Since(buildStart).Seconds())

	dataDir, noData := dataState(src)
	timeout := envDuration(t, "DARRM_DOCS_TIMEOUT", 5*time.Minute)
	slowTimeout := envDuration(t, "DARRM_DOCS_SLOW_TIMEOUT", 2*time.Hour)

	ctx := t.Context()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-30*time.Second))
		defer cancel()
	}
	scratch := t.TempDir()
	iso := NewIsolation(append([]string{scratch}, goCaches(goEnv)...)...)
	if err := iso.Probe(ctx); err != nil {
		t.Logf("the blocks run without read-only /tmp and home folders (only the check of their text keeps them out): %v", err)
		iso = nil
	}

	slow, slowAsked := slowSelection()
	slowSeen := map[string]bool{}
	cfg := Config{
		Src:         src,
		Files:       files,
		TempDir:     scratch,
		Isolation:   iso,
		PathDirs:    []string{bin, filepath.Dir(goBin)},
		Env:         append(os.Environ(), goEnv...),
		DataDir:     dataDir,
		NoData:      noData,
		Slow:        slow,
		Timeout:     timeout,
		SlowTimeout: slowTimeout,
	}
	var all []Result
	ran := 0
	defer func() {
		for pos := range slowAsked {
			if !slowSeen[pos] {
				t.Errorf("DARRM_DOCS_SLOW names %s, which is not the opening fence of a slow block of a file run", pos)
			}
		}
	}()
	for _, doc := range docs {
		t.Run(doc, func(t *testing.T) {
			ran++
			src, err := os.ReadFile(filepath.Join(cfg.Src, filepath.FromSlash(doc)))
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := Parse(doc, src)
			if err != nil {
				t.Errorf("%v", err)
				for _, b := range blocks {
					all = append(all, Result{Block: b, Status: Skipped, Why: "not run: " + doc + " has a bad docs-test marker or fence"})
				}
				return
			}
			cfg := cfg
			cfg.Logf = t.Logf
			for _, b := range blocks {
				if b.Marker&Slow != 0 {
					slowSeen[b.Pos()] = true
				}
			}
			for _, r := range RunFile(ctx, cfg, doc, blocks) {
				all = append(all, r)
				if r.Status != Failed {
					continue
				}
				if r.Output != "" {
					t.Errorf("%s\n    output (last lines):\n%s", r.Why, indent(r.Output, "    | "))
				} else {
					t.Errorf("%s", r.Why)
				}
			}
		})
	}
	summary := Summary(all, ran, time.Since(start))
	t.Log(summary)
	if f := os.Getenv("DARRM_DOCS_SUMMARY"); f != "" {
		// go test prints a passing package's log only with -v: .ci/run
		// prints this file instead of running the test twice.
		var failures []string
		for _, r := range all {
			if r.Status == Failed {
				failures = append(failures, "FAILED "+r.Why)
			}
		}
		if err := os.WriteFile(f, []byte(strings.Join(append(failures, summary), "\n")+"\n"), 0o644); err != nil {
			t.Errorf("DARRM_DOCS_SUMMARY: %v", err)
		}
	}
}

// goTool returns the go command that runs this test and the settings the
// blocks' go must keep although their HOME moves: the build and module
// caches and the user's go env file.
func goTool(t *testing.T, dir string) (string, []string) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the docs test needs the go command on PATH: %v", err)
	}
	vars := []string{"GOROOT", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"}
	cmd := exec.Command(goBin, append([]string{"env"}, vars...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go env: %v%s", err, stderrOf(err))
	}
	vals := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(vals) != len(vars) {
		t.Fatalf("go env printed %d lines for %d variables:\n%s", len(vals), len(vars), out)
	}
	var env []string
	for i, v := range vars {
		if vals[i] != "" {
			env = append(env, v+"="+vals[i])
		}
	}
	return filepath.Join(vals[0], "bin", "go"), env
}

// goCaches returns the folders the blocks' go writes: its build and module
// caches, from the settings goTool returns.
func goCaches(env []string) []string {
	var dirs []string
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == "GOCACHE" || k == "GOMODCACHE" {
			dirs = append(dirs, v)
		}
	}
	return dirs
}

// dataState returns the data folder when every file scripts/fetch-data.sh
// fetches is in it, or why the data blocks are skipped.
func dataState(src string) (string, string) {
	if os.Getenv("DARRM_DOCS_DATA") == "0" {
		return "", "DARRM_DOCS_DATA=0"
	}
	dir, err := datasets.DefaultDir()
	if err != nil {
		return "", err.Error()
	}
	script, err := os.ReadFile(filepath.Join(src, "scripts", "fetch-data.sh"))
	if err != nil {
		return "", err.Error()
	}
	files, err := DataFiles(script)
	if err != nil {
		return "", err.Error()
	}
	if why := MissingData(dir, files); why != "" {
		return "", why
	}
	return dir, ""
}

// slowSelection reads DARRM_DOCS_SLOW: "1" runs every slow block, a list of
// FILE:LINE runs those; it also returns the positions listed.
func slowSelection() (func(Block) bool, map[string]bool) {
	v := strings.TrimSpace(os.Getenv("DARRM_DOCS_SLOW"))
	switch v {
	case "", "0":
		return nil, nil
	case "1":
		return func(Block) bool { return true }, nil
	}
	asked := map[string]bool{}
	for _, pos := range strings.Split(v, ",") {
		if pos = strings.TrimSpace(pos); pos != "" {
			asked[pos] = true
		}
	}
	return func(b Block) bool { return asked[b.Pos()] }, asked
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration such as 5m", name, v)
	}
	return d
}

func indent(s, prefix string) string {
	var b bytes.Buffer
	for _, l := range strings.Split(s, "\n") {
		b.WriteString(prefix + l + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
