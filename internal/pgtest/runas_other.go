//go:build unix && !linux

package pgtest

import (
	"errors"
	"syscall"
)

// attr is the SysProcAttr of initdb and postgres: in a process group of
// their own, and as r says. Only Linux has a parent-death signal: here a
// server outlives a supervisor that is killed.
func (r runAs) attr(syscall.Signal) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if r.how == asUser {
		a.Credential = &syscall.Credential{Uid: uint32(r.uid), Gid: uint32(r.gid), Groups: []uint32{}}
	}
	return a
}

func probeNamespace(runAs, string) error { return errors.New("user namespaces are Linux's") }

// idMapped: without user namespaces every id is mapped.
func idMapped(string, int) bool { return true }

func setgroupsDenied() bool { return false }

// MemoryFolder: the temporary folder, as no memory file system is known.
func MemoryFolder() string { return "" }
