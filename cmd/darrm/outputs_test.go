package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/outputs"
)

// TestOutputFolders: every output of every command (its output flags, and
// ledger init's LEDGER) in a folder that does not exist is refused before
// any work, naming the folder and the folder close to it, with exit 2.
func TestOutputFolders(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "results"), 0o755)
	missing := filepath.Join(dir, "reslts")
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		var args []string
		var names []string
		if what := c.Annotations["output"]; what != "" {
			args, names = []string{filepath.Join(missing, "x")}, []string{what}
		}
		for _, name := range outputs.Flags {
			if f := c.Flags().Lookup(name); f != nil {
				names = append(names, "--"+name)
			}
		}
		for _, name := range names {
			cmd := c
			if strings.HasPrefix(name, "--") {
				if err := c.Flags().Set(name[2:], filepath.Join(missing, "x.svg")); err != nil {
					t.Fatal(err)
				}
			}
			err := outputs.Check(cmd, args, outputs.Protected(cmd, args))
			want := "folder " + missing + " does not exist (create it first); did you mean " + filepath.Join(dir, "results") + "?"
			if !cli.IsUsage(err) || !strings.Contains(err.Error(), name+" ") || !strings.Contains(err.Error(), want) {
				t.Errorf("%s %s: %v", c.CommandPath(), name, err)
			}
			if strings.HasPrefix(name, "--") {
				c.Flags().Set(name[2:], "")
				c.Flags().Lookup(name[2:]).Changed = false // not given, as before
			}
			checked++
		}
	}
	walk(newRootCmd())
	if checked < 8 {
		t.Errorf("checked %d outputs: the command tree has more", checked)
	}
	for _, args := range [][]string{
		{"solve", "--K", "5", "--m", "2", "--no-cache", "--plot", filepath.Join(missing, "g.svg")},
		{"ledger", "init", filepath.Join(missing, "k.ledger"), "--ensemble", "e", "--budget-eps", "1", "--budget-delta", "0", "--K", "3", "--eps", "0.1", "--Delta", "1e-5", "--kind", "per-query", "--partition", "shared"},
	} {
		_, stderr, code := darrm(t, "", args...)
		if code != exitUsage || !strings.Contains(stderr, "folder "+missing+" does not exist") || strings.Contains(stderr, ".tmp") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// TestCacheDirIsFile: a cache folder that is a file, or under one, is bad
// input naming the flag or the variable that gave it (exit 2).
func TestCacheDirIsFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	for _, dir := range []string{file, filepath.Join(file, "sub")} {
		_, stderr, code := darrm(t, "", "solve", "--K", "5", "--m", "2", "--cache-dir", dir)
		if code != exitUsage || !strings.Contains(stderr, "--cache-dir "+dir+": not a folder") {
			t.Errorf("--cache-dir %s: exit %d: %s", dir, code, stderr)
		}
	}
	t.Setenv("DARRM_CACHE_DIR", file)
	if _, stderr, code := darrm(t, "", "solve", "--K", "5", "--m", "2"); code != exitUsage || !strings.Contains(stderr, "the cache folder "+file+" ($DARRM_CACHE_DIR") {
		t.Errorf("DARRM_CACHE_DIR a file: exit %d: %s", code, stderr)
	}
}
