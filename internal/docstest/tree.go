package docstest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// TrackedFiles returns the files git tracks in the work tree at root
// (slash-separated, relative to root), without those deleted from the work
// tree.
func TrackedFiles(root string) ([]string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached").Output()
	if err != nil {
		return nil, fmt.Errorf("listing the tracked files of %s: git ls-files: %w%s", root, err, stderrOf(err))
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f))); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("git tracks no files in %s", root)
	}
	return files, nil
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// entry is what a Tree records of one file.
type entry struct {
	mode  fs.FileMode
	size  int64
	mtime time.Time
	sum   [sha256.Size]byte // of the content, or of the target of a symlink
}

// Tree is the state of a directory's files: it tells a block that leaves a
// file behind, or changes or deletes one.
type Tree struct {
	root  string
	files map[string]entry // by slash path relative to root
	dirs  map[string]bool
}

// Copy copies files (slash paths relative to src) from src into dst, which
// it creates, keeping executable bits and symlinks, and returns the state
// of dst.
func Copy(src, dst string, files []string) (*Tree, error) {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := copyFile(filepath.Join(src, filepath.FromSlash(f)), filepath.Join(dst, filepath.FromSlash(f))); err != nil {
			return nil, fmt.Errorf("copying %s: %w", f, err)
		}
	}
	return Scan(dst)
}

func copyFile(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(from)
		if err != nil {
			return err
		}
		return os.Symlink(target, to)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (mode %v)", from, fi.Mode())
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Scan records the state of every file and directory under root.
func Scan(root string) (*Tree, error) {
	empty := &Tree{root: root, files: map[string]entry{}, dirs: map[string]bool{}}
	_, t, err := empty.Changes()
	return t, err
}

func stat(path string) (entry, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return entry{}, err
	}
	return entry{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime()}, nil
}

func sum(path string, mode fs.FileMode) ([sha256.Size]byte, error) {
	if mode&fs.ModeSymlink != 0 {
		target, err := os.Readlink(path)
		return sha256.Sum256([]byte(target)), err
	}
	if !mode.IsRegular() {
		return sha256.Sum256([]byte(mode.String())), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return [sha256.Size]byte{}, err
	}
	var s [sha256.Size]byte
	copy(s[:], h.Sum(nil))
	return s, nil
}

// Changes lists how the directory differs from t: files and (empty)
// directories added, files whose content or mode changed, files and
// directories deleted. A file rewritten with the same content is not a
// change, as for git. It returns the new state too, against which the next
// change is measured. (A deleted directory shows as its deleted files.)
func (t *Tree) Changes() (Changes, *Tree, error) {
	now := &Tree{root: t.root, files: map[string]entry{}, dirs: map[string]bool{}}
	var c Changes
	err := filepath.WalkDir(t.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(t.root, path)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			now.dirs[rel] = true
			return nil
		}
		e, err := stat(path)
		if err != nil {
			return err
		}
		old, had := t.files[rel]
		if had && old.size == e.size && old.mode == e.mode && old.mtime.Equal(e.mtime) {
			e.sum = old.sum
		} else if e.sum, err = sum(path, e.mode); err != nil {
			return err
		}
		now.files[rel] = e
		switch {
		case !had:
			c.Added = append(c.Added, rel)
		case old.mode != e.mode || !bytes.Equal(old.sum[:], e.sum[:]):
			c.Modified = append(c.Modified, rel)
		}
		return nil
	})
	if err != nil {
		return Changes{}, nil, fmt.Errorf("scanning %s: %w", t.root, err)
	}
	for rel := range t.files {
		if _, ok := now.files[rel]; !ok {
			c.Deleted = append(c.Deleted, rel)
		}
	}
	for rel := range now.dirs {
		if !t.dirs[rel] && !now.hasUnder(rel) {
			c.Added = append(c.Added, rel+"/")
		}
	}
	sort.Strings(c.Added)
	sort.Strings(c.Modified)
	sort.Strings(c.Deleted)
	return c, now, nil
}

// hasUnder reports whether t has a file or directory below dir.
func (t *Tree) hasUnder(dir string) bool {
	p := dir + "/"
	for f := range t.files {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	for d := range t.dirs {
		if strings.HasPrefix(d, p) {
			return true
		}
	}
	return false
}

// Changes are the differences Tree.Changes found.
type Changes struct {
	Added, Modified, Deleted []string
}

// Of returns the changes to the files in set: files of the repository
// modified or deleted (a file added is never in the set: it was not there).
func (c Changes) Of(set map[string]bool) Changes {
	var out Changes
	for _, f := range c.Modified {
		if set[f] {
			out.Modified = append(out.Modified, f)
		}
	}
	for _, f := range c.Deleted {
		if set[f] {
			out.Deleted = append(out.Deleted, f)
		}
	}
	return out
}

// AddedFiles returns the files added (not the empty directories).
func (c Changes) AddedFiles() []string {
	var files []string
	for _, f := range c.Added {
		if !strings.HasSuffix(f, "/") {
			files = append(files, f)
		}
	}
	return files
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool { return len(c.Added)+len(c.Modified)+len(c.Deleted) == 0 }

func (c Changes) String() string {
	var parts []string
	for _, x := range []struct {
		what  string
		files []string
	}{{"left behind", c.Added}, {"modified", c.Modified}, {"deleted", c.Deleted}} {
		if len(x.files) > 0 {
			parts = append(parts, x.what+" "+strings.Join(x.files, ", "))
		}
	}
	return strings.Join(parts, "; ")
}
