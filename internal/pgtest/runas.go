package pgtest

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// runAs is how the supervisor runs initdb and postgres, which refuse to run
// as root.
type runAs struct {
	how      how
	uid, gid int // asUser: the postgres user's; inNamespace: the caller's ids inside the namespace
	// noSetGroups: the user namespace forbids setgroups, so the
	// supplementary groups are kept as they are.
	noSetGroups bool
}

type how int

const (
	asSelf      how = iota // not root: as the caller
	asUser                 // truly root: as the postgres user
	inNamespace            // root of a user namespace alone: in a nested one, as a user other than root
)

func (r runAs) String() string {
	switch r.how {
	case asUser:
		return fmt.Sprintf("as the postgres user (uid %d)", r.uid)
	case inNamespace:
		return fmt.Sprintf("as uid %d of a user namespace mapped to the caller", r.uid)
	}
	return "as the caller"
}

// candidate is what the choice of a runAs looks at, found by the
// supervisor (chooseRunAs) and given by the tests.
type candidate struct {
	euid int
	// postgres is the postgres user, nil when there is none; its ids are
	// mapped when this (user) namespace holds them, and reach is why it
	// cannot reach the server's folder (nil when it can).
	postgres *user.User
	mapped   bool
	reach    error
	// namespace is why a nested user namespace cannot run the server (nil
	// when it can); nsID is the user the caller becomes there.
	namespace error
	nsID      int
}

// choose picks how to run the server: as the caller unless root; as the
// postgres user where it exists in this namespace and can reach the
// folder; in a nested user namespace where that works (root of a user
// namespace that maps no other user, as in `unshare -r`); else no way.
func (c candidate) choose() (runAs, error) {
	if c.euid != 0 {
		return runAs{how: asSelf}, nil
	}
	var why []string
	switch {
	case c.postgres == nil:
		why = append(why, "there is no postgres user")
	case !c.mapped:
		why = append(why, "the postgres user's ids are not mapped in this user namespace")
	case c.reach != nil:
		why = append(why, c.reach.Error())
	default:
		uid, _ := strconv.Atoi(c.postgres.Uid)
		gid, _ := strconv.Atoi(c.postgres.Gid)
		return runAs{how: asUser, uid: uid, gid: gid}, nil
	}
	if c.namespace == nil {
		return runAs{how: inNamespace, uid: c.nsID, gid: c.nsID}, nil
	}
	why = append(why, "a nested user namespace: "+c.namespace.Error())
	return runAs{}, &unavailableError{"running as root, as which PostgreSQL does not run, and as no other user: " +
		strings.Join(why, "; ")}
}

// chooseRunAs finds how the supervisor runs the server of cfg.
func chooseRunAs(cfg config) (runAs, error) {
	c := candidate{euid: os.Geteuid()}
	if c.euid != 0 {
		return c.choose()
	}
	c.nsID = 1
	if pg, err := user.Lookup("postgres"); err == nil {
		c.postgres = pg
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		c.nsID = uid
		c.mapped = idMapped("/proc/self/uid_map", uid) && idMapped("/proc/self/gid_map", gid)
		c.reach = enterable(filepath.Dir(cfg.Dir), uid, gid)
		if c.mapped && c.reach == nil {
			r, err := c.choose()
			r.noSetGroups = setgroupsDenied()
			return r, err
		}
	} else if nobody, err := user.Lookup("nobody"); err == nil {
		c.nsID, _ = strconv.Atoi(nobody.Uid)
	}
	c.namespace = probeNamespace(runAs{how: inNamespace, uid: c.nsID, gid: c.nsID}, cfg.Bin)
	return c.choose()
}

// own gives path to the user the server runs as.
func (r runAs) own(path string) error {
	if r.how != asUser {
		return nil
	}
	return os.Chown(path, r.uid, r.gid)
}

// enterable says why the user uid of group gid cannot enter dir, from the
// permission bits of dir and every folder above it (nil when it can).
func enterable(dir string, uid, gid int) error {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Stat_t
		if err := syscall.Stat(d, &st); err != nil {
			return err
		}
		mode, bit := uint32(st.Mode), uint32(0o001)
		switch {
		case int(st.Uid) == uid:
			bit = 0o100
		case int(st.Gid) == gid:
			bit = 0o010
		}
		if mode&bit == 0 {
			return fmt.Errorf("the postgres user cannot enter %s (mode %#o, owner uid %d)", d, mode&0o777, st.Uid)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}
