//go:build unix

package atomicfile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, path, s string) error {
	t.Helper()
	return WriteOutput(context.Background(), path, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	})
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOutputKinds writes an output to each kind of path: a new file, a
// file replaced, symbolic links (absolute, relative, chained, dangling)
// whose target is replaced and which stay links, a FIFO and a device that
// are written through and stay what they were, and a directory and a loop
// of links that are refused.
func TestOutputKinds(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := write(t, p("new"), "1"); err != nil || read(t, p("new")) != "1" {
		t.Fatalf("new file: %v", err)
	}
	if err := write(t, p("new"), "2"); err != nil || read(t, p("new")) != "2" {
		t.Fatalf("replaced file: %v", err)
	}
	os.MkdirAll(p("sub"), 0o755)
	os.WriteFile(p("sub/target"), []byte("old"), 0o644)
	os.Symlink(p("sub/target"), p("abs"))
	os.Symlink("sub/target", p("rel"))
	os.Symlink("rel", p("chain"))
	os.Symlink("sub/missing", p("dangling"))
	for i, link := range []string{"abs", "rel", "chain"} {
		s := strings.Repeat("x", i+1)
		if err := write(t, p(link), s); err != nil || read(t, p("sub/target")) != s {
			t.Errorf("through link %s: %v, target holds %q", link, err, read(t, p("sub/target")))
		}
		if st, err := os.Lstat(p(link)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("link %s was replaced: %v", link, err)
		}
	}
	if err := write(t, p("dangling"), "d"); err != nil || read(t, p("sub/missing")) != "d" {
		t.Errorf("dangling link: %v", err)
	}
	if err := write(t, p("sub"), "x"); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("a directory: %v", err)
	}
	os.Symlink("loop2", p("loop1"))
	os.Symlink("loop1", p("loop2"))
	if err := write(t, p("loop1"), "x"); err == nil {
		t.Error("a loop of links was written")
	}

	fifo := p("fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	if err := write(t, fifo, "through a fifo"); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through a fifo" {
		t.Errorf("the FIFO's reader got %q", s)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", err)
	}
	// A null device of the test's own, never the machine's /dev/null: a
	// regression would replace it with a regular file.
	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("no device of our own (%v): the device case is skipped", err)
		os.WriteFile(dev, nil, 0o644) // a file in its place keeps the count below
	} else {
		o, err := Create(context.Background(), dev, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if o.Atomic() {
			t.Error("a character device is written atomically")
		}
		if _, err := o.Write([]byte("x")); err != nil || o.Commit() != nil {
			t.Errorf("a character device: %v", err)
		}
		if st, err := os.Lstat(dev); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("the character device was replaced: %v", err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 10 { // the nine made above and the device
		t.Errorf("files left: %v", entries)
	}
}

// TestAbort leaves neither the target changed nor a temporary file.
func TestAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	os.WriteFile(path, []byte("keep"), 0o644)
	errFill := errors.New("fill failed")
	err := WriteOutput(context.Background(), path, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errFill
	})
	if !errors.Is(err, errFill) || read(t, path) != "keep" {
		t.Errorf("failed output: %v, file holds %q", err, read(t, path))
	}
	if err := Write(path, 0o644, func(f *os.File) error { f.WriteString("half"); return errFill }); !errors.Is(err, errFill) || read(t, path) != "keep" {
		t.Errorf("failed Write: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
}

// TestWriteReplacesLink: Write, for files darrm owns, replaces the name
// itself, never what a link there points to.
func TestWriteReplacesLink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "entry")
	os.WriteFile(target, []byte("keep"), 0o644)
	os.Symlink(target, link)
	if err := Write(link, 0o644, func(f *os.File) error { _, err := f.WriteString("new"); return err }); err != nil {
		t.Fatal(err)
	}
	if read(t, target) != "keep" || read(t, link) != "new" {
		t.Errorf("target %q, entry %q", read(t, target), read(t, link))
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink != 0 {
		t.Error("the entry is still a link")
	}
}

// TestThroughWriterEnds: an output written through (a device: /dev/null,
// as --out /dev/null names it) ends the goroutine that writes it for its
// context (ctxio.Writer) at Commit and at Abort, which otherwise waited
// for another write as long as the process ran: one for each such output,
// a release's label sink's in a program that releases many times. The
// minute is a hang's limit, not a timing.
func TestThroughWriterEnds(t *testing.T) {
	if _, err := os.Stat(os.DevNull); err != nil {
		t.Skip(err)
	}
	for _, commit := range []bool{true, false} {
		o, err := Create(context.Background(), os.DevNull, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if o.Atomic() {
			t.Fatalf("%s written atomically", os.DevNull)
		}
		if _, err := io.WriteString(o, "0,1\n"); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = o.Commit()
		} else {
			o.Abort()
		}
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			buf := make([]byte, 1<<20)
			if n = strings.Count(string(buf[:runtime.Stack(buf, true)]), "ctxio.(*Writer).loop"); n == 0 {
				break
			}
		}
		if n > 0 {
			t.Errorf("commit %t: %d goroutines still write for an output ended", commit, n)
		}
	}
}
