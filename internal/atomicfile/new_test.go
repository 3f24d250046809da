//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteNew: WriteNew creates a file where there is none, with its
// permissions, and refuses (fs.ErrExist) a path where anything is, a
// file, a dangling link or one that appeared while it wrote, leaving it
// as it was; with or without O_TMPFILE, no temporary file is left.
func TestWriteNew(t *testing.T) {
	defer func() { tryAnonymous = true }()
	for _, anonymous := range []bool{true, false} {
		tryAnonymous = anonymous
		dir := t.TempDir()
		p := func(name string) string { return filepath.Join(dir, name) }
		fill := func(s string) func(*os.File) error {
			return func(f *os.File) error { _, err := f.WriteString(s); return err }
		}
		if err := WriteNew(p("new"), 0o640, fill("1")); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(p("new")); err != nil || st.Mode().Perm() != 0o640 || read(t, p("new")) != "1" {
			t.Errorf("anonymous %v: new file %v, %v", anonymous, st, err)
		}
		os.Symlink("missing", p("dangling"))
		for _, name := range []string{"new", "dangling"} {
			if err := WriteNew(p(name), 0o644, fill("2")); !errors.Is(err, fs.ErrExist) {
				t.Errorf("anonymous %v: %s written over: %v", anonymous, name, err)
			}
		}
		err := WriteNew(p("late"), 0o644, func(f *os.File) error {
			return os.WriteFile(p("late"), []byte("first"), 0o644)
		})
		if !errors.Is(err, fs.ErrExist) || read(t, p("late")) != "first" {
			t.Errorf("anonymous %v: a file that appeared while writing: %v", anonymous, err)
		}
		if err := WriteNew(p("failed"), 0o644, func(*os.File) error { return errors.New("no") }); err == nil {
			t.Errorf("anonymous %v: a failed fill wrote", anonymous)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 3 || read(t, p("new")) != "1" {
			t.Errorf("anonymous %v: the folder holds %v", anonymous, entries)
		}
	}
}
