//go:build unix

package ledger

import (
	"context"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// lock takes an advisory lock on f, exclusive or shared, which ends when
// f is closed. While another process holds it, it calls waiting once and
// polls until it gets it, ctx is done or it has waited timeout
// (errLockTimeout): a blocking flock could not be interrupted.
func lock(ctx context.Context, f *os.File, exclusive bool, waiting func(), timeout time.Duration) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	pause := time.Millisecond
	var deadline time.Time
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch err {
		case nil:
			return nil
		case syscall.EINTR:
			continue
		case syscall.EWOULDBLOCK:
		default:
			return err
		}
		switch {
		case deadline.IsZero():
			deadline = time.Now().Add(timeout)
			if waiting != nil {
				waiting()
			}
		case time.Now().After(deadline):
			return errLockTimeout
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 50*time.Millisecond, time.Until(deadline)+time.Millisecond)
	}
}

// tryLock takes the lock if no other process holds it, and reports
// whether it did.
func tryLock(f *os.File, exclusive bool) bool {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}

func funlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// fileID returns the device and inode of a file.
func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}

// oNonBlock opens a FIFO without waiting for its other end (the file is
// then refused as no regular file).
const oNonBlock = syscall.O_NONBLOCK
