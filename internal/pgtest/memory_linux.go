package pgtest

import "syscall"

// MemoryFolder is where a test makes files that need not reach the disk:
// /dev/shm, a memory file system, where it has room to spare and TMPDIR
// did not name the temporary folder when the test binary started (a
// sandbox's, say, which is then respected); "" otherwise, the temporary
// folder. Making and syncing a file there costs a fraction of a disk file
// system's CPU: initdb, which makes hundreds, took 0.83-0.92 s of CPU on
// ext4, 0.53-0.58 s in /dev/shm. The shared server makes its folder
// there; a package whose tests make many files may point TMPDIR into it
// (the ledger's TestMain).
func MemoryFolder() string {
	const (
		dir        = "/dev/shm"
		tmpfsMagic = 0x01021994
		// minFree leaves the server (some 60 MB, its WAL included) and the
		// machine room: a container's /dev/shm of 64 MB is too small.
		minFree = 1 << 30
	)
	var st syscall.Statfs_t
	if startTMPDIR != "" || syscall.Statfs(dir, &st) != nil || st.Type != tmpfsMagic || st.Bavail*uint64(st.Bsize) < minFree {
		return ""
	}
	return dir
}
