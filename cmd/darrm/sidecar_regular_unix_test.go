//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSidecarNotRegular: a sidecar beside the votes or a --meta file that
// is a FIFO, a folder or a device is refused at once (exit 2, naming what
// it is), as a ledger that is one is: a FIFO is not waited on.
func TestSidecarNotRegular(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	votes := filepath.Join("..", "..", "testdata", "pate-teachers-labels-K25.npy")
	raw, err := os.ReadFile(votes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fifo.npy", "folder.npy", "plain.npy"} {
		if err := os.WriteFile(p(name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(p("fifo.npy.meta.json"), 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if err := syscall.Mkfifo(p("meta.fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p("folder.npy.meta.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	release := []string{"--teachers-in-rows", "--classes", "10", "--mechanism", "gnmax", "--sigma2", "4", "--delta", "1e-5", "--partition", "keyed-hash", "--seed", "1"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a FIFO beside the votes", []string{p("fifo.npy")}, "the sidecar " + p("fifo.npy.meta.json") + " is a FIFO, not a regular file"},
		{"a folder beside the votes", []string{p("folder.npy")}, "the sidecar " + p("folder.npy.meta.json") + " is a folder, not a regular file"},
		{"a FIFO as --meta", []string{p("plain.npy"), "--meta", p("meta.fifo")}, "--meta " + p("meta.fifo") + " is a FIFO, not a regular file"},
		{"a device as --meta", []string{p("plain.npy"), "--meta", os.DevNull}, "--meta " + os.DevNull + " is a device, not a regular file"},
	} {
		// Were the FIFO waited on, the context's end would stop the run
		// (exit 130), not the check.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var stdout, stderr strings.Builder
		args := append(append([]string{"aggregate"}, tc.args...), append(release, "--out", p("labels.csv"))...)
		code := run(ctx, args, strings.NewReader(""), &stdout, &stderr)
		cancel()
		if code != exitUsage || !strings.Contains(joinError(stderr.String()), tc.want) {
			t.Errorf("%s: exit %d: %s", tc.name, code, stderr.String())
		}
		if _, err := os.Stat(p("labels.csv")); !os.IsNotExist(err) {
			t.Errorf("%s: labels written", tc.name)
		}
	}
}
