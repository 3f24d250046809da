//go:build !unix

package ledger

import (
	"errors"
	"os"
)

func lock(*os.File) error {
	return errors.New("file locking is implemented on Unix only; a ledger cannot be used safely here")
}
