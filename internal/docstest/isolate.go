//go:build unix

package docstest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Isolation runs a block's processes where the folders a reader's own files
// live in are read-only, so that a block writing a fixed path there fails
// instead of overwriting the reader's file: in a user and mount namespace
// of their own (Linux), with ReadOnly bound read-only over themselves and
// Writable, which may lie inside them (the run's scratch folder, Go's
// caches), bound writable. Nothing outside the namespace changes.
type Isolation struct {
	ReadOnly []string
	Writable []string
}

// NewIsolation returns the isolation of the docs test: /tmp, /var/tmp, the
// temporary folder and the home folder read-only, writable folders
// excepted. Folders that do not exist are left out, and so is "/".
func NewIsolation(writable ...string) *Isolation {
	iso := &Isolation{}
	home, _ := os.UserHomeDir()
	for _, d := range []string{"/tmp", "/var/tmp", os.TempDir(), home} {
		iso.ReadOnly = appendDir(iso.ReadOnly, d)
	}
	for _, d := range writable {
		iso.Writable = appendDir(iso.Writable, d)
	}
	return iso
}

// appendDir appends the absolute, cleaned dir to dirs unless it is empty,
// "/", not a directory or already there.
func appendDir(dirs []string, dir string) []string {
	if dir == "" {
		return dirs
	}
	dir, err := filepath.Abs(dir)
	if err != nil || dir == "/" || slices.Contains(dirs, dir) {
		return dirs
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return dirs
	}
	return append(dirs, dir)
}

// prologue is the shell code that sets up the mounts inside the namespace
// and returns to the working folder through them (the old working folder
// would still reach the writable mount below a read-only one).
func (iso *Isolation) prologue() string {
	var b strings.Builder
	b.WriteString("set -e\n")
	for _, d := range iso.Writable {
		fmt.Fprintf(&b, "mount --bind -- %s %s\n", shellQuote(d), shellQuote(d))
	}
	for _, d := range iso.ReadOnly {
		fmt.Fprintf(&b, "mount --rbind -- %s %s\nmount -o remount,bind,ro -- %s\n", shellQuote(d), shellQuote(d), shellQuote(d))
	}
	b.WriteString("cd -- \"$PWD\"\nset +e\n")
	return b.String()
}

// Command returns the command that runs bash on script in a process group
// of its own: inside the isolation, or plainly when iso is nil.
func (iso *Isolation) Command(ctx context.Context, script string) *exec.Cmd {
	if iso == nil {
		cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", iso.prologue()+`exec bash --noprofile --norc "$0"`, script)
	// Probe has checked that namespaceAttr works.
	cmd.SysProcAttr, _ = namespaceAttr()
	return cmd
}

// Probe reports why iso cannot run here, or nil when the folders it makes
// read-only are read-only inside it and the writable ones writable.
func (iso *Isolation) Probe(ctx context.Context) error {
	if len(iso.ReadOnly) == 0 {
		return errors.New("no folder to make read-only")
	}
	attr, err := namespaceAttr()
	if err != nil {
		return err
	}
	var check strings.Builder
	check.WriteString("set -e\n")
	for _, d := range iso.ReadOnly {
		fmt.Fprintf(&check, "test ! -w %s\n", shellQuote(d))
	}
	for _, d := range iso.Writable {
		fmt.Fprintf(&check, "test -w %s\n", shellQuote(d))
	}
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", iso.prologue()+check.String())
	cmd.SysProcAttr = attr
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("a user and mount namespace with read-only folders: %s", msg)
	}
	return nil
}
