//go:build unix

package ledger

import (
	"os"
	"syscall"
)

// lock takes an exclusive advisory lock on f, waiting for other holders;
// the lock ends when f is closed.
func lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}
