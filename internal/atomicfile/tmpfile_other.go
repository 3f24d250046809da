//go:build !linux

package atomicfile

import (
	"errors"
	"os"
)

// openAnonymous is not available: temporary files are named.
func openAnonymous(dir string) (*os.File, error) { return nil, errors.ErrUnsupported }

// linkAnonymous is not available (openAnonymous).
func linkAnonymous(f *os.File, name string) error { return errors.ErrUnsupported }
