//go:build !unix

package ledger

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"
)

var errNoLock = errors.New("file locking is implemented on Unix only; a ledger cannot be used safely here")

func lock(context.Context, *os.File, bool, func(), time.Duration) error { return errNoLock }

func tryLock(*os.File, bool) bool { return false }

func funlock(*os.File) {}

func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }

const oNonBlock = 0
