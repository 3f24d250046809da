package atomicfile

import (
	"fmt"
	"os"
)

// WriteNew creates path as Write does, but only where there is no file:
// the complete temporary file is linked to path, which fails with an
// error that is fs.ErrExist when anything is there, also a file that
// appeared while it was written. On any error path is left as it was.
func WriteNew(path string, perm os.FileMode, fill func(f *os.File) error) error {
	tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	defer tmp.remove() // the file, once linked to path, keeps that name
	if err := fill(tmp.f); err != nil {
		return err
	}
	if err := tmp.f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if tmp.name == "" {
		err = linkAnonymous(tmp.f, path)
	} else {
		err = os.Link(tmp.name, path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// The link is durable once the directory is.
	SyncDir(path)
	return nil
}
