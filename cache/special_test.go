//go:build unix

package cache

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestSpecialEntries: an entry that is a link to /dev/zero, a FIFO, a
// directory, or a file of a GiB is corrupt, found so at once, without
// reading more than an entry can need; Put replaces such an entry with a
// good one.
func TestSpecialEntries(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := Key{Problem: testParams, Prior: "uniform"}
	path := d.Path(key)
	for name, make := range map[string]func() error{
		"link to /dev/zero": func() error { return os.Symlink("/dev/zero", path) },
		"FIFO":              func() error { return syscall.Mkfifo(path, 0o600) },
		"directory":         func() error { return os.Mkdir(path, 0o755) },
		"a GiB": func() error {
			f, err := os.Create(path)
			if err == nil {
				err = f.Truncate(1 << 30)
				f.Close()
			}
			return err
		},
	} {
		os.RemoveAll(path)
		if err := make(); err != nil {
			t.Fatal(err)
		}
		_, err := d.Get(key)
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "not a regular file") && !strings.Contains(err.Error(), "larger") {
			t.Errorf("%s: %v, want a CorruptError", name, err)
		}
		if name == "directory" {
			continue
		}
		if err := d.Put(solvedEntry(t, testParams)); err != nil {
			t.Fatalf("%s: put: %v", name, err)
		}
		if _, err := d.Get(key); err != nil {
			t.Errorf("%s: after put: %v", name, err)
		}
	}
}
