package pgtest

import (
	"os"
	"syscall"
)

// memoryFolder is where a server that need not reach the disk makes its
// folder: /dev/shm, a memory file system, where it has room to spare and
// TMPDIR does not name the temporary folder (a sandbox's, say, which is
// then respected); "" otherwise, the temporary folder. Making a file there
// costs a fraction of a disk file system's CPU, and initdb and every
// CREATE DATABASE make hundreds: initdb took 0.83-0.92 s of CPU on ext4,
// 0.53-0.58 s in /dev/shm.
func memoryFolder() string {
	const (
		dir        = "/dev/shm"
		tmpfsMagic = 0x01021994
		// minFree leaves the server (some 60 MB, its WAL included) and the
		// machine room: a container's /dev/shm of 64 MB is too small.
		minFree = 1 << 30
	)
	var st syscall.Statfs_t
	if os.Getenv("TMPDIR") != "" || syscall.Statfs(dir, &st) != nil || st.Type != tmpfsMagic || st.Bavail*uint64(st.Bsize) < minFree {
		return ""
	}
	return dir
}
