// Package atomicfile writes files so that readers see either the old content
// or the complete new content, never a partial file: darrm never leaves a
// half-written output, cache entry or plot behind.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write creates path by calling fill on a temporary file in the same
// directory and renaming it over path when fill succeeds. On any error the
// temporary file is removed and path is left untouched.
func Write(path string, perm os.FileMode, fill func(f *os.File) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = fill(tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Chmod(tmp.Name(), perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
