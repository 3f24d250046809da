package docstest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ignores tells which files of a copy of the repository git ignores by
// the repository's own rules (its .gitignore files), as in a reader's
// fresh clone: not by the user's global excludes or a .git/info/exclude,
// which a clone does not share. It asks git itself, through a repository
// of its own outside the copy (the copy has no .git).
type ignores struct {
	gitDir, root string
	env          []string
}

// newIgnores returns the ignore rules of the copy at root, with its
// repository in dir (a new folder outside root).
func newIgnores(dir, root string) (*ignores, error) {
	ig := &ignores{gitDir: filepath.Join(dir, "git"), root: root,
		env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull}}
	cmd := exec.Command("git", "init", "--quiet", "--bare", ig.gitDir)
	cmd.Env = ig.env
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git init: %v: %s", err, bytes.TrimSpace(out))
	}
	return ig, nil
}

// notIgnored returns those of files (slash paths relative to root) that
// git does not ignore: a reader's clone would list them as untracked.
func (ig *ignores) notIgnored(files []string) ([]string, error) {
	if len(files) == 0 {
		return nil, nil
	}
	cmd := exec.Command("git", "--git-dir="+ig.gitDir, "--work-tree="+ig.root, "-c", "core.bare=false",
		"check-ignore", "--no-index", "--stdin", "-z")
	cmd.Dir, cmd.Env = ig.root, ig.env
	cmd.Stdin = strings.NewReader(strings.Join(files, "\x00") + "\x00")
	out, err := cmd.Output()
	// check-ignore exits 1 when it ignores none of them.
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
		return nil, fmt.Errorf("git check-ignore: %v%s", err, stderrOf(err))
	}
	ignored := map[string]bool{}
	for _, f := range strings.Split(string(out), "\x00") {
		ignored[f] = true
	}
	var left []string
	for _, f := range files {
		if !ignored[f] {
			left = append(left, f)
		}
	}
	return left, nil
}
