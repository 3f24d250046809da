package docstest

import (
	"os"
	"syscall"
)

// namespaceAttr starts a process as root of a new user namespace, mapped to
// the caller's user and group, with a mount namespace of its own, in a
// process group of its own.
func namespaceAttr() (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{
		Setpgid:     true,
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}, nil
}
