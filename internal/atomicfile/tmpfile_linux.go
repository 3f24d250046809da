package atomicfile

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openAnonymous opens a file without a name in the folder dir (O_TMPFILE),
// for reading and writing by this process only, until linkAnonymous names
// it; it fails when /proc, through which linkAnonymous names it, is not
// mounted.
func openAnonymous(dir string) (*os.File, error) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		return nil, err
	}
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// linkAnonymous gives f, opened by openAnonymous, the name name (which
// must not exist).
func linkAnonymous(f *os.File, name string) error {
	return unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", f.Fd()), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
}
