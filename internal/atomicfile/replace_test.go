//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestReplace: Replace runs prepare once the new content is complete, with
// path still the old file, then replaces path (a link there too, not its
// target) with perm; a failed fill or prepare leaves path as it was,
// returns its error as it is, and leaves no temporary file, with or
// without O_TMPFILE.
func TestReplace(t *testing.T) {
	defer func() { tryAnonymous = true }()
	for _, anonymous := range []bool{true, false} {
		tryAnonymous = anonymous
		dir := t.TempDir()
		path, target := filepath.Join(dir, "ledger"), filepath.Join(dir, "target")
		os.WriteFile(path, []byte("old"), 0o644)
		fill := func(s string) func(*os.File) error {
			return func(f *os.File) error { _, err := f.WriteString(s); return err }
		}
		var steps []string
		prepare := func() error {
			steps = append(steps, "prepare with "+read(t, path))
			return nil
		}
		if err := Replace(path, 0o640, fill("new"), prepare); err != nil {
			t.Fatal(err)
		}
		st, err := os.Lstat(path)
		if err != nil || st.Mode() != 0o640 || read(t, path) != "new" || len(steps) != 1 || steps[0] != "prepare with old" {
			t.Errorf("anonymous %v: %v, %v, holds %q after steps %q", anonymous, st, err, read(t, path), steps)
		}

		errStep := errors.New("step failed")
		failing := func() error { steps = append(steps, "failing"); return errStep }
		if err := Replace(path, 0o644, fill("half"), failing); !errors.Is(err, errStep) || err != errStep || read(t, path) != "new" {
			t.Errorf("anonymous %v: a failed prepare: %v, file holds %q", anonymous, err, read(t, path))
		}
		steps = nil
		if err := Replace(path, 0o644, func(*os.File) error { return errStep }, failing); err != errStep || len(steps) != 0 || read(t, path) != "new" {
			t.Errorf("anonymous %v: a failed fill: %v after steps %q, file holds %q", anonymous, err, steps, read(t, path))
		}

		os.WriteFile(target, []byte("keep"), 0o644)
		link := filepath.Join(dir, "link")
		os.Symlink(target, link)
		if err := Replace(link, 0o644, fill("replaced"), nil); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Lstat(link); err != nil || !st.Mode().IsRegular() || read(t, link) != "replaced" || read(t, target) != "keep" {
			t.Errorf("anonymous %v: a link: %v, %v, target holds %q", anonymous, st, err, read(t, target))
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 3 {
			t.Errorf("anonymous %v: the folder holds %v", anonymous, entries)
		}
	}
}
