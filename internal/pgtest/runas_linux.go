package pgtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// attr is the SysProcAttr of initdb and postgres: in a process group of
// their own (^C at a terminal reaches the supervisor, which stops them in
// order), sent deathSig when the supervisor dies, and as r says.
func (r runAs) attr(deathSig syscall.Signal) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig}
	switch r.how {
	case asUser:
		a.Credential = &syscall.Credential{Uid: uint32(r.uid), Gid: uint32(r.gid), Groups: []uint32{}, NoSetGroups: r.noSetGroups}
	case inNamespace:
		// The caller's only id in its namespace (root) becomes r.uid in
		// the new one: the server's files stay the caller's.
		a.Cloneflags = syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: r.uid, HostID: os.Geteuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: r.gid, HostID: os.Getegid(), Size: 1}}
	}
	return a
}

// probeNamespace says why postgres cannot run as r (nil when it can): it
// runs postgres --version so.
func probeNamespace(r runAs, bin string) error {
	cmd := exec.Command(filepath.Join(bin, "postgres"), "--version")
	cmd.SysProcAttr = r.attr(syscall.SIGKILL)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// idMapped says whether id is mapped in this process's user namespace, by
// its uid_map or gid_map (file).
func idMapped(file string, id int) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var inside, outside, n int64
		if _, err := fmt.Sscan(sc.Text(), &inside, &outside, &n); err == nil && int64(id) >= inside && int64(id) < inside+n {
			return true
		}
	}
	return false
}

// setgroupsDenied says whether this user namespace forbids setgroups.
func setgroupsDenied() bool {
	b, err := os.ReadFile("/proc/self/setgroups")
	return err == nil && strings.TrimSpace(string(b)) == "deny"
}
