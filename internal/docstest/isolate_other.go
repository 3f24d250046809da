//go:build unix && !linux

package docstest

import (
	"errors"
	"syscall"
)

func namespaceAttr() (*syscall.SysProcAttr, error) {
	return nil, errors.New("user namespaces are Linux's")
}
